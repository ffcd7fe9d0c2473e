//! kubectl's JSONPath templates, for `-o jsonpath=<template>`: the language of
//! client-go's `util/jsonpath`, which kubectl prints with, read the same way and
//! applied to the JSON document `-o json` prints.
//!
//! A template is text with actions in braces. Text outside them is printed as
//! written; each action prints what its expression finds, several results separated
//! by one space:
//!
//! - `{.a.b}` fields (`$` and `@`, the current value, may stand first), `{.a\.b}` a
//!   field whose name has a dot, `{['a']}` the same as `{.a}`;
//! - `{.items[0]}`, `{.items[-1]}`, `{.items[1:3]}`, `{.items[::2]}` indices and
//!   slices; `{.items[*]}` and `{.a.*}` every element or member; `{..name}` every
//!   `name` at any depth; `{.items[0,2]}` and `{['a','b']}` unions;
//! - `{.items[?(@.phase=="Failed")]}` filters (`==`, `!=`, `<`, `>`, `<=`, `>=`
//!   against a quoted string, a number, `true`/`false` or another path), and
//!   `{.items[?(@.alias)]}`, those that have the field;
//! - `{"text"}` (or `{'text'}`) quoted text, with Go's escapes (`\n`, `\t`, `\"`, …);
//! - `{range .items[*]}…{end}`: the part between, once per result, each result being
//!   the current value there.
//!
//! As in kubectl, a field that is missing prints nothing, while an index out of
//! bounds is an error; strings print bare, numbers and booleans as JSON writes them,
//! objects and arrays as compact JSON. Two differences, both where kubectl shows Go
//! rather than the document: `null` prints nothing (not `<nil>`), and numbers compare
//! as numbers whatever their JSON spelling. Everything that can be judged without the
//! data is judged by [`Template::parse`], so a template that cannot work is refused
//! before any request: an `{end}` without its `{range}` (or the reverse), an unknown
//! word or operator, a step of zero, as well as what kubectl's parser itself refuses.

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

/// A parsed template, ready to print any number of documents.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Template {
    segments: Vec<Segment>,
}

/// Why a template cannot be read, or could not be applied to a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

fn error<T>(message: impl Into<String>) -> Result<T, Error> {
    Err(Error(message.into()))
}

/// One piece of a template, in order.
#[derive(Clone, Debug, PartialEq)]
enum Segment {
    /// Printed as written.
    Text(String),
    /// `{…}`: what the expression finds.
    Action(Vec<Node>),
    /// `{range …}…{end}`.
    Range { over: Vec<Node>, body: Vec<Segment> },
}

/// One step of an expression; an expression applies its steps in turn, each to all
/// the results of the one before.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// `.name`: the member of each object that has one.
    Field(String),
    /// `.*`: every member of an object, every element of an array.
    Wildcard,
    /// `[i]`, `[start:end:step]`, `[*]`.
    Slice([Param; 3]),
    /// `[a,b]`: each alternative applied to the same values, results in order.
    Union(Vec<Vec<Node>>),
    /// `..`: each value and every object or array inside it, at any depth.
    Recursive,
    /// `[?(left op right)]`.
    Filter {
        left: Vec<Node>,
        op: Op,
        right: Vec<Node>,
    },
    /// `[?(path)]`: the elements for which the path finds something.
    Exists(Vec<Node>),
    /// `"text"`.
    Text(String),
    /// A number or boolean, in a filter.
    Literal(Value),
}

/// One of a slice's three numbers, as client-go keeps it: whether it was given, and
/// whether it was derived (the end of `[i]`, which is `i + 1`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Param {
    value: i64,
    known: bool,
    derived: bool,
}

/// A filter's comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

/// What an action may hold besides an expression: `range` before one, `end` alone.
enum Word {
    Range,
    End,
}

