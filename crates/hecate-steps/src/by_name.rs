//! Things registered under the name a Gate's `uses:` refers to — steps, health
//! checkers, verifiers —, each name once. The engine's [`crate::engine::Steps`], the
//! [`crate::health::Checkers`] and the controller's verifiers are each one of these
//! with what they do on top.

use std::collections::BTreeMap;
use std::sync::Arc;

/// Something `uses:` names.
pub trait Named {
    /// What such things are called, in messages (`step`, `health checker`).
    const KIND: &'static str;

    /// The name `uses:` refers to it by.
    fn name(&self) -> &str;
}

/// A second registration under a name already taken.
#[derive(thiserror::Error, Clone, Debug, PartialEq, Eq)]
#[error("a {kind} named {name:?} is already registered")]
pub struct Duplicate {
    /// What was registered ([`Named::KIND`]).
    pub kind: &'static str,
    /// The name taken twice.
    pub name: String,
}

/// Things by their names, sorted.
pub struct ByName<T: ?Sized> {
    entries: BTreeMap<String, Arc<T>>,
}

impl<T: ?Sized> Default for ByName<T> {
    fn default() -> Self {
        Self {
            entries: BTreeMap::new(),
        }
    }
}

impl<T: ?Sized> Clone for ByName<T> {
    fn clone(&self) -> Self {
        Self {
            entries: self.entries.clone(),
        }
    }
}

impl<T: ?Sized + Named> ByName<T> {
    /// Nothing registered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `entry` under its name; a name may be registered once.
    pub fn register(&mut self, entry: Arc<T>) -> Result<(), Duplicate> {
        let name = entry.name().to_string();
        if self.entries.contains_key(&name) {
            return Err(Duplicate {
                kind: T::KIND,
                name,
            });
        }
        self.entries.insert(name, entry);
        Ok(())
    }

    /// What is registered as `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<T>> {
        self.entries.get(name)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The registered names for a message: `a, b`, or `none`.
    pub fn listed(&self) -> String {
        if self.entries.is_empty() {
            return "none".into();
        }
        self.names().collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Thing(&'static str);

    impl Named for Thing {
        const KIND: &'static str = "thing";

        fn name(&self) -> &str {
            self.0
        }
    }

    #[test]
    fn a_name_is_registered_once_and_names_are_sorted() {
        let mut things = ByName::new();
        assert_eq!(things.listed(), "none");
        things.register(Arc::new(Thing("b"))).expect("the first b");
        things.register(Arc::new(Thing("a"))).expect("the first a");
        let twice = things
            .register(Arc::new(Thing("b")))
            .expect_err("a second b");
        assert_eq!(
            twice.to_string(),
            r#"a thing named "b" is already registered"#
        );
        assert_eq!(things.names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(things.listed(), "a, b");
        assert_eq!(things.get("a").map(|thing| thing.0), Some("a"));
        assert!(things.get("c").is_none());
    }
}
