//! The built-in steps (spec controller.md §5).
