//! Which places a Gate spans now: its listed targets, in their order, then the
//! connected clusters its selector matches, by name.
//!
//! A target's name is what its record, the waves and people call it, so it must be
//! one: a Secret name of at most 63 characters (short enough to be a label value
//! too), never two alike. A listed target whose `clusterRef` is a cluster the
//! selector also matches is that cluster, listed once, with the listed target's vars.

use std::collections::{BTreeMap, BTreeSet};

use hecate_types::limits::{MAX_SELECTOR_TERMS, MAX_TARGET_NAME, MAX_TARGETS};
use hecate_types::names::is_dns_subdomain;
use hecate_types::{LabelSelector, SelectorOperator, Targets, Var};

/// A cluster connected to the namespace: a Secret labelled `hecate.dev/cluster=true`,
/// by its name, with its labels (`region=eu`, `tier=canary`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    /// The Secret's name.
    pub name: String,
    /// The Secret's labels.
    pub labels: BTreeMap<String, String>,
}

/// How a target came to be one of the Gate's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `spec.targets.list` names it.
    Listed,
    /// `spec.targets.selector` matches its cluster.
    Selected,
}

/// One place a Gate spans now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedTarget {
    /// Its name.
    pub name: String,
    /// The Secret holding its cluster's kubeconfig; `None`: the cluster Hecate runs in.
    pub cluster: Option<String>,
    /// What waves' selectors match: its cluster's labels, when that cluster is
    /// connected; none otherwise.
    pub labels: BTreeMap<String, String>,
    /// Its own vars, over the Gate's.
    pub vars: Vec<Var>,
    /// Listed or selected.
    pub origin: Origin,
}

/// Why a Gate's targets cannot be told.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetProblem {
    /// `spec.targets` lists nothing and selects nothing.
    #[error("targets: names no place; list targets, or select connected clusters by label")]
    Empty,
    /// A listed target's name is not a name.
    #[error(
        "targets.list[{index}]: {name:?} is not a target name: a Secret name of at most {MAX_TARGET_NAME} characters"
    )]
    BadName {
        /// Its place in the list.
        index: usize,
        /// The name as written.
        name: String,
    },
    /// A selected cluster's Secret name cannot be a target's.
    #[error(
        "targets.selector: cluster {name:?} matches, and is not a target name (a Secret name of at most {MAX_TARGET_NAME} characters); list it under a name of its own with clusterRef: {{name: {name}}}"
    )]
    BadClusterName {
        /// The Secret's name.
        name: String,
    },
    /// Two targets share a name.
    #[error("targets: two targets are called {name}; a target's name says which it is")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// The selector is not one the API server would take.
    #[error("targets.selector: {problem}")]
    BadSelector {
        /// What is wrong with it.
        problem: String,
    },
    /// The selector matches no connected cluster.
    #[error(
        "targets.selector matches none of the {connected} clusters connected to the namespace (Secrets labelled hecate.dev/cluster=true)"
    )]
    SelectorMatchesNothing {
        /// How many clusters are connected.
        connected: usize,
    },
    /// More targets than one Gate spans.
    #[error(
        "targets: {count} targets, more than the {MAX_TARGETS} one Gate spans; split them across Gates"
    )]
    TooMany {
        /// How many there are.
        count: usize,
    },
}

/// Whether `name` may name a target: a Secret name (a DNS-1123 subdomain) of at most
/// [`MAX_TARGET_NAME`] characters.
pub fn is_target_name(name: &str) -> bool {
    name.len() <= MAX_TARGET_NAME && is_dns_subdomain(name)
}

