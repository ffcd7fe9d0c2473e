//! Printing: the structured formats serialise exactly the value a table is built
//! from; tables are aligned, fit the terminal, and are coloured only on a terminal
//! and never with `NO_COLOR`.
//!
//! Text for people passes through [`shown`] on its way out, the one place that keeps
//! the cluster's text from talking to the terminal (DECISION 146): a commit subject, an
//! alias or a rejection reason is anyone's text, and an escape sequence in it could
//! write the clipboard, plant a link, clear the screen or reverse what follows.

use std::hash::BuildHasher as _;
use std::io::{IsTerminal as _, Write as _};
use std::sync::LazyLock;

use serde::Serialize;

use crate::cli::Format;
use crate::failure::Failure;
use crate::invocation::Invocation;

/// How text output looks: decided once, from the environment, then passed to the
/// (pure) renderers so their output is deterministic in tests.
#[derive(Clone, Debug)]
pub(crate) struct Style {
    /// Whether to use ANSI colour.
    pub(crate) colour: bool,
    /// The terminal's width, when writing to one.
    pub(crate) width: Option<usize>,
    /// How the user invoked us, for command hints.
    pub(crate) invocation: Invocation,
}

impl Style {
    /// The style for stdout as it is now.
    pub(crate) fn detect(invocation: Invocation) -> Self {
        let tty = std::io::stdout().is_terminal();
        let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let width = tty
            .then(|| terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)))
            .flatten();
        Self {
            colour: tty && !no_colour,
            width,
            invocation,
        }
    }

    /// Plain text, no width limit: for tests and pipes.
    #[cfg(test)]
    pub(crate) fn plain() -> Self {
        Self {
            colour: false,
            width: None,
            invocation: Invocation::from_argv0("hecate"),
        }
    }

    /// `text` in a colour, when colour is on.
    pub(crate) fn paint(&self, colour: Colour, text: &str) -> String {
        if self.colour {
            format!(
                "{}{text}{}",
                control(Control::Colour(colour)),
                control(Control::Reset)
            )
        } else {
            text.to_string()
        }
    }
}

/// The ANSI colours the renderers use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Colour {
    Red = 31,
    Green = 32,
    Yellow = 33,
    Cyan = 36,
    Dim = 2,
    Bold = 1,
}

/// The terminal sequences the renderers write themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    /// Text in a colour from here on.
    Colour(Colour),
    /// Plain text again.
    Reset,
    /// The cursor home and the screen cleared (`status --watch` redrawing).
    ClearScreen,
    /// Back to the start of the line, cleared (`--watch`'s live line).
    ClearLine,
}

impl Control {
    const ALL: [Self; 9] = [
        Self::Colour(Colour::Red),
        Self::Colour(Colour::Green),
        Self::Colour(Colour::Yellow),
        Self::Colour(Colour::Cyan),
        Self::Colour(Colour::Dim),
        Self::Colour(Colour::Bold),
        Self::Reset,
        Self::ClearScreen,
        Self::ClearLine,
    ];

    /// What the terminal receives.
    fn sequence(self) -> String {
        match self {
            Self::Colour(colour) => format!("\x1b[{}m", colour as u8),
            Self::Reset => "\x1b[0m".into(),
            Self::ClearScreen => "\x1b[H\x1b[2J".into(),
            Self::ClearLine => "\r\x1b[2K".into(),
        }
    }
}

/// The start of a [`Control`]'s mark in text on its way to [`shown`]: a noncharacter
/// and a number drawn when the process starts, so text from the cluster — which was
/// written before it — cannot hold a mark [`shown`] would obey.
static MARK: LazyLock<String> = LazyLock::new(|| {
    let secret = std::hash::RandomState::new().hash_one(std::process::id());
    format!("\u{FDD0}{secret:016x}")
});

/// The end of a mark.
const MARK_END: char = '\u{FDD1}';

