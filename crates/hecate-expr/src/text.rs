//! `${{ … }}` in text (spec §4.1): finding the expressions in a string, substituting
//! them, and walking a whole `with:` document, keys included.
//!
//! Finding follows the reference's pattern exactly: the first `}}` after a `${{`
//! closes it (an expression cannot contain `}}`), and an expression does not span a
//! line break — a `${{` whose first `}}` comes after a newline is left as text, as
//! the reference leaves it.

use serde_json::{Map, Value};

use super::env::Env;
use super::error::ExprError;

/// One `${{ … }}` in a text: its bytes `start..end` and the source between the braces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Hole<'t> {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) inner: &'t str,
}

/// Every `${{ … }}` in `text`, left to right.
pub(super) fn holes(text: &str) -> Vec<Hole<'_>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find(crate::OPEN) {
        let start = from + offset;
        let body = start + crate::OPEN.len();
        let Some(length) = text[body..].find("}}") else {
            break;
        };
        let inner = &text[body..body + length];
        if inner.contains('\n') {
            // No match starts here; one may start further on (`$` is one byte).
            from = start + 1;
            continue;
        }
        let end = body + length + 2;
        found.push(Hole { start, end, inner });
        from = end;
    }
    found
}

/// The `${{ … }}` that is the whole of `text`, if it is exactly one.
pub(super) fn whole(text: &str) -> Option<&str> {
    match holes(text).as_slice() {
        [hole] if hole.start == 0 && hole.end == text.len() => Some(hole.inner),
        _ => None,
    }
}

/// `text` with its expressions substituted: the typed value when the whole text is
/// one expression, else a string with each result stringified in place.
pub(super) fn substitute(text: &str, env: &Env) -> Result<Value, ExprError> {
    if let Some(inner) = whole(text) {
        return super::evaluate(inner, env).map(integral);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for hole in holes(text) {
        out.push_str(&text[last..hole.start]);
        out.push_str(&stringify(&super::evaluate(hole.inner, env)?));
        last = hole.end;
    }
    out.push_str(&text[last..]);
    Ok(Value::String(out))
}

/// Every string of `value` at any depth, map keys included, substituted; `path`
/// names `value` in errors.
pub(super) fn walk(value: &Value, env: &Env, path: &str) -> Result<Value, ExprError> {
    let at = |path: String| {
        move |error: ExprError| ExprError::At {
            path,
            error: Box::new(error),
        }
    };
    match value {
        Value::String(text) if crate::is_expression(text) => {
            substitute(text, env).map_err(at(path.to_string()))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| walk(item, env, &format!("{path}[{i}]")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, item) in map {
                let key_path = format!("{path}.{key}");
                let new_key = if crate::is_expression(key) {
                    let substituted =
                        substitute(key, env).map_err(at(format!("{path}, in the key {key:?}")))?;
                    stringify(&substituted)
                } else {
                    key.clone()
                };
                out.insert(new_key, walk(item, env, &key_path)?);
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

/// A value as text inside a string: null is empty, a string is itself, a number or a
/// boolean its usual text, a list or a map compact JSON with sorted keys.
pub(super) fn stringify(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), ..) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (.., Some(f)) => go_float(f),
            _ => n.to_string(),
        },
        Value::Array(_) | Value::Object(_) => sorted(value).to_string(),
    }
}

/// A copy of `value` whose maps list their keys in order, whatever order the map
/// type keeps, so the text does not depend on how the value was built.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted(v)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// A float as Go's `%v` writes it: the shortest text that reads back the same, in
/// exponent form when the exponent is below -4 or at least 21 (`1e+21`, `1e-05`).
fn go_float(f: f64) -> String {
    let scientific = format!("{f:e}");
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return f.to_string();
    };
    let Ok(exponent) = exponent.parse::<i32>() else {
        return f.to_string();
    };
    if (-4..21).contains(&exponent) {
        f.to_string()
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    }
}

/// A float with no fractional part, within the range floats count exactly, becomes
/// an integer, at any depth: the reference re-encodes `with:` as JSON, where `6 / 2`
/// is written `3`, and a step reading an integer field must accept it.
fn integral(value: Value) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    match value {
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            // In range and whole, so the conversion is exact.
            Some(f) if f.fract() == 0.0 && f.abs() <= EXACT => Value::from(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(integral).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, integral(v))).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn finding_expressions() {
        let cases: [(&str, Vec<&str>); 8] = [
            ("no expressions", vec![]),
            ("${{ a }}", vec![" a "]),
            ("x${{a}}y${{ b }}z", vec!["a", " b "]),
            // The first `}}` closes: non-greedy.
            ("${{ a }} }}", vec![" a "]),
            ("${{ {a}} }}", vec![" {a"]),
            ("$${{a}}", vec!["a"]),
            // Never across a line break; a later expression is still found.
            ("${{ a\n }} ${{ b }}", vec![" b "]),
            ("${{ never closed", vec![]),
        ];
        for (text, want) in cases {
            let got: Vec<&str> = holes(text).iter().map(|h| h.inner).collect();
            assert_eq!(got, want, "{text:?}");
        }
        assert_eq!(whole("${{ a }}"), Some(" a "));
        assert_eq!(whole(" ${{ a }}"), None);
        assert_eq!(whole("${{ a }}${{ b }}"), None);
    }

    #[test]
    fn stringified_values() {
        let cases = [
            (json!(null), ""),
            (json!("text"), "text"),
            (json!(true), "true"),
            (json!(3), "3"),
            (json!(-7), "-7"),
            (json!(u64::MAX), "18446744073709551615"),
            (json!(3.0), "3"),
            (json!(1.5), "1.5"),
            (json!(0.0001), "0.0001"),
            (json!(0.00001), "1e-05"),
            (json!(1e20), "100000000000000000000"),
            (json!(1e21), "1e+21"),
            (json!(-2.5e-7), "-2.5e-07"),
            (json!([1, "a", null]), r#"[1,"a",null]"#),
            (
                json!({"b": 1, "a": {"d": 2, "c": [true]}}),
                r#"{"a":{"c":[true],"d":2},"b":1}"#,
            ),
        ];
        for (value, want) in cases {
            assert_eq!(stringify(&value), want, "{value}");
        }
    }

    #[test]
    fn whole_floats_become_integers() {
        let cases = [
            (json!(3.0), json!(3)),
            (json!(-2.0), json!(-2)),
            (json!(1.5), json!(1.5)),
            (json!(1e300), json!(1e300)),
            (json!([2.0, {"a": 4.0}]), json!([2, {"a": 4}])),
            (json!("3.0"), json!("3.0")),
        ];
        for (value, want) in cases {
            let got = integral(value.clone());
            assert_eq!(got, want, "{value}");
            assert_eq!(got.to_string(), want.to_string(), "{value}");
        }
    }
}
