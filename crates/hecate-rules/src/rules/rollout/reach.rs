//! Where a crossing of a Gate goes, in words, from its spec alone — its targets and
//! waves — for the person deciding before it starts: "to eu-1 and the clusters
//! labelled region in (eu, us), in 3 waves: canary, eu, then the rest" (past three
//! places, "and N more").
//!
//! From the spec, not the clusters: who approves reads what the Gate's owners wrote;
//! which clusters the selector matches when it crosses is the rollout's record.

use hecate_types::{GateSpec, LabelSelector, SelectorOperator};

use super::listed;

/// Where a crossing of a Gate with `spec` goes, or `None` for a Gate that is one place.
pub fn reach(spec: &GateSpec) -> Option<String> {
    let targets = spec.targets.as_ref()?;
    let mut places: Vec<String> = targets.list.iter().map(|t| t.name.clone()).collect();
    if let Some(selector) = &targets.selector {
        places.push(format!(
            "the clusters labelled {}",
            selector_words(selector)
        ));
    }
    let waves = spec
        .rollout
        .as_ref()
        .map(|r| r.waves.as_slice())
        .unwrap_or_default();
    let how = match waves {
        [] => "all at once".to_string(),
        _ => {
            let mut labels: Vec<String> = waves
                .iter()
                .enumerate()
                .map(|(i, w)| match w.name.as_str() {
                    "" => format!("wave {}", i + 1),
                    name => name.to_string(),
                })
                .collect();
            // Targets no wave selects go last (`rules::rollout::plan`).
            let rest = waves.iter().all(|w| w.targets.is_some());
            if rest {
                labels.push("the rest".into());
            }
            let count = labels.len();
            let last = labels.pop().unwrap_or_default();
            if labels.is_empty() {
                format!("in 1 wave: {last}")
            } else {
                format!("in {count} waves: {}, then {last}", labels.join(", "))
            }
        }
    };
    Some(format!("to {}, {how}", listed(&places)))
}

/// A label selector as people write one: `region=eu`, `region in (eu, us)`,
/// `retired notin (yes)`, `tier`, `!tier`, joined by commas.
fn selector_words(selector: &LabelSelector) -> String {
    let mut terms: Vec<String> = selector
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for requirement in &selector.match_expressions {
        let key = &requirement.key;
        let values = requirement.values.join(", ");
        terms.push(match requirement.operator {
            SelectorOperator::In => format!("{key} in ({values})"),
            SelectorOperator::NotIn => format!("{key} notin ({values})"),
            SelectorOperator::Exists => key.clone(),
            SelectorOperator::DoesNotExist => format!("!{key}"),
        });
    }
    terms.join(", ")
}

#[cfg(test)]
mod tests {
    use hecate_types::{LabelSelectorRequirement, Rollout, Target, Targets, Wave, WaveTargets};

    use super::*;

    fn target(name: &str) -> Target {
        Target {
            name: name.into(),
            ..Target::default()
        }
    }

    #[test]
    fn where_a_crossing_goes_in_words() {
        let mut spec = GateSpec::default();
        assert_eq!(reach(&spec), None, "one place");
        spec.targets = Some(Targets {
            list: vec![target("eu-1")],
            selector: Some(LabelSelector {
                match_labels: [("tier".to_string(), "prod".to_string())].into(),
                match_expressions: vec![LabelSelectorRequirement {
                    key: "region".into(),
                    operator: SelectorOperator::In,
                    values: vec!["eu".into(), "us".into()],
                }],
            }),
        });
        assert_eq!(
            reach(&spec).as_deref(),
            Some("to eu-1 and the clusters labelled tier=prod, region in (eu, us), all at once")
        );
        let named = |names: &[&str]| {
            Some(WaveTargets {
                names: names.iter().map(|n| n.to_string()).collect(),
                selector: None,
            })
        };
        spec.rollout = Some(Rollout {
            waves: vec![
                Wave {
                    name: "canary".into(),
                    targets: named(&["eu-1"]),
                    ..Wave::default()
                },
                Wave {
                    targets: named(&["eu-2"]),
                    ..Wave::default()
                },
            ],
        });
        assert_eq!(
            reach(&spec).as_deref(),
            Some(
                "to eu-1 and the clusters labelled tier=prod, region in (eu, us), in 3 waves: canary, wave 2, then the rest"
            )
        );
        // A last wave without targets takes the rest itself.
        if let Some(rollout) = spec.rollout.as_mut() {
            rollout.waves[1].targets = None;
            rollout.waves[1].name = "everyone".into();
        }
        spec.targets = Some(Targets {
            list: ["eu-1", "eu-2", "us-1", "ap-1"].map(target).to_vec(),
            selector: None,
        });
        assert_eq!(
            reach(&spec).as_deref(),
            Some("to eu-1, eu-2, us-1 and 1 more, in 2 waves: canary, then everyone")
        );
    }
}
