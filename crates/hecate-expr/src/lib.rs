//! Expressions (spec controller.md §4): the `${{ … }}` in a step's `with:`, the bare
//! conditions of `if:`, and the `http` step's `successIf`.
//!
//! The language is the subset of the reference's (expr-lang) that Gates use, with its
//! syntax, precedence and missing-data rules: literals, member access, indexing,
//! calls of `bundle.image('<repo>')` and its siblings, comparison, logic, arithmetic,
//! string operators, `in`, `?:`, `??` and `?.`. It is evaluated here, by a small
//! hand-written lexer, Pratt parser and evaluator over `serde_json::Value`: data an
//! attacker can influence (tags, commit messages) flows through these expressions, so
//! they can read only what [`Env`] holds and do no I/O of any kind.
//!
//! - [`interpolate`] substitutes every `${{ … }}` in a `with:` document, and
//!   [`is_expression`] says whether a string holds one;
//! - [`condition`] judges an `if:`; [`compile`] checks one at Gate time;
//! - [`success_if`] judges an HTTP response; [`compile_success_if`] checks one.
//!
//! A crate of its own so that nothing it depends on does I/O (`cargo xtask
//! check-layers` holds it to that): serde_json, regex and thiserror, no Kubernetes
//! and no runtime. The Bundle crossing is read through [`BundleView`], the
//! language's own view of it, filled by the controller.
//!
//! The pieces: `lex` (tokens), `parse` (the tree), `check` (what can be judged without
//! data), `eval` and `ops` (evaluation), `env` (what can be read), `text` (`${{ … }}` in
//! strings).

mod check;
mod env;
mod error;
mod eval;
mod lex;
mod ops;
mod parse;
mod text;

#[cfg(test)]
mod tests;

use serde_json::Value;

pub use env::{BundleView, Chart, Commit, Env, Image, TargetView};
pub use error::ExprError;

use env::Response;
use parse::Node;

/// The longest expression, in characters, for every expression (`if:`, `with:`,
/// `successIf`); the CRDs' `maxLength` on `if:` is this bound (`hecate_types::limits`).
/// Longer text is refused before it is read.
pub const MAX_LENGTH: usize = 4096;

/// How deep an expression may nest: brackets, prefix and infix operators, member
/// accesses, indexes and calls each go one level deeper. Real conditions nest under ten;
/// at 64 the parser, the checker and the evaluator — all recursive — stay far inside
/// a runtime worker's stack (docs/DECISIONS.md 98).
pub const MAX_DEPTH: usize = 64;

/// What opens an expression inside a string.
pub const OPEN: &str = "${{";

/// Whether `text` holds an expression, so its final value is known only when the
/// crossing runs. The one such test: step configurations ask it too.
pub fn is_expression(text: &str) -> bool {
    text.contains(OPEN)
}

/// `with` with every `${{ … }}` substituted, in values and map keys at any depth.
///
/// A string that is exactly one expression becomes the expression's value, typed
/// (`"${{ steps.build.count }}"` gives the number 3, and may give a map, a list, a
/// boolean or null); otherwise each expression's value is written into the text
/// (null as nothing, maps and lists as compact JSON). Keys are always text. The first
/// problem stops the walk, and says where in `with` it is.
pub fn interpolate(with: &Value, env: &Env) -> Result<Value, ExprError> {
    text::walk(with, env, "with")
}

/// Whether a step's `if:` holds.
///
/// `if:` is a bare expression, and its value must be a boolean: `"yes"`, `1` or null
/// are errors, never guesses. Quirk Q10: the reference refuses `${{ … }}` around an
/// `if:` (a syntax error there); we accept one `${{ … }}` wrapping the whole
/// condition as the same expression, because people write it by habit and it can
/// mean nothing else (docs/DECISIONS.md). Text around or between wrappers
/// (`${{ a }} && ${{ b }}`) is still refused.
pub fn condition(source: &str, env: &Env) -> Result<bool, ExprError> {
    let expr = bare(source);
    let value = evaluate(expr, env)?;
    boolean(expr, &value)
}

/// Whether the `http` step's `successIf` holds for a response: `status`, `body` (the
/// text read) and `json` (the body parsed, or `None` when it is not JSON, read as
/// null). Those are the only names: any other is an [`ExprError::Invalid`].
pub fn success_if(
    source: &str,
    status: u16,
    body: &str,
    json: Option<&Value>,
) -> Result<bool, ExprError> {
    let expr = source.trim();
    let tree = tree(expr, Some(Response::NAMES.as_slice()))?;
    let response = Response { status, body, json };
    let value = eval::evaluate(&tree, expr, &response).map_err(|problem| failed(expr, problem))?;
    boolean(expr, &value)
}

/// Whether `source` is a well-formed `if:` — syntax, known functions, valid constant
/// patterns — without any data, so a Gate can report a bad condition before a
/// crossing meets it. Accepts what [`condition`] accepts, the Q10 wrapper included.
pub fn compile(source: &str) -> Result<(), ExprError> {
    tree(bare(source), None).map(drop)
}

/// Whether `source` is a well-formed `successIf`, using only `status`, `body` and
/// `json`.
pub fn compile_success_if(source: &str) -> Result<(), ExprError> {
    tree(source.trim(), Some(Response::NAMES.as_slice())).map(drop)
}

/// One expression's value over `env`.
fn evaluate(source: &str, env: &Env) -> Result<Value, ExprError> {
    let expr = source.trim();
    let tree = tree(expr, None)?;
    eval::evaluate(&tree, expr, env).map_err(|problem| failed(expr, problem))
}

/// The checked tree of `expr`; `names`, when given, are the only top-level names it
/// may use. Text longer than [`MAX_LENGTH`] is refused unread.
fn tree(expr: &str, names: Option<&[&str]>) -> Result<Node, ExprError> {
    let length = expr.chars().count();
    if length > MAX_LENGTH {
        return Err(ExprError::TooLong {
            start: expr.chars().take(QUOTED).collect(),
            length,
        });
    }
    parse::parse(expr)
        .and_then(|node| check::check(&node, names).map(|()| node))
        .map_err(|problem| ExprError::Invalid {
            expr: expr.to_string(),
            column: expr.get(..problem.at).map_or(1, |s| s.chars().count() + 1),
            problem: problem.what,
        })
}

/// An `if:` without surroundings: trimmed, and unwrapped from one `${{ … }}` that is
/// the whole of it (Q10, see [`condition`]).
fn bare(source: &str) -> &str {
    let trimmed = source.trim();
    text::whole(trimmed).map_or(trimmed, str::trim)
}

/// How many characters of an over-long expression a message quotes.
const QUOTED: usize = 40;

fn failed(expr: &str, problem: String) -> ExprError {
    ExprError::Failed {
        expr: expr.to_string(),
        problem,
    }
}

fn boolean(expr: &str, value: &Value) -> Result<bool, ExprError> {
    match value {
        Value::Bool(b) => Ok(*b),
        other => Err(ExprError::NotBoolean {
            expr: expr.to_string(),
            got: describe(other),
        }),
    }
}

/// A value in a message: `the string "yes"`, `the number 1`, `null`, `a list`.
fn describe(value: &Value) -> String {
    const LONGEST: usize = 40;
    match value {
        Value::String(s) if s.chars().count() > LONGEST => {
            let start: String = s.chars().take(LONGEST).collect();
            format!("the string {start:?}…")
        }
        Value::String(s) => format!("the string {s:?}"),
        Value::Number(_) => format!("the number {}", text::stringify(value)),
        other => ops::kind(other).to_string(),
    }
}
