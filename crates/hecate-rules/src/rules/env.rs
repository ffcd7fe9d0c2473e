//! What a crossing's expressions read (`${{ … }}` in a step's `with:` and `if:`, a
//! verifier's configuration): the Bundle, the Gate's vars, and — when the Gate spans
//! targets — the target. One reading for the engine that runs the steps, the
//! verifications that follow, and a preview that resolves them before anything runs.

use std::collections::BTreeMap;

use hecate_expr as expr;
use hecate_types::{Bundle, Passage};
use kube::ResourceExt as _;

/// One of the places a Gate spans, as its crossing there sees it (DECISION 155):
/// expressions read it as `target`, its vars over the Gate's, and steps that reach a
/// cluster (`flux-wait`, `flux-reconcile`) reach its cluster unless their `with`
/// names one.
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    /// The target's name.
    pub name: &'a str,
    /// The Secret holding its cluster's kubeconfig; `None`: Hecate's own cluster.
    pub cluster: Option<&'a str>,
    /// Its own values.
    pub vars: &'a [hecate_types::Var],
}

/// What expressions read at `place` (`None`: the Gate's one place): `vars.*` — the
/// Passage's values with the target's own over them — and `target.*`. The steps and a
/// rollout's per-target verification read the same (DECISIONS 155, 162).
pub fn place_view(
    passage: &Passage,
    place: Option<&Place<'_>>,
) -> (BTreeMap<String, String>, Option<expr::TargetView>) {
    let own_vars = |vars: &[hecate_types::Var]| -> BTreeMap<String, String> {
        vars.iter()
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect()
    };
    let mut vars = own_vars(&passage.spec.vars);
    let target = place.map(|place| expr::TargetView {
        name: place.name.to_string(),
        cluster: place.cluster.unwrap_or_default().to_string(),
        vars: own_vars(place.vars),
    });
    if let Some(target) = &target {
        vars.extend(target.vars.clone());
    }
    (vars, target)
}

/// What expressions read of `bundle` (`bundle.name`, `bundle.image('<repo>')`, …):
/// each kind of artifact in the Bundle's order.
pub fn bundle_view(bundle: &Bundle) -> expr::BundleView {
    let artifacts = &bundle.spec.artifacts;
    expr::BundleView {
        name: bundle.name_any(),
        digest: bundle.spec.digest.clone(),
        alias: bundle.spec.alias.clone(),
        images: artifacts
            .iter()
            .filter_map(|a| a.image.as_ref())
            .map(|a| expr::Image {
                repo: a.repo.clone(),
                tag: a.tag.clone(),
                digest: a.digest.clone(),
            })
            .collect(),
        charts: artifacts
            .iter()
            .filter_map(|a| a.chart.as_ref())
            .map(|a| expr::Chart {
                repo: a.repo.clone(),
                name: a.name.clone(),
                version: a.version.clone(),
            })
            .collect(),
        commits: artifacts
            .iter()
            .filter_map(|a| a.commit.as_ref())
            .map(|a| expr::Commit {
                repo: a.repo.clone(),
                sha: a.sha.clone(),
                branch: a.branch.clone(),
                tag: a.tag.clone(),
                message: a.message.clone(),
            })
            .collect(),
    }
}
