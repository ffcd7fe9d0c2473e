//! The parser: tokens into a tree, by precedence climbing (Pratt).
//!
//! Precedence and associativity are the reference language's (expr-lang), weakest
//! first: the ternary `?:`; `||`/`or`; `&&`/`and`; comparisons, `in`, `matches`,
//! `contains`, `startsWith`, `endsWith` (and their `not` forms); `+ -`; `* / %`;
//! `??`. Unary `!`/`not` bind an operand at the level of `* / %`'s neighbour (50) and
//! unary `-`/`+` tighter (90), so `!a == b` is `(!a) == b` and `-a ?? b` is
//! `-(a ?? b)`, as in the reference. Member access, indexing and calls bind tightest.
//! Every node keeps its byte span, so errors can quote the sub-expression they are
//! about.
//!
//! Nesting is bounded ([`MAX_DEPTH`]) twice over: the parser's own recursion (brackets
//! and prefix operators recurse before any node exists), and the height of the tree it
//! builds (an infix or member chain is built in a loop, and the checker and evaluator
//! recurse on it). A tree this parser returns is never deeper than the limit, so
//! nothing that walks it can exhaust the stack.

use serde_json::Value;

use super::MAX_DEPTH;
use super::lex::{Problem, Tok, Token, lex};

/// A node of the tree and the bytes of the source it covers.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Node {
    pub(super) kind: Kind,
    pub(super) start: usize,
    pub(super) end: usize,
    /// How many nodes deep the tree is from here down (a leaf is 1).
    pub(super) depth: usize,
}

/// What a node is.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
    /// A string, number, boolean or `nil`.
    Lit(Value),
    /// `[a, b]`.
    List(Vec<Node>),
    /// A top-level name: `gate`, `steps`.
    Name(String),
    /// `object.name`, or `object?.name` (`optional`: null ends the chain with null).
    Member {
        object: Box<Node>,
        name: String,
        optional: bool,
    },
    /// `object[index]`, or `object?.[index]`.
    Index {
        object: Box<Node>,
        index: Box<Node>,
        optional: bool,
    },
    /// `callee(args)`; the callee is a function-valued member (`bundle.image`).
    Call { callee: Box<Node>, args: Vec<Node> },
    /// A postfix chain holding a `?.`: where a null met by `?.` stops, with null.
    Chain(Box<Node>),
    /// `!x`, `not x`, `-x`, `+x`.
    Unary { op: Unary, operand: Box<Node> },
    /// `left op right`.
    Binary {
        op: Binary,
        left: Box<Node>,
        right: Box<Node>,
    },
    /// `test ? then : otherwise`.
    Cond {
        test: Box<Node>,
        then: Box<Node>,
        otherwise: Box<Node>,
    },
}

impl Kind {
    /// The nodes directly under this one, left to right.
    pub(super) fn children(&self) -> Vec<&Node> {
        match self {
            Kind::Lit(_) | Kind::Name(_) => Vec::new(),
            Kind::List(items) => items.iter().collect(),
            Kind::Member { object, .. } | Kind::Chain(object) => vec![object],
            Kind::Index { object, index, .. } => vec![object, index],
            Kind::Call { callee, args } => std::iter::once(&**callee).chain(args).collect(),
            Kind::Unary { operand, .. } => vec![operand],
            Kind::Binary { left, right, .. } => vec![left, right],
            Kind::Cond {
                test,
                then,
                otherwise,
            } => vec![test, then, otherwise],
        }
    }
}

/// A prefix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unary {
    Not,
    Neg,
    Plus,
}

/// An infix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Binary {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Matches,
    Contains,
    StartsWith,
    EndsWith,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Coalesce,
}

impl Binary {
    /// The operator as written (the symbolic spelling where there are two).
    pub(super) fn symbol(self) -> &'static str {
        match self {
            Binary::Or => "||",
            Binary::And => "&&",
            Binary::Eq => "==",
            Binary::Ne => "!=",
            Binary::Lt => "<",
            Binary::Le => "<=",
            Binary::Gt => ">",
            Binary::Ge => ">=",
            Binary::In => "in",
            Binary::Matches => "matches",
            Binary::Contains => "contains",
            Binary::StartsWith => "startsWith",
            Binary::EndsWith => "endsWith",
            Binary::Add => "+",
            Binary::Sub => "-",
            Binary::Mul => "*",
            Binary::Div => "/",
            Binary::Rem => "%",
            Binary::Coalesce => "??",
        }
    }
}

