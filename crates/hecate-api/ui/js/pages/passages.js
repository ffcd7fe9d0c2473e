// `/passages/` (optionally `?gate=`): every crossing attempt, newest first.
// `/passages/?name=P`: one crossing, step by step, with abort while it runs, and
// after it landed its verification.

import { get, nsPath } from "../api.js";
import * as actions from "../actions.js";
import * as c from "../components.js";
import { h } from "../dom.js";
import { count, local, short, since, time, withLocalTimes } from "../format.js";
import * as rollout from "../rollout.js";

export async function render(ctx) {
  return ctx.name ? detail(ctx) : list(ctx);
}

const TERMINAL = ["Succeeded", "Failed", "Aborted"];

function done(p) {
  const steps = (p.status && p.status.steps) || [];
  const total = steps.length || (p.spec.steps || []).length;
  return `${steps.filter((s) => ["Succeeded", "Skipped"].includes(s.phase)).length}/${total} steps`;
}

// `?phase=` (the Overview's totals link here): `Failed`, or `running` for the
// crossings under way (Pending or Running) — what each total counts.
const PHASES = { Failed: ["Failed"], running: ["Pending", "Running"] };
const PHASE_WORDS = { Failed: "that failed", running: "under way" };

async function list(ctx) {
  const gate = ctx.params.get("gate") || "";
  const only = PHASES[ctx.params.get("phase") || ""] ? ctx.params.get("phase") : "";
  ctx.title(gate ? `Passages of ${gate}` : "Passages");
  const query = gate ? `?gate=${encodeURIComponent(gate)}` : "";
  const [all, bundles] = await Promise.all([
    get(nsPath(ctx.ns, "passages") + query, { signal: ctx.signal }),
    get(nsPath(ctx.ns, "bundles"), { signal: ctx.signal }).catch(() => []),
  ]);
  const index = c.index(bundles);
  const passages = only ? all.filter((p) => PHASES[only].includes((p.status && p.status.phase) || "Pending")) : all;
  return h(
    "div",
    { class: "page" },
    c.title(gate ? `Passages of ${gate}` : "Passages", h("span", { class: "muted small" }, ` in ${ctx.ns}`)),
    only ? h("p", { "data-filter": only }, `Only the Passages ${PHASE_WORDS[only]} · `, c.link("/passages/", { namespace: ctx.ns, gate }, "show every Passage")) : null,
    gate ? h("p", null, c.link("/passages/", { namespace: ctx.ns }, "Show the Passages of every Gate")) : null,
    passages.length
      ? c.table(
          "Passages, newest first",
          ["Passage", "Crossing", "Phase", "Progress", "Took", "By", "Started", "Message"],
          passages.map((p) => {
            const st = p.status || {};
            return {
              attrs: { "data-passage": p.metadata.name, class: st.phase === "Failed" ? "refused" : "" },
              cells: [
                c.link("/passages/", { name: p.metadata.name, namespace: ctx.ns }, p.metadata.name),
                [c.bundle(p.spec.bundle, ctx.ns, index), " → ", c.link("/gates/", { name: p.spec.gate, namespace: ctx.ns }, p.spec.gate)],
                [c.phase(st.phase), verifiedPill(st.verification), rollbackOf(p) ? h("span", { class: "small", "data-rollback-of": rollbackOf(p) }, ` ↶ rollback of ${rollbackOf(p)}`) : null],
                done(p),
                st.startedAt ? since(st.startedAt, st.finishedAt) : "",
                p.spec.actor || "automatically",
                st.startedAt ? time(st.startedAt) : h("span", { class: "muted" }, "not started"),
                st.message ? h("span", { class: st.phase === "Failed" ? "error-text" : "" }, st.message) : "",
              ],
            };
          }),
        )
      : c.empty(only ? `No Passages ${PHASE_WORDS[only]} in ${ctx.ns}.` : gate ? `No Passage has tried to cross ${gate}.` : `No Passages in ${ctx.ns}.`),
  );
}

