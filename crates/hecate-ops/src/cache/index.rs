//! Which objects of one kind each namespace holds, by name: what lets the cache build
//! one namespace's snapshot from that namespace's objects instead of a walk of every
//! object in the cluster (docs/DECISIONS.md 136).

use std::collections::{BTreeSet, HashMap};

/// Names by namespace, kept as a reflector keeps its store: a (re)list is gathered
/// aside and replaces the index when it is complete, so the index never names fewer
/// objects than the store holds while a list is under way.
#[derive(Debug, Default)]
pub(super) struct NamespaceIndex {
    names: HashMap<String, BTreeSet<String>>,
    /// While a list is under way: what it has brought so far.
    listing: Option<HashMap<String, BTreeSet<String>>>,
}

impl NamespaceIndex {
    /// A list begins.
    pub(super) fn init(&mut self) {
        self.listing = Some(HashMap::new());
    }

    /// The list brought `namespace/name`.
    pub(super) fn init_apply(&mut self, namespace: &str, name: &str) {
        if let Some(listing) = &mut self.listing {
            insert(listing, namespace, name);
        }
    }

    /// The list is complete: it is the index now.
    pub(super) fn init_done(&mut self) {
        if let Some(listing) = self.listing.take() {
            self.names = listing;
        }
    }

    /// `namespace/name` was created or changed.
    pub(super) fn apply(&mut self, namespace: &str, name: &str) {
        insert(&mut self.names, namespace, name);
    }

    /// `namespace/name` is gone.
    pub(super) fn delete(&mut self, namespace: &str, name: &str) {
        if let Some(names) = self.names.get_mut(namespace) {
            names.remove(name);
            if names.is_empty() {
                self.names.remove(namespace);
            }
        }
    }

    /// The names of `namespace`'s objects, sorted.
    pub(super) fn names(&self, namespace: &str) -> Vec<String> {
        self.names
            .get(namespace)
            .map(|names| names.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The namespaces holding at least one object.
    pub(super) fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.names.keys().map(String::as_str)
    }
}

fn insert(names: &mut HashMap<String, BTreeSet<String>>, namespace: &str, name: &str) {
    names
        .entry(namespace.to_string())
        .or_default()
        .insert(name.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespaces(index: &NamespaceIndex) -> Vec<&str> {
        let mut namespaces: Vec<&str> = index.namespaces().collect();
        namespaces.sort_unstable();
        namespaces
    }

    #[test]
    fn changes_are_indexed_by_namespace() {
        let mut index = NamespaceIndex::default();
        index.apply("shop", "prod");
        index.apply("shop", "dev");
        index.apply("shop", "dev");
        index.apply("pay", "prod");
        assert_eq!(index.names("shop"), ["dev", "prod"]);
        assert_eq!(index.names("pay"), ["prod"]);
        assert!(index.names("elsewhere").is_empty());
        index.delete("pay", "prod");
        index.delete("pay", "never-there");
        assert_eq!(namespaces(&index), ["shop"]);
    }

    #[test]
    fn a_relist_replaces_the_index_only_when_complete() {
        let mut index = NamespaceIndex::default();
        index.apply("shop", "gone-while-unwatched");
        index.apply("pay", "prod");
        index.init();
        index.init_apply("shop", "dev");
        // Until the list is complete, the index names what the store still holds.
        assert_eq!(index.names("shop"), ["gone-while-unwatched"]);
        index.init_done();
        assert_eq!(index.names("shop"), ["dev"]);
        assert_eq!(namespaces(&index), ["shop"]);
    }

    #[test]
    fn a_list_item_outside_a_list_is_ignored() {
        let mut index = NamespaceIndex::default();
        index.init_apply("shop", "dev");
        index.init_done();
        assert!(index.names("shop").is_empty());
    }
}
