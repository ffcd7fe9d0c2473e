//! A namespace's pipeline, derived and never configured: a Gate stands one stage after
//! the furthest Gate its admissions name in `after` (the longest path), so
//! dev → staging → production comes out of the Gates themselves. Every surface that
//! orders Gates upstream-first takes the order from here.
//!
//! An `after` naming no Gate of the namespace is reported and does not move the Gate
//! on. Gates on a cycle (or downstream of one) cannot be ordered by their upstreams:
//! they come last, one stage after everything else, by name, and are marked.

use std::collections::{BTreeMap, BTreeSet};

use hecate_types::Gate;
use kube::ResourceExt as _;

use crate::model::Stage;

/// Each Gate's [`Stage`], by Gate name.
pub fn stages<'a>(gates: impl IntoIterator<Item = &'a Gate>) -> BTreeMap<String, Stage> {
    let upstreams: BTreeMap<String, BTreeSet<String>> = gates
        .into_iter()
        .map(|gate| {
            let after = gate
                .spec
                .admits
                .iter()
                .flat_map(|admission| admission.after.iter().cloned())
                .collect();
            (gate.name_any(), after)
        })
        .collect();

    // Layer by layer: a Gate is placed once every upstream it names that exists is.
    let mut placed: BTreeMap<String, usize> = BTreeMap::new();
    loop {
        let ready: Vec<(String, usize)> = upstreams
            .iter()
            .filter(|(name, _)| !placed.contains_key(*name))
            .filter_map(|(name, after)| {
                let mut index = 0;
                for upstream in after.iter().filter(|u| upstreams.contains_key(*u)) {
                    index = index.max(placed.get(upstream)? + 1);
                }
                Some((name.clone(), index))
            })
            .collect();
        if ready.is_empty() {
            break;
        }
        placed.extend(ready);
    }
    let after_all = placed.values().max().map_or(0, |last| last + 1);
    let names: BTreeSet<String> = upstreams.keys().cloned().collect();

    upstreams
        .into_iter()
        .map(|(name, after)| {
            let (after, unknown_after): (Vec<String>, Vec<String>) = after
                .into_iter()
                .partition(|upstream| names.contains(upstream));
            let (index, cycle) = match placed.get(&name) {
                Some(index) => (*index, false),
                None => (after_all, true),
            };
            let stage = Stage {
                index,
                after,
                unknown_after,
                cycle,
            };
            (name, stage)
        })
        .collect()
}

/// `gates` upstream first — by stage, then by name — each with its stage.
pub fn upstream_first<'a>(gates: impl IntoIterator<Item = &'a Gate>) -> Vec<(&'a Gate, Stage)> {
    let gates: Vec<&Gate> = gates.into_iter().collect();
    let mut stages = stages(gates.iter().copied());
    let mut ordered: Vec<(&Gate, Stage)> = gates
        .into_iter()
        .map(|gate| {
            let stage = stages.remove(&gate.name_any()).unwrap_or_default();
            (gate, stage)
        })
        .collect();
    ordered.sort_by(|(a, sa), (b, sb)| {
        sa.index
            .cmp(&sb.index)
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    ordered
}
