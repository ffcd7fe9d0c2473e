// `/audit/`: the trail, newest first, filterable by Gate and kind (the filters live in
// the URL, so a filtered view can be shared). Refusals stand out.

import { get, nsPath } from "../api.js";
import * as c from "../components.js";
import { h } from "../dom.js";
import { count, short, time } from "../format.js";
import { verifies } from "../pipeline.js";
import { refiltered } from "../router.js";

const KINDS = ["crossed", "refused", "running", "approved", "aborted"];
const MARKS = { crossed: "✓", refused: "✗", running: "◐", approved: "✔", aborted: "■" };
// The filter keeps the stable codes; what a person reads is the crossings' vocabulary.
const LABELS = { refused: "failed or aborted" };
// A rollback under way or done says so; one that failed reads as its outcome.
const ROLLBACK_WORDS = { crossed: "rolled back", running: "rolling back" };

/** An entry's verified state, where its Gate verifies; a dash where it does not. */
function verifiedWords(e, verifying) {
  if (verifying && !verifying.has(e.gate)) return h("span", { class: "muted", "data-verified": "none" }, h("span", { "aria-hidden": "true" }, "—"), h("span", { class: "visually-hidden" }, "nothing to verify"));
  return e.verified === true ? "verified" : e.verified === false ? "not verified" : "";
}

export async function render(ctx) {
  const { ns, params } = ctx;
  ctx.title("Audit");
  const gate = params.get("gate") || "";
  const kind = params.get("kind") || "";
  const [entries, bundles, gateList] = await Promise.all([
    get(nsPath(ns, "audit"), { signal: ctx.signal }),
    get(nsPath(ns, "bundles"), { signal: ctx.signal }).catch(() => []),
    get(nsPath(ns, "gates"), { signal: ctx.signal }).catch(() => null),
  ]);
  const index = c.index(bundles);
  // A Gate that verifies nothing has no verified state: its rows say nothing there.
  // (Gates unknown — the list could not be read —: every recorded state is shown.)
  const verifying = gateList ? new Set(gateList.filter(verifies).map((g) => g.metadata.name)) : null;
  // Newest first, as ops orders the trail.
  const shown = entries.filter((e) => (!gate || e.gate === gate) && (!kind || e.kind === kind));
  const gates = [...new Set(entries.map((e) => e.gate))].sort();
  const filter = refiltered("/audit/", params);
  return h(
    "div",
    { class: "page" },
    c.title("Audit", h("span", { class: "muted small" }, ` in ${ns}`)),
    h(
      "form",
      { class: "filters", "aria-label": "Filter the trail", onsubmit: (e) => e.preventDefault() },
      h("label", { for: "audit-gate" }, "Gate"),
      h("select", { id: "audit-gate", onchange: filter("gate") }, h("option", { value: "" }, "every Gate"), gates.map((g) => h("option", { value: g, selected: g === gate }, g))),
      h("label", { for: "audit-kind" }, "Kind"),
      h("select", { id: "audit-kind", onchange: filter("kind") }, h("option", { value: "" }, "every kind"), KINDS.map((k) => h("option", { value: k, selected: k === kind }, LABELS[k] || k))),
    ),
    h("p", { class: "small muted", role: "status" }, `${shown.length} of ${count(entries.length, "entry", "entries")}`),
    shown.length
      ? c.table(
          `The audit trail of ${ns}, newest first`,
          ["When", "What", "Crossing", "Who", "Verified", "Digest", "Detail"],
          shown.map((e) => ({
            attrs: { class: ["entry", `kind-${e.kind}`, e.kind === "refused" && "refused"].filter(Boolean).join(" "), "data-kind": e.kind },
            cells: [
              time(e.at, "local"),
              // A crossing's outcome in the words Passages and Bundles use (a refusal
              // is "failed" or "aborted"); the kind stays the filter's code.
              // A rollback says so (ops' `rollbackOf`, DECISION 153).
              e.rollbackOf && ROLLBACK_WORDS[e.kind]
                ? h("span", { class: ["mark", "mark-rollback"], "data-outcome": e.outcome || "", "data-rollback-of": e.rollbackOf.passage }, h("span", { "aria-hidden": "true" }, "↶"), " ", ROLLBACK_WORDS[e.kind])
                : h("span", { class: ["mark", `mark-${e.kind}`], "data-outcome": e.outcome || "" }, h("span", { "aria-hidden": "true" }, MARKS[e.kind] || ""), " ", e.kind === "refused" && e.outcome ? e.outcome : e.kind),
              [e.bundle ? c.bundle(e.bundle, ns, index) : "", " → ", c.link("/gates/", { name: e.gate, namespace: ns }, e.gate), e.passage ? [" · ", c.link("/passages/", { name: e.passage, namespace: ns }, e.passage)] : null],
              !e.actor ? "automatically" : e.actor === "controller" ? "automatically (controller)" : `by ${e.actor}`,
              verifiedWords(e, verifying),
              e.digest ? h("code", { title: e.digest }, short(e.digest, 19)) : "",
              [
                e.rollbackOf ? h("div", { "data-field": "rollback-of" }, `undid ${e.rollbackOf.passage}${e.rollbackOf.bundle ? ` (${e.rollbackOf.bundle})` : ""}${e.rollbackOf.automatic ? ", by itself" : ""}: ${e.rollbackOf.why}`) : null,
                e.detail ? h("span", { class: e.kind === "refused" ? "error-text" : "" }, e.detail) : "",
                e.evidence ? h("div", { class: "small" }, `evidence: ${e.evidence.verdict || "no verdict"}${e.evidence.risk != null ? `, risk ${e.evidence.risk}` : ""}${e.evidence.trail ? `, trail ${e.evidence.trail}` : ""}${(e.evidence.blockers || []).length ? `, ${e.evidence.blockers.join("; ")}` : ""}`) : null,
              ],
            ],
          })),
        )
      : c.empty(entries.length ? "Nothing matches these filters." : `Nothing has happened in ${ns} yet.`),
  );
}
