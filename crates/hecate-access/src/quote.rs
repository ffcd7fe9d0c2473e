//! Bad input in answers, bounded: a refusal names what it refused without sending a
//! megabyte back to whoever sent it (or into a log line).

/// How many characters of a client's input an answer quotes.
pub const QUOTE_CHARS: usize = 64;

/// `text` as an answer may quote it: in double quotes with escapes (as `{:?}` writes
/// it), whole when at most [`QUOTE_CHARS`] characters, else its first
/// [`QUOTE_CHARS`] followed by `…` and its length in bytes.
pub fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        None => format!("{text:?}"),
        Some((end, _)) => format!("{:?}… ({} bytes)", &text[..end], text.len()),
    }
}

/// A message that may carry input (a decoder's error, a library's sentence) cut to
/// at most `max_chars` characters, ending in `…` when cut.
pub fn bounded(message: &str, max_chars: usize) -> String {
    match message.char_indices().nth(max_chars) {
        None => message.to_string(),
        Some((end, _)) => format!("{}…", &message[..end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_quoted_whole() {
        assert_eq!(quote("staging"), "\"staging\"");
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
        assert_eq!(quote(&"x".repeat(QUOTE_CHARS)).len(), QUOTE_CHARS + 2);
    }

    #[test]
    fn long_input_is_cut_and_measured() {
        let long = "é".repeat(1 << 19);
        let quoted = quote(&long);
        assert!(quoted.starts_with(&format!("\"{}\"…", "é".repeat(QUOTE_CHARS))));
        assert!(quoted.ends_with("(1048576 bytes)"), "{quoted}");
        assert!(quoted.chars().count() < 100);
    }

    #[test]
    fn messages_are_bounded() {
        assert_eq!(bounded("short", 10), "short");
        assert_eq!(bounded("0123456789abc", 10), "0123456789…");
    }
}