/// `control`, marked in the text, for [`shown`] to write out.
pub(crate) fn control(control: Control) -> String {
    let index = Control::ALL
        .iter()
        .position(|c| *c == control)
        .unwrap_or_default();
    format!("{}{index}{MARK_END}", *MARK)
}

/// Whether `c` acts on a terminal or on the order of the text around it instead of
/// being shown: the C0 controls, DEL, the C1 controls, and the bidirectional
/// controls (marks, embeddings, overrides, isolates) that reverse what follows.
pub(crate) fn is_control(c: char) -> bool {
    matches!(c,
        '\0'..='\x1f'
        | '\x7f'..='\u{9f}'
        | '\u{061c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// `c` as people read an escape: `\u{1b}`.
fn escape(c: char, out: &mut String) {
    out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
}

/// Text for people, as it leaves for the terminal: every control character in it is
/// written as an escape (`\u{1b}`, `\u{202e}`) but a line break and a tab, and the
/// renderers' own sequences ([`control`]) are written out. The one way text reaches
/// the terminal (stdout through [`write_text`] and [`print`]'s tables, stderr too).
pub(crate) fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some((sequence, after)) = marked(rest) {
            out.push_str(&sequence);
            rest = after;
            continue;
        }
        if is_control(c) && c != '\n' && c != '\t' {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The [`Control`] marked at the start of `text`, and the text after its mark.
fn marked(text: &str) -> Option<(String, &str)> {
    let after = text.strip_prefix(MARK.as_str())?;
    let (index, after) = after.split_once(MARK_END)?;
    let control = Control::ALL.get(index.parse::<usize>().ok()?)?;
    Some((control.sequence(), after))
}

/// `text` on one line, for a table's cell: every control character escaped, a line
/// break and a tab too, so a cell neither breaks its row nor misleads its width.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_control(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// JSON as serde writes it, with what serde leaves raw and a terminal would obey —
/// DEL, the C1 controls and the bidirectional controls — as JSON's own escapes
/// (`\u202e`): the same data to any reader. They can only be inside strings.
fn json_escaped(json: String) -> String {
    if !json.chars().any(is_control) {
        return json;
    }
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if is_control(c) && c >= '\x7f' {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Which columns a table shows: its own, the last cut to fit a terminal (`table`), or
/// those and the ones it leaves out, nothing cut (`-o wide`). A command whose text is
/// not a table prints the same text either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Columns {
    Narrow,
    Wide,
}

impl Columns {
    pub(crate) fn wide(self) -> bool {
        self == Self::Wide
    }
}

/// The objects an answer is, or acted on, as `-o name` prints them: kubectl's
/// `<kind>.<group>/<name>` (`gate.hecate.dev/dev`). `None` for an answer that is a
/// report rather than objects; such commands do not take `-o name` (`cli`).
pub(crate) trait Named {
    fn names(&self) -> Option<Vec<String>>;
}

/// Prints `value` in `format`, the one place a format becomes output: `table` (and
/// `wide`) is the human rendering of the value, `json` and `yaml` the value itself,
/// `name` the objects it names, and a JSONPath template is applied to the JSON
/// value — a list (a JSON array) as kubectl gives a list to its templates, as the
/// `items` of an object, so `{.items[*].metadata.name}` reads as it does there.
pub(crate) fn print<T: Serialize + Named + ?Sized>(
    format: &Format,
    value: &T,
    table: impl FnOnce(Columns) -> String,
) -> Result<(), Failure> {
    write_exact(&formatted(format, value, table)?)
}

/// What [`print`] writes: a table already [`shown`], JSON with no raw control
/// character, YAML as serde writes it (which escapes them), and the rest exact.
pub(crate) fn formatted<T: Serialize + Named + ?Sized>(
    format: &Format,
    value: &T,
    table: impl FnOnce(Columns) -> String,
) -> Result<String, Failure> {
    Ok(match format {
        Format::Table => shown(&table(Columns::Narrow)),
        Format::Wide => shown(&table(Columns::Wide)),
        Format::Json => {
            let mut json = serde_json::to_string_pretty(value)
                .map_err(|e| Failure::could_not_tell(format!("writing JSON: {e}")))?;
            json.push('\n');
            json_escaped(json)
        }
        Format::Yaml => serde_yaml_ng::to_string(value)
            .map_err(|e| Failure::could_not_tell(format!("writing YAML: {e}")))?,
        Format::Name => match value.names() {
            Some(names) => names.into_iter().map(|name| name + "\n").collect(),
            // The command line offers `name` only where there are names.
            None => {
                return Err(Failure::usage(
                    "this answer is a report, not objects: -o name has nothing to print",
                ));
            }
        },
        Format::JsonPath(template) => {
            let document = match serde_json::to_value(value)
                .map_err(|e| Failure::could_not_tell(format!("writing JSON: {e}")))?
            {
                serde_json::Value::Array(items) => serde_json::Value::Object(
                    [("items".to_string(), items.into())].into_iter().collect(),
                ),
                other => other,
            };
            // A template that does not fit the answer is the command line's mistake.
            template.render(&document).map_err(|e| {
                Failure::usage(format!(
                    "the JSONPath template does not fit the answer: {e}"
                ))
            })?
        }
    })
}

/// Writes text for people to stdout, [`shown`].
pub(crate) fn write_text(text: &str) -> Result<(), Failure> {
    write_exact(&shown(text))
}

/// Writes to stdout as it is — data a script asked for, or text already [`shown`]; a
/// closed pipe (`| head`) is not an error worth a message.
pub(crate) fn write_exact(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::could_not_tell(format!("writing output: {e}")))
        }
        _ => Ok(()),
    }
}

/// An aligned table: columns padded to their widest cell, two spaces apart; the last
/// column is cut to fit the terminal when there is one.
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

/// One cell: the text that counts for width, and how it is shown (perhaps coloured).
pub(crate) struct Cell {
    text: String,
    shown: String,
}

impl Cell {
    pub(crate) fn plain(text: impl Into<String>) -> Self {
        let text = one_line(&text.into());
        Self {
            shown: text.clone(),
            text,
        }
    }

    pub(crate) fn styled(text: impl Into<String>, style: &Style, colour: Option<Colour>) -> Self {
        let text = one_line(&text.into());
        let shown = colour.map_or_else(|| text.clone(), |c| style.paint(c, &text));
        Self { text, shown }
    }
}

impl Table {
    pub(crate) fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// The table as text; `Columns::Wide` is never cut to the terminal.
    pub(crate) fn render(&self, style: &Style, shown: Columns) -> String {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.text.chars().count());
            }
        }
        let mut out = String::new();
        let header: Vec<Cell> = self.header.iter().map(|h| Cell::plain(h.clone())).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            let mut used = 0;
            for (i, cell) in row.iter().enumerate() {
                let last = i + 1 == row.len();
                if last {
                    match style.width.filter(|_| !shown.wide()) {
                        Some(width)
                            if used + cell.text.chars().count() > width && width > used + 1 =>
                        {
                            let room = width - used - 1;
                            line.push_str(&cell.text.chars().take(room).collect::<String>());
                            line.push('…');
                        }
                        _ => line.push_str(&cell.shown),
                    }
                } else {
                    let pad = widths[i] - cell.text.chars().count() + 2;
                    line.push_str(&cell.shown);
                    line.push_str(&" ".repeat(pad));
                    used += widths[i] + 2;
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_the_last_is_cut_to_fit() {
        let mut table = Table::new(&["NAME", "SUMMARY"]);
        table.row(vec![Cell::plain("a"), Cell::plain("short")]);
        table.row(vec![
            Cell::plain("longer-name"),
            Cell::plain("a summary that is far too long to fit"),
        ]);
        let plain = table.render(&Style::plain(), Columns::Narrow);
        assert_eq!(
            plain,
            "NAME         SUMMARY\na            short\nlonger-name  a summary that is far too long to fit\n"
        );
        let narrow = Style {
            width: Some(30),
            ..Style::plain()
        };
        assert_eq!(
            table.render(&narrow, Columns::Narrow).lines().nth(2),
            Some("longer-name  a summary that i…")
        );
        // Wide is never cut.
        assert_eq!(table.render(&narrow, Columns::Wide), plain);
    }

    #[test]
    fn colour_does_not_disturb_alignment() {
        let style = Style {
            colour: true,
            ..Style::plain()
        };
        let mut table = Table::new(&["STATE", "X"]);
        table.row(vec![
            Cell::styled("Ready", &style, Some(Colour::Green)),
            Cell::plain("1"),
        ]);
        let text = shown(&table.render(&style, Columns::Narrow));
        assert_eq!(text.lines().nth(1), Some("\x1b[32mReady\x1b[0m  1"));
    }

    #[test]
    fn the_clusters_text_is_shown_and_only_our_own_sequences_act() {
        // The clipboard, a link, the screen, a cursor report, the title, a C1 CSI, DEL
        // and a right-to-left override: all shown, none obeyed.
        let text = "a\x1b]52;c;aGk=\x07 \x1b]8;;https://x.example\x1b\\l\x1b]8;;\x1b\\ \x1b[2J\x1b[6n\x1b]0;t\x07\u{9b}2J\x7f\u{202e}cba\r\n\tz";
        assert_eq!(
            shown(text),
            "a\\u{1b}]52;c;aGk=\\u{7} \\u{1b}]8;;https://x.example\\u{1b}\\l\\u{1b}]8;;\\u{1b}\\ \\u{1b}[2J\\u{1b}[6n\\u{1b}]0;t\\u{7}\\u{9b}2J\\u{7f}\\u{202e}cba\\u{d}\n\tz"
        );
        // In a cell, a line break and a tab are shown too; the width is the shown one.
        assert_eq!(one_line("a\nb\tc\u{2066}"), "a\\u{a}b\\u{9}c\\u{2066}");
        let mut table = Table::new(&["A", "B"]);
        table.row(vec![Cell::plain("x\x1b"), Cell::plain("1")]);
        table.row(vec![Cell::plain("long-ish"), Cell::plain("2")]);
        assert_eq!(
            shown(&table.render(&Style::plain(), Columns::Narrow)),
            "A         B\nx\\u{1b}   1\nlong-ish  2\n"
        );
        // Our own sequences are written out; a mark the text brought along is not ours.
        let ours = format!(
            "{}x{}",
            control(Control::ClearScreen),
            control(Control::Reset)
        );
        assert_eq!(shown(&ours), "\x1b[H\x1b[2Jx\x1b[0m");
        let forged = "\u{FDD0}0000000000000000".to_string() + "7\u{FDD1}";
        assert_eq!(shown(&forged), forged);
        let guessed = format!("{}99{MARK_END}", *MARK);
        assert_eq!(shown(&guessed), guessed, "an unknown control is text");
    }

    #[test]
    fn json_holds_no_raw_control_and_yaml_escapes_them() {
        #[derive(Serialize)]
        struct Subject {
            subject: &'static str,
        }
        impl Named for Subject {
            fn names(&self) -> Option<Vec<String>> {
                None
            }
        }
        let value = Subject {
            subject: "\x1b]52;c;aGk=\x07\u{9b}\x7f\u{202e}x",
        };
        let json = formatted(&Format::Json, &value, |_| String::new()).expect("JSON");
        assert_eq!(
            json,
            "{\n  \"subject\": \"\\u001b]52;c;aGk=\\u0007\\u009b\\u007f\\u202ex\"\n}\n"
        );
        let read: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(read["subject"], value.subject, "the same data");
        let yaml = formatted(&Format::Yaml, &value, |_| String::new()).expect("YAML");
        assert!(
            !yaml.contains(['\x1b', '\x07', '\u{9b}', '\x7f']),
            "{yaml:?}"
        );
        let read: serde_json::Value = serde_yaml_ng::from_str(&yaml).expect("YAML");
        assert_eq!(read["subject"], value.subject, "the same data");
    }
}
