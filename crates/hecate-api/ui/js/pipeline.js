// The pipeline is derived, never configured: a Gate sits one stage after the furthest
// Gate its admissions name in `after` (the longest path), so dev → staging →
// production comes out of the Gates themselves. Cycles are tolerated (a Gate met
// again on its own path counts as no further upstream).

/** Gates' upstream names (within the namespace). */
export function upstream(gate) {
  const names = new Set();
  for (const admission of (gate.spec && gate.spec.admits) || []) {
    for (const after of admission.after || []) names.add(after);
  }
  return [...names];
}

/** Beacons a Gate admits straight from (admissions without `after`). */
export function sources(gate) {
  const names = new Set();
  for (const admission of (gate.spec && gate.spec.admits) || []) {
    if (!(admission.after || []).length && admission.from && admission.from.beacon) names.add(admission.from.beacon);
  }
  return [...names];
}

/** Whether any admission of the Gate needs an approval. */
export function needsApproval(gate) {
  return ((gate.spec && gate.spec.admits) || []).some((a) => a.requireApproval);
}

/** The Gates grouped in stages, upstream first; each stage sorted by name. */
export function stages(gates) {
  const byName = new Map(gates.map((g) => [g.metadata.name, g]));
  const depth = new Map();
  const visit = (name, path) => {
    if (depth.has(name)) return depth.get(name);
    if (path.has(name)) return -1; // a cycle: no further upstream along this path
    path.add(name);
    let d = 0;
    for (const up of upstream(byName.get(name))) {
      if (byName.has(up)) d = Math.max(d, visit(up, path) + 1);
    }
    path.delete(name);
    depth.set(name, d);
    return d;
  };
  for (const name of byName.keys()) visit(name, new Set());
  const result = [];
  for (const [name, d] of depth) {
    (result[d] ||= []).push(byName.get(name));
  }
  return result.filter(Boolean).map((stage) => stage.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)));
}
