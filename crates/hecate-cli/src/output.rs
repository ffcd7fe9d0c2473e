//! Printing: the structured formats serialise exactly the value a table is built
//! from; tables are aligned, fit the terminal, and are coloured only on a terminal
//! and never with `NO_COLOR`.

use std::io::{IsTerminal as _, Write as _};

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
            format!("\x1b[{}m{text}\x1b[0m", colour as u8)
        } else {
            text.to_string()
        }
    }
}

/// The ANSI colours the renderers use.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Colour {
    Red = 31,
    Green = 32,
    Yellow = 33,
    Cyan = 36,
    Dim = 2,
    Bold = 1,
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
    let text = match format {
        Format::Table => table(Columns::Narrow),
        Format::Wide => table(Columns::Wide),
        Format::Json => {
            let mut json = serde_json::to_string_pretty(value)
                .map_err(|e| Failure::could_not_tell(format!("writing JSON: {e}")))?;
            json.push('\n');
            json
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
    };
    write_stdout(&text)
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth a message.
pub(crate) fn write_stdout(text: &str) -> Result<(), Failure> {
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
        let text = text.into();
        Self {
            shown: text.clone(),
            text,
        }
    }

    pub(crate) fn styled(text: impl Into<String>, style: &Style, colour: Option<Colour>) -> Self {
        let text = text.into();
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
        let text = table.render(&style, Columns::Narrow);
        assert_eq!(text.lines().nth(1), Some("\x1b[32mReady\x1b[0m  1"));
    }
}