/** The crossing a rollback undid, as its Passage names it, or "". */
function rollbackOf(p) {
  return (p.metadata.annotations && p.metadata.annotations["hecate.dev/rollback-of"]) || "";
}

/** A rollback's line under its title: what it undid, by itself or asked for. */
function rollbackLine(ns, p) {
  const undone = rollbackOf(p);
  if (!undone) return null;
  const by = p.spec.actor === "controller" ? "the Gate rolled back by itself" : `${p.spec.actor} rolled back`;
  return h("p", { class: "rollback-line", "data-field": "rollback-of" }, h("span", { "aria-hidden": "true" }, "↶ "), `A rollback: ${by}, undoing `, c.link("/passages/", { name: undone, namespace: ns }, undone), ".");
}

/** A crossing's verification, when it did not pass, as a pill beside its phase. */
function verifiedPill(v) {
  if (!v || v.phase === "Verified") return null;
  const [words, tone] = { Failed: ["verification said no", "bad"], Verifying: ["being verified", "info"], Superseded: ["verification cut short", ""] }[v.phase] || [v.phase, ""];
  return [" ", h("span", { "data-verification": v.phase }, c.pill(words, tone))];
}

/** A step's outputs: each key with its value (JSON where it is not text); none, said. */
function outputs(output) {
  if (output === undefined || output === null) return h("span", { class: "muted" }, "none");
  const text = (v) => (typeof v === "string" ? v : JSON.stringify(v));
  if (typeof output !== "object" || Array.isArray(output)) return h("code", { "data-field": "outputs" }, text(output));
  const keys = Object.keys(output).sort();
  if (!keys.length) return h("span", { class: "muted" }, "none");
  return h(
    "dl",
    { class: "outputs", "data-field": "outputs" },
    keys.map((k) => h("div", null, h("dt", null, k), h("dd", null, h("code", null, text(output[k]))))),
  );
}

/** A time as the steps show theirs: how long ago (or how soon), and the local date and time with its zone. */
function when(at, field) {
  return at ? h("span", { "data-field": field }, time(at), h("span", { class: "muted small" }, ` · ${local(at)}`)) : h("span", { class: "muted", "data-field": field }, field === "next" ? "no more looks" : "not yet");
}

/**
 * After a successful crossing, its verification as the controller records it on the
 * Passage (`status.verification`, DECISION 139): where it stands, and each verifier's
 * phase, counts, last value and looks. The page words what it reads; it judges nothing.
 */
function verification(v) {
  if (!v) return null;
  const verifiers = v.verifiers || [];
  return c.section(
    "Verification",
    null,
    h(
      "p",
      { class: "lead", "data-field": "verification" },
      c.phase(v.phase),
      v.message ? [" ", h("span", { class: v.phase === "Failed" ? "error-text" : "", "data-field": "verification-message" }, withLocalTimes(v.message))] : null,
    ),
    c.facts([
      ["Began", when(v.startedAt, "began")],
      v.finishedAt ? ["Decided", when(v.finishedAt, "decided")] : null,
    ]),
    verifiers.length
      ? c.table(
          "Verifications, in the Gate's order",
          ["Verifier", "Phase", "Passes in a row", "Failures", "Could not judge", "Last value", "Last look", "Next look", "Message"],
          verifiers.map((x, i) => ({
            attrs: { class: x.phase === "Failed" ? "refused" : "", "data-verifier": x.uses, "data-index": String(i) },
            cells: [
              x.uses,
              c.phase(x.phase),
              h("span", { "data-field": "passes" }, String(x.passes || 0)),
              h("span", { "data-field": "failures" }, String(x.failures || 0)),
              h("span", { "data-field": "inconclusive" }, String(x.inconclusive || 0)),
              x.lastValue ? h("code", { "data-field": "value" }, x.lastValue) : h("span", { class: "muted", "data-field": "value" }, "none"),
              when(x.lastLookAt, "last"),
              when(x.nextLookAt, "next"),
              h("span", { class: x.phase === "Failed" ? "error-text" : "", "data-field": "message" }, withLocalTimes(x.message)),
            ],
          })),
        )
      : c.empty("The Gate verifies nothing."),
    verifiers.filter((x) => (x.restarts || []).length).map(restarts),
  );
}

