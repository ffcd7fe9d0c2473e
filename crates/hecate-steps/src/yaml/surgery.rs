//! Format-preserving edits of one scalar at a time in a YAML (or JSON) text: the pure
//! heart of `edit-yaml` and `set-image` (spec §5.8).
//!
//! A YAML round-trip through a data model loses comments, blank lines, key order,
//! indentation and quoting, so every promotion would rewrite the whole file. Instead a
//! small reader walks the text and remembers where each scalar sits; an edit replaces
//! exactly that span and leaves every other byte alone.
//!
//! The reader covers the YAML that configuration repositories hold: block mappings and
//! lists (compact `- key: v` entries included), flow collections (so JSON works),
//! plain, single- and double-quoted scalars, comments, several documents, anchors and
//! tags on nodes, CRLF line ends. What it cannot edit safely it refuses with
//! `EditFailed`, naming the construct: block scalars (`|`, `>`), values that span lines,
//! tagged values, aliases, explicit `? ` keys, collections or aliases as keys.
//!
//! Two independent readings keep an edit honest. Before anything is touched the whole
//! text must parse with `serde_yaml_ng` (a real YAML parser), and the value it finds at
//! the key must be the one this reader located. After the splice, the new text is parsed
//! again and must equal the old one with exactly that value changed — so a misread
//! position, a broken quote or a change rippling through an alias is refused rather
//! than written.

use std::fmt::Display;
use std::ops::Range;

use serde::Deserialize;
use serde_yaml_ng::Value;

use crate::config::yaml::{EditValue, KeySegment};
use crate::reason::Reason;

/// Why an edit was not made: [`Reason::KeyNotFound`] or [`Reason::EditFailed`], and the story.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// [`Reason::KeyNotFound`] or [`Reason::EditFailed`].
    pub reason: Reason,
    /// What is wrong, naming the key.
    pub message: String,
}

impl Refusal {
    fn not_found(message: impl Into<String>) -> Self {
        Self {
            reason: Reason::KeyNotFound,
            message: message.into(),
        }
    }

    fn failed(message: impl Into<String>) -> Self {
        Self {
            reason: Reason::EditFailed,
            message: message.into(),
        }
    }
}

/// Applies `changes` in order, all or none, and returns the new text (equal to `text`
/// when every key already holds its value). Each key is looked up in whichever document
/// holds it; a key in more than one document is refused as ambiguous.
pub fn apply(text: &str, changes: &[(Vec<KeySegment>, EditValue)]) -> Result<String, Refusal> {
    let mut current = text.to_string();
    for (key, value) in changes {
        current = set(&current, None, key, value)?;
    }
    Ok(current)
}

/// Sets the scalar at `key` to `value`, in document `document` (from 0) or, with
/// `None`, in the one document that holds the key. Returns the new text, which equals
/// `text` when the scalar already holds the value.
pub fn set(
    text: &str,
    document: Option<usize>,
    key: &[KeySegment],
    value: &EditValue,
) -> Result<String, Refusal> {
    let shown = display_key(key);
    let mut before = read_values(text).map_err(Refusal::failed)?;
    let docs =
        parse(text).map_err(|why| Refusal::failed(format!("cannot edit this file: {why}")))?;
    if docs.is_empty() && before.iter().all(Value::is_null) {
        // A file of comments only: serde_yaml_ng reports one empty document.
        before.clear();
    }
    if docs.len() != before.len() {
        return Err(Refusal::failed(format!(
            "cannot edit this file: read {} documents where YAML reads {}",
            docs.len(),
            before.len()
        )));
    }
    let (index, node) = locate(&docs, document, key, &shown)?;
    let target = target(node, &shown)?;

    // The value this reader found must be the one YAML finds at the key.
    let seen = lookup(&before[index], key).ok_or_else(|| {
        Refusal::failed(format!(
            "{shown}: could not confirm where the key is in this file"
        ))
    })?;
    if let Target::Scalar(scalar) = &target
        && read_scalar(&text[scalar.span.clone()]).as_ref() != Some(seen)
    {
        return Err(Refusal::failed(format!(
            "{shown}: could not confirm where the key is in this file"
        )));
    }
    if holds(seen, value) {
        return Ok(text.to_string());
    }

    let json_like = docs[index].json_like;
    let edited = match &target {
        Target::Scalar(scalar) => {
            let rendered = render(value, Some(scalar.style), scalar.flow, json_like, &shown)?;
            splice(text, scalar.span.clone(), &rendered)
        }
        Target::Empty(at) => {
            let rendered = render(value, None, false, json_like, &shown)?;
            splice(text, *at..*at, &format!(" {rendered}"))
        }
    };

    // The new text must read as the old one with exactly this value changed.
    let after = read_values(&edited)
        .map_err(|why| Refusal::failed(format!("{shown}: the edit would break the file: {why}")))?;
    let mut expected = before;
    if let Some(slot) = lookup_mut(&mut expected[index], key) {
        *slot = yaml_value(value);
    }
    if after != expected {
        return Err(Refusal::failed(format!(
            "{shown}: the edited file does not read back as expected{}",
            if anchored(&docs[index].root, key) {
                " (the value is shared through an anchor, and aliases elsewhere would change too)"
            } else {
                ""
            }
        )));
    }
    Ok(edited)
}

/// Where a kustomization pins an image: `images[index]` of document `document`, by
/// `field`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImagePin {
    /// The document, from 0.
    pub document: usize,
    /// The position in the document's `images` list.
    pub index: usize,
    /// The field the entry already uses.
    pub field: PinField,
}

impl ImagePin {
    /// The key of the field to set.
    pub fn key(&self) -> Vec<KeySegment> {
        vec![
            KeySegment::Field("images".into()),
            KeySegment::Index(self.index),
            KeySegment::Field(self.field.name().into()),
        ]
    }
}

/// The field of an `images[]` entry that pins the version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinField {
    /// `newTag`.
    NewTag,
    /// `digest`.
    Digest,
}

impl PinField {
    /// The field's name in the file.
    pub fn name(self) -> &'static str {
        match self {
            PinField::NewTag => "newTag",
            PinField::Digest => "digest",
        }
    }
}

/// Finds the `images[]` entry whose `name` is `image`, in any document whose root
/// mapping has an `images` list, and the field it pins by: `newTag` when present, else
/// `digest`. The entry is found by name, never by position, so reordering the list
/// cannot repin the wrong image.
pub fn find_image(text: &str, image: &str) -> Result<ImagePin, Refusal> {
    let docs = read_values(text).map_err(Refusal::failed)?;
    let mut found = Vec::new();
    for (document, doc) in docs.iter().enumerate() {
        let Some(Value::Sequence(images)) = untag(doc).as_mapping().and_then(|m| m.get("images"))
        else {
            continue;
        };
        for (index, entry) in images.iter().enumerate() {
            let Some(entry) = untag(entry).as_mapping() else {
                continue;
            };
            if entry.get("name").and_then(Value::as_str) == Some(image) {
                found.push((document, index, entry));
            }
        }
    }
    match found.as_slice() {
        [] => Err(Refusal::not_found(format!(
            "no images[] entry is named {image:?}"
        ))),
        [(document, index, entry)] => {
            let field = if entry.contains_key("newTag") {
                PinField::NewTag
            } else if entry.contains_key("digest") {
                PinField::Digest
            } else {
                return Err(Refusal::not_found(format!(
                    "the images[] entry for {image:?} has neither newTag nor digest to update"
                )));
            };
            Ok(ImagePin {
                document: *document,
                index: *index,
                field,
            })
        }
        _ => Err(Refusal::failed(format!(
            "{} images[] entries are named {image:?}; set-image cannot tell which to change",
            found.len()
        ))),
    }
}

