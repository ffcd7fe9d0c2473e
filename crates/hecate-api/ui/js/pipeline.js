// The pipeline is derived, never configured — by the server: each Gate summary of the
// Overview carries its stage (upstream first, from `admits[].after`). Here are only
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

/**
 * Gate summaries (from the Overview, already upstream first) grouped into their
 * stages, in order. The server decides each Gate's stage; this only groups.
 */
export function byStage(summaries) {
  const result = [];
  for (const summary of summaries) {
    const last = result[result.length - 1];
    const index = (summary.stage && summary.stage.index) || 0;
    if (last && last.index === index) last.gates.push(summary);
    else result.push({ index, gates: [summary] });
  }
  return result.map((stage) => stage.gates);
}