/// The places `spec` names, given the clusters connected to the namespace: listed
/// targets in their order, then the selected clusters by name; or every problem.
pub fn resolve(
    spec: &Targets,
    clusters: &[Cluster],
) -> Result<Vec<ResolvedTarget>, Vec<TargetProblem>> {
    let mut problems = Vec::new();
    if spec.list.is_empty() && spec.selector.is_none() {
        return Err(vec![TargetProblem::Empty]);
    }
    let by_name: BTreeMap<&str, &Cluster> = clusters.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut targets: Vec<ResolvedTarget> = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, listed) in spec.list.iter().enumerate() {
        if !is_target_name(&listed.name) {
            problems.push(TargetProblem::BadName {
                index,
                name: listed.name.clone(),
            });
            continue;
        }
        if !seen.insert(listed.name.clone()) {
            problems.push(TargetProblem::Duplicate {
                name: listed.name.clone(),
            });
            continue;
        }
        let cluster = listed.cluster_ref.as_ref().map(|r| r.name.clone());
        let labels = cluster
            .as_deref()
            .and_then(|c| by_name.get(c))
            .map(|c| c.labels.clone())
            .unwrap_or_default();
        targets.push(ResolvedTarget {
            name: listed.name.clone(),
            cluster,
            labels,
            vars: listed.vars.clone(),
            origin: Origin::Listed,
        });
    }
    if let Some(selector) = &spec.selector {
        let selector_problems = selector_problems(selector);
        if selector_problems.is_empty() {
            select(selector, clusters, &mut targets, &mut seen, &mut problems);
        } else {
            problems.extend(
                selector_problems
                    .into_iter()
                    .map(|problem| TargetProblem::BadSelector { problem }),
            );
        }
    }
    if targets.len() > MAX_TARGETS {
        problems.push(TargetProblem::TooMany {
            count: targets.len(),
        });
    }
    if problems.is_empty() {
        Ok(targets)
    } else {
        Err(problems)
    }
}

/// Adds the clusters `selector` matches, by name, to `targets`.
fn select(
    selector: &LabelSelector,
    clusters: &[Cluster],
    targets: &mut Vec<ResolvedTarget>,
    seen: &mut BTreeSet<String>,
    problems: &mut Vec<TargetProblem>,
) {
    let mut matched: Vec<&Cluster> = clusters
        .iter()
        .filter(|c| selector.matches(&c.labels))
        .collect();
    if matched.is_empty() {
        problems.push(TargetProblem::SelectorMatchesNothing {
            connected: clusters.len(),
        });
        return;
    }
    matched.sort_by(|a, b| a.name.cmp(&b.name));
    for cluster in matched {
        // A listed target for this very cluster already stands for it, with its vars.
        if targets.iter().any(|t| {
            t.origin == Origin::Listed && t.cluster.as_deref() == Some(cluster.name.as_str())
        }) {
            continue;
        }
        if !is_target_name(&cluster.name) {
            problems.push(TargetProblem::BadClusterName {
                name: cluster.name.clone(),
            });
            continue;
        }
        if !seen.insert(cluster.name.clone()) {
            problems.push(TargetProblem::Duplicate {
                name: cluster.name.clone(),
            });
            continue;
        }
        targets.push(ResolvedTarget {
            name: cluster.name.clone(),
            cluster: Some(cluster.name.clone()),
            labels: cluster.labels.clone(),
            vars: Vec::new(),
            origin: Origin::Selected,
        });
    }
}

/// What the Kubernetes API server would refuse in `selector`, one line each: a
/// requirement whose values contradict its operator, an empty key, more terms than a
/// selector holds (an older CRD does not bound them).
pub fn selector_problems(selector: &LabelSelector) -> Vec<String> {
    let mut problems = Vec::new();
    if selector.match_labels.len() > MAX_SELECTOR_TERMS {
        problems.push(format!(
            "matchLabels: {} labels, more than the {MAX_SELECTOR_TERMS} a selector holds",
            selector.match_labels.len()
        ));
    }
    if selector.match_labels.keys().any(String::is_empty) {
        problems.push("matchLabels: a label with no key".into());
    }
    if selector.match_expressions.len() > MAX_SELECTOR_TERMS {
        problems.push(format!(
            "matchExpressions: {} requirements, more than the {MAX_SELECTOR_TERMS} a selector holds",
            selector.match_expressions.len()
        ));
    }
    for (i, requirement) in selector.match_expressions.iter().enumerate() {
        let mut problem = |what: String| problems.push(format!("matchExpressions[{i}]: {what}"));
        if requirement.key.is_empty() {
            problem("key is empty: name the label".into());
        }
        let operator = requirement.operator;
        let has_values = !requirement.values.is_empty();
        match operator {
            SelectorOperator::In | SelectorOperator::NotIn if !has_values => {
                problem(format!("{operator:?} needs values to compare with"));
            }
            SelectorOperator::Exists | SelectorOperator::DoesNotExist if has_values => {
                problem(format!("{operator:?} takes no values"));
            }
            _ => {}
        }
    }
    problems
}
