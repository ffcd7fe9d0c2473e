// What a crossing would run (issue 55), as ops' `CrossingPreview` says it: each step in
// order, its `with:` resolved against the Bundle and the Gate's vars, what it does
// beyond the crossing's own directory, and a value that awaits an earlier step's output
// as written. Nothing is judged here: the Cross dialog draws the answer of
// `POST …/gates/{name}/promote?dryRun=true`.

import { nsPath, post } from "./api.js";
import { h } from "./dom.js";
import { count } from "./format.js";

/** ops' preview of `bundle` crossing `gate`, as the signed-in person. */
export function read(ns, gate, bundle, options = {}) {
  return post(`${nsPath(ns, "gates", gate, "promote")}?dryRun=true`, { bundle }, options);
}

function value(v) {
  return typeof v === "string" ? v : JSON.stringify(v);
}

function stepLine(s) {
  const name = s.as ? [s.uses, h("span", { class: "muted small" }, ` (${s.as})`)] : s.uses;
  const runs =
    s.runs === false ? ` · skipped: if ${s.if} does not hold` : s.runs == null && s.if ? ` · runs if ${s.if}, decided as the crossing goes` : "";
  const withs = s.with && typeof s.with === "object" && !Array.isArray(s.with) ? Object.entries(s.with) : [];
  return h(
    "li",
    { class: "preview-step", "data-uses": s.uses, "data-effect": s.effect || "" },
    h("strong", null, name),
    h("span", { class: "muted small" }, ` — ${s.effectWords}${runs}`),
    s.problem ? h("p", { class: "error-text small server-text" }, `Would fail: ${s.problem}`) : null,
    withs.length
      ? h("dl", { class: "preview-with" }, withs.map(([k, v]) => h("div", null, h("dt", null, k), h("dd", { class: "server-text" }, value(v)))))
      : null,
    s.awaits && s.awaits.length ? h("p", { class: "muted small" }, `What reads ${s.awaits.map((a) => `steps.${a}`).join(", ")} is known once ${s.awaits.join(", ")} ${s.awaits.length === 1 ? "runs" : "run"}.`) : null,
  );
}

/**
 * The preview drawn: a refusal if promote would refuse, then the steps behind a
 * disclosure (the dialog stays small on a phone), in a box of their own.
 */
export function view(p) {
  const steps = p.steps || [];
  return h(
    "div",
    { class: "preview", "data-preview": p.refused ? "refused" : "starts" },
    p.refused ? h("p", { class: "error-text" }, h("strong", null, "Promote would be refused: "), h("span", { class: "server-text" }, p.refused.reason)) : null,
    steps.length
      ? h(
          "details",
          { class: "preview-details" },
          h("summary", null, `What it will run: ${count(steps.length, "step")}`),
          h("div", { class: "diff-scroll", tabindex: "0", role: "region", "aria-label": "What it will run" }, h("ol", { class: "preview-steps" }, steps.map(stepLine))),
          p.perTarget ? h("p", { class: "muted small" }, "Each target's crossing reads its own target and vars.") : null,
        )
      : h("p", { class: "muted small" }, "It runs no steps."),
  );
}

/** Said where the preview could not be read: the dialog still asks. */
export function unread(error) {
  return h("p", { class: "preview-unread", "data-preview": "unread" }, "What it will run could not be read", error && error.message ? [": ", h("span", { class: "server-text" }, error.message)] : "", ".");
}
