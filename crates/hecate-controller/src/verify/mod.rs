//! Verification after a crossing (spec controller.md §7).
