//! The evaluator: a parsed tree over a [`Scope`] to a JSON value.
//!
//! The data-shaped parts follow the reference's missing-data rules (spec §4.2): a
//! missing key of a map is null, a missing `vars` entry is the empty string, and
//! reading a member or an index of null is an error that names the null
//! sub-expression — `bundle.image('absent').tag` must fail, not interpolate an empty
//! tag. `?.` is the one way to read through a null on purpose. Values are borrowed
//! from the scope where possible, so reading `steps.x.y` copies only the answer.
//!
//! The evaluator recurses on the tree, one level (a few frames) per node: the parser
//! admits no tree deeper than [`crate::MAX_DEPTH`], so its stack is bounded too.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use super::env::{BundleFn, BundleView};
use super::ops::{self, kind};
use super::parse::{Binary, Kind, Node, Unary};

/// A value while an expression runs: JSON, or one of the views a scope lends.
pub(super) enum Val<'a> {
    /// A JSON value, borrowed from the scope or the tree when it can be.
    Json(Cow<'a, Value>),
    /// `vars`: a missing name reads as "".
    Vars(&'a BTreeMap<String, String>),
    /// `steps`: outputs by alias.
    Steps(&'a BTreeMap<String, Value>),
    /// `bundle`: fields and artifact lookups.
    Bundle(&'a BundleView),
    /// `bundle.image` and its siblings, waiting for their argument.
    Func(&'a BundleView, BundleFn),
}

impl<'a> Val<'a> {
    /// A JSON value the evaluation owns.
    pub(super) fn owned(value: Value) -> Val<'a> {
        Val::Json(Cow::Owned(value))
    }

    /// Null.
    pub(super) fn null() -> Val<'a> {
        Val::owned(Value::Null)
    }

    fn is_null(&self) -> bool {
        matches!(self, Val::Json(v) if v.is_null())
    }
}

/// The names an expression can read.
pub(super) trait Scope {
    /// The value of a top-level name.
    fn lookup(&self, name: &str) -> Val<'_>;
}

/// Why evaluation stopped: a `?.` met null (its chain becomes null), or a failure.
enum Stop {
    Nil,
    Fail(String),
}

type Outcome<'a> = Result<Val<'a>, Stop>;

fn fail<T>(why: String) -> Result<T, Stop> {
    Err(Stop::Fail(why))
}

/// The value of `node`, the tree of `src`, over `scope`; a failure is said in words
/// that quote the sub-expression at fault.
pub(super) fn evaluate(node: &Node, src: &str, scope: &dyn Scope) -> Result<Value, String> {
    let evaluator = Evaluator { src, scope };
    match evaluator.value(node) {
        Ok(value) => Ok(value.into_owned()),
        Err(Stop::Fail(why)) => Err(why),
        // Every `?.` sits inside the Chain that catches it.
        Err(Stop::Nil) => Ok(Value::Null),
    }
}

struct Evaluator<'a> {
    src: &'a str,
    scope: &'a dyn Scope,
}

impl<'a> Evaluator<'a> {
    /// The source text of a node.
    fn text(&self, node: &Node) -> &'a str {
        self.src.get(node.start..node.end).unwrap_or_default()
    }

    fn eval(&self, node: &'a Node) -> Outcome<'a> {
        match &node.kind {
            Kind::Lit(value) => Ok(Val::Json(Cow::Borrowed(value))),
            Kind::List(items) => {
                let items = items
                    .iter()
                    .map(|item| self.value(item).map(Cow::into_owned))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Val::owned(Value::Array(items)))
            }
            Kind::Name(name) => Ok(self.scope.lookup(name)),
            Kind::Member {
                object,
                name,
                optional,
            } => {
                let target = self.eval(object)?;
                if *optional && target.is_null() {
                    return Err(Stop::Nil);
                }
                self.member(target, name, object)
            }
            Kind::Index {
                object,
                index,
                optional,
            } => {
                let target = self.eval(object)?;
                if *optional && target.is_null() {
                    return Err(Stop::Nil);
                }
                let key = self.value(index)?;
                self.index(target, &key, object)
            }
            Kind::Call { callee, args } => self.call(callee, args),
            Kind::Chain(inner) => match self.eval(inner) {
                Err(Stop::Nil) => Ok(Val::null()),
                other => other,
            },
            Kind::Unary { op, operand } => self.unary(*op, operand),
            Kind::Binary { op, left, right } => self.binary(*op, left, right, node),
            Kind::Cond {
                test,
                then,
                otherwise,
            } => {
                if self.boolean(test, "the test of ?:")? {
                    self.eval(then)
                } else {
                    self.eval(otherwise)
                }
            }
        }
    }

    /// `node`'s value as JSON.
    fn value(&self, node: &'a Node) -> Result<Cow<'a, Value>, Stop> {
        let val = self.eval(node)?;
        self.json(val, node)
    }

    fn json(&self, val: Val<'a>, node: &Node) -> Result<Cow<'a, Value>, Stop> {
        match val {
            Val::Json(value) => Ok(value),
            Val::Vars(vars) => Ok(Cow::Owned(Value::Object(
                vars.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ))),
            Val::Steps(steps) => Ok(Cow::Owned(Value::Object(
                steps.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            ))),
            Val::Bundle(_) => fail(format!(
                "{} is not a value by itself; read bundle.name, bundle.digest or \
                 bundle.alias, or look an artifact up with bundle.image('<repo>'), \
                 bundle.chart('<repo>') or bundle.commit('<repo>')",
                self.text(node)
            )),
            Val::Func(..) => fail(format!(
                "{0} is a function; call it with a repository: {0}('<repo>')",
                self.text(node)
            )),
        }
    }

    /// `target.name`; `object` is the node `target` came from.
    fn member(&self, target: Val<'a>, name: &str, object: &Node) -> Outcome<'a> {
        let found = |value: Option<&'a Value>| value.map_or_else(Val::null, borrowed);
        Ok(match target {
            Val::Json(Cow::Borrowed(Value::Object(map))) => found(map.get(name)),
            Val::Json(Cow::Owned(Value::Object(mut map))) => {
                map.remove(name).map_or_else(Val::null, Val::owned)
            }
            Val::Json(other) => return fail(self.cannot_read(&format!(".{name}"), &other, object)),
            Val::Vars(vars) => {
                Val::owned(Value::String(vars.get(name).cloned().unwrap_or_default()))
            }
            Val::Steps(steps) => found(steps.get(name)),
            Val::Bundle(bundle) => BundleFn::member(bundle, name),
            Val::Func(..) => {
                return fail(format!(
                    "{} is a function; it has no .{name}",
                    self.text(object)
                ));
            }
        })
    }

    /// `target[key]`: a list by position (negative counts from the end), a map by
    /// name.
    fn index(&self, target: Val<'a>, key: &Value, object: &Node) -> Outcome<'a> {
        let shown = || format!("[{key}]");
        let target = match target {
            Val::Json(value) => value,
            other => {
                let Value::String(name) = key else {
                    return fail(format!(
                        "{} is indexed by name, and {} is not a name",
                        self.text(object),
                        kind(key)
                    ));
                };
                return self.member(other, name, object);
            }
        };
        match (target, key) {
            (target, Value::String(name)) if target.is_object() => {
                self.member(Val::Json(target), name, object)
            }
            (Cow::Borrowed(Value::Array(items)), Value::Number(n)) => {
                let at = self.position(items.len(), n, object)?;
                Ok(items.get(at).map_or_else(Val::null, borrowed))
            }
            (Cow::Owned(Value::Array(mut items)), Value::Number(n)) => {
                let at = self.position(items.len(), n, object)?;
                Ok(Val::owned(items.swap_remove(at)))
            }
            (target, key) => {
                let why = match target.as_ref() {
                    Value::Null => self.cannot_read(&shown(), &target, object),
                    Value::Array(_) => format!(
                        "a list's index is a number, not {} ({}{})",
                        kind(key),
                        self.text(object),
                        shown()
                    ),
                    Value::Object(_) => format!(
                        "a map's key is a string, not {} ({}{})",
                        kind(key),
                        self.text(object),
                        shown()
                    ),
                    other => self.cannot_read(&shown(), other, object),
                };
                fail(why)
            }
        }
    }

    /// Where `n` points in a list of `len` items.
    fn position(&self, len: usize, n: &serde_json::Number, object: &Node) -> Result<usize, Stop> {
        // Like the reference, a fractional index is truncated.
        let asked = n
            .as_i64()
            .unwrap_or_else(|| n.as_f64().unwrap_or_default() as i64);
        let from_end = i64::try_from(len).unwrap_or(i64::MAX).saturating_add(asked);
        let at = if asked < 0 { from_end } else { asked };
        match usize::try_from(at) {
            Ok(at) if at < len => Ok(at),
            _ => fail(format!(
                "index {asked} is out of range: {} has {len} item{}",
                self.text(object),
                if len == 1 { "" } else { "s" }
            )),
        }
    }

    fn cannot_read(&self, what: &str, target: &Value, object: &Node) -> String {
        let text = self.text(object);
        match target {
            Value::Null => format!("cannot read {what} of null ({text} is null)"),
            other => format!("cannot read {what} of {} ({text})", kind(other)),
        }
    }

    /// `bundle.image('<repo>')` and its siblings: one string argument.
    fn call(&self, callee: &'a Node, args: &'a [Node]) -> Outcome<'a> {
        let name = self.text(callee);
        let Val::Func(bundle, func) = self.eval(callee)? else {
            return fail(format!("{name} is not a function"));
        };
        let [arg] = args else {
            return fail(format!(
                "{name} takes one argument, the repository; it was given {}",
                args.len()
            ));
        };
        match self.value(arg)?.as_ref() {
            Value::String(repo) => Ok(Val::owned(func.find(bundle, repo))),
            other => fail(format!(
                "{name} takes the repository as a string, not {}",
                kind(other)
            )),
        }
    }

    fn unary(&self, op: Unary, operand: &'a Node) -> Outcome<'a> {
        let value = self.value(operand)?;
        let result = match op {
            Unary::Not => match value.as_ref() {
                Value::Bool(b) => Some(Value::Bool(!b)),
                _ => None,
            },
            Unary::Neg => ops::negate(&value),
            Unary::Plus => value.is_number().then(|| value.as_ref().clone()),
        };
        let symbol = match op {
            Unary::Not => "!",
            Unary::Neg => "-",
            Unary::Plus => "+",
        };
        match result {
            Some(value) => Ok(Val::owned(value)),
            None => fail(format!(
                "{symbol} is not defined on {} ({})",
                kind(&value),
                self.text(operand)
            )),
        }
    }

    fn binary(&self, op: Binary, left: &'a Node, right: &'a Node, node: &Node) -> Outcome<'a> {
        match op {
            Binary::And | Binary::Or => {
                let l = self.boolean(left, op.symbol())?;
                // Short-circuit: the right side is not evaluated when the left decides.
                if l == (op == Binary::Or) {
                    return Ok(Val::owned(Value::Bool(l)));
                }
                Ok(Val::owned(Value::Bool(self.boolean(right, op.symbol())?)))
            }
            Binary::Coalesce => {
                let l = self.eval(left)?;
                if l.is_null() { self.eval(right) } else { Ok(l) }
            }
            _ => {
                let l = self.value(left)?;
                let r = self.value(right)?;
                match ops::apply(op, &l, &r) {
                    Ok(value) => Ok(Val::owned(value)),
                    Err(why) => fail(format!("{why} ({})", self.text(node))),
                }
            }
        }
    }

    /// A value that must be true or false, for `what` (an operator, the test of ?:).
    fn boolean(&self, node: &'a Node, what: &str) -> Result<bool, Stop> {
        match self.value(node)?.as_ref() {
            Value::Bool(b) => Ok(*b),
            other => fail(format!(
                "{what} needs true or false, and {} is {}",
                self.text(node),
                kind(other)
            )),
        }
    }
}

fn borrowed(value: &Value) -> Val<'_> {
    Val::Json(Cow::Borrowed(value))
}