/// The comparison level: `==`, `in`, `matches` and the other word operators.
const COMPARE: u16 = 20;

/// The infix operator a token spells, with its binding power.
fn infix(tok: &Tok) -> Option<(Binary, u16)> {
    let op = match tok {
        Tok::Punct(p) => match *p {
            "||" => (Binary::Or, 10),
            "&&" => (Binary::And, 15),
            "==" => (Binary::Eq, COMPARE),
            "!=" => (Binary::Ne, COMPARE),
            "<" => (Binary::Lt, COMPARE),
            "<=" => (Binary::Le, COMPARE),
            ">" => (Binary::Gt, COMPARE),
            ">=" => (Binary::Ge, COMPARE),
            "+" => (Binary::Add, 30),
            "-" => (Binary::Sub, 30),
            "*" => (Binary::Mul, 60),
            "/" => (Binary::Div, 60),
            "%" => (Binary::Rem, 60),
            "??" => (Binary::Coalesce, 500),
            _ => return None,
        },
        Tok::Word(w) => match w.as_str() {
            "or" => (Binary::Or, 10),
            "and" => (Binary::And, 15),
            _ => (negatable(w)?, COMPARE),
        },
        _ => return None,
    };
    Some(op)
}

/// The word operators that `not` may precede: `a not in b`.
fn negatable(word: &str) -> Option<Binary> {
    Some(match word {
        "in" => Binary::In,
        "matches" => Binary::Matches,
        "contains" => Binary::Contains,
        "startsWith" => Binary::StartsWith,
        "endsWith" => Binary::EndsWith,
        _ => return None,
    })
}

/// Words that are operators or literals, never names.
const RESERVED: [&str; 11] = [
    "and",
    "or",
    "not",
    "in",
    "matches",
    "contains",
    "startsWith",
    "endsWith",
    "true",
    "false",
    "nil",
];

/// The tree of one expression.
pub(super) fn parse(src: &str) -> Result<Node, Problem> {
    let tokens = lex(src)?;
    let mut parser = Parser {
        src,
        tokens,
        pos: 0,
        nesting: 0,
    };
    if parser.at_end() {
        return Err(Problem::new(0, "the expression is empty"));
    }
    let node = parser.expression(0)?;
    if !parser.at_end() {
        let token = parser.current();
        return Err(Problem::new(
            token.start,
            format!(
                "unexpected {} after a complete expression",
                parser.shown(token)
            ),
        ));
    }
    Ok(node)
}

struct Parser<'s> {
    src: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    /// How many [`Parser::expression`] calls are under way: the parser's recursion.
    nesting: usize,
}