impl Template {
    /// Reads a template, or says why it cannot be one.
    pub(crate) fn parse(text: &str) -> Result<Self, Error> {
        let mut parser = Parser::new(text);
        // The enclosing ranges, innermost last: what each iterates, and its body so far.
        let mut open: Vec<(Vec<Node>, Vec<Segment>)> = Vec::new();
        let mut segments = Vec::new();
        while let Some(piece) = parser.next_piece()? {
            let into = open.last_mut().map_or(&mut segments, |(_, body)| body);
            match piece {
                Piece::Text(text) => into.push(Segment::Text(text)),
                Piece::Action(None, nodes) => into.push(Segment::Action(nodes)),
                Piece::Action(Some(Word::Range), over) => open.push((over, Vec::new())),
                Piece::Action(Some(Word::End), _) => {
                    let Some((over, body)) = open.pop() else {
                        return error("{end} without a {range} to end");
                    };
                    let into = open.last_mut().map_or(&mut segments, |(_, body)| body);
                    into.push(Segment::Range { over, body });
                }
            }
        }
        if !open.is_empty() {
            return error("{range} without its {end}");
        }
        Ok(Self { segments })
    }

    /// The template applied to `document`.
    pub(crate) fn render(&self, document: &Value) -> Result<String, Error> {
        let mut out = String::new();
        print_segments(&self.segments, document, &mut out)?;
        Ok(out)
    }
}

fn print_segments(segments: &[Segment], current: &Value, out: &mut String) -> Result<(), Error> {
    for segment in segments {
        match segment {
            Segment::Text(text) => out.push_str(text),
            Segment::Action(nodes) => {
                let results = eval(nodes, vec![Cow::Borrowed(current)])?;
                for (i, result) in results.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(&text_of(result)?);
                }
            }
            Segment::Range { over, body } => {
                for item in eval(over, vec![Cow::Borrowed(current)])? {
                    print_segments(body, &item, out)?;
                }
            }
        }
    }
    Ok(())
}

/// A result as printed: strings bare, objects and arrays as compact JSON.
fn text_of(value: &Value) -> Result<String, Error> {
    Ok(match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_text(n),
        Value::Object(_) | Value::Array(_) => {
            serde_json::to_string(value).map_err(|e| Error(format!("printing a result: {e}")))?
        }
    })
}

/// A number as Go prints one: integers whole, other numbers in their shortest form
/// (`3`, not `3.0`).
fn number_text(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        n.as_f64().map_or_else(|| n.to_string(), |f| f.to_string())
    }
}

type Results<'a> = Vec<Cow<'a, Value>>;

fn eval<'a>(nodes: &[Node], mut values: Results<'a>) -> Result<Results<'a>, Error> {
    for node in nodes {
        values = step(node, values)?;
    }
    Ok(values)
}

/// The members or elements of a value of the document; literals have none.
fn children<'a>(value: &Cow<'a, Value>) -> Results<'a> {
    match value {
        Cow::Borrowed(Value::Object(members)) => members.values().map(Cow::Borrowed).collect(),
        Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
        _ => Vec::new(),
    }
}