/// A key as written in `with:`: names joined by `.` (a dot inside a name as `\.`),
/// positions as `[n]`.
pub fn display_key(key: &[KeySegment]) -> String {
    let mut out = String::new();
    for segment in key {
        match segment {
            KeySegment::Field(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&name.replace('.', "\\."));
            }
            KeySegment::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

// ---------------------------------------------------------------- the reading ----

/// Every document of `text` as YAML reads it, or why it is not YAML.
fn read_values(text: &str) -> Result<Vec<Value>, String> {
    // The parser underneath reads a byte order mark as content.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_yaml_ng::Deserializer::from_str(text)
        .map(Value::deserialize)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not valid YAML: {e}"))
}

/// One scalar's text (quotes included) as YAML reads it.
fn read_scalar(text: &str) -> Option<Value> {
    serde_yaml_ng::from_str(text).ok()
}

fn untag(value: &Value) -> &Value {
    match value {
        Value::Tagged(tagged) => untag(&tagged.value),
        other => other,
    }
}

/// Whether a mapping key, as YAML read it, is the name in an edit key.
fn key_is(key: &Value, name: &str) -> bool {
    match key {
        Value::String(text) => text == name,
        Value::Number(number) => number.to_string() == name,
        Value::Bool(flag) => flag.to_string() == name,
        Value::Tagged(tagged) => key_is(&tagged.value, name),
        _ => false,
    }
}

fn lookup<'v>(value: &'v Value, key: &[KeySegment]) -> Option<&'v Value> {
    key.iter()
        .try_fold(value, |node, segment| match (untag(node), segment) {
            (Value::Mapping(map), KeySegment::Field(name)) => {
                map.iter().find(|(k, _)| key_is(k, name)).map(|(_, v)| v)
            }
            (Value::Sequence(items), KeySegment::Index(index)) => items.get(*index),
            _ => None,
        })
}

fn untag_mut(mut value: &mut Value) -> &mut Value {
    loop {
        match value {
            Value::Tagged(tagged) => value = &mut tagged.value,
            other => return other,
        }
    }
}

fn lookup_mut<'v>(value: &'v mut Value, key: &[KeySegment]) -> Option<&'v mut Value> {
    let mut node = value;
    for segment in key {
        node = match (untag_mut(node), segment) {
            (Value::Mapping(map), KeySegment::Field(name)) => map
                .iter_mut()
                .find(|(k, _)| key_is(k, name))
                .map(|(_, v)| v)?,
            (Value::Sequence(items), KeySegment::Index(index)) => items.get_mut(*index)?,
            _ => return None,
        };
    }
    Some(node)
}

/// The edit's value as YAML would read it back.
fn yaml_value(value: &EditValue) -> Value {
    match value {
        EditValue::String(text) => Value::String(text.clone()),
        EditValue::Bool(flag) => Value::Bool(*flag),
        EditValue::Number(number) => {
            if let Some(n) = number.as_u64() {
                Value::Number(n.into())
            } else if let Some(n) = number.as_i64() {
                Value::Number(n.into())
            } else {
                Value::Number(number.as_f64().unwrap_or(f64::NAN).into())
            }
        }
    }
}

/// Whether the scalar YAML read already is the wanted value: same type and same value
/// (`1.50` holds 1.5; `"3"` does not hold 3, nor `3.0`).
fn holds(current: &Value, wanted: &EditValue) -> bool {
    match (untag(current), wanted) {
        (Value::String(have), EditValue::String(want)) => have == want,
        (Value::Bool(have), EditValue::Bool(want)) => have == want,
        (Value::Number(have), EditValue::Number(want)) => {
            if have.is_f64() || want.is_f64() {
                have.is_f64() && want.is_f64() && have.as_f64() == want.as_f64()
            } else {
                match (have.as_i64(), want.as_i64()) {
                    (Some(a), Some(b)) => a == b,
                    _ => have.as_u64().is_some() && have.as_u64() == want.as_u64(),
                }
            }
        }
        _ => false,
    }
}

/// Whether the node at `key`, or any node on the way to it, carries an anchor.
fn anchored(root: &Node, key: &[KeySegment]) -> bool {
    let mut node = root;
    for segment in key {
        if node.props.anchor {
            return true;
        }
        let next = match (&node.kind, segment) {
            (Kind::Map(entries), KeySegment::Field(name)) => {
                entries.iter().find(|(k, _)| k == name).map(|(_, v)| v)
            }
            (Kind::Seq(items), KeySegment::Index(index)) => items.get(*index),
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None => return false,
        }
    }
    node.props.anchor
}

// ---------------------------------------------------------- finding the target ----

/// What an edit replaces.
enum Target {
    /// A scalar's text.
    Scalar(Scalar),
    /// A block mapping value left empty (`key:`): the new value goes after the colon.
    Empty(usize),
}

fn locate<'d>(
    docs: &'d [Document],
    only: Option<usize>,
    key: &[KeySegment],
    shown: &str,
) -> Result<(usize, &'d Node), Refusal> {
    let mut found = Vec::new();
    let mut misses = Vec::new();
    for (index, doc) in docs.iter().enumerate() {
        if only.is_some_and(|only| only != index) {
            continue;
        }
        match walk(&doc.root, key) {
            Ok(node) => found.push((index, node)),
            Err(why) => misses.push(why),
        }
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(Refusal::not_found(match misses.as_slice() {
            [] => format!("{shown}: the file holds no YAML document"),
            [why] => format!("{shown}: {why}"),
            [first, ..] => format!(
                "{shown} is in none of the {} documents (in the first, {first})",
                misses.len()
            ),
        })),
        many => Err(Refusal::failed(format!(
            "{shown} is in more than one document ({}); edit-yaml cannot tell which to change",
            many.iter()
                .map(|(index, _)| format!("#{}", index + 1))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn walk<'d>(root: &'d Node, key: &[KeySegment]) -> Result<&'d Node, String> {
    let mut node = root;
    for (depth, segment) in key.iter().enumerate() {
        let here = if depth == 0 {
            "the document".to_string()
        } else {
            display_key(&key[..depth])
        };
        node = match (&node.kind, segment) {
            (Kind::Map(entries), KeySegment::Field(name)) => entries
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("{here} has no key {name:?}"))?,
            (Kind::Seq(items), KeySegment::Index(index)) => items
                .get(*index)
                .ok_or_else(|| format!("{here} has {} items, so no [{index}]", items.len()))?,
            (Kind::Map(_), KeySegment::Index(index)) => {
                return Err(format!("{here} is a mapping, not a list, so no [{index}]"));
            }
            (Kind::Seq(_), KeySegment::Field(name)) => {
                return Err(format!(
                    "{here} is a list, not a mapping, so no key {name:?}"
                ));
            }
            (Kind::Alias(alias), _) => {
                return Err(format!(
                    "{here} is an alias (*{alias}); edit the anchored node instead"
                ));
            }
            _ => return Err(format!("{here} is a single value, not a mapping or list")),
        };
    }
    Ok(node)
}

fn target(node: &Node, shown: &str) -> Result<Target, Refusal> {
    if let Some(tag) = &node.props.tag {
        return Err(Refusal::failed(format!(
            "{shown} carries the tag {tag}; edit-yaml does not rewrite tagged values"
        )));
    }
    match &node.kind {
        Kind::Scalar(scalar) if scalar.multiline => Err(Refusal::failed(format!(
            "{shown} spans several lines; edit-yaml replaces single-line values only"
        ))),
        Kind::Scalar(scalar) => Ok(Target::Scalar(scalar.clone())),
        Kind::Empty {
            insert_at: Some(at),
        } if !node.props.anchor => Ok(Target::Empty(*at)),
        Kind::Empty { .. } => Err(Refusal::failed(format!(
            "{shown} has no value here that can be replaced in place"
        ))),
        Kind::Map(_) => Err(Refusal::failed(format!(
            "{shown} is a mapping, not a single value"
        ))),
        Kind::Seq(_) => Err(Refusal::failed(format!(
            "{shown} is a list, not a single value"
        ))),
        Kind::BlockScalar => Err(Refusal::failed(format!(
            "{shown} is a literal or folded block (| or >); edit-yaml replaces single-line values only"
        ))),
        Kind::Alias(alias) => Err(Refusal::failed(format!(
            "{shown} is an alias (*{alias}); edit the anchored value instead"
        ))),
    }
}

// ------------------------------------------------------------- writing a value ----

fn splice(text: &str, span: Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..span.start]);
    out.push_str(with);
    out.push_str(&text[span.end..]);
    out
}

