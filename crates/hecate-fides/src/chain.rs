//! The trail hash chain, as Fides computes it: canonical payloads, per-entry content
//! hashes linked by `prev_hash`, and the walk that finds where a chain breaks.
//!
//! Hecate asks Fides to verify (`verify-chain`) rather than recompute — whoever relies
//! on the answer must be able to get it without Hecate in the path. This module is the
//! contract written as code: it reproduces the server's rules byte for byte (including
//! Go's JSON encoding), so a verdict can be checked independently, and test fakes
//! produce realistic chains.

use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// One attestation as stored: what is hashed, and the hashes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// The trail (lowercase hyphenated UUID).
    pub trail_id: String,
    /// The attestation's name.
    pub name: String,
    /// Its type.
    pub type_name: String,
    /// Its payload text.
    pub payload: String,
    /// Whether it was compliant.
    pub is_compliant: bool,
    /// The previous entry's hash; empty for the first.
    pub prev_hash: String,
    /// This entry's hash; empty for entries recorded before chaining.
    pub content_hash: String,
}

/// What a walk of the chain found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every hashed entry links and hashes correctly; `count` of them.
    Valid {
        /// Hashed entries checked.
        count: usize,
    },
    /// The chain breaks at `at` (0-based, counting every row).
    Broken {
        /// Where.
        at: usize,
        /// Why.
        reason: &'static str,
    },
}

/// The content hash of an entry: SHA-256 over length-prefixed fields
/// (`<byte length>:<bytes>` each, no separators), lowercase hex.
pub fn content_hash(
    trail_id: &str,
    name: &str,
    type_name: &str,
    payload: &str,
    is_compliant: bool,
    prev_hash: &str,
) -> String {
    let mut hasher = Sha256::new();
    for field in [
        trail_id,
        name,
        type_name,
        &canonical(payload),
        if is_compliant { "true" } else { "false" },
        prev_hash,
    ] {
        hasher.update(field.len().to_string().as_bytes());
        hasher.update(b":");
        hasher.update(field.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// Walks `entries` in chain order. Entries without a hash (recorded before chaining)
/// are skipped and not counted.
pub fn verify(entries: &[Entry]) -> Verdict {
    let mut prev = String::new();
    let mut count = 0;
    for (at, entry) in entries.iter().enumerate() {
        if entry.content_hash.trim().is_empty() {
            continue;
        }
        if entry.prev_hash != prev {
            return Verdict::Broken {
                at,
                reason: "prev_hash does not match the previous entry (deletion/reorder)",
            };
        }
        let recomputed = content_hash(
            &entry.trail_id,
            &entry.name,
            &entry.type_name,
            &entry.payload,
            entry.is_compliant,
            &entry.prev_hash,
        );
        if recomputed != entry.content_hash {
            return Verdict::Broken {
                at,
                reason: "content_hash does not match recomputed hash (tampering)",
            };
        }
        prev = entry.content_hash.clone();
        count += 1;
    }
    Verdict::Valid { count }
}

/// A payload in the canonical form Fides hashes: parsed as JSON and re-encoded the
/// way Go's `encoding/json` does (sorted keys, no spaces, HTML-safe escapes, numbers
/// as float64). Text that is not JSON is hashed as it is.
pub fn canonical(payload: &str) -> String {
    match serde_json::from_str::<Value>(payload) {
        Ok(value) => {
            let mut out = String::with_capacity(payload.len());
            encode(&value, &mut out);
            out
        }
        Err(_) => payload.to_string(),
    }
}

fn encode(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_float(n.as_f64().unwrap_or(0.0))),
        Value::String(s) => encode_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode_string(key, out);
                out.push(':');
                encode(&map[key], out);
            }
            out.push('}');
        }
    }
}