/**
 * When a verifier's clock started again (a soak its Gate's health interrupted) and
 * why, newest first, as the controller recorded each (DECISION 169). The countdown
 * is its next look above: a soak's end.
 */
function restarts(x) {
  const list = (x.restarts || []).slice().reverse();
  return h(
    "div",
    { class: "restarts", "data-restarts": x.uses },
    h("h3", null, `${x.uses}: started again ${list.length === 1 ? "once" : `${list.length} times`}`),
    h(
      "ul",
      null,
      list.map((r) => h("li", { "data-restart": r.at }, when(r.at, "restart"), r.reason ? [" — ", h("span", null, withLocalTimes(r.reason))] : null)),
    ),
  );
}

/**
 * A step's log (#53): what it said over its calls, oldest first, each line with when it
 * was first said and how many more times at once — shown when it says more than the
 * message beside it.
 */
function stepLog(log) {
  const lines = log || [];
  if (!lines.length || (lines.length === 1 && !lines[0].repeated)) return null;
  const said = lines.reduce((n, l) => n + 1 + (l.repeated || 0), 0);
  return h(
    "details",
    { class: "step-log", "data-field": "log" },
    h("summary", null, `Log: ${count(said, "message")}`),
    h(
      "ol",
      null,
      lines.map((l) =>
        h(
          "li",
          null,
          h("span", { class: "muted small" }, local(l.at), " "),
          h("span", { class: "server-text" }, withLocalTimes(l.text)),
          l.repeated ? h("span", { class: "muted small" }, ` (said ${l.repeated} more ${l.repeated === 1 ? "time" : "times"})`) : null,
        ),
      ),
    ),
  );
}

/**
 * What an aborted crossing left on the environment's branch: ops' `leftBehind` of its
 * Gate (the newest crossing's pushed commit, from its step records), said here when it
 * is this Passage's.
 */
function leftBehindLine(left) {
  return h(
    "p",
    { class: "left-behind", "data-left-behind": left.passage },
    "The commit pushed by this crossing (",
    h("code", { title: left.commit }, short(left.commit, 7)),
    ") is still on ",
    h("code", null, left.branch),
    ": the environment may run it until the next crossing.",
  );
}

/** A crossing across a Gate's targets: the rollout's record, target by target. */
function targetsSection(name, record) {
  return c.section(
    "Targets",
    null,
    h("p", { class: "rollout", "data-rollout": record.phase }, rollout.phasePill(record.phase), record.message ? [" ", h("span", { class: "server-text" }, record.message)] : null),
    rollout.targetsTable(`Each target of ${name}, by wave`, record.targets || []),
    record.omittedTargets ? h("p", { class: "small muted" }, `${record.omittedTargets} departed targets' records left out.`) : null,
  );
}

