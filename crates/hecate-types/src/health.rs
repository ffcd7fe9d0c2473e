//! Health of an environment, and how several results combine.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The health of an environment, as its checks report it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum Health {
    /// Everything checked is fine.
    Healthy,
    /// Changes are still being applied.
    Progressing,
    /// Something checked is broken.
    Degraded,
    /// A check could not tell.
    Unknown,
    /// There is nothing to check.
    NotApplicable,
}

impl Health {
    /// Every value, best first.
    pub const ALL: [Self; 5] = [
        Self::Healthy,
        Self::NotApplicable,
        Self::Progressing,
        Self::Unknown,
        Self::Degraded,
    ];

    /// How bad this is; higher is worse. `NotApplicable` ranks just above `Healthy`,
    /// and `Unknown` above `Progressing`: not knowing is worse than waiting.
    fn severity(self) -> u8 {
        match self {
            Self::Healthy => 0,
            Self::NotApplicable => 1,
            Self::Progressing => 2,
            Self::Unknown => 3,
            Self::Degraded => 4,
        }
    }

    /// The worse of two results. Commutative and associative, with `Healthy` as
    /// identity, so an aggregate of many checks is a fold starting from `Healthy`.
    #[must_use]
    pub fn merge(self, other: Self) -> Self {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }

    /// The value as it is written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Healthy => "Healthy",
            Self::Progressing => "Progressing",
            Self::Degraded => "Degraded",
            Self::Unknown => "Unknown",
            Self::NotApplicable => "NotApplicable",
        }
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromIterator<Health> for Health {
    /// The worst of all results; `Healthy` when there are none.
    fn from_iter<I: IntoIterator<Item = Health>>(iter: I) -> Self {
        iter.into_iter().fold(Self::Healthy, Self::merge)
    }
}

#[cfg(test)]
mod tests {
    use super::Health::{self, *};

    #[test]
    fn merge_takes_the_worse_in_either_order() {
        // The reference's pinned cases, each checked both ways round.
        let cases = [
            (Healthy, Healthy, Healthy),
            (Healthy, NotApplicable, NotApplicable),
            (Healthy, Progressing, Progressing),
            (Progressing, Degraded, Degraded),
            (Unknown, Progressing, Unknown),
            (Degraded, Unknown, Degraded),
        ];
        for (a, b, want) in cases {
            assert_eq!(a.merge(b), want, "{a} + {b}");
            assert_eq!(b.merge(a), want, "{b} + {a}");
        }
    }

    #[test]
    fn merge_is_a_total_order_with_healthy_as_identity() {
        for a in Health::ALL {
            assert_eq!(a.merge(Healthy), a);
            assert_eq!(a.merge(a), a);
            for b in Health::ALL {
                assert_eq!(a.merge(b), b.merge(a));
                for c in Health::ALL {
                    assert_eq!(a.merge(b).merge(c), a.merge(b.merge(c)));
                }
            }
        }
        // ALL is ordered best to worst, so each value beats everything before it.
        for (i, worse) in Health::ALL.iter().enumerate() {
            for better in &Health::ALL[..i] {
                assert_eq!(better.merge(*worse), *worse);
            }
        }
    }

    #[test]
    fn an_aggregate_starts_healthy() {
        assert_eq!(std::iter::empty::<Health>().collect::<Health>(), Healthy);
        assert_eq!(
            [Progressing, NotApplicable, Healthy]
                .into_iter()
                .collect::<Health>(),
            Progressing
        );
    }
}