fn encode_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A float64 as Go's `encoding/json` writes it: the shortest decimal that round-trips,
/// plain for 1e-6 ≤ |x| < 1e21, else exponent form without padding (`1e+21`, `1e-7`).
fn go_float(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let abs = x.abs();
    if (1e-6..1e21).contains(&abs) {
        // Rust's Display is the shortest round-trip decimal, in plain notation.
        return format!("{x}");
    }
    // Shortest round-trip in exponent form, then Go's exponent spelling.
    let text = format!("{x:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
        .replace("e+0", "e+")
        .replace("e-0", "e-")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMOTION: &str = "91b2ffff-0000-4000-8000-00000000abcd";

    #[test]
    fn spec_vectors() {
        let a = content_hash("t1", "att", "type", "a", true, "");
        assert_eq!(
            a,
            "a0c98082516b6837bef64657cf1b7bff7e0ca713e2cabee4a87794bbc622f389"
        );
        let b = content_hash("t1", "att", "type", "b", true, &a);
        assert_eq!(
            b,
            "2ebbbb20602b564da1ed5ead6b4a62135d82e957a3a23c769f68740e3d22bc20"
        );
        let c = content_hash("t1", "att", "type", "c", true, &b);
        assert_eq!(
            c,
            "23db762f6608d3bd21b7feecdbcc11582d1c58088bfe7932fc8547605ea4fe1a"
        );
        let payload = r#"{"gate": "production", "bundle": "b1", "steps": []}"#;
        let first = content_hash(PROMOTION, "promotion", "promotion", payload, true, "");
        assert_eq!(
            first,
            "03fbc675cea8c088fbaf18309f6a85b411b3c4fbf631d64f0a1536d5bb65d852"
        );
        let second = content_hash(PROMOTION, "promotion", "promotion", payload, false, &first);
        assert_eq!(
            second,
            "546ac121b494ee2351bd90c511b523d55aabebd82db360f136041b3cdc46f93a"
        );
        // Length prefixes count bytes, not characters.
        assert_eq!(
            content_hash("t", "n", "ty", "é", true, ""),
            "5212bc5bf010788f8ce0f8f8914e5d864baac167e155bce02ae16dc3fa78bc17"
        );
    }

    #[test]
    fn canonical_json_is_gos() {
        assert_eq!(
            canonical(r#"{"gate": "production", "bundle": "b1", "steps": []}"#),
            r#"{"bundle":"b1","gate":"production","steps":[]}"#
        );
        assert_eq!(
            canonical(r#"{"b":1,"a":{"d":[1.5,2,1e21,1e-7,0.000001,-0],"c":null}}"#),
            r#"{"a":{"c":null,"d":[1.5,2,1e+21,1e-7,0.000001,0]},"b":1}"#
        );
        assert_eq!(
            canonical(r#""<a> & b\u2028\n\u0001é""#),
            r#""\u003ca\u003e \u0026 b\u2028\n\u0001é""#
        );
        assert_eq!(
            canonical(r#"{"k":1,"k":2}"#),
            r#"{"k":2}"#,
            "duplicate keys: the last wins"
        );
        assert_eq!(canonical("not json"), "not json");
        assert_eq!(
            canonical(r#"{"big":12345678901234567890}"#),
            r#"{"big":12345678901234567000}"#,
            "float64 precision"
        );
    }

    fn chain(payloads: &[&str]) -> Vec<Entry> {
        let mut prev = String::new();
        payloads
            .iter()
            .map(|p| {
                let hash = content_hash("t1", "att", "type", p, true, &prev);
                let entry = Entry {
                    trail_id: "t1".into(),
                    name: "att".into(),
                    type_name: "type".into(),
                    payload: (*p).into(),
                    is_compliant: true,
                    prev_hash: prev.clone(),
                    content_hash: hash.clone(),
                };
                prev = hash;
                entry
            })
            .collect()
    }

    #[test]
    fn a_valid_chain() {
        assert_eq!(
            verify(&chain(&["a", "b", "c"])),
            Verdict::Valid { count: 3 }
        );
        assert_eq!(verify(&[]), Verdict::Valid { count: 0 });
    }

    #[test]
    fn tampering_deletion_and_reordering_break_it() {
        let mut tampered = chain(&["a", "b", "c"]);
        tampered[1].payload = "B".into();
        assert_eq!(
            verify(&tampered),
            Verdict::Broken {
                at: 1,
                reason: "content_hash does not match recomputed hash (tampering)"
            }
        );
        let mut deleted = chain(&["a", "b", "c"]);
        deleted.remove(1);
        assert!(matches!(verify(&deleted), Verdict::Broken { at: 1, .. }));
        let mut swapped = chain(&["a", "b", "c"]);
        swapped.swap(1, 2);
        assert!(matches!(verify(&swapped), Verdict::Broken { .. }));
        let mut flipped = chain(&["a", "b"]);
        flipped[0].is_compliant = false;
        assert!(
            matches!(verify(&flipped), Verdict::Broken { at: 0, .. }),
            "compliance is part of the hash"
        );
    }

    #[test]
    fn legacy_entries_are_skipped() {
        let mut entries = vec![Entry {
            payload: "before chaining".into(),
            ..Entry::default()
        }];
        entries.extend(chain(&["a", "b"]));
        assert_eq!(verify(&entries), Verdict::Valid { count: 2 });
    }

    #[test]
    fn the_hash_depends_on_the_previous_one() {
        assert_ne!(
            content_hash("t", "n", "ty", "p", true, ""),
            content_hash("t", "n", "ty", "p", true, "x")
        );
        assert_eq!(
            content_hash("t", "n", "ty", "p", true, "x"),
            content_hash("t", "n", "ty", "p", true, "x")
        );
    }
}