fn step<'a>(node: &Node, values: Results<'a>) -> Result<Results<'a>, Error> {
    let mut out = Vec::new();
    match node {
        Node::Field(name) => {
            for value in &values {
                if let Cow::Borrowed(Value::Object(members)) = value
                    && let Some(member) = members.get(name)
                {
                    out.push(Cow::Borrowed(member));
                }
            }
        }
        Node::Wildcard => {
            for value in &values {
                out.extend(children(value));
            }
        }
        Node::Slice(params) => {
            for value in &values {
                match value {
                    Cow::Borrowed(Value::Array(items)) => {
                        for i in slice(params, items.len())? {
                            out.extend(items.get(i).map(Cow::Borrowed));
                        }
                    }
                    Cow::Borrowed(Value::Null) => {}
                    other => {
                        return error(format!(
                            "{} is not an array: [{}] indexes arrays only",
                            kind(other),
                            slice_text(params)
                        ));
                    }
                }
            }
        }
        Node::Union(alternatives) => {
            for alternative in alternatives {
                out.extend(eval(alternative, values.clone())?);
            }
        }
        Node::Recursive => {
            for value in values {
                descend(value, &mut out);
            }
        }
        Node::Exists(path) => {
            for value in &values {
                for item in filtered(value)? {
                    // As client-go: a path that fails to apply finds nothing here.
                    if eval(path, vec![item.clone()]).is_ok_and(|found| !found.is_empty()) {
                        out.push(item);
                    }
                }
            }
        }
        Node::Filter { left, op, right } => {
            for value in &values {
                for item in filtered(value)? {
                    let Some(left) = single(eval(left, vec![item.clone()])?)? else {
                        continue;
                    };
                    let Some(right) = single(eval(right, vec![item.clone()])?)? else {
                        continue;
                    };
                    if compare(&left, *op, &right)? {
                        out.push(item);
                    }
                }
            }
        }
        Node::Text(text) => out.push(Cow::Owned(Value::String(text.clone()))),
        // As client-go: one copy for each value it follows.
        Node::Literal(literal) => out.extend(values.iter().map(|_| Cow::Owned(literal.clone()))),
    }
    Ok(out)
}

/// `value` and, depth first, every object or array inside it that has members.
fn descend<'a>(value: Cow<'a, Value>, out: &mut Results<'a>) {
    let inside = children(&value);
    if inside.is_empty() {
        return;
    }
    out.push(value);
    for child in inside {
        descend(child, out);
    }
}

/// The elements a filter looks at: those of an array (nothing for `null`).
fn filtered<'a>(value: &Cow<'a, Value>) -> Result<Results<'a>, Error> {
    match value {
        Cow::Borrowed(Value::Array(_)) => Ok(children(value)),
        Cow::Borrowed(Value::Null) => Ok(Vec::new()),
        other => error(format!(
            "{} is not an array and cannot be filtered",
            kind(other)
        )),
    }
}

/// The one value a side of a comparison found, or none (the element is skipped).
fn single(results: Results<'_>) -> Result<Option<Cow<'_, Value>>, Error> {
    match results.len() {
        0 => Ok(None),
        1 => Ok(results.into_iter().next()),
        _ => error("can only compare one element at a time"),
    }
}

fn compare(left: &Value, op: Op, right: &Value) -> Result<bool, Error> {
    use std::cmp::Ordering;
    let order = match (left, right) {
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            _ => a
                .as_f64()
                .zip(b.as_f64())
                .and_then(|(a, b)| a.partial_cmp(&b)),
        },
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Bool(a), Value::Bool(b)) => match op {
            Op::Eq | Op::Ne => Some(if a == b {
                Ordering::Equal
            } else {
                Ordering::Less
            }),
            _ => return error("booleans can only be compared with == and !="),
        },
        _ => {
            return error(format!(
                "cannot compare {} with {}",
                kind(left),
                kind(right)
            ));
        }
    };
    let Some(order) = order else {
        return Ok(false);
    };
    Ok(match op {
        Op::Eq => order == Ordering::Equal,
        Op::Ne => order != Ordering::Equal,
        Op::Lt => order == Ordering::Less,
        Op::Gt => order == Ordering::Greater,
        Op::Le => order != Ordering::Greater,
        Op::Ge => order != Ordering::Less,
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The indices a slice selects from an array of `len` elements, as client-go selects
/// them: negative numbers count from the end, and an index outside the array is an
/// error unless the slice asks for nothing.
fn slice(params: &[Param; 3], len: usize) -> Result<Vec<usize>, Error> {
    let length = i64::try_from(len).unwrap_or(i64::MAX);
    let [start, end, step] = *params;
    let mut from = if start.known { start.value } else { 0 };
    if from < 0 {
        from += length;
    }
    let mut to = if end.known { end.value } else { length };
    if to < 0 || (to == 0 && end.derived) {
        to += length;
    }
    if to == from {
        return Ok(Vec::new());
    }
    if from >= length || from < 0 {
        return error(format!(
            "array index out of bounds: index {from}, length {length}"
        ));
    }
    if to > length || to < 0 {
        return error(format!(
            "array index out of bounds: index {}, length {length}",
            to - 1
        ));
    }
    if from > to {
        return error(format!(
            "starting index {from} is greater than ending index {to}"
        ));
    }
    // Checked at parse time: a given step is positive.
    let step = if step.known { step.value.max(1) } else { 1 };
    let (from, to, step) = (
        usize::try_from(from).unwrap_or(0),
        usize::try_from(to).unwrap_or(0),
        usize::try_from(step).unwrap_or(1),
    );
    Ok((from..to).step_by(step).collect())
}

fn slice_text(params: &[Param; 3]) -> String {
    let [start, end, step] = *params;
    let number = |p: Param| {
        if p.known {
            p.value.to_string()
        } else {
            String::new()
        }
    };
    if end.derived {
        return number(start);
    }
    let mut text = format!("{}:{}", number(start), number(end));
    if step.known {
        text.push_str(&format!(":{}", step.value));
    }
    if text == ":" { "*".into() } else { text }
}

/// What the template reader found next.
enum Piece {
    Text(String),
    Action(Option<Word>, Vec<Node>),
}

/// Reads a template character by character, as client-go's parser does.
struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// How many characters of the template come before these (for messages).
    base: usize,
}

/// Characters that end a field name (unless escaped with `\`).
fn ends_field(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
    )
}