async function detail(ctx) {
  const { ns, name } = ctx;
  ctx.title(`Passage ${name}`);
  const p = await get(nsPath(ns, "passages", name), { signal: ctx.signal });
  const b = await get(nsPath(ns, "bundles", p.spec.bundle), { signal: ctx.signal }).catch(() => null);
  // Only an aborted crossing can have left something behind: only then is its Gate asked.
  const aborted = p.status && p.status.phase === "Aborted";
  const explanation = aborted ? await get(nsPath(ns, "gates", p.spec.gate, "explain"), { signal: ctx.signal }).catch(() => null) : null;
  const left = explanation && explanation.leftBehind && explanation.leftBehind.passage === name ? explanation.leftBehind : null;
  const index = c.index(b ? [b] : []);
  const st = p.status || {};
  const phase = st.phase || "Pending";
  const steps = st.steps && st.steps.length ? st.steps : (p.spec.steps || []).map((s) => ({ uses: s.uses, as: s.as, phase: "Pending" }));
  const label = `${c.bundleText(p.spec.bundle, index)} → ${p.spec.gate}`;
  let abortSection = null;
  if (!TERMINAL.includes(phase)) {
    abortSection = c.section(
      "Abort",
      null,
      p.spec.abort
        ? h("p", null, "An abort has been asked for; the Passage stops at its next step.")
        : [
            h("p", null, "Stops the crossing: the remaining steps do not run."),
            h(
              "button",
              {
                type: "button",
                class: "danger",
                "data-action": "abort",
                "data-passage": name,
                onclick: async () => {
                  if (await actions.abort(ns, name, label)) ctx.refresh();
                },
              },
              "Abort this Passage",
            ),
          ],
    );
  }
  return h(
    "div",
    { class: "page" },
    // How it ended first: a crossing whose verification said no is not a success to
    // read past (#53); a rollback says what it undid.
    c.title(name, " ", c.phase(phase), verifiedPill(st.verification)),
    rollbackLine(ns, p),
    h(
      "p",
      { class: "lead" },
      c.bundle(p.spec.bundle, ns, index),
      " → ",
      c.link("/gates/", { name: p.spec.gate, namespace: ns }, p.spec.gate),
      " · ",
      p.spec.actor ? `by ${p.spec.actor}` : "automatically",
      st.startedAt ? [" · took ", since(st.startedAt, st.finishedAt), TERMINAL.includes(phase) ? "" : " so far"] : " · not started",
    ),
    st.message ? h("p", { class: ["message-line", phase === "Failed" && "error-text"], "data-field": "message" }, st.message) : null,
    left ? leftBehindLine(left) : null,
    st.rollout ? targetsSection(name, st.rollout) : null,
    c.section(
      st.rollout ? "Steps, on each target" : "Steps",
      null,
      st.rollout
        ? h("ol", { class: "steps-template" }, (p.spec.steps || []).map((s) => h("li", null, s.as ? [s.as, h("span", { class: "muted small" }, ` (${s.uses})`)] : s.uses)))
        : c.table(
        `Steps of ${name}`,
        ["#", "Step", "Phase", "Started", "Took", "Calls", "Outputs", "Reason", "Message"],
        steps.map((s, i) => ({
          attrs: { class: s.phase === "Failed" ? "refused" : "", "data-step": s.as || s.uses },
          cells: [
            String(i + 1),
            [s.as || s.uses, s.as ? h("span", { class: "muted small" }, ` (${s.uses})`) : null],
            c.phase(s.phase),
            s.startedAt ? h("span", { "data-field": "started" }, time(s.startedAt), h("span", { class: "muted small" }, ` · ${local(s.startedAt)}`)) : h("span", { class: "muted" }, "not started"),
            s.startedAt ? h("span", { "data-field": "took" }, since(s.startedAt, s.finishedAt), s.finishedAt ? "" : " so far") : "",
            // `attempts` counts calls (a waiting step's every look), not failures: the
            // engine never retries a failed step.
            h("span", { "data-field": "attempts" }, s.attempts ? count(s.attempts, "call") : "none yet"),
            outputs(s.output),
            s.reason ? h("code", null, s.reason) : "",
            [s.message ? withLocalTimes(s.message) : "", stepLog(s.log)],
          ],
        })),
      ),
    ),
    verification(st.verification),
    abortSection,
    st.evidence
      ? c.section("Evidence", null, h("p", null, `${st.evidence.verdict || "no verdict"}${st.evidence.risk != null ? ` · risk ${st.evidence.risk}/100` : ""}${st.evidence.trail ? ` · trail ${st.evidence.trail}` : ""}`))
      : null,
  );
}
