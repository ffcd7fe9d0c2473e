//! What Gates have to tell, as their last reconcile judged it, and which namespaces
//! anyone listens to.
//!
//! A Gate's reconcile offers its notices here only when a Notifier hears its
//! namespace ([`Outbox::hears`]), so a cluster without Notifiers pays nothing. Each
//! offer replaces the Gate's last one: what is kept is one list per Gate, as long as
//! the Gate's notices, never a queue that grows. The record of what was sent is each
//! Notifier's status; this holds nothing a restart would lose.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use hecate_ops::model::Notice;
use tokio::sync::{Notify, watch};

/// Who listens: every namespace (a platform's Notifier), or these.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listening {
    /// A Notifier hears every namespace.
    pub all: bool,
    /// The namespaces some Notifier hears.
    pub namespaces: BTreeSet<String>,
}

impl Listening {
    /// Whether a Notifier hears `namespace`.
    pub fn hears(&self, namespace: &str) -> bool {
        self.all || self.namespaces.contains(namespace)
    }
}

/// The notices Gates offer, shared by the Gate controller and the notifier.
#[derive(Clone)]
pub struct Outbox(Arc<Inner>);

struct Inner {
    /// By Gate (namespace, name).
    offered: Mutex<HashMap<(String, String), Vec<Notice>>>,
    offers: Notify,
    listening: watch::Sender<Listening>,
}

impl Default for Outbox {
    fn default() -> Self {
        Self(Arc::new(Inner {
            offered: Mutex::default(),
            offers: Notify::new(),
            listening: watch::Sender::new(Listening::default()),
        }))
    }
}

impl Outbox {
    /// Whether a Notifier hears `namespace`: its Gates offer their notices only then.
    pub fn hears(&self, namespace: &str) -> bool {
        self.0.listening.borrow().hears(namespace)
    }

    /// Who listens now; a Gate of a namespace that starts being heard is looked at
    /// again ([`Outbox::listening`]), so what it has to tell is offered at once.
    pub fn listen(&self, listening: Listening) {
        self.0.listening.send_if_modified(|now| {
            let changed = *now != listening;
            *now = listening;
            changed
        });
        self.0
            .offered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(namespace, _), _| self.hears(namespace));
    }

    /// Follows who listens.
    pub fn listening(&self) -> watch::Receiver<Listening> {
        self.0.listening.subscribe()
    }

    /// What Gate `name` of `namespace` has to tell now, replacing what it offered
    /// before. Wakes the notifier when it differs.
    pub fn offer(&self, namespace: &str, name: &str, notices: Vec<Notice>) {
        let mut offered = self
            .0
            .offered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let key = (namespace.to_string(), name.to_string());
        if offered.get(&key) == Some(&notices) {
            return;
        }
        if notices.is_empty() {
            offered.remove(&key);
        } else {
            offered.insert(key, notices);
        }
        drop(offered);
        self.0.offers.notify_one();
    }

    /// Forgets a Gate that went.
    pub fn forget(&self, namespace: &str, name: &str) {
        self.offer(namespace, name, Vec::new());
    }

    /// Every notice offered, of `namespace` or of every namespace.
    pub fn notices(&self, namespace: Option<&str>) -> Vec<Notice> {
        let offered = self
            .0
            .offered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        offered
            .iter()
            .filter(|((ns, _), _)| namespace.is_none_or(|n| n == ns))
            .flat_map(|(_, notices)| notices.iter().cloned())
            .collect()
    }

    /// Completes when a Gate offered something new since the last call.
    pub async fn offered(&self) {
        self.0.offers.notified().await;
    }
}

#[cfg(test)]
mod tests {
    use hecate_types::NoticeKind;

    use super::*;

    fn notice(namespace: &str, gate: &str) -> Notice {
        Notice::new(
            format!("{namespace}/{gate}"),
            NoticeKind::Crossed,
            namespace,
            gate,
            String::new(),
        )
    }

    #[test]
    fn a_gate_offers_one_list_that_its_next_offer_replaces() {
        let outbox = Outbox::default();
        outbox.offer("a", "dev", vec![notice("a", "dev")]);
        outbox.offer("a", "dev", vec![notice("a", "dev"), notice("a", "dev")]);
        outbox.offer("b", "dev", vec![notice("b", "dev")]);
        assert_eq!(outbox.notices(Some("a")).len(), 2);
        assert_eq!(outbox.notices(None).len(), 3);
        outbox.forget("a", "dev");
        assert_eq!(outbox.notices(None).len(), 1);
    }

    #[test]
    fn a_namespace_nobody_hears_any_more_is_dropped() {
        let outbox = Outbox::default();
        outbox.listen(Listening {
            all: false,
            namespaces: ["a".to_string()].into(),
        });
        assert!(outbox.hears("a") && !outbox.hears("b"));
        outbox.offer("a", "dev", vec![notice("a", "dev")]);
        outbox.listen(Listening::default());
        assert_eq!(outbox.notices(None), []);
        outbox.listen(Listening {
            all: true,
            namespaces: BTreeSet::new(),
        });
        assert!(outbox.hears("b"));
    }
}
