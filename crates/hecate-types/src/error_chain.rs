//! An error and its causes in one line, `a: b: c`: how every Hecate process words a
//! failure it did not word itself (a request that got no answer, a client that could
//! not be built). Client libraries' outermost text alone is often terse — reqwest's
//! "error sending request", kube's "client error (Connect)" — and the reason is a cause
//! or two below.
//!
//! A cause whose text the line already holds is left out: many errors repeat their
//! source in their own message, and "timed out: timed out" says nothing twice.

/// `error` and each of its causes, joined by `: `, causes already said left out.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug)]
    struct Failure {
        text: &'static str,
        cause: Option<Box<Failure>>,
    }

    impl std::fmt::Display for Failure {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.text)
        }
    }

    impl std::error::Error for Failure {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.cause.as_deref().map(|cause| cause as _)
        }
    }

    fn failure(texts: &[&'static str]) -> Failure {
        let (first, rest) = texts.split_first().expect("a text");
        Failure {
            text: first,
            cause: (!rest.is_empty()).then(|| Box::new(failure(rest))),
        }
    }

    #[test]
    fn causes_are_joined_and_what_is_said_is_said_once() {
        assert_eq!(error_chain(&failure(&["alone"])), "alone");
        assert_eq!(
            error_chain(&failure(&["error sending request", "connect", "refused"])),
            "error sending request: connect: refused"
        );
        assert_eq!(
            error_chain(&failure(&["read failed: timed out", "timed out"])),
            "read failed: timed out"
        );
    }
}