fn is_word_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl Parser {
    fn new(text: &str) -> Self {
        Self::within(text, 0)
    }

    /// A parser of `text`, which starts `base` characters into the template.
    fn within(text: &str, base: usize) -> Self {
        Self {
            chars: text.chars().collect(),
            pos: 0,
            base,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn starts_with(&self, prefix: &str) -> bool {
        let prefix: Vec<char> = prefix.chars().collect();
        self.chars
            .get(self.pos..self.pos + prefix.len())
            .is_some_and(|ahead| ahead == prefix.as_slice())
    }

    /// Where we are, for messages: 1 for the first character.
    fn at(&self) -> usize {
        self.base + self.pos + 1
    }

    /// The next text or action of a template, or `None` at its end.
    fn next_piece(&mut self) -> Result<Option<Piece>, Error> {
        let Some(first) = self.peek() else {
            return Ok(None);
        };
        if first != '{' {
            let mut text = String::new();
            while let Some(c) = self.peek().filter(|c| *c != '{') {
                text.push(c);
                self.pos += 1;
            }
            return Ok(Some(Piece::Text(text)));
        }
        let opened = self.at();
        self.pos += 1;
        let mut nodes = Vec::new();
        let mut word = None;
        loop {
            match self.peek() {
                None | Some('\r' | '\n') => {
                    return error(format!(
                        "unclosed action: the {{ at character {opened} has no }}"
                    ));
                }
                Some('}') => {
                    self.pos += 1;
                    break;
                }
                Some(_) if self.is_keyword() => {
                    let at = self.at();
                    let name = self.word();
                    if !nodes.is_empty() || word.is_some() {
                        return error(format!(
                            "{name} must begin its action, as in {{range .items[*]}} and {{end}} (character {at})"
                        ));
                    }
                    word = Some(if name == "range" {
                        Word::Range
                    } else {
                        Word::End
                    });
                }
                Some(_) => self.node(&mut nodes, false)?,
            }
        }
        if matches!(word, Some(Word::End)) && !nodes.is_empty() {
            return error("{end} stands alone in its action");
        }
        Ok(Some(Piece::Action(word, nodes)))
    }

    /// Whether the word at the cursor is `range` or `end` (other words are read as
    /// expression nodes, which refuse them).
    fn is_keyword(&self) -> bool {
        let mut end = self.pos;
        while self.chars.get(end).is_some_and(|c| !ends_field(*c)) {
            end += 1;
        }
        let word: String = self.chars[self.pos..end].iter().collect();
        word == "range" || word == "end"
    }

    /// Reads the characters up to the next field terminator.
    fn word(&mut self) -> String {
        let mut text = String::new();
        while let Some(c) = self.peek().filter(|c| !ends_field(*c)) {
            text.push(c);
            self.pos += 1;
        }
        text
    }

    /// An expression standing alone (a filter's side, a union's alternative, a
    /// quoted key): the whole of `text`, which starts `base` characters into the
    /// template.
    fn expression(text: &str, base: usize) -> Result<Vec<Node>, Error> {
        let mut parser = Self::within(text, base);
        let mut nodes = Vec::new();
        while parser.peek().is_some() {
            parser.node(&mut nodes, true)?;
        }
        Ok(nodes)
    }

    /// Reads one step (or a space) of an expression into `nodes`.
    fn node(&mut self, nodes: &mut Vec<Node>, nested: bool) -> Result<(), Error> {
        let at = self.at();
        if self.starts_with("[?(") {
            nodes.push(self.filter()?);
            return Ok(());
        }
        if self.starts_with("..") {
            if matches!(nodes.last(), Some(Node::Recursive)) {
                return error(format!(
                    "invalid multiple recursive descent at character {at}"
                ));
            }
            self.pos += 2;
            nodes.push(Node::Recursive);
            if self.peek().is_some_and(is_word_char) {
                nodes.push(self.field());
            }
            return Ok(());
        }
        let Some(c) = self.peek() else {
            return Ok(());
        };
        match c {
            ' ' | '\t' | '@' | '$' => self.pos += 1,
            '}' if nested => {
                return error(format!("unexpected }} at character {at}"));
            }
            '[' => {
                self.pos += 1;
                nodes.extend(self.bracket(at)?);
            }
            '"' | '\'' => {
                self.pos += 1;
                nodes.push(Node::Text(self.quoted(c, at)?));
            }
            '.' => {
                self.pos += 1;
                nodes.push(self.field());
            }
            '+' | '-' => nodes.push(self.number()?),
            c if c.is_ascii_digit() => nodes.push(self.number()?),
            c if is_word_char(c) => {
                let name = self.word();
                match name.as_str() {
                    "true" => nodes.push(Node::Literal(Value::Bool(true))),
                    "false" => nodes.push(Node::Literal(Value::Bool(false))),
                    "range" | "end" => {
                        return error(format!(
                            "{name} cannot stand inside an expression (character {at})"
                        ));
                    }
                    _ => {
                        return error(format!(
                            "unrecognized identifier {name} at character {at}: fields begin with a dot, as in .{name}"
                        ));
                    }
                }
            }
            other => {
                return error(format!(
                    "unrecognized character in action: {other:?} at character {at}"
                ));
            }
        }
        Ok(())
    }

    /// A field name after `.` (or `..`): up to a terminator, `\` escaping the next
    /// character; `*` is every member.
    fn field(&mut self) -> Node {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c == '\\' {
                self.pos += 1;
                if let Some(escaped) = self.peek() {
                    name.push(escaped);
                    self.pos += 1;
                }
                continue;
            }
            if ends_field(c) {
                break;
            }
            name.push(c);
            self.pos += 1;
        }
        if name == "*" {
            Node::Wildcard
        } else {
            Node::Field(name)
        }
    }

    /// A number: an integer, or a float.
    fn number(&mut self) -> Result<Node, Error> {
        let at = self.at();
        let mut text = String::new();
        if let Some(sign) = self.peek().filter(|c| matches!(c, '+' | '-')) {
            text.push(sign);
            self.pos += 1;
        }
        while let Some(c) = self.peek().filter(|c| *c == '.' || c.is_ascii_digit()) {
            text.push(c);
            self.pos += 1;
        }
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Node::Literal(Value::from(i)));
        }
        match text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
        {
            Some(f) => Ok(Node::Literal(Value::Number(f))),
            None => error(format!("cannot parse number {text} at character {at}")),
        }
    }

    /// What is between `[` (read) and the next `]`.
    fn bracket(&mut self, at: usize) -> Result<Vec<Node>, Error> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None | Some('\n') => {
                    return error(format!(
                        "unterminated array: the [ at character {at} has no ]"
                    ));
                }
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        subscript(&text, at)
    }

    /// A quoted text after its opening quote: up to the same quote unescaped.
    fn quoted(&mut self, quote: char, at: usize) -> Result<String, Error> {
        let mut raw = String::new();
        loop {
            match self.peek() {
                None | Some('\n') => {
                    return error(format!(
                        "unterminated quoted string: the {quote} at character {at} has no match"
                    ));
                }
                Some('\\') => {
                    raw.push('\\');
                    self.pos += 1;
                    if let Some(c) = self.peek().filter(|c| *c != '\n') {
                        raw.push(c);
                        self.pos += 1;
                    }
                }
                Some(c) if c == quote => {
                    self.pos += 1;
                    break;
                }
                Some(c) => {
                    raw.push(c);
                    self.pos += 1;
                }
            }
        }
        unescape(&raw).map_err(|e| Error(format!("quoted string at character {at}: {e}")))
    }

    /// `[?(…)]`, at its start.
    fn filter(&mut self) -> Result<Node, Error> {
        let at = self.at();
        self.pos += 3;
        let mut text = String::new();
        // Quotes pair up; a `)` inside a pair does not end the filter.
        let mut quote: Option<char> = None;
        loop {
            let Some(c) = self.peek().filter(|c| *c != '\n') else {
                return error(format!(
                    "unterminated filter: the [?( at character {at} has no )]"
                ));
            };
            self.pos += 1;
            match (c, quote) {
                ('\\', Some(_)) => {
                    text.push(c);
                    if let Some(next) = self.peek() {
                        text.push(next);
                        self.pos += 1;
                    }
                    continue;
                }
                ('"' | '\'', None) => quote = Some(c),
                (c, Some(q)) if c == q => quote = None,
                (')', None) => break,
                _ => {}
            }
            text.push(c);
        }
        if self.peek() != Some(']') {
            return error(format!(
                "unclosed filter: the [?( at character {at} needs ] after its )"
            ));
        }
        self.pos += 1;
        let is_op = |c: char| matches!(c, '!' | '<' | '>' | '=' | '~');
        // The filter's text starts after `[?(`.
        let base = at + 2;
        let Some(split) = text.find(is_op) else {
            return Ok(Node::Exists(Self::expression(&text, base)?));
        };
        let (left, rest) = text.split_at(split);
        let op_len = rest.find(|c| !is_op(c)).unwrap_or(rest.len());
        let (op, right) = rest.split_at(op_len);
        if left.trim().is_empty() || right.trim().is_empty() {
            return error(format!(
                "filter at character {at} needs a path, an operator and a value, as in [?(@.phase==\"Failed\")]"
            ));
        }
        let op = match op {
            "==" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            ">" => Op::Gt,
            "<=" => Op::Le,
            ">=" => Op::Ge,
            other => {
                return error(format!(
                    "unrecognized filter operator {other} at character {at}: use ==, !=, <, >, <= or >="
                ));
            }
        };
        let right_base = base + left.chars().count() + rest[..op_len].chars().count();
        Ok(Node::Filter {
            left: Self::expression(left, base)?,
            op,
            right: Self::expression(right, right_base)?,
        })
    }
}

