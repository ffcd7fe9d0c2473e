//! What a chain verdict means, and which of several findings decides.

use hecate_fides::model::ChainVerdict;

use crate::model::{ChainState, VerifyReport};

/// A report for `trail` from Fides' answer (or failure to answer).
pub fn report(
    gate: &str,
    passage: &str,
    trail: &str,
    answer: Result<ChainVerdict, String>,
) -> VerifyReport {
    let mut report = VerifyReport {
        gate: gate.into(),
        passage: passage.into(),
        trail: trail.into(),
        verdict: ChainState::CouldNotCheck,
        valid: None,
        attestations: 0,
        broken_at: None,
        reason: String::new(),
        anchored: None,
        anchored_at: String::new(),
    };
    match answer {
        Err(error) => report.reason = error,
        Ok(chain) => {
            report.valid = Some(chain.valid);
            report.attestations = chain.count;
            if let Some(anchor) = &chain.external_anchor {
                report.anchored = Some(anchor.anchored && anchor.head_matches);
                report.anchored_at = anchor.anchored_at.clone();
            }
            report.verdict = if !chain.valid {
                report.broken_at = Some(chain.broken_at);
                report.reason = if chain.reason.is_empty() {
                    "no reason given".into()
                } else {
                    chain.reason
                };
                ChainState::Broken
            } else if chain.count == 0 {
                // An empty chain is vacuously valid; it is not evidence of anything.
                ChainState::NothingRecorded
            } else {
                ChainState::Valid
            };
        }
    }
    report
}

/// The finding that decides for several: a broken chain above one that could not be
/// checked (it might be broken) above nothing recorded above valid. No reports at all
/// is nothing recorded.
pub fn overall(reports: &[VerifyReport]) -> ChainState {
    reports
        .iter()
        .map(|r| r.verdict)
        .max()
        .unwrap_or(ChainState::NothingRecorded)
}

#[cfg(test)]
mod tests {
    use hecate_fides::model::ExternalAnchor;

    use super::*;

    fn chain(valid: bool, count: i64) -> ChainVerdict {
        ChainVerdict {
            valid,
            count,
            broken_at: if valid { -1 } else { 1 },
            ..ChainVerdict::default()
        }
    }

    #[test]
    fn each_answer_is_classified() {
        assert_eq!(
            report("g", "p", "t", Ok(chain(true, 3))).verdict,
            ChainState::Valid
        );
        assert_eq!(
            report("g", "p", "t", Ok(chain(true, 0))).verdict,
            ChainState::NothingRecorded
        );
        let broken = report("g", "p", "t", Ok(chain(false, 2)));
        assert_eq!(
            (broken.verdict, broken.broken_at, broken.reason.as_str()),
            (ChainState::Broken, Some(1), "no reason given")
        );
        let unknown = report("g", "p", "t", Err("fides: 401".into()));
        assert_eq!(
            (unknown.verdict, unknown.valid, unknown.reason.as_str()),
            (ChainState::CouldNotCheck, None, "fides: 401")
        );
    }

    #[test]
    fn anchoring_needs_a_matching_head() {
        let anchored = |head_matches| ChainVerdict {
            external_anchor: Some(ExternalAnchor {
                anchored: true,
                head_matches,
                tsa_url: String::new(),
                anchored_at: "2026-08-09T11:02:00Z".into(),
            }),
            ..chain(true, 3)
        };
        assert_eq!(
            report("g", "p", "t", Ok(anchored(true))).anchored,
            Some(true)
        );
        assert_eq!(
            report("g", "p", "t", Ok(anchored(false))).anchored,
            Some(false)
        );
        assert_eq!(report("g", "p", "t", Ok(chain(true, 3))).anchored, None);
    }

    #[test]
    fn a_broken_chain_outranks_everything() {
        let r = |answer| report("g", "p", "t", answer);
        let valid = r(Ok(chain(true, 3)));
        let empty = r(Ok(chain(true, 0)));
        let broken = r(Ok(chain(false, 2)));
        let unknown = r(Err("down".into()));
        assert_eq!(
            overall(&[valid.clone(), empty.clone(), broken.clone()]),
            ChainState::Broken
        );
        assert_eq!(
            overall(&[empty.clone(), unknown.clone()]),
            ChainState::CouldNotCheck
        );
        assert_eq!(
            overall(&[valid.clone(), empty]),
            ChainState::NothingRecorded
        );
        assert_eq!(overall(&[valid]), ChainState::Valid);
        assert_eq!(overall(&[]), ChainState::NothingRecorded);
        assert_eq!(overall(&[broken, unknown]), ChainState::Broken);
    }
}
