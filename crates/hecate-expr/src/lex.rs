//! The lexer: an expression's text as tokens, each with the byte span it came from, so
//! the parser and the evaluator can point at the place a problem is.
//!
//! Words (names and the word operators `and`, `or`, `not`, `in`, `matches`,
//! `contains`, `startsWith`, `endsWith`, and the literals `true`, `false`, `nil`) are
//! one token kind; the parser tells them apart, because after a `.` any word is a
//! member name.

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    /// A string literal, escapes resolved.
    Str(String),
    /// A name or a word operator.
    Word(String),
    /// Punctuation or a symbolic operator.
    Punct(&'static str),
    /// The end of the text.
    End,
}

/// A token and where it is: `start..end`, byte offsets into the source.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// A problem at a byte offset of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Problem {
    pub(super) at: usize,
    pub(super) what: String,
}

impl Problem {
    pub(super) fn new(at: usize, what: impl Into<String>) -> Self {
        Self {
            at,
            what: what.into(),
        }
    }
}

/// Symbols, longest first so `==` wins over `=` would-be prefixes.
const PUNCT: [&str; 24] = [
    "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "(", ")", "[", "]", ",", ".", "?", ":", "<",
    ">", "!", "+", "-", "*", "/", "%",
];

/// The tokens of `src`, ending with [`Tok::End`].
pub(super) fn lex(src: &str) -> Result<Vec<Token>, Problem> {
    let mut lexer = Lexer { src, pos: 0 };
    let mut tokens = Vec::new();
    loop {
        lexer.skip_space();
        let start = lexer.pos;
        let Some(c) = lexer.peek() else {
            tokens.push(Token {
                tok: Tok::End,
                start,
                end: start,
            });
            return Ok(tokens);
        };
        let tok = if c.is_ascii_digit() {
            lexer.number()?
        } else if c == '"' || c == '\'' {
            lexer.quoted(c)?
        } else if c == '`' {
            lexer.raw()?
        } else if is_word_start(c) {
            Tok::Word(lexer.take_while(is_word_char).to_string())
        } else if let Some(p) = PUNCT.iter().find(|p| src[start..].starts_with(**p)) {
            lexer.pos += p.len();
            Tok::Punct(p)
        } else {
            return Err(unexpected_char(start, c));
        };
        tokens.push(Token {
            tok,
            start,
            end: lexer.pos,
        });
    }
}

fn unexpected_char(at: usize, c: char) -> Problem {
    let hint = match c {
        '=' => "; to compare, write ==",
        '&' => "; for \"and\", write &&",
        '|' => "; for \"or\", write ||",
        _ => "",
    };
    Problem::new(at, format!("unexpected character {c:?}{hint}"))
}

fn is_word_start(c: char) -> bool {
    c == '_' || c == '$' || c.is_alphabetic()
}

fn is_word_char(c: char) -> bool {
    is_word_start(c) || c.is_ascii_digit()
}

struct Lexer<'s> {
    src: &'s str,
    pos: usize,
}