/// What a `[…]` holds: a union, a quoted key, or a slice. The `[` is character
/// `at` of the template.
fn subscript(text: &str, at: usize) -> Result<Vec<Node>, Error> {
    let text = if text == "*" { ":" } else { text };
    if text.contains(',') {
        let mut alternatives = Vec::new();
        // Where each part starts in the template (0-based): just after the `[`.
        let mut start = at;
        for part in text.split(',') {
            let leading = part.chars().take_while(|c| c.is_whitespace()).count();
            // The part is read as `[part]`, its `[` standing just before it.
            let base = (start + leading).saturating_sub(1);
            alternatives.push(Parser::expression(&format!("[{}]", part.trim()), base)?);
            start += part.chars().count() + 1;
        }
        return Ok(vec![Node::Union(alternatives)]);
    }
    if let Some(key) = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .filter(|key| !key.contains('\''))
    {
        // As kubectl: `['a.b']` reads as `.a.b`; `['a\.b']` is the one field `a.b`.
        // The `.` stands where the opening quote is.
        return Parser::expression(&format!(".{key}"), at);
    }
    let parts: Vec<&str> = text.split(':').collect();
    let number_like = |p: &str| {
        let digits = p.strip_prefix('-').unwrap_or(p);
        digits.chars().all(|c| c.is_ascii_digit())
    };
    if parts.len() > 3 || !parts.iter().all(|p| number_like(p)) {
        return error(format!(
            "invalid array index [{text}] at character {at}: use [n], [start:end:step], [*], [a,b] or ['key']"
        ));
    }
    let parse = |p: &str| {
        p.parse::<i64>()
            .map_err(|_| Error(format!("array index {p} at character {at} is not a number")))
    };
    let mut params = [Param::default(); 3];
    if let Some(first) = parts.first().filter(|p| !p.is_empty()) {
        params[0] = Param {
            value: parse(first)?,
            known: true,
            derived: false,
        };
    }
    match parts.get(1) {
        None => {
            params[1] = Param {
                value: params[0].value.saturating_add(1),
                known: true,
                derived: true,
            }
        }
        Some(end) if !end.is_empty() => {
            params[1] = Param {
                value: parse(end)?,
                known: true,
                derived: false,
            }
        }
        Some(_) => {}
    }
    if let Some(step) = parts.get(2).filter(|p| !p.is_empty()) {
        let value = parse(step)?;
        if value <= 0 {
            return error(format!("step must be > 0, not {value} (character {at})"));
        }
        params[2] = Param {
            value,
            known: true,
            derived: false,
        };
    }
    Ok(vec![Node::Slice(params)])
}

