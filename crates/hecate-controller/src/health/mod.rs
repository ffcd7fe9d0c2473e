//! Health of what a Gate watches (spec controller.md §6).