impl Parser<'_> {
    fn current(&self) -> &Token {
        self.token(0)
    }

    /// The token `ahead` places on; past the end, the closing `End` (lex always ends
    /// the list with one, and the parser never steps over it).
    fn token(&self, ahead: usize) -> &Token {
        let last = self.tokens.len().saturating_sub(1);
        &self.tokens[(self.pos + ahead).min(last)]
    }

    fn at_end(&self) -> bool {
        self.current().tok == Tok::End
    }

    fn advance(&mut self) -> Token {
        let token = self.current().clone();
        if token.tok != Tok::End {
            self.pos += 1;
        }
        token
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(&self.current().tok, Tok::Punct(q) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(&self.current().tok, Tok::Word(v) if v == w)
    }

    /// How a token is named in a message: its text, quoted.
    fn shown(&self, token: &Token) -> String {
        match token.tok {
            Tok::End => "the end of the expression".to_string(),
            _ => format!("{:?}", &self.src[token.start..token.end]),
        }
    }

    fn unexpected(&self) -> Problem {
        let token = self.current();
        match token.tok {
            Tok::End => Problem::new(token.start, "the expression ends too early"),
            _ => Problem::new(token.start, format!("unexpected {}", self.shown(token))),
        }
    }

    /// Consumes `p`, the closer of the bracket opened at `opened`.
    fn close(&mut self, p: &str, opened: usize) -> Result<Token, Problem> {
        if self.is_punct(p) {
            return Ok(self.advance());
        }
        Err(if self.at_end() {
            Problem::new(opened, format!("this bracket is never closed with {p:?}"))
        } else {
            let token = self.current();
            Problem::new(
                token.start,
                format!("expected {p:?}, found {}", self.shown(token)),
            )
        })
    }

    /// A node of `kind` over `start..end`, refused when it would make the tree deeper
    /// than [`MAX_DEPTH`].
    fn node(&self, kind: Kind, start: usize, end: usize) -> Result<Node, Problem> {
        let depth = 1 + kind.children().iter().map(|c| c.depth).max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return Err(too_deep(start));
        }
        Ok(Node {
            kind,
            start,
            end,
            depth,
        })
    }

    /// An expression whose infix operators bind at least as tightly as `min`: every
    /// recursion of the parser passes here, so this is where its depth is bounded.
    fn expression(&mut self, min: u16) -> Result<Node, Problem> {
        if self.nesting >= MAX_DEPTH {
            return Err(too_deep(self.current().start));
        }
        self.nesting += 1;
        let parsed = self.climb(min);
        self.nesting -= 1;
        parsed
    }

    /// [`Parser::expression`]'s work: a prefix, then infix operators by precedence.
    fn climb(&mut self, min: u16) -> Result<Node, Problem> {
        let mut left = self.prefix()?;
        loop {
            // `a not in b`: `not` before a word operator negates it.
            let negate = self.is_word("not");
            let found = if negate {
                match &self.token(1).tok {
                    Tok::Word(w) if negatable(w).is_some() => infix(&self.token(1).tok),
                    _ => return Err(self.unexpected()),
                }
            } else {
                infix(&self.current().tok)
            };
            // A weaker operator ends this operand; the caller's level takes it.
            let Some((op, power)) = found.filter(|&(_, power)| power >= min) else {
                break;
            };
            let op_token = self.advance();
            if negate {
                self.advance();
            }
            if self.at_end() {
                return Err(Problem::new(
                    op_token.start,
                    format!("{} needs something on its right", self.shown(&op_token)),
                ));
            }
            let right = self.expression(power + 1)?;
            let (start, end) = (left.start, right.end);
            left = self.node(
                Kind::Binary {
                    op,
                    left: Box::new(left),
                    right: Box::new(right),
                },
                start,
                end,
            )?;
            if negate {
                left = self.node(
                    Kind::Unary {
                        op: Unary::Not,
                        operand: Box::new(left),
                    },
                    start,
                    end,
                )?;
            }
        }
        if min == 0 {
            left = self.conditional(left)?;
        }
        Ok(left)
    }

    /// `test ? then : otherwise`; `a ? b : c ? d : e` nests to the right.
    fn conditional(&mut self, mut test: Node) -> Result<Node, Problem> {
        while self.is_punct("?") {
            self.advance();
            let then = self.expression(0)?;
            if !self.is_punct(":") {
                let token = self.current();
                return Err(Problem::new(
                    token.start,
                    format!(
                        "expected \":\" to go with \"?\", found {}",
                        self.shown(token)
                    ),
                ));
            }
            self.advance();
            let otherwise = self.expression(0)?;
            let (start, end) = (test.start, otherwise.end);
            test = self.node(
                Kind::Cond {
                    test: Box::new(test),
                    then: Box::new(then),
                    otherwise: Box::new(otherwise),
                },
                start,
                end,
            )?;
        }
        Ok(test)
    }

    /// A prefix operator and its operand, or a primary with its postfix chain.
    fn prefix(&mut self) -> Result<Node, Problem> {
        let token = self.current().clone();
        let unary = match &token.tok {
            Tok::Punct("!") => Some((Unary::Not, 50)),
            Tok::Word(w) if w == "not" => Some((Unary::Not, 50)),
            Tok::Punct("-") => Some((Unary::Neg, 90)),
            Tok::Punct("+") => Some((Unary::Plus, 90)),
            _ => None,
        };
        if let Some((op, power)) = unary {
            self.advance();
            let operand = self.expression(power)?;
            let end = operand.end;
            return self.node(
                Kind::Unary {
                    op,
                    operand: Box::new(operand),
                },
                token.start,
                end,
            );
        }
        let primary = self.primary()?;
        self.postfix(primary)
    }

    fn primary(&mut self) -> Result<Node, Problem> {
        let token = self.current().clone();
        let kind = match token.tok {
            Tok::Int(i) => Kind::Lit(Value::from(i)),
            Tok::Float(f) => Kind::Lit(Value::from(f)),
            Tok::Str(ref s) => Kind::Lit(Value::String(s.clone())),
            Tok::Word(ref w) => match w.as_str() {
                "true" => Kind::Lit(Value::Bool(true)),
                "false" => Kind::Lit(Value::Bool(false)),
                "nil" => Kind::Lit(Value::Null),
                w if RESERVED.contains(&w) => return Err(self.unexpected()),
                w => Kind::Name(w.to_string()),
            },
            Tok::Punct("(") => {
                self.advance();
                let inner = self.expression(0)?;
                let close = self.close(")", token.start)?;
                // The parentheses belong to the sub-expression's text.
                return Ok(Node {
                    start: token.start,
                    end: close.end,
                    ..inner
                });
            }
            Tok::Punct("[") => {
                self.advance();
                let (items, end) = self.list("]", token.start)?;
                return self.node(Kind::List(items), token.start, end);
            }
            _ => return Err(self.unexpected()),
        };
        self.advance();
        self.node(kind, token.start, token.end)
    }

    /// Comma-separated expressions up to `close` (the opener, at `opened`, is already
    /// consumed); a trailing comma is allowed. Also returns where the closer ends.
    fn list(&mut self, close: &str, opened: usize) -> Result<(Vec<Node>, usize), Problem> {
        let mut items = Vec::new();
        loop {
            if self.is_punct(close) || self.at_end() {
                let end = self.close(close, opened)?.end;
                return Ok((items, end));
            }
            items.push(self.expression(0)?);
            if self.is_punct(",") {
                self.advance();
            } else if !self.is_punct(close) && !self.at_end() {
                let token = self.current();
                return Err(Problem::new(
                    token.start,
                    format!("expected \",\" or {close:?}, found {}", self.shown(token)),
                ));
            }
        }
    }

    /// `.name`, `?.name`, `[index]`, `?.[index]` and `(args)` after a primary.
    fn postfix(&mut self, mut node: Node) -> Result<Node, Problem> {
        let start = node.start;
        let mut chained = false;
        loop {
            let token = self.current().clone();
            let optional = token.tok == Tok::Punct("?.");
            let bracket = |t: &Token| t.tok == Tok::Punct("[");
            if token.tok == Tok::Punct(".") || (optional && !bracket(self.token(1))) {
                self.advance();
                let Tok::Word(name) = self.current().tok.clone() else {
                    return Err(Problem::new(
                        token.start,
                        format!("expected a name after {}", self.shown(&token)),
                    ));
                };
                let end = self.advance().end;
                chained |= optional;
                node = self.node(
                    Kind::Member {
                        object: Box::new(node),
                        name,
                        optional,
                    },
                    start,
                    end,
                )?;
            } else if bracket(&token) || optional {
                if optional {
                    self.advance();
                }
                let open = self.advance();
                let index = self.expression(0)?;
                let end = self.close("]", open.start)?.end;
                chained |= optional;
                node = self.node(
                    Kind::Index {
                        object: Box::new(node),
                        index: Box::new(index),
                        optional,
                    },
                    start,
                    end,
                )?;
            } else if token.tok == Tok::Punct("(") {
                self.advance();
                let (args, end) = self.list(")", token.start)?;
                node = self.node(
                    Kind::Call {
                        callee: Box::new(node),
                        args,
                    },
                    start,
                    end,
                )?;
            } else {
                break;
            }
        }
        if chained {
            let (start, end) = (node.start, node.end);
            node = self.node(Kind::Chain(Box::new(node)), start, end)?;
        }
        Ok(node)
    }
}

/// Nesting past [`MAX_DEPTH`], found at byte `at`.
fn too_deep(at: usize) -> Problem {
    Problem::new(
        at,
        format!("the expression nests more than {MAX_DEPTH} deep"),
    )
}
