//! Schema helpers for the shapes schemars cannot express by derive alone.

use schemars::{Schema, SchemaGenerator, json_schema};

/// Any JSON value, kept as the user wrote it: step `with`, step `output`, health
/// `details`. Kubernetes calls this "preserve unknown fields" and wants no `type`.
pub(crate) fn free_form(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "x-kubernetes-preserve-unknown-fields": true })
}

/// `skip_serializing_if` for the Go `omitempty` of booleans.
pub(crate) fn is_false(value: &bool) -> bool {
    !*value
}

/// `skip_serializing_if` for the Go `omitempty` of integers.
pub(crate) fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}
