// The pipeline is derived, never configured — by the server: each Gate carries its
// stage (upstream first, from `admits[].after`), and graph.js draws it. Here are only
// helpers that read a Gate's spec for display.

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

/** Whether the Gate verifies what crosses it: its spec lists verifications. */
export function verifies(gate) {
  return Boolean(gate && gate.spec && (gate.spec.verify || []).length);
}
