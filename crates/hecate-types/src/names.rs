//! Kubernetes' name rules, checked before a name reaches the API server (a path
//! segment, a tool argument): the one copy every surface uses.

/// A namespace name: a DNS-1123 label — at most 63 lower-case letters, digits and
/// `-`, starting and ending with a letter or digit.
pub fn is_dns_label(name: &str) -> bool {
    !name.is_empty() && name.len() <= 63 && is_label(name)
}

/// An object name: a DNS-1123 subdomain — at most 253 characters of labels joined by
/// `.`.
pub fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty() && name.len() <= 253 && name.split('.').all(is_label)
}

/// [`is_dns_label`] as a JSON Schema / OpenAPI `pattern` (with `maxLength` 63).
pub const DNS_LABEL_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
/// [`is_dns_subdomain`] as a JSON Schema / OpenAPI `pattern` (with `maxLength` 253).
pub const DNS_SUBDOMAIN_PATTERN: &str =
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/// The longest namespace name.
pub const DNS_LABEL_MAX: usize = 63;
/// The longest object name.
pub const DNS_SUBDOMAIN_MAX: usize = 253;

fn is_label(label: &str) -> bool {
    !label.is_empty()
        && label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert!(is_dns_label("shop-1"));
        assert!(is_dns_label(&"a".repeat(63)));
        for bad in ["", "Shop", "a.b", "-a", "a-", "a_b", &"a".repeat(64)] {
            assert!(!is_dns_label(bad), "{bad:?}");
        }
    }

    #[test]
    fn subdomains() {
        assert!(is_dns_subdomain("app-1.2.3"));
        assert!(is_dns_subdomain("production-12"));
        assert!(is_dns_subdomain(&"a".repeat(253)));
        for bad in [
            "",
            "../etc",
            "a..b",
            ".a",
            "a.",
            "A",
            "a/b",
            &"a".repeat(254),
        ] {
            assert!(!is_dns_subdomain(bad), "{bad:?}");
        }
    }
}
