//! The operators over JSON values, with the reference language's rules: integers stay
//! integers under `+ - * %` (wrapping like Go's `int`), `/` always gives a float,
//! numbers compare by value whatever their kind (`3 == 3.0`), values of different
//! kinds are simply unequal, and ordering, string and arithmetic operators refuse
//! operands they are not defined on rather than guessing.

use std::cmp::Ordering;

use serde_json::Value;

use super::parse::Binary;

/// A number as the operators see it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn of(value: &Value) -> Option<Num> {
        let Value::Number(n) = value else {
            return None;
        };
        Some(match n.as_i64() {
            Some(i) => Num::Int(i),
            None => Num::Float(n.as_f64().unwrap_or(f64::NAN)),
        })
    }

    fn float(self) -> f64 {
        match self {
            // Precision lost above 2^53 is lost in the reference too (float64(int)).
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// A value's kind, with its article, for messages: "a string", "null".
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

/// `left op right` for the operators that take both values (all but `&&`, `||` and
/// `??`, which the evaluator short-circuits).
pub(super) fn apply(op: Binary, left: &Value, right: &Value) -> Result<Value, String> {
    match op {
        Binary::Eq => Ok(Value::Bool(equal(left, right))),
        Binary::Ne => Ok(Value::Bool(!equal(left, right))),
        Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge => {
            let ordering = order(left, right).ok_or_else(|| {
                format!(
                    "{} cannot compare {} with {}",
                    op.symbol(),
                    kind(left),
                    kind(right)
                )
            })?;
            Ok(Value::Bool(match op {
                Binary::Lt => ordering == Ordering::Less,
                Binary::Le => ordering != Ordering::Greater,
                Binary::Gt => ordering == Ordering::Greater,
                _ => ordering != Ordering::Less,
            }))
        }
        Binary::In => contains_item(right, left).map(Value::Bool),
        Binary::Matches | Binary::Contains | Binary::StartsWith | Binary::EndsWith => {
            let (Value::String(l), Value::String(r)) = (left, right) else {
                return Err(format!(
                    "{} needs two strings, not {} and {}",
                    op.symbol(),
                    kind(left),
                    kind(right)
                ));
            };
            Ok(Value::Bool(match op {
                Binary::Matches => regex::Regex::new(r)
                    .map_err(|why| format!("invalid regular expression {r:?}: {why}"))?
                    .is_match(l),
                Binary::Contains => l.contains(r.as_str()),
                Binary::StartsWith => l.starts_with(r.as_str()),
                _ => l.ends_with(r.as_str()),
            }))
        }
        Binary::Add => match (left, right) {
            (Value::String(l), Value::String(r)) => Ok(Value::String(format!("{l}{r}"))),
            _ => arithmetic(op, left, right),
        },
        Binary::Sub | Binary::Mul | Binary::Div | Binary::Rem => arithmetic(op, left, right),
        Binary::And | Binary::Or | Binary::Coalesce => {
            Err(format!("{} is evaluated lazily, never here", op.symbol()))
        }
    }
}

/// Equality as the reference has it: numbers by value, lists and maps item by item,
/// anything else only with its own kind.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => match (Num::of(a), Num::of(b)) {
            (Some(Num::Int(x)), Some(Num::Int(y))) => x == y,
            (Some(x), Some(y)) => x.float() == y.float(),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// The order of two numbers or two strings (byte-wise, as Go compares).
fn order(a: &Value, b: &Value) -> Option<Ordering> {
    match (Num::of(a), Num::of(b), a, b) {
        (Some(Num::Int(x)), Some(Num::Int(y)), ..) => Some(x.cmp(&y)),
        (Some(x), Some(y), ..) => x.float().partial_cmp(&y.float()),
        (_, _, Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// `needle in haystack`: an item of a list, a key of a map; nothing is in null.
fn contains_item(haystack: &Value, needle: &Value) -> Result<bool, String> {
    match (haystack, needle) {
        (Value::Null, _) => Ok(false),
        (Value::Array(items), _) => Ok(items.iter().any(|item| equal(item, needle))),
        (Value::Object(map), Value::String(key)) => Ok(map.contains_key(key)),
        (Value::Object(_), other) => Err(format!(
            "in: a map's keys are strings, and {} is not one",
            kind(other)
        )),
        (other, _) => Err(format!(
            "in needs a list or a map on its right, not {}",
            kind(other)
        )),
    }
}

fn arithmetic(op: Binary, left: &Value, right: &Value) -> Result<Value, String> {
    let (Some(a), Some(b)) = (Num::of(left), Num::of(right)) else {
        return Err(format!(
            "{} is not defined on {} and {}",
            op.symbol(),
            kind(left),
            kind(right)
        ));
    };
    match (op, a, b) {
        (Binary::Div, a, b) => {
            if b.float() == 0.0 {
                return Err("division by zero".to_string());
            }
            finite(a.float() / b.float())
        }
        (Binary::Rem, Num::Int(_), Num::Int(0)) => Err("modulo by zero".to_string()),
        (Binary::Rem, Num::Int(a), Num::Int(b)) => Ok(Value::from(a.wrapping_rem(b))),
        (Binary::Rem, ..) => Err(format!(
            "% needs two integers, not {} and {}",
            kind(left),
            kind(right)
        )),
        (op, Num::Int(a), Num::Int(b)) => Ok(Value::from(match op {
            Binary::Add => a.wrapping_add(b),
            Binary::Sub => a.wrapping_sub(b),
            _ => a.wrapping_mul(b),
        })),
        (op, a, b) => finite(match op {
            Binary::Add => a.float() + b.float(),
            Binary::Sub => a.float() - b.float(),
            _ => a.float() * b.float(),
        }),
    }
}

/// `-x`: numbers only.
pub(super) fn negate(value: &Value) -> Option<Value> {
    match Num::of(value)? {
        Num::Int(i) => Some(Value::from(i.wrapping_neg())),
        Num::Float(f) => Some(Value::from(-f)),
    }
}

fn finite(f: f64) -> Result<Value, String> {
    serde_json::Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| "the result is too large to be a number".to_string())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn operators() {
        use Binary::*;
        let cases: Vec<(Binary, Value, Value, Result<Value, &str>)> = vec![
            (Eq, json!(3), json!(3.0), Ok(json!(true))),
            (Eq, json!("3"), json!(3), Ok(json!(false))),
            (Eq, json!(null), json!(null), Ok(json!(true))),
            (
                Eq,
                json!({"a": [1, 2]}),
                json!({"a": [1.0, 2]}),
                Ok(json!(true)),
            ),
            (
                Ne,
                json!({"a": 1}),
                json!({"a": 1, "b": 2}),
                Ok(json!(true)),
            ),
            (Lt, json!(2), json!(2.5), Ok(json!(true))),
            (Le, json!("b"), json!("a"), Ok(json!(false))),
            (Ge, json!("B"), json!("a"), Ok(json!(false))),
            (Gt, json!(i64::MAX), json!(i64::MAX - 1), Ok(json!(true))),
            (
                Lt,
                json!("1"),
                json!(2),
                Err("< cannot compare a string with an integer"),
            ),
            (
                Lt,
                json!(null),
                json!(2),
                Err("< cannot compare null with an integer"),
            ),
            (Add, json!(1), json!(2), Ok(json!(3))),
            (Add, json!(1), json!(0.5), Ok(json!(1.5))),
            (Add, json!("a"), json!("b"), Ok(json!("ab"))),
            (
                Add,
                json!("a"),
                json!(1),
                Err("+ is not defined on a string and an integer"),
            ),
            (Add, json!(i64::MAX), json!(1), Ok(json!(i64::MIN))),
            (Sub, json!(1), json!(3), Ok(json!(-2))),
            (Mul, json!(4), json!(2.5), Ok(json!(10.0))),
            (
                Mul,
                json!(1e308),
                json!(10),
                Err("the result is too large to be a number"),
            ),
            (Div, json!(7), json!(2), Ok(json!(3.5))),
            (Div, json!(6), json!(2), Ok(json!(3.0))),
            (Div, json!(1), json!(0), Err("division by zero")),
            (Rem, json!(7), json!(3), Ok(json!(1))),
            (Rem, json!(-7), json!(3), Ok(json!(-1))),
            (Rem, json!(7), json!(0), Err("modulo by zero")),
            (
                Rem,
                json!(7.5),
                json!(2),
                Err("% needs two integers, not a float and an integer"),
            ),
            (In, json!(2), json!([1, 2.0]), Ok(json!(true))),
            (In, json!("k"), json!({"k": null}), Ok(json!(true))),
            (In, json!("x"), json!(null), Ok(json!(false))),
            (
                In,
                json!(1),
                json!({"k": 1}),
                Err("in: a map's keys are strings, and an integer is not one"),
            ),
            (
                In,
                json!("a"),
                json!("abc"),
                Err("in needs a list or a map on its right, not a string"),
            ),
            (Contains, json!("abc"), json!("b"), Ok(json!(true))),
            (StartsWith, json!("abc"), json!("ab"), Ok(json!(true))),
            (EndsWith, json!("abc"), json!("ab"), Ok(json!(false))),
            (
                EndsWith,
                json!(null),
                json!("ab"),
                Err("endsWith needs two strings, not null and a string"),
            ),
            (
                Matches,
                json!("v1.2.3"),
                json!(r"^v\d+\.\d+"),
                Ok(json!(true)),
            ),
            (Matches, json!("1.2.3"), json!("^v"), Ok(json!(false))),
        ];
        for (op, l, r, want) in cases {
            let got = apply(op, &l, &r);
            assert_eq!(got, want.map_err(str::to_string), "{l} {} {r}", op.symbol());
        }
    }

    #[test]
    fn a_bad_pattern_is_an_error() {
        let why = apply(Binary::Matches, &json!("a"), &json!("(")).expect_err("refused");
        assert!(why.starts_with("invalid regular expression \"(\""), "{why}");
    }

    #[test]
    fn negation() {
        assert_eq!(negate(&json!(2)), Some(json!(-2)));
        assert_eq!(negate(&json!(-0.5)), Some(json!(0.5)));
        assert_eq!(negate(&json!("2")), None);
    }
}