impl<'s> Lexer<'s> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.src[self.pos..].chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> &'s str {
        let start = self.pos;
        while self.peek().is_some_and(&keep) {
            self.bump();
        }
        &self.src[start..self.pos]
    }

    fn skip_space(&mut self) {
        self.take_while(char::is_whitespace);
    }

    /// Decimal integers and floats (`_` may separate digits), and `0x`, `0o`, `0b`
    /// integers.
    fn number(&mut self) -> Result<Tok, Problem> {
        let start = self.pos;
        let radix = match (self.peek(), self.peek_second()) {
            (Some('0'), Some('x' | 'X')) => 16,
            (Some('0'), Some('o' | 'O')) => 8,
            (Some('0'), Some('b' | 'B')) => 2,
            _ => 10,
        };
        if radix != 10 {
            self.pos += 2;
            let digits = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
            let clean = digits.replace('_', "");
            return i64::from_str_radix(&clean, radix)
                .map(Tok::Int)
                .map_err(|_| {
                    Problem::new(start, format!("invalid number {:?}", self.text(start)))
                });
        }
        self.take_while(|c| c.is_ascii_digit() || c == '_');
        let mut float = false;
        if self.peek() == Some('.') && self.peek_second().is_some_and(|c| c.is_ascii_digit()) {
            float = true;
            self.bump();
            self.take_while(|c| c.is_ascii_digit() || c == '_');
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let mark = self.pos;
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            if self.take_while(|c| c.is_ascii_digit()).is_empty() {
                self.pos = mark;
            } else {
                float = true;
            }
        }
        if self.peek().is_some_and(is_word_char) {
            self.take_while(is_word_char);
            return Err(Problem::new(
                start,
                format!("invalid number {:?}", self.text(start)),
            ));
        }
        let clean = self.text(start).replace('_', "");
        if float {
            clean
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Tok::Float)
                .ok_or_else(|| Problem::new(start, format!("invalid number {clean:?}")))
        } else {
            clean
                .parse::<i64>()
                .map(Tok::Int)
                .map_err(|_| Problem::new(start, format!("the integer {clean} is too large")))
        }
    }

    fn text(&self, start: usize) -> &'s str {
        &self.src[start..self.pos]
    }

    /// A string in single or double quotes, with Go's escapes.
    fn quoted(&mut self, quote: char) -> Result<Tok, Problem> {
        let start = self.pos;
        self.bump();
        let mut out = String::new();
        loop {
            let at = self.pos;
            match self.bump() {
                None => return Err(Problem::new(start, "this string is never closed")),
                Some(c) if c == quote => return Ok(Tok::Str(out)),
                Some('\\') => out.push(self.escape(at)?),
                Some(c) => out.push(c),
            }
        }
    }

    fn escape(&mut self, at: usize) -> Result<char, Problem> {
        let bad = |what: &str| Problem::new(at, what.to_string());
        let c = self
            .bump()
            .ok_or_else(|| bad("this string is never closed"))?;
        let simple = match c {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '`' => Some(c),
            _ => None,
        };
        if let Some(c) = simple {
            return Ok(c);
        }
        let (digits, radix) = match c {
            'x' => (2, 16),
            'u' => (4, 16),
            'U' => (8, 16),
            '0'..='7' => {
                self.pos -= 1;
                (3, 8)
            }
            other => return Err(bad(&format!("unknown escape \\{other}"))),
        };
        let start = self.pos;
        for _ in 0..digits {
            if !self.bump().is_some_and(|d| d.is_digit(radix)) {
                return Err(bad("incomplete escape"));
            }
        }
        u32::from_str_radix(&self.src[start..self.pos], radix)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| bad("escape is not a character"))
    }

    /// A raw string in backquotes: no escapes.
    fn raw(&mut self) -> Result<Tok, Problem> {
        let start = self.pos;
        self.bump();
        let body = self.take_while(|c| c != '`');
        if self.bump().is_none() {
            return Err(Problem::new(start, "this string is never closed"));
        }
        Ok(Tok::Str(body.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        lex(src)
            .unwrap_or_else(|p| panic!("{src:?}: {p:?}"))
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    fn word(w: &str) -> Tok {
        Tok::Word(w.into())
    }

    #[test]
    fn tokens() {
        let cases: [(&str, Vec<Tok>); 12] = [
            ("42", vec![Tok::Int(42), Tok::End]),
            ("1_000", vec![Tok::Int(1000), Tok::End]),
            (
                "0x1F 0o17 0b11",
                vec![Tok::Int(31), Tok::Int(15), Tok::Int(3), Tok::End],
            ),
            (
                "1.5 2e3 1E-2",
                vec![
                    Tok::Float(1.5),
                    Tok::Float(2000.0),
                    Tok::Float(0.01),
                    Tok::End,
                ],
            ),
            // `1.x` is a member of 1, not a float.
            (
                "a[1].b",
                vec![
                    word("a"),
                    Tok::Punct("["),
                    Tok::Int(1),
                    Tok::Punct("]"),
                    Tok::Punct("."),
                    word("b"),
                    Tok::End,
                ],
            ),
            (r#""a\"b\n""#, vec![Tok::Str("a\"b\n".into()), Tok::End]),
            (
                r"'it\'s' '\x41\u00e9\101'",
                vec![Tok::Str("it's".into()), Tok::Str("AéA".into()), Tok::End],
            ),
            ("`raw \\n`", vec![Tok::Str("raw \\n".into()), Tok::End]),
            (
                "a??b?.c",
                vec![
                    word("a"),
                    Tok::Punct("??"),
                    word("b"),
                    Tok::Punct("?."),
                    word("c"),
                    Tok::End,
                ],
            ),
            (
                "x<=y!=z",
                vec![
                    word("x"),
                    Tok::Punct("<="),
                    word("y"),
                    Tok::Punct("!="),
                    word("z"),
                    Tok::End,
                ],
            ),
            (
                "not startsWith",
                vec![word("not"), word("startsWith"), Tok::End],
            ),
            ("  ", vec![Tok::End]),
        ];
        for (src, want) in cases {
            assert_eq!(toks(src), want, "{src}");
        }
    }

    #[test]
    fn spans_are_byte_offsets() {
        let tokens = lex("é + 'x'").expect("lexes");
        let spans: Vec<(usize, usize)> = tokens.iter().map(|t| (t.start, t.end)).collect();
        assert_eq!(spans, [(0, 2), (3, 4), (5, 8), (8, 8)]);
    }

    #[test]
    fn problems() {
        let cases = [
            ("'abc", 0, "this string is never closed"),
            ("a = b", 2, "unexpected character '='; to compare, write =="),
            (
                "a & b",
                2,
                "unexpected character '&'; for \"and\", write &&",
            ),
            ("a | b", 2, "unexpected character '|'; for \"or\", write ||"),
            ("1 @", 2, "unexpected character '@'"),
            ("'\\q'", 1, "unknown escape \\q"),
            ("'\\x4'", 1, "incomplete escape"),
            ("12abc", 0, "invalid number \"12abc\""),
            (
                "99999999999999999999",
                0,
                "the integer 99999999999999999999 is too large",
            ),
            ("`open", 0, "this string is never closed"),
        ];
        for (src, at, what) in cases {
            assert_eq!(lex(src), Err(Problem::new(at, what)), "{src}");
        }
    }
}
