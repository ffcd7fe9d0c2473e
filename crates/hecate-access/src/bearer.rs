//! The credential of an `Authorization` header, read as RFC 9110 says: the scheme is
//! case-insensitive (`Bearer`, `bearer`, `BEARER`), then whitespace, then the token.

/// The token of an `Authorization: Bearer <token>` header value, trimmed; `None` for
/// another scheme or an empty token.
pub fn bearer_token(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.trim().split_once([' ', '\t'])?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn the_scheme_is_case_insensitive() {
        for value in [
            "Bearer abc",
            "bearer abc",
            "BEARER abc",
            "  bEaReR   abc  ",
            "Bearer\tabc",
        ] {
            assert_eq!(bearer_token(value), Some("abc"), "{value:?}");
        }
    }

    #[test]
    fn other_schemes_and_empty_tokens_are_not_bearer() {
        for value in ["Basic abc", "Bearer", "Bearer   ", "Bearerabc", "", "abc"] {
            assert_eq!(bearer_token(value), None, "{value:?}");
        }
    }
}
