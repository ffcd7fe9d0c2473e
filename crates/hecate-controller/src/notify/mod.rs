//! Telling people what happens to their releases (issue 54, DECISION 166).
//!
//! - Gates say what they have to tell: each Gate reconcile, in a namespace some
//!   Notifier hears, offers the notices hecate-ops judges for it
//!   ([`hecate_ops::rules::notice::of_gate`]) to the [`outbox::Outbox`];
//! - the notifier ([`controller::Notifiers`]) gives each Notifier what it hears, asks
//!   hecate-ops what is due, sends it ([`send`], in each destination's shape:
//!   [`render`]) and records what became of it in the Notifier's status — the record a
//!   restart reads back, so nothing is lost and a retry goes under the same key.

pub mod controller;
pub mod outbox;
pub mod render;
pub mod send;

pub use controller::Notifiers;
pub use outbox::{Listening, Outbox};
pub use render::Links;

/// How many notices one Notifier sends a minute, at most: Slack takes about one a
/// second per webhook, and a burst of crossings must not make it refuse them.
pub const PER_MINUTE: usize = 30;