/// The text that replaces a scalar whose style is `style` (`None`: an empty value).
/// Numbers and booleans are written bare; strings keep single or double quotes, and a
/// plain one stays bare only when YAML — 1.2 and 1.1 alike — would read it back as the
/// same string. In a JSON document strings are always double-quoted.
fn render(
    value: &EditValue,
    style: Option<Style>,
    flow: bool,
    json_like: bool,
    shown: &str,
) -> Result<String, Refusal> {
    let text = match value {
        EditValue::Number(number) => return Ok(number.to_string()),
        EditValue::Bool(flag) => return Ok(flag.to_string()),
        EditValue::String(text) => text,
    };
    if text.contains(['\n', '\r']) {
        return Err(Refusal::failed(format!(
            "{shown}: the new value has a line break; edit-yaml writes single-line values only"
        )));
    }
    Ok(match style {
        Some(Style::Single) if !text.chars().any(needs_escape) => single_quoted(text),
        Some(Style::Single | Style::Double) => double_quoted(text),
        Some(Style::Plain) | None if !json_like && plain_reads_back(text, flow) => text.clone(),
        Some(Style::Plain) | None => double_quoted(text),
    })
}

/// Whether `text`, written bare, reads back as that very string.
fn plain_reads_back(text: &str, flow: bool) -> bool {
    !text.is_empty()
        && text.trim() == text
        && !text.chars().any(needs_escape)
        && !yaml11_boolean(text)
        && !yaml11_number(text)
        && (!flow || !text.contains([',', '[', ']', '{', '}', '#', ':']))
        && read_scalar(text).is_some_and(|read| read == Value::String(text.to_string()))
}

/// The words a YAML 1.1 reader (Flux, kustomize) takes for booleans.
fn yaml11_boolean(text: &str) -> bool {
    ["y", "n", "yes", "no", "on", "off", "true", "false"]
        .iter()
        .any(|word| text.eq_ignore_ascii_case(word))
}

/// Numbers only YAML 1.1 reads as such: `1_000`, sexagesimal `1:30`, octal `0755`.
fn yaml11_number(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let numeric = digits.bytes().any(|b| b.is_ascii_digit())
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'_' | b':' | b'.'))
        && !digits.starts_with([':', '_']);
    numeric
        && (digits.contains(['_', ':'])
            || (digits.len() > 1
                && digits.starts_with('0')
                && digits.bytes().all(|b| b.is_ascii_digit())))
}

/// Characters a quoted YAML (and JSON) string must escape: controls, and the ones
/// YAML does not allow bare or YAML 1.1 reads as line breaks.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{feff}' | '\u{fffe}' | '\u{ffff}' | '\u{2028}' | '\u{2029}'
        )
}

fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Double-quoted with escapes that JSON reads the same way.
fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// -------------------------------------------------------------- the text reader ----

/// A document of the stream.
#[derive(Debug)]
struct Document {
    root: Node,
    /// The root is a flow collection: a JSON file, whose strings must stay quoted.
    json_like: bool,
}

/// A node and where its content starts.
#[derive(Debug)]
struct Node {
    kind: Kind,
    props: Props,
    at: usize,
}

/// An anchor (`&a`) or tag (`!t`) written before a node.
#[derive(Debug, Default)]
struct Props {
    anchor: bool,
    tag: Option<String>,
}

#[derive(Debug)]
enum Kind {
    /// Keys as YAML reads them (quotes removed), in file order.
    Map(Vec<(String, Node)>),
    Seq(Vec<Node>),
    Scalar(Scalar),
    /// No value at all. `insert_at` is where one can be written: right after the
    /// colon of a block mapping entry.
    Empty {
        insert_at: Option<usize>,
    },
    /// `|` or `>`.
    BlockScalar,
    /// `*name`.
    Alias(String),
}

#[derive(Clone, Debug)]
struct Scalar {
    /// The scalar's text, quotes included, comments and trailing spaces excluded.
    span: Range<usize>,
    style: Style,
    /// Inside a flow collection (`[…]`, `{…}`), where `,[]{}` end a plain scalar.
    flow: bool,
    multiline: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
}

/// Where a block node sits, which decides what may follow on its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctx {
    Root,
    MapValue,
    SeqEntry,
}

/// Reads `text` into documents with positions, or says which construct it cannot
/// edit around. Expects valid YAML (checked first with a real parser).
fn parse(text: &str) -> Result<Vec<Document>, String> {
    // A byte order mark is not part of the first line's indentation.
    let origin = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let mut parser = Parser {
        text,
        b: text.as_bytes(),
        pos: origin,
        origin,
    };
    parser.stream()
}

struct Parser<'t> {
    text: &'t str,
    b: &'t [u8],
    pos: usize,
    /// Where the first line starts (after a byte order mark).
    origin: usize,
}