/// Go's escapes in a quoted string: `\n`, `\t`, `\r`, `\a`, `\b`, `\f`, `\v`, `\\`,
/// `\'`, `\"`, `\xHH`, `\ooo`, `\uHHHH`, `\UHHHHHHHH`.
fn unescape(raw: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            return Err("it ends in a lone \\".into());
        };
        let (digits, radix) = match escape {
            'n' => {
                out.push('\n');
                continue;
            }
            't' => {
                out.push('\t');
                continue;
            }
            'r' => {
                out.push('\r');
                continue;
            }
            'a' => {
                out.push('\u{7}');
                continue;
            }
            'b' => {
                out.push('\u{8}');
                continue;
            }
            'f' => {
                out.push('\u{c}');
                continue;
            }
            'v' => {
                out.push('\u{b}');
                continue;
            }
            '\\' | '\'' | '"' => {
                out.push(escape);
                continue;
            }
            'x' => (2, 16),
            'u' => (4, 16),
            'U' => (8, 16),
            '0'..='7' => (2, 8),
            other => return Err(format!("\\{other} is not an escape")),
        };
        let mut text: String = if radix == 8 {
            escape.to_string()
        } else {
            String::new()
        };
        text.extend(chars.by_ref().take(digits));
        let wanted = if radix == 8 { digits + 1 } else { digits };
        let code = (text.chars().count() == wanted)
            .then(|| u32::from_str_radix(&text, radix).ok())
            .flatten()
            .filter(|code| radix != 8 || *code <= 0o377)
            .and_then(char::from_u32);
        match code {
            Some(c) => out.push(c),
            None if radix == 8 => return Err(format!("\\{text} is not an octal escape")),
            None => return Err(format!("\\{escape}{text} is not an escape")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
