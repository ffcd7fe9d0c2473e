//! The checks that need the whole tree but no data, run before any evaluation: a call
//! names a member function (there are no top-level functions), a constant pattern of
//! `matches` is a valid regular expression, and — for `successIf` — every name is
//! one the response has. They make `compile` worth running at Gate time.

use serde_json::Value;

use super::lex::Problem;
use super::parse::{Binary, Kind, Node};

/// The first problem of `node`'s tree; `names`, when given, are the only top-level
/// names allowed.
pub(super) fn check(node: &Node, names: Option<&[&str]>) -> Result<(), Problem> {
    let mut result = Ok(());
    walk(node, &mut |n| {
        if result.is_err() {
            return;
        }
        result = check_one(n, names);
    });
    result
}

fn check_one(node: &Node, names: Option<&[&str]>) -> Result<(), Problem> {
    match &node.kind {
        Kind::Call { callee, .. } => {
            if let Kind::Name(name) = &callee.kind {
                return Err(Problem::new(
                    callee.start,
                    format!("unknown function {name:?}"),
                ));
            }
        }
        Kind::Binary {
            op: Binary::Matches,
            right,
            ..
        } => {
            if let Kind::Lit(Value::String(pattern)) = &right.kind
                && let Err(why) = regex::Regex::new(pattern)
            {
                return Err(Problem::new(
                    right.start,
                    format!("invalid regular expression: {}", one_line(&why.to_string())),
                ));
            }
        }
        Kind::Name(name) => {
            if let Some(allowed) = names
                && !allowed.contains(&name.as_str())
            {
                return Err(Problem::new(
                    node.start,
                    format!(
                        "unknown name {name:?}; the names here are {}",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The last line of the regex crate's multi-line report ("error: …").
fn one_line(report: &str) -> String {
    report
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(report)
        .trim()
        .trim_start_matches("error: ")
        .to_string()
}

/// Visits `node` and every node under it, parents first. The recursion is as deep as
/// the tree, which the parser keeps within [`super::MAX_DEPTH`].
fn walk(node: &Node, visit: &mut impl FnMut(&Node)) {
    visit(node);
    for child in node.kind.children() {
        walk(child, visit);
    }
}
