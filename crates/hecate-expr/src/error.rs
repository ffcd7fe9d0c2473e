//! What goes wrong with an expression, said with the expression and the place: the
//! engine turns any of these into a step `Failed` with reason `BadExpression`, and a
//! Passage of twenty steps must say which text was wrong and why.

/// An expression that could not be read, evaluated, or used as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// The text is not an expression of the language, or names a function or (in
    /// `successIf`) a variable that does not exist. Known without any data.
    #[error("invalid expression {expr:?} at column {column}: {problem}")]
    Invalid {
        /// The expression, trimmed.
        expr: String,
        /// Where the problem is: 1-based, counted in characters.
        column: usize,
        /// What is wrong there.
        problem: String,
    },
    /// The expression is well formed but failed over the data, e.g. reading a member
    /// of null.
    #[error("{expr:?} could not be evaluated: {problem}")]
    Failed {
        /// The expression, trimmed.
        expr: String,
        /// What failed, quoting the sub-expression at fault.
        problem: String,
    },
    /// A condition (`if:`, `successIf`) gave something other than true or false;
    /// truthiness is never guessed.
    #[error("condition {expr:?} gave {got}, not true or false")]
    NotBoolean {
        /// The condition, trimmed.
        expr: String,
        /// What it gave, e.g. `the string "yes"`.
        got: String,
    },
    /// The text is longer than any expression may be ([`super::MAX_LENGTH`]); it is
    /// refused before it is read, and only its start is quoted.
    #[error(
        "expression {start:?}… is {length} characters long; an expression may be at most {} characters",
        super::MAX_LENGTH
    )]
    TooLong {
        /// The first characters of the expression, trimmed.
        start: String,
        /// How many characters it has.
        length: usize,
    },
    /// A problem inside a step's `with:`, and where in it.
    #[error("{path}: {error}")]
    At {
        /// Where, e.g. `with.body.gate` or `with.list[0]`.
        path: String,
        /// The problem there.
        error: Box<ExprError>,
    },
}