type Parsed<T> = Result<T, String>;

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn byte(&self, at: usize) -> Option<u8> {
        self.b.get(at).copied()
    }

    fn blank_or_end(&self, at: usize) -> bool {
        matches!(self.byte(at), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
    }

    fn at_line_end(&self) -> bool {
        matches!(self.peek(), None | Some(b'\r' | b'\n'))
    }

    fn line_start(&self, at: usize) -> usize {
        self.b[..at]
            .iter()
            .rposition(|&c| c == b'\n' || c == b'\r')
            .map_or(self.origin, |i| i + 1)
    }

    fn line_of(&self, at: usize) -> usize {
        let at = at.min(self.b.len());
        let lf = self.b[..at].iter().filter(|&&c| c == b'\n').count();
        let lone_cr = self.b[..at]
            .iter()
            .enumerate()
            .filter(|&(i, &c)| c == b'\r' && self.byte(i + 1) != Some(b'\n'))
            .count();
        lf + lone_cr + 1
    }

    fn error<T>(&self, at: usize, what: impl Display) -> Parsed<T> {
        Err(format!("line {}: {what}", self.line_of(at)))
    }

    fn skip_inline(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// A `#` starts a comment only at a line start or after white space.
    fn comment_here(&self) -> bool {
        self.peek() == Some(b'#')
            && (self.pos == self.origin
                || matches!(self.byte(self.pos - 1), Some(b' ' | b'\t' | b'\r' | b'\n')))
    }

    fn skip_comment(&mut self) {
        if self.comment_here() {
            while !self.at_line_end() {
                self.pos += 1;
            }
        }
    }

    fn skip_break(&mut self) -> bool {
        match self.peek() {
            Some(b'\r') => {
                self.pos += 1;
                if self.peek() == Some(b'\n') {
                    self.pos += 1;
                }
                true
            }
            Some(b'\n') => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    /// Skips spaces, comments and line breaks up to the next content; true when a line
    /// break was crossed.
    fn skip_to_content(&mut self) -> bool {
        let mut crossed = false;
        loop {
            self.skip_inline();
            self.skip_comment();
            if !self.skip_break() {
                return crossed;
            }
            crossed = true;
        }
    }

    /// After a value in block context: only spaces and a comment may follow on its line.
    fn end_of_line(&mut self) -> Parsed<()> {
        self.skip_inline();
        self.skip_comment();
        if self.at_line_end() {
            Ok(())
        } else {
            self.error(self.pos, "unexpected text after a value")
        }
    }

    /// `---` or `...` at a line start.
    fn at_boundary(&self) -> bool {
        self.pos == self.line_start(self.pos)
            && (self.b[self.pos..].starts_with(b"---") || self.b[self.pos..].starts_with(b"..."))
            && self.blank_or_end(self.pos + 3)
    }

    fn at_dash(&self) -> bool {
        self.peek() == Some(b'-') && self.blank_or_end(self.pos + 1)
    }

    /// The column of `at`; indentation must be spaces.
    fn column_of(&self, at: usize) -> Parsed<usize> {
        let start = self.line_start(at);
        if self.b[start..at].contains(&b'\t') {
            return self.error(at, "a tab in the indentation");
        }
        Ok(at - start)
    }

    fn stream(&mut self) -> Parsed<Vec<Document>> {
        let mut docs = Vec::new();
        loop {
            self.skip_to_content();
            while self.peek() == Some(b'%') && self.pos == self.line_start(self.pos) {
                while !self.at_line_end() {
                    self.pos += 1;
                }
                self.skip_to_content();
            }
            if self.peek().is_none() {
                break;
            }
            let explicit = self.at_boundary() && self.b[self.pos..].starts_with(b"---");
            if self.at_boundary() && !explicit {
                self.pos += 3;
                self.end_of_line()?;
                continue;
            }
            if explicit {
                self.pos += 3;
            }
            let root = self.node(-1, Ctx::Root, explicit)?;
            let json_like = matches!(root.kind, Kind::Map(_) | Kind::Seq(_))
                && matches!(self.byte(root.at), Some(b'{' | b'['));
            docs.push(Document { root, json_like });
            self.skip_to_content();
            if self.peek().is_none() {
                break;
            }
            if !self.at_boundary() {
                return self.error(self.pos, "unexpected content after the end of a document");
            }
            if self.b[self.pos..].starts_with(b"...") {
                self.pos += 3;
                self.end_of_line()?;
            }
        }
        Ok(docs)
    }

    /// Whether a node starting on a new line at the current position belongs to a
    /// parent at `indent`.
    fn starts_here(&self, indent: isize, ctx: Ctx) -> Parsed<bool> {
        if self.peek().is_none() || self.at_boundary() {
            return Ok(false);
        }
        let column = self.column_of(self.pos)? as isize;
        Ok(column > indent || (ctx == Ctx::MapValue && column == indent && self.at_dash()))
    }

    /// A block node after an indicator (`:`, `-`, `---`; `inline` while on its line) or
    /// at the start of a document.
    fn node(&mut self, indent: isize, ctx: Ctx, mut inline: bool) -> Parsed<Node> {
        let after_indicator = self.pos;
        if self.skip_to_content() {
            inline = false;
        }
        let mut props = Props::default();
        // Properties on the same line as an implicit key belong to the key.
        let mut props_on_line = false;
        loop {
            let present = if inline {
                self.peek().is_some()
            } else {
                self.starts_here(indent, ctx)?
            };
            if !present {
                let insert_at = (ctx == Ctx::MapValue).then_some(after_indicator);
                return Ok(Node {
                    kind: Kind::Empty { insert_at },
                    props,
                    at: after_indicator,
                });
            }
            match self.peek() {
                Some(b'&' | b'!') => {
                    let start = self.pos;
                    while !self.blank_or_end(self.pos) {
                        self.pos += 1;
                    }
                    let token = &self.text[start..self.pos];
                    if token.starts_with('&') {
                        props.anchor = true;
                    } else {
                        props.tag = Some(token.to_string());
                    }
                    props_on_line = true;
                    if self.skip_to_content() {
                        inline = false;
                        props_on_line = false;
                    }
                }
                _ => break,
            }
        }

        let at = self.pos;
        let kind = match self.peek() {
            Some(b'-') if self.at_dash() => {
                if inline && ctx == Ctx::MapValue {
                    return self.error(at, "a list cannot start on the line of its key");
                }
                let column = self.column_of(at)?;
                self.block_seq(column)?
            }
            Some(b'?') if self.blank_or_end(self.pos + 1) => {
                return self.error(at, "explicit keys (`? `) are not supported");
            }
            Some(b'|' | b'>') => {
                self.skip_block_scalar(indent);
                Kind::BlockScalar
            }
            Some(b'*') => {
                let start = self.pos + 1;
                while !self.blank_or_end(self.pos) {
                    self.pos += 1;
                }
                let name = self.text[start..self.pos].to_string();
                self.skip_inline();
                if self.peek() == Some(b':') && self.blank_or_end(self.pos + 1) {
                    return self.error(at, "an alias as a key is not supported");
                }
                self.end_of_line()?;
                Kind::Alias(name)
            }
            Some(b'[' | b'{') => {
                let kind = self.flow_collection()?;
                self.skip_inline();
                if self.peek() == Some(b':') && self.blank_or_end(self.pos + 1) {
                    return self.error(at, "a collection as a key is not supported");
                }
                self.end_of_line()?;
                kind
            }
            _ => {
                let scalar = self.block_scalar_line()?;
                let after = self.pos;
                self.skip_inline();
                if self.peek() == Some(b':') && self.blank_or_end(self.pos + 1) {
                    if props_on_line {
                        return self.error(at, "an anchor or tag on a key is not supported");
                    }
                    if inline && ctx == Ctx::MapValue {
                        return self.error(at, "a mapping cannot start on the line of its key");
                    }
                    let key = self.key_text(&scalar)?;
                    let column = self.column_of(at)?;
                    self.block_map(column, key, at)?
                } else {
                    self.pos = after;
                    let scalar = if scalar.style == Style::Plain {
                        self.plain_continuation(scalar, indent)?
                    } else {
                        scalar
                    };
                    self.end_of_line()?;
                    Kind::Scalar(scalar)
                }
            }
        };
        Ok(Node { kind, props, at })
    }

    /// The entries of a block mapping whose keys sit at `column`; the first key is read
    /// and the position is at its `:`.
    fn block_map(&mut self, column: usize, first: String, first_at: usize) -> Parsed<Kind> {
        let mut entries: Vec<(String, Node)> = Vec::new();
        let (mut key, mut key_at) = (first, first_at);
        loop {
            self.pos += 1; // the `:`
            let value = self.node(column as isize, Ctx::MapValue, true)?;
            if entries.iter().any(|(k, _)| *k == key) {
                return self.error(key_at, format!("the key {key:?} appears twice"));
            }
            entries.push((key, value));

            self.skip_to_content();
            if self.peek().is_none() || self.at_boundary() {
                break;
            }
            let here = self.column_of(self.pos)?;
            if here < column {
                break;
            }
            if here > column {
                return self.error(self.pos, "unexpected indentation");
            }
            key_at = self.pos;
            match self.peek() {
                Some(b'-') if self.at_dash() => {
                    return self.error(key_at, "a list item where a key was expected");
                }
                Some(b'?') if self.blank_or_end(self.pos + 1) => {
                    return self.error(key_at, "explicit keys (`? `) are not supported");
                }
                Some(b'&' | b'!') => {
                    return self.error(key_at, "an anchor or tag on a key is not supported");
                }
                Some(b'[' | b'{' | b'*' | b'|' | b'>') => {
                    return self.error(key_at, "only plain or quoted keys are supported");
                }
                _ => {}
            }
            let scalar = self.block_scalar_line()?;
            self.skip_inline();
            if !(self.peek() == Some(b':') && self.blank_or_end(self.pos + 1)) {
                return self.error(key_at, "expected a key followed by ':'");
            }
            key = self.key_text(&scalar)?;
        }
        Ok(Kind::Map(entries))
    }

    /// The items of a block list whose dashes sit at `column`; the position is at the
    /// first dash.
    fn block_seq(&mut self, column: usize) -> Parsed<Kind> {
        let mut items = Vec::new();
        loop {
            self.pos += 1; // the `-`
            items.push(self.node(column as isize, Ctx::SeqEntry, true)?);
            self.skip_to_content();
            if self.peek().is_none() || self.at_boundary() {
                break;
            }
            let here = self.column_of(self.pos)?;
            if here < column || (here == column && !self.at_dash()) {
                break;
            }
            if here > column {
                return self.error(self.pos, "unexpected indentation");
            }
        }
        Ok(Kind::Seq(items))
    }

    /// Steps over a `|` or `>` scalar: its header line, then every line that is blank or
    /// indented deeper than the parent at `indent`.
    fn skip_block_scalar(&mut self, indent: isize) {
        while !self.at_line_end() {
            self.pos += 1;
        }
        self.skip_break();
        while self.peek().is_some() {
            let start = self.pos;
            let mut end = start;
            while !matches!(self.byte(end), None | Some(b'\r' | b'\n')) {
                end += 1;
            }
            let line = &self.b[start..end];
            let blank = line.iter().all(|&c| c == b' ' || c == b'\t');
            let spaces = line.iter().take_while(|&&c| c == b' ').count();
            if !blank && (self.at_boundary() || spaces as isize <= indent) {
                break;
            }
            self.pos = end;
            self.skip_break();
        }
    }

    /// A quoted scalar, or the first line of a plain one, in block context.
    fn block_scalar_line(&mut self) -> Parsed<Scalar> {
        if matches!(self.peek(), Some(b'\'' | b'"')) {
            return self.quoted(false);
        }
        let start = self.pos;
        let end = self.plain_line(false);
        if end == start {
            return self.error(start, "expected a value");
        }
        Ok(Scalar {
            span: start..end,
            style: Style::Plain,
            flow: false,
            multiline: false,
        })
    }

    /// Scans plain text to the end of its line (or `: `, ` #`, and in flow context a
    /// flow indicator); returns where the text ends, trailing spaces excluded.
    fn plain_line(&mut self, flow: bool) -> usize {
        let mut end = self.pos;
        loop {
            match self.peek() {
                None | Some(b'\r' | b'\n') => break,
                Some(b':')
                    if self.blank_or_end(self.pos + 1)
                        || (flow
                            && matches!(
                                self.byte(self.pos + 1),
                                Some(b',' | b'[' | b']' | b'{' | b'}')
                            )) =>
                {
                    break;
                }
                Some(b'#') if self.comment_here() => break,
                Some(b',' | b'[' | b']' | b'{' | b'}') if flow => break,
                Some(b' ' | b'\t') => self.pos += 1,
                Some(_) => {
                    self.pos += 1;
                    end = self.pos;
                }
            }
        }
        end
    }

    /// Extends a plain block scalar over the lines that continue it (indented deeper
    /// than the parent, not comments). Such a scalar cannot be edited in place, but it
    /// must be stepped over correctly.
    fn plain_continuation(&mut self, mut scalar: Scalar, indent: isize) -> Parsed<Scalar> {
        while self.at_line_end() && self.peek().is_some() {
            let save = self.pos;
            self.skip_break();
            // The next line that is not blank.
            loop {
                let line = self.pos;
                self.skip_inline();
                if self.at_line_end() && self.peek().is_some() {
                    self.skip_break();
                    continue;
                }
                let spaces = self.b[line..self.pos]
                    .iter()
                    .take_while(|&&c| c == b' ')
                    .count();
                let continues = self.peek().is_some()
                    && !self.comment_here()
                    && !(self.pos == line && self.at_boundary())
                    && spaces as isize > indent;
                if !continues {
                    self.pos = save;
                    return Ok(scalar);
                }
                break;
            }
            let end = self.plain_line(false);
            if self.peek() == Some(b':') {
                return self.error(self.pos, "a key inside a value that spans lines");
            }
            scalar.span.end = end.max(scalar.span.end);
            scalar.multiline = true;
        }
        Ok(scalar)
    }

    /// A `'…'` or `"…"` scalar, which may span lines.
    fn quoted(&mut self, flow: bool) -> Parsed<Scalar> {
        let start = self.pos;
        let quote = self.b[start];
        self.pos += 1;
        loop {
            match self.peek() {
                None => return self.error(start, "a quoted value is not closed"),
                Some(b'\\') if quote == b'"' => self.pos = (self.pos + 2).min(self.b.len()),
                Some(c) if c == quote => {
                    if quote == b'\'' && self.byte(self.pos + 1) == Some(b'\'') {
                        self.pos += 2;
                    } else {
                        self.pos += 1;
                        break;
                    }
                }
                Some(_) => self.pos += 1,
            }
        }
        let span = start..self.pos;
        let multiline = self.b[span.clone()]
            .iter()
            .any(|&c| c == b'\n' || c == b'\r');
        Ok(Scalar {
            span,
            style: if quote == b'"' {
                Style::Double
            } else {
                Style::Single
            },
            flow,
            multiline,
        })
    }

    /// A key's name as YAML reads it: plain keys as written, quoted ones unquoted.
    fn key_text(&self, scalar: &Scalar) -> Parsed<String> {
        if scalar.multiline {
            return self.error(scalar.span.start, "a key that spans lines is not supported");
        }
        let raw = &self.text[scalar.span.clone()];
        if scalar.style == Style::Plain {
            return Ok(raw.to_string());
        }
        match read_scalar(raw) {
            Some(Value::String(name)) => Ok(name),
            _ => self.error(scalar.span.start, format!("cannot read the key {raw}")),
        }
    }

    /// Skips spaces, line breaks and comments inside a flow collection.
    fn skip_flow_space(&mut self) {
        loop {
            self.skip_inline();
            self.skip_comment();
            if !self.skip_break() {
                return;
            }
        }
    }

    /// A `[…]` or `{…}` collection, which may span lines; the position is at its
    /// opening bracket.
    fn flow_collection(&mut self) -> Parsed<Kind> {
        let open_at = self.pos;
        let is_map = self.b[open_at] == b'{';
        let close = if is_map { b'}' } else { b']' };
        self.pos += 1;
        let mut entries: Vec<(String, Node)> = Vec::new();
        let mut items = Vec::new();
        loop {
            self.skip_flow_space();
            match self.peek() {
                None => return self.error(open_at, "a flow collection is not closed"),
                Some(c) if c == close => {
                    self.pos += 1;
                    break;
                }
                _ => {}
            }
            if is_map {
                let key_at = self.pos;
                let key = self.flow_key()?;
                self.skip_flow_space();
                let value = if self.peek() == Some(b':') {
                    self.pos += 1;
                    self.flow_node()?
                } else {
                    Node {
                        kind: Kind::Empty { insert_at: None },
                        props: Props::default(),
                        at: self.pos,
                    }
                };
                if entries.iter().any(|(k, _)| *k == key) {
                    return self.error(key_at, format!("the key {key:?} appears twice"));
                }
                entries.push((key, value));
            } else {
                let item = self.flow_node()?;
                self.skip_flow_space();
                if self.peek() == Some(b':') {
                    return self.error(
                        self.pos,
                        "a key: value pair inside a flow list is not supported",
                    );
                }
                items.push(item);
            }
            self.skip_flow_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    break;
                }
                _ => return self.error(self.pos, "expected ',' or the end of the collection"),
            }
        }
        Ok(if is_map {
            Kind::Map(entries)
        } else {
            Kind::Seq(items)
        })
    }

    fn flow_key(&mut self) -> Parsed<String> {
        let at = self.pos;
        match self.peek() {
            Some(b'\'' | b'"') => {
                let scalar = self.quoted(true)?;
                self.key_text(&scalar)
            }
            Some(b'?' | b'&' | b'!' | b'*' | b'[' | b'{') => {
                self.error(at, "only plain or quoted keys are supported")
            }
            _ => {
                let end = self.plain_line(true);
                if end == at {
                    return self.error(at, "expected a key");
                }
                Ok(self.text[at..end].to_string())
            }
        }
    }

    /// A node inside a flow collection.
    fn flow_node(&mut self) -> Parsed<Node> {
        self.skip_flow_space();
        let mut props = Props::default();
        while let Some(b'&' | b'!') = self.peek() {
            let start = self.pos;
            while !self.blank_or_end(self.pos)
                && !matches!(self.peek(), Some(b',' | b'[' | b']' | b'{' | b'}'))
            {
                self.pos += 1;
            }
            let token = &self.text[start..self.pos];
            if token.starts_with('&') {
                props.anchor = true;
            } else {
                props.tag = Some(token.to_string());
            }
            self.skip_flow_space();
        }
        let at = self.pos;
        let kind = match self.peek() {
            None => return self.error(at, "a flow collection is not closed"),
            Some(b'[' | b'{') => self.flow_collection()?,
            Some(b'*') => {
                let start = self.pos + 1;
                while !self.blank_or_end(self.pos)
                    && !matches!(self.peek(), Some(b',' | b']' | b'}'))
                {
                    self.pos += 1;
                }
                Kind::Alias(self.text[start..self.pos].to_string())
            }
            Some(b'\'' | b'"') => Kind::Scalar(self.quoted(true)?),
            Some(b',' | b']' | b'}') => Kind::Empty { insert_at: None },
            Some(_) => Kind::Scalar(self.flow_plain()?),
        };
        Ok(Node { kind, props, at })
    }

    /// A plain scalar inside a flow collection; it may continue on following lines.
    fn flow_plain(&mut self) -> Parsed<Scalar> {
        let start = self.pos;
        let mut end = self.plain_line(true);
        if end == start {
            return self.error(start, "expected a value");
        }
        let mut multiline = false;
        while self.at_line_end() && self.peek().is_some() {
            let save = self.pos;
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
                self.pos += 1;
            }
            if matches!(self.peek(), None | Some(b',' | b']' | b'}' | b':' | b'#')) {
                self.pos = save;
                break;
            }
            multiline = true;
            end = self.plain_line(true).max(end);
        }
        Ok(Scalar {
            span: start..end,
            style: Style::Plain,
            flow: true,
            multiline,
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::config::yaml::parse_key;

    fn value(v: serde_json::Value) -> EditValue {
        serde_json::from_value(v).expect("a scalar")
    }

    fn key(k: &str) -> Vec<KeySegment> {
        parse_key(k).expect("a key")
    }

    fn edit(text: &str, k: &str, v: serde_json::Value) -> Result<String, Refusal> {
        apply(text, &[(key(k), value(v))])
    }

    /// Only the lines in `changed` differ between `before` and `after`, and they read
    /// as given.
    fn lines_changed(before: &str, after: &str) -> Vec<(usize, String)> {
        let a: Vec<&str> = before.split('\n').collect();
        let b: Vec<&str> = after.split('\n').collect();
        assert_eq!(a.len(), b.len(), "the number of lines changed:\n{after}");
        a.iter()
            .zip(&b)
            .enumerate()
            .filter(|(_, (x, y))| x != y)
            .map(|(i, (_, y))| (i + 1, y.to_string()))
            .collect()
    }

    const VALUES: &str = "\
# Managed by Hecate: the revision is promoted, do not edit by hand.
app:
  name: api            # the service
  revision: 0000000000000000000000000000000000000000
  image:
    repository: ghcr.io/acme/api
    tag: \"1.0.0\"
    pullPolicy: 'IfNotPresent'

  replicas: 2
  ratio: 1.50
  debug: false
  empty:
  ports:
    - 8080
    - name: metrics   # scraped
      port: 9090
  matrix:
  - [1, 2]
  - - a
    - b
# a footer comment
";

    #[test]
    fn edits_change_exactly_one_line() {
        let cases: &[(&str, serde_json::Value, usize, &str)] = &[
            (
                "app.name",
                json!("web"),
                3,
                "  name: web            # the service",
            ),
            (
                "app.revision",
                json!("4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
                4,
                "  revision: 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
            ),
            ("app.image.tag", json!("2.0.0"), 7, "    tag: \"2.0.0\""),
            (
                "app.image.pullPolicy",
                json!("Always"),
                8,
                "    pullPolicy: 'Always'",
            ),
            (
                "app.image.pullPolicy",
                json!("it's"),
                8,
                "    pullPolicy: 'it''s'",
            ),
            ("app.replicas", json!(3), 10, "  replicas: 3"),
            ("app.replicas", json!("3"), 10, "  replicas: \"3\""),
            ("app.ratio", json!(0.25), 11, "  ratio: 0.25"),
            ("app.debug", json!(true), 12, "  debug: true"),
            ("app.empty", json!("x"), 13, "  empty: x"),
            ("app.ports[0]", json!(8081), 15, "    - 8081"),
            (
                "app.ports[1].name",
                json!("stats"),
                16,
                "    - name: stats   # scraped",
            ),
            ("app.ports[1].port", json!(9091), 17, "      port: 9091"),
            ("app.matrix[0][1]", json!(5), 19, "  - [1, 5]"),
            ("app.matrix[1][1]", json!("c"), 21, "    - c"),
        ];
        for (k, v, line, want) in cases {
            let after = edit(VALUES, k, v.clone()).unwrap_or_else(|e| panic!("{k}: {e}"));
            assert_eq!(
                lines_changed(VALUES, &after),
                vec![(*line, want.to_string())],
                "{k}"
            );
        }
    }

    #[test]
    fn strings_are_quoted_when_bare_text_would_read_otherwise() {
        let cases = [
            ("2.0.0", "tag: 2.0.0"),
            ("1.0", "tag: \"1.0\""),
            ("1.10", "tag: \"1.10\""),
            ("10", "tag: \"10\""),
            ("0x1F", "tag: \"0x1F\""),
            ("1e3", "tag: \"1e3\""),
            ("true", "tag: \"true\""),
            ("yes", "tag: \"yes\""),
            ("Off", "tag: \"Off\""),
            ("y", "tag: \"y\""),
            ("null", "tag: \"null\""),
            ("~", "tag: \"~\""),
            ("", "tag: \"\""),
            ("0755", "tag: \"0755\""),
            ("1_000", "tag: \"1_000\""),
            ("1:30", "tag: \"1:30\""),
            ("a: b", "tag: \"a: b\""),
            ("a #b", "tag: \"a #b\""),
            ("a#b", "tag: a#b"),
            (" padded", "tag: \" padded\""),
            ("- x", "tag: \"- x\""),
            ("*ref", "tag: \"*ref\""),
            ("say \"hi\"\t\\", "tag: \"say \\\"hi\\\"\\t\\\\\""),
            ("ghcr.io/acme/api:v1", "tag: ghcr.io/acme/api:v1"),
            ("sha256:abc", "tag: sha256:abc"),
            ("v1.2.3-rc.1+build", "tag: v1.2.3-rc.1+build"),
            ("héllo wörld", "tag: héllo wörld"),
        ];
        for (v, want) in cases {
            let after =
                edit("tag: 1.0.0\n", "tag", json!(v)).unwrap_or_else(|e| panic!("{v:?}: {e}"));
            assert_eq!(after, format!("{want}\n"), "{v:?}");
        }
    }

    #[test]
    fn numbers_and_booleans_are_written_bare() {
        for (v, want) in [
            (json!(3), "n: 3\n"),
            (json!(-7), "n: -7\n"),
            (json!(1.5), "n: 1.5\n"),
            (json!(false), "n: false\n"),
        ] {
            assert_eq!(
                edit("n: \"x\"\n", "n", v.clone()),
                Ok(want.to_string()),
                "{v}"
            );
        }
    }

    #[test]
    fn a_value_already_in_place_leaves_the_text_identical() {
        for (text, k, v) in [
            (VALUES, "app.name", json!("api")),
            (VALUES, "app.image.tag", json!("1.0.0")),
            (VALUES, "app.ratio", json!(1.5)),
            (VALUES, "app.replicas", json!(2)),
            (VALUES, "app.debug", json!(false)),
            (VALUES, "app.matrix[1][0]", json!("a")),
            ("a: 'x'\r\n", "a", json!("x")),
        ] {
            assert_eq!(edit(text, k, v), Ok(text.to_string()), "{k}");
        }
        // A different type is a different value.
        assert_eq!(edit("n: \"3\"\n", "n", json!(3)), Ok("n: 3\n".to_string()));
        assert_eq!(edit("n: 3.0\n", "n", json!(3)), Ok("n: 3\n".to_string()));
    }

    #[test]
    fn edits_apply_in_order_and_are_reentrant() {
        let changes = vec![
            (key("app.replicas"), value(json!(4))),
            (key("app.image.tag"), value(json!("2.0.0"))),
        ];
        let once = apply(VALUES, &changes).expect("applies");
        assert_eq!(
            lines_changed(VALUES, &once),
            vec![
                (7, "    tag: \"2.0.0\"".to_string()),
                (10, "  replicas: 4".to_string())
            ]
        );
        assert_eq!(apply(&once, &changes), Ok(once.clone()));
    }

    #[test]
    fn comments_blank_lines_and_odd_spacing_survive() {
        let text = "\
# head

a:    # why a
    # inside
    b:   old   # trailing, spaced
    c: 'keep'   #c

# between
d: \"q # not a comment\" # a comment
e: 1
...
";
        let after = edit(text, "a.b", json!("new")).expect("edits");
        assert_eq!(after, text.replace("b:   old   #", "b:   new   #"));
    }

    #[test]
    fn documents_are_searched_for_the_one_holding_the_key() {
        let text = "kind: ConfigMap\ndata:\n  colour: blue\n---\nkind: Deployment\nreplicas: 1\n";
        assert_eq!(
            edit(text, "replicas", json!(4)),
            Ok(text.replace("replicas: 1", "replicas: 4"))
        );
        assert_eq!(
            edit(text, "data.colour", json!("red")),
            Ok(text.replace("blue", "red"))
        );
        let ambiguous = edit(text, "kind", json!("Job")).expect_err("ambiguous");
        assert_eq!(ambiguous.reason, Reason::EditFailed);
        assert!(
            ambiguous.message.contains("more than one document"),
            "{ambiguous}"
        );
        let missing = edit(text, "spec", json!("x")).expect_err("missing");
        assert_eq!(missing.reason, Reason::KeyNotFound);
        assert!(
            missing.message.contains("none of the 2 documents"),
            "{missing}"
        );

        // Explicit markers, a directive and an empty document.
        let text = "%YAML 1.2\n---\na: 1\n...\n---\n---\nb: 2\n";
        assert_eq!(edit(text, "b", json!(3)), Ok(text.replace("b: 2", "b: 3")));
        assert_eq!(
            set(text, Some(0), &key("b"), &value(json!(3))).map_err(|r| r.reason),
            Err(Reason::KeyNotFound)
        );
    }

    #[test]
    fn json_stays_json() {
        let text = "{\n  \"name\": \"api\",\n  \"version\": \"1.0.0\",\n  \"replicas\": 2,\n  \"nested\": {\"list\": [1, {\"deep\": true}]}\n}\n";
        for (k, v, want) in [
            ("version", json!("2.0.0"), "\"version\": \"2.0.0\""),
            ("replicas", json!("x"), "\"replicas\": \"x\""),
            ("replicas", json!(5), "\"replicas\": 5"),
            ("nested.list[0]", json!(7), "[7, {"),
            ("nested.list[1].deep", json!(false), "{\"deep\": false}"),
        ] {
            let after = edit(text, k, v).unwrap_or_else(|e| panic!("{k}: {e}"));
            assert!(after.contains(want), "{k}: {after}");
            let parsed: serde_json::Value = serde_json::from_str(&after).expect("still JSON");
            assert!(parsed.is_object());
            assert_eq!(lines_changed(text, &after).len(), 1, "{k}");
        }
    }

    #[test]
    fn flow_collections_inside_block_yaml() {
        let text =
            "images: [{name: api, newTag: 1.0.0}, {name: web, newTag: '2'}]\nports: [80, 443]\n";
        assert_eq!(
            edit(text, "images[0].newTag", json!("1.1.0")),
            Ok(text.replace("newTag: 1.0.0", "newTag: 1.1.0"))
        );
        assert_eq!(
            edit(text, "images[1].newTag", json!("3")),
            Ok(text.replace("'2'", "'3'"))
        );
        assert_eq!(
            edit(text, "ports[1]", json!(8443)),
            Ok(text.replace("443]", "8443]"))
        );
        // A plain string with a flow indicator is quoted inside a flow collection.
        assert_eq!(
            edit(text, "images[0].newTag", json!("a,b")),
            Ok(text.replace("newTag: 1.0.0", "newTag: \"a,b\""))
        );
    }

    #[test]
    fn crlf_line_ends_are_kept() {
        let text = "a:\r\n  b: old # note\r\n  c: 1\r\n";
        assert_eq!(
            edit(text, "a.b", json!("new")),
            Ok("a:\r\n  b: new # note\r\n  c: 1\r\n".to_string())
        );
        assert_eq!(
            edit(text, "a.c", json!(2)),
            Ok(text.replace("c: 1", "c: 2"))
        );
        let bom = "\u{feff}a: 1\nb: 2\n";
        assert_eq!(edit(bom, "b", json!(3)), Ok(bom.replace("b: 2", "b: 3")));
    }

    #[test]
    fn keys_with_dots_quotes_and_odd_layouts() {
        let text = "\
metadata:
  annotations:
    flux.weave.works/tag: v1
    \"quoted key\": x
    'single': y
  labels: {app.kubernetes.io/name: api}
list:
- name: a
  value: 1
-   name: b
    value: 2
top: &anchor plain
";
        for (k, from, to) in [
            (
                r"metadata.annotations.flux\.weave\.works/tag",
                "tag: v1",
                "tag: v2",
            ),
            ("metadata.annotations.quoted key", "key\": x", "key\": v2"),
            ("metadata.annotations.single", "'single': y", "'single': v2"),
            (
                r"metadata.labels.app\.kubernetes\.io/name",
                "name: api}",
                "name: v2}",
            ),
            ("list[1].value", "value: 2", "value: v2"),
            ("top", "&anchor plain", "&anchor v2"),
        ] {
            assert_eq!(
                edit(text, k, json!("v2")),
                Ok(text.replace(from, to)),
                "{k}"
            );
        }
    }

    #[test]
    fn refusals_name_the_key_and_the_reason() {
        let text = "\
a:
  b: 1
  script: |
    echo hello
    x: y
  folded: >-
    long
  tagged: !!str 5
  alias: *x
  long: one
    two
  quoted: \"one
    two\"
base: &base
  tag: 1
other: *base
list: [1, 2]
";
        let cases = [
            ("a.c", Reason::KeyNotFound, "a has no key \"c\""),
            ("a.b.c", Reason::KeyNotFound, "a.b is a single value"),
            ("a[0]", Reason::KeyNotFound, "a is a mapping, not a list"),
            (
                "list.x",
                Reason::KeyNotFound,
                "list is a list, not a mapping",
            ),
            (
                "list[5]",
                Reason::KeyNotFound,
                "list has 2 items, so no [5]",
            ),
            (
                "other.tag",
                Reason::KeyNotFound,
                "other is an alias (*base)",
            ),
            ("a", Reason::EditFailed, "a is a mapping"),
            ("list", Reason::EditFailed, "list is a list"),
            ("a.script", Reason::EditFailed, "literal or folded block"),
            ("a.folded", Reason::EditFailed, "literal or folded block"),
            ("a.tagged", Reason::EditFailed, "carries the tag !!str"),
            ("a.alias", Reason::EditFailed, "a.alias is an alias (*x)"),
            ("a.long", Reason::EditFailed, "spans several lines"),
            ("a.quoted", Reason::EditFailed, "spans several lines"),
            ("base.tag", Reason::EditFailed, "shared through an anchor"),
        ];
        let text = format!("x: &x 0\n{text}");
        for (k, reason, says) in cases {
            let refusal = edit(&text, k, json!("v")).expect_err(k);
            assert_eq!(refusal.reason, reason, "{k}: {refusal}");
            assert!(refusal.message.contains(says), "{k}: {refusal}");
        }
        let refusal = edit("a: 1\n", "a", json!("two\nlines")).expect_err("multi-line");
        assert_eq!(refusal.reason, Reason::EditFailed);
        assert!(refusal.message.contains("line break"), "{refusal}");
    }

    #[test]
    fn files_that_are_not_yaml_or_use_unsupported_syntax_are_refused() {
        for (text, says) in [
            ("a: [1, 2\n", "not valid YAML"),
            ("a: 1\na: 2\n", "not valid YAML"),
            ("? a\n: 1\n", "explicit keys"),
            ("[a, b]: 1\nc: 2\n", "not supported"),
            ("&k a: 1\n", "anchor or tag on a key"),
        ] {
            let refusal = edit(text, "c", json!(1)).expect_err(text);
            assert_eq!(refusal.reason, Reason::EditFailed, "{text}");
            assert!(refusal.message.contains(says), "{text}: {refusal}");
        }
        let empty = edit("", "a", json!(1));
        assert_eq!(
            empty.as_ref().map_err(|r| r.reason),
            Err(Reason::KeyNotFound),
            "{empty:?}"
        );
        assert_eq!(
            edit("# only a comment\n", "a", json!(1)).map_err(|r| r.reason),
            Err(Reason::KeyNotFound)
        );
    }

    #[test]
    fn images_are_found_by_name_and_pinned_field() {
        let text = "\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
images:
  - name: ghcr.io/acme/sidecar
    newTag: 0.9.0
  - name: ghcr.io/acme/api
    digest: sha256:0000
---
images:
  - name: ghcr.io/acme/web
    newName: registry.local/web
";
        assert_eq!(
            find_image(text, "ghcr.io/acme/api"),
            Ok(ImagePin {
                document: 0,
                index: 1,
                field: PinField::Digest
            })
        );
        assert_eq!(
            find_image(text, "ghcr.io/acme/sidecar").map(|p| p.field),
            Ok(PinField::NewTag)
        );
        assert_eq!(
            find_image(text, "ghcr.io/acme/web").map_err(|r| r.reason),
            Err(Reason::KeyNotFound)
        );
        assert_eq!(
            find_image(text, "ghcr.io/acme/ghost").map_err(|r| r.reason),
            Err(Reason::KeyNotFound)
        );
        let twice = "images:\n- {name: a, newTag: '1'}\n- {name: a, newTag: '2'}\n";
        assert_eq!(
            find_image(twice, "a").map_err(|r| r.reason),
            Err(Reason::EditFailed)
        );

        let pin = find_image(text, "ghcr.io/acme/api").expect("found");
        assert_eq!(display_key(&pin.key()), "images[1].digest");
        assert_eq!(
            set(
                text,
                Some(pin.document),
                &pin.key(),
                &value(json!("sha256:beef"))
            ),
            Ok(text.replace("sha256:0000", "sha256:beef"))
        );
    }

    #[test]
    fn keys_display_as_written() {
        for k in [
            "app.revision",
            "images[0].newTag",
            r"a.flux\.io/x",
            "a[0][1]",
        ] {
            assert_eq!(display_key(&key(k)), k);
        }
    }
}
