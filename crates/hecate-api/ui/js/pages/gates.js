// `/gates/`: the pipeline drawn from the Gates' admissions, and a card per Gate.
// `/gates/?name=G`: why G is where it is — its blockers with their fixes (as buttons
// where there is an action to take), what could cross and what waits, its history and
// its Passages step by step.

import { API, get, nsPath } from "../api.js";
import * as actions from "../actions.js";
import * as c from "../components.js";
import { h } from "../dom.js";
import { count, local, sameClock, short, since, time, until, withLocalTimes } from "../format.js";
import { pipelineGraph } from "../graph.js";
import { needsApproval, upstream, verifies } from "../pipeline.js";
import * as rollout from "../rollout.js";
import { approveRefused, heldBy } from "./approvals.js";

export async function render(ctx) {
  return ctx.name ? detail(ctx) : list(ctx);
}

// ---- the list ----------------------------------------------------------------------

function gateCard(ns, gate, bundles, x) {
  const st = gate.status || {};
  const health = st.health || {};
  const eligible = st.eligible || [];
  // Waiting: ops' count of those ahead of the current Bundle (the Overview's); the
  // eligible list below keeps the older ones, to roll back to.
  const waiting = x ? x.ahead || 0 : eligible.length;
  const beacons = [...new Set(((gate.spec && gate.spec.admits) || []).map((a) => a.from && a.from.beacon).filter(Boolean))];
  const after = upstream(gate);
  return h(
    "article",
    { class: ["gate-card", `edge-${health.status || "Unknown"}`], "data-gate": gate.metadata.name },
    h("header", null, h("h3", null, c.link("/gates/", { name: gate.metadata.name, namespace: ns }, gate.metadata.name)), c.health(health.status)),
    h(
      "p",
      { class: "current" },
      h("span", { class: "muted" }, "Running now: "),
      st.current ? [c.bundle(st.current.bundle, ns, bundles), h("span", { class: "muted" }, " since "), time(st.current.enteredAt)] : h("span", { class: "muted" }, "nothing yet"),
    ),
    h(
      "p",
      { class: "pills" },
      gate.spec.suspend ? c.pill("suspended", "warn") : null,
      st.activePassage ? h("a", { class: "pill pill-info", href: `/passages/?name=${encodeURIComponent(st.activePassage)}&namespace=${encodeURIComponent(ns)}` }, `crossing: ${st.activePassage}`) : null,
      waiting ? c.pill(`${waiting} waiting`, "info") : null,
      gate.spec.auto ? c.pill("automatic") : null,
      needsApproval(gate) ? c.pill("needs approval", "warn") : null,
    ),
    h("p", { class: "small" }, `admits ${beacons.join(", ") || "nothing"}${after.length ? ` after ${after.join(", ")}` : ""}`),
    (health.issues || []).length ? h("p", { class: "issues", "data-health": health.status || "Unknown" }, health.issues.join(" · ")) : null,
    eligible.length
      ? h("p", { class: "small" }, "eligible: ", eligible.slice(0, 3).map((b, i) => [i ? ", " : "", c.bundle(b, ns, bundles)]), eligible.length > 3 ? ` and ${eligible.length - 3} more` : "")
      : null,
  );
}

// The Overview's totals that open a list of Gates, and what the list is then called.
const SHOW = { degraded: "degraded", suspended: "suspended", crossing: "crossing now", waiting: "with Bundles waiting to cross" };

/** Whether Gate `g` (its Overview summary `x`, when known) is counted by total `show`. */
function shows(show, g, x) {
  const st = g.status || {};
  if (show === "degraded") return ((x && x.health) || (st.health && st.health.status)) === "Degraded";
  if (show === "suspended") return Boolean(g.spec && g.spec.suspend);
  if (show === "crossing") return Boolean((x && x.running) || st.activePassage);
  if (show === "waiting") return x ? x.ahead > 0 : (st.eligible || []).length > 0;
  return true;
}

async function list(ctx) {
  ctx.title("Gates");
  const [gates, bundles, overview] = await Promise.all([
    get(nsPath(ctx.ns, "gates"), { signal: ctx.signal }),
    get(nsPath(ctx.ns, "bundles"), { signal: ctx.signal }).catch(() => []),
    // The pipeline's order is the server's: the Overview's summaries carry it.
    get(`${API}/overview`, { signal: ctx.signal }).catch(() => ({ namespaces: [] })),
  ]);
  const index = c.index(bundles);
  const summaries = (overview.namespaces.find((n) => n.namespace === ctx.ns) || { gates: [] }).gates;
  // `?show=` (the Overview's totals link here): only the Gates that total counts.
  const show = ctx.params.get("show") || "";
  const summary = new Map(summaries.map((x) => [x.name, x]));
  const shown = gates.filter((g) => shows(show, g, summary.get(g.metadata.name)));
  return h(
    "div",
    { class: "page" },
    c.title("Gates", h("span", { class: "muted small" }, ` in ${ctx.ns}`)),
    gates.length
      ? [
          c.section("Pipeline", null, pipelineGraph(ctx.ns, gates, summaries, (b) => c.alias(b, index) || b)),
          c.section(
            SHOW[show] ? `Gates ${SHOW[show]}` : "Every Gate",
            null,
            SHOW[show] ? h("p", null, c.link("/gates/", { namespace: ctx.ns }, "Show every Gate")) : null,
            shown.length ? h("div", { class: "cards" }, shown.map((g) => gateCard(ctx.ns, g, index, summary.get(g.metadata.name)))) : c.empty(`No Gate in ${ctx.ns} is ${SHOW[show]} now.`),
          ),
        ]
      : c.empty(`No Gates in ${ctx.ns}, or none you may read.`),
  );
}

// ---- one Gate ----------------------------------------------------------------------

function button(label, attrs, onclick) {
  return h("button", { type: "button", ...attrs, onclick }, label);
}

/**
 * The Cross button for `bundle`; disabled when a click would only earn a refusal
 * (`refusedBecause`, the words of [`wouldRefuse`]), said beside it as every disabled
 * write's reason is (rights.explainDisabled).
 */
function promoteButton(ctx, gate, bundle, index, steps, refusedBecause) {
  const label = c.bundleText(bundle, index);
  const attrs = { class: "primary", "aria-label": `Cross ${gate} with ${label}`, "data-action": "promote", "data-bundle": bundle };
  if (refusedBecause) Object.assign(attrs, { disabled: true, title: refusedBecause });
  return button(`Cross ${gate}`, attrs, async () => {
    if (await actions.promote(ctx.ns, gate, bundle, label, steps)) ctx.refresh();
  });
}

/**
 * Why crossing `bundle` here would be refused the signed-in person, or "": first what
 * promote itself would answer them (`yours`, ops' judgement for them: the one who
 * approved it may not also cross it), else what the crossing's evidence gate would say.
 */
function wouldRefuse(yours, verdicts, bundle) {
  const mine = ((yours && yours.bundles) || []).find((b) => b.bundle === bundle);
  return (mine && mine.refused && mine.refused.reason) || refusal(verdicts && verdicts.get(bundle));
}

// ---- evidence before crossing (preflight) ------------------------------------------

/** Why evidence would refuse a Bundle, or "" when it would not (or cannot tell). */
function refusal(p) {
  if (!p || p.compliant || p.unknown) return "";
  const needs = (p.missing || []).length ? `needs ${p.missing.join(", ")}` : "Fides says it is not compliant";
  return (p.policies || []).length ? `${needs} — for ${p.policies.join(", ")}` : needs;
}

/** The preflight verdict beside an eligible Bundle. */
function preflightVerdict(p) {
  if (!p) return h("span", { class: "muted" }, "not checked");
  if (p.unknown) return h("span", { class: "preflight", "data-preflight": "unknown" }, c.pill("evidence unknown", "warn"), " ", h("span", { class: "small server-text" }, p.unknown));
  if (p.compliant) return h("span", { class: "preflight", "data-preflight": "ready" }, c.pill("evidence ready", "ok"));
  return h("span", { class: "preflight", "data-preflight": "refused" }, c.pill("would be refused", "bad"), " ", h("span", { class: "small server-text" }, refusal(p)));
}

// ---- the Flux objects the Gate depends on ------------------------------------------

/** Reconcile requests made from this page: `ns/kind/name` → the stamp Flux will echo. */
const ASKED = new Map();

function fluxCard(ctx, gate, r) {
  const object = `${r.kind}/${r.name}`;
  const key = `${r.cluster || ""}/${r.namespace}/${object}`;
  const asked = ASKED.get(key);
  // Ops says what may be operated from here (the Gate's namespace on its own cluster,
  // and there): a connected cluster's object is shown as the controller last saw it.
  const operable = r.operable === true;
  const suspend = button(r.suspended ? "Resume" : "Suspend", { "data-action": r.suspended ? "resume" : "suspend", "aria-label": `${r.suspended ? "Resume" : "Suspend"} ${object}` }, async () => {
    if (await actions.fluxSuspend(ctx.ns, gate, r.kind, r.name, !r.suspended)) ctx.refresh();
  });
  // Accessible names start with the words on the button (WCAG 2.5.3, label in name).
  const reconcileAttrs = { "data-action": "reconcile", "aria-label": `Reconcile now: ${object}` };
  if (r.suspended) Object.assign(reconcileAttrs, { disabled: true, title: "Resume it first: Flux does not reconcile a suspended object" });
  const reconcile = button("Reconcile now", reconcileAttrs, async () => {
    const answer = await actions.fluxReconcile(ctx.ns, gate, r.kind, r.name);
    if (answer) {
      ASKED.set(key, answer.requestedAt);
      ctx.refresh();
    }
  });
  return h(
    "article",
    { class: ["gate-card", "flux-card", `edge-${r.missing ? "Unknown" : r.health}`], "data-flux": object, "data-cluster": r.cluster || null },
    h("header", null, h("h3", null, object), r.missing ? h("span", { class: "muted", "data-missing": "true" }, "not in the cluster") : c.health(r.health)),
    r.namespace !== ctx.ns ? h("p", { class: "small muted" }, `in namespace ${r.namespace}`) : null,
    r.cluster ? h("p", { class: "small muted", "data-on-cluster": r.cluster }, `on cluster ${r.cluster} — as the controller last saw it`) : null,
    r.missing
      ? null
      : h(
          "p",
          { class: "pills" },
          r.suspended ? c.pill("suspended", "warn") : null,
          r.revision ? h("code", { class: "small revision" }, r.revision) : h("span", { class: "muted small" }, "no revision yet"),
        ),
    r.detail && !r.missing ? h("p", { class: "small issues server-text" }, r.detail) : null,
    r.lastHandled ? h("p", { class: "small muted" }, "last handled ", time(r.lastHandled)) : null,
    asked ? h("p", { class: "small", "data-reconcile": r.lastHandled === asked ? "done" : "asked" }, r.lastHandled === asked ? "Reconciled." : "Asked…") : null,
    operable ? h("div", { class: "buttons" }, suspend, reconcile) : null,
  );
}

/** The Flux panel: hidden when the Gate watches no Flux objects. */
function fluxPanel(ctx, gate, resources) {
  if (!resources || !resources.length) return null;
  const suspended = resources.filter((r) => r.suspended);
  return c.section(
    "Flux",
    { class: "flux" },
    suspended.length
      ? h(
          "p",
          { class: "banner warn", role: "status", "data-flux-suspended": "true" },
          h("strong", null, "Suspended: "),
          `${suspended.map((r) => `${r.kind}/${r.name}`).join(", ")} — Flux applies nothing there until resumed, so crossings into ${gate} do not land.`,
        )
      : null,
    h("div", { class: "cards" }, resources.map((r) => fluxCard(ctx, gate, r))),
  );
}

/** `crossesItself`: the Gate's spec says it crosses by itself (the dialog says so). */
function approveButton(ctx, gate, bundle, index, crossesItself) {
  const label = c.bundleText(bundle, index);
  const attrs = { "aria-label": `Approve for ${gate}: ${label}`, "data-action": "approve", "data-bundle": bundle };
  // Judged before the click, as the Approvals page judges it (ops' answer for you).
  const why = approveRefused(ctx.approvals, gate, bundle);
  if (why) Object.assign(attrs, { disabled: true, title: `Your approval would not count: ${why}` });
  return button(`Approve for ${gate}`, attrs, async () => {
    if (await actions.approve(ctx.ns, gate, bundle, label, crossesItself, heldBy(ctx.approvals, gate, bundle))) ctx.refresh();
  });
}

function abortButton(ctx, passage, label) {
  return button(`Abort ${passage}`, { class: "danger", "data-action": "abort", "data-passage": passage }, async () => {
    if (await actions.abort(ctx.ns, passage, label)) ctx.refresh();
  });
}

// ---- rollback (DECISION 139) --------------------------------------------------------

/** The Gate's current occupant's row among its history (the same crossing). */
function isCurrent(current, o) {
  if (!current || o.bundle !== current.bundle) return false;
  return current.passage ? o.passage === current.passage : o.enteredAt === current.enteredAt;
}

/**
 * A button that rolls `gate` back — to `to` (a Bundle it held), or without `to` to the
 * newest Bundle it verified before, as the server chooses — disabled with why when it
 * cannot be used (`blockedBecause`, said beside it as every disabled write's reason
 * is, rights.explainDisabled); a refusal is said beside it too (actions.js).
 */
function rollbackControl(ctx, gate, to, { index, steps, current, blockedBecause = "" }) {
  const label = to ? c.bundleText(to, index) : null;
  const attrs = {
    class: "danger",
    "data-action": "rollback",
    // The visible words first (label in name), then what they roll back to.
    "aria-label": to ? `Roll back to this: ${label} in ${gate}` : `Roll back ${gate} to the Bundle it last verified`,
  };
  if (to) attrs["data-bundle"] = to;
  if (blockedBecause) Object.assign(attrs, { disabled: true, title: blockedBecause });
  const run = button(to ? "Roll back to this" : `Roll back ${gate}`, attrs, async () => {
    const undoing = current ? c.bundleText(current.bundle, index) : null;
    await actions.rollback(ctx.ns, gate, { to, label, current: undoing, steps });
    ctx.refresh();
  });
  return h("span", { class: "rollback" }, run);
}

/**
 * Why a rollback to `to` would be refused the signed-in person now, or "": ops'
 * judgement for them (`yours.rollbacks`; without `to`, the target the server chooses,
 * `yours.rollback`), by the rules the rollback itself meets. Unanswered, the button
 * stays and the cluster says no when asked.
 */
function rollbackRefused(yours, to) {
  if (!yours) return "";
  const refusal = to ? ((yours.rollbacks || []).find((r) => r.bundle === to) || {}).refused : yours.rollback;
  return (refusal && refusal.reason) || "";
}

/** An occupant's verification as the page marks it. */
function verifiedMark(o, current) {
  if (o.verified === true) return h("span", { "data-verified": "true" }, c.pill("verified", "ok"));
  if (o.verified === false) return h("span", { "data-verified": "false" }, c.pill("not verified", "bad"));
  if (current) return h("span", { class: "muted", "data-verified": "unknown" }, "being verified");
  // Not current and undecided: a newer crossing cut its verification short (DECISION 150).
  return h("span", { class: "muted", "data-verified": "superseded", title: "a newer crossing began before its verification decided" }, "cut short");
}

/**
 * The button for a typed remedy the server offers, when it is something done here;
 * `refused(bundle)` says why a crossing here would be refused ([`wouldRefuse`]).
 */
function remedyButton(ctx, action, index, steps, refused, gate) {
  if (!action) return null;
  if (action.type === "approve") {
    const automatic = Boolean(gate && action.gate === gate.metadata.name && gate.spec.auto);
    return approveButton(ctx, action.gate, action.bundle, index, automatic);
  }
  if (action.type === "rollback") {
    const here = gate && action.gate === ctx.name;
    const current = here ? gate.status && gate.status.current : null;
    return rollbackControl(ctx, action.gate, null, { index, steps: here ? steps : 0, current, blockedBecause: here ? rollbackRefused(ctx.yours, null) : "" });
  }
  if (action.type === "rollbackFailedTargets") {
    return button("Roll the failed targets back", { "data-action": "rollback", "data-targets": action.targets.join(",") }, async () => {
      if (await actions.rollbackFailedTargets(ctx.ns, action.gate, action.targets)) ctx.refresh();
    });
  }
  if (action.type === "retryTargets") {
    return button("Retry failed targets", { "data-action": "retryTargets", "data-passage": action.passage }, async () => {
      if (await actions.retryTargets(ctx.ns, action.passage, action.targets)) ctx.refresh();
    });
  }
  if (action.type === "acceptFailures") {
    return button("Accept the failures", { class: "danger", "data-action": "acceptFailures", "data-passage": action.passage }, async () => {
      if (await actions.acceptFailures(ctx.ns, action.passage, action.targets)) ctx.refresh();
    });
  }
  if (action.type === "promote") {
    const why = action.gate === ctx.name && refused ? refused(action.bundle) : "";
    return promoteButton(ctx, action.gate, action.bundle, index, steps, why);
  }
  return null;
}

function blockers(ctx, explanation, gate, index, steps, refused) {
  const list = explanation.blockers || [];
  // A crossing under way is never "nothing in the way": it is what happens next.
  if (!list.length) return c.empty(explanation.state === "Crossing" ? "Only the crossing under way: wait for it, or abort it." : "Nothing stands in the way.");
  const active = gate.status && gate.status.activePassage;
  return [
    h(
      "ul",
      { class: "blockers" },
      list.map((b) => {
        // A button only where the server's remedy is an action taken here; the
        // cluster still decides whether the caller may.
        const button = remedyButton(ctx, b.action, index, steps, refused, gate);
        // Other ways out, where there is more than one (a halted rollout); an abort is
        // offered below, as for any crossing.
        const others = (b.alternatives || []).filter((o) => o.action.type !== "abort").map((o) => remedyButton(ctx, o.action, index, steps, refused, gate));
        return h(
          "li",
          { class: "blocker", "data-kind": b.kind },
          h("p", null, h("code", { class: "kind" }, b.kind), " ", h("span", { class: "detail" }, withLocalTimes(b.detail))),
          b.until ? h("p", { class: "small" }, "Lifts by itself ", time(b.until), ` (${local(b.until)}).`) : null,
          b.fix ? h("p", { class: "fix" }, h("span", { class: "muted" }, "Fix: "), h("code", null, b.fix)) : null,
          (b.alternatives || []).map((o) => h("p", { class: "fix" }, h("span", { class: "muted" }, "Or: "), h("code", null, o.fix))),
          button || others.some(Boolean) ? h("div", { class: "buttons" }, button, others) : null,
        );
      }),
    ),
    // A crossing under way can always be asked to stop.
    active ? h("div", { class: "buttons" }, abortButton(ctx, active, `crossing ${explanation.gate}`)) : null,
  ];
}

function verdict(evidence) {
  if (!evidence) return null;
  const url = evidence.url && c.safeUrl(evidence.url);
  return h(
    "p",
    { class: "verdict" },
    h("span", { class: "muted" }, "Change gate: "),
    evidence.verdict || "no verdict",
    evidence.risk !== undefined && evidence.risk !== null ? ` · risk ${evidence.risk}/100` : "",
    (evidence.blockers || []).length ? ` · ${evidence.blockers.join("; ")}` : "",
    evidence.trail ? [" · trail ", url ? h("a", { href: url, rel: "noreferrer" }, evidence.trail) : evidence.trail] : "",
  );
}

function passageRow(ns, p, index) {
  const st = p.status || {};
  const steps = st.steps && st.steps.length ? st.steps : (p.spec.steps || []).map((s) => ({ uses: s.uses, as: s.as, phase: "Pending" }));
  return h(
    "li",
    { class: "passage", "data-passage": p.metadata.name },
    h(
      "p",
      null,
      c.link("/passages/", { name: p.metadata.name, namespace: ns }, p.metadata.name),
      " ",
      c.phase(st.phase),
      " ",
      c.bundle(p.spec.bundle, ns, index),
      h("span", { class: "muted small" }, " · ", p.spec.actor ? `by ${p.spec.actor}` : "automatically", st.startedAt ? [" · started ", time(st.startedAt)] : " · not started"),
    ),
    h(
      "ol",
      { class: "steps", "aria-label": `Steps of ${p.metadata.name}` },
      steps.map((s) => h("li", { class: ["step", `phase-${s.phase || "Pending"}`] }, c.phase(s.phase), " ", s.as || s.uses)),
    ),
    st.message ? h("p", { class: ["small", st.phase === "Failed" && "error-text"] }, st.message) : null,
  );
}

/**
 * What an aborted crossing left on the environment's branch (ops' `leftBehind`): its
 * commit is what Flux applies there, whatever the Gate's record says runs, until the
 * next crossing. Said beside "Running now" so the page does not claim more than it
 * knows (#53).
 */
function leftBehind(ns, left, index) {
  return h(
    "span",
    { class: "warn-text", "data-left-behind": left.passage },
    c.bundle(left.bundle, ns, index),
    "'s commit ",
    h("code", { title: left.commit }, short(left.commit, 7)),
    ", pushed to ",
    h("code", null, left.branch),
    " by the aborted ",
    c.link("/passages/", { name: left.passage, namespace: ns }, left.passage),
    ": Flux applies it there until the next crossing, not what the Gate's record says runs",
  );
}

/** The mark on an eligible Bundle whose last crossing of this Gate failed. */
function failedBefore(ns, f) {
  if (!f) return null;
  return h(
    "span",
    { class: "failed-before", "data-failed-before": f.passage },
    " ",
    c.pill(`${f.outcome} here before`, "bad"),
    " ",
    h("span", { class: "small server-text" }, f.reason),
    f.at ? [" (", c.link("/passages/", { name: f.passage, namespace: ns }, f.passage), ", ", time(f.at), ")"] : [" (", c.link("/passages/", { name: f.passage, namespace: ns }, f.passage), ")"],
  );
}

/** How often the running step was called: a running step waits (no engine re-invokes a failed one), so each call was a look. */
function invocations(step) {
  const n = Math.max(step.attempts || 0, 1);
  return n === 1 ? "looked once" : `looked ${n} times`;
}

/** The crossing under way: since when, and the step it is on (ops' times; words here). */
function crossingNow(ns, x) {
  const step = x.step;
  return h(
    "span",
    { class: ["crossing-now", x.stalled && "stalled"], "data-stalled": x.stalled ? "true" : "false" },
    c.link("/passages/", { name: x.passage, namespace: ns }, x.passage),
    x.startedAt ? [" · started ", time(x.startedAt)] : [" · created ", time(x.createdAt), ", not started"],
    x.stalled ? [" ", c.pill("not started", "bad")] : null,
    step ? [" · step ", h("code", null, step.alias || step.uses), step.startedAt ? [" running for ", since(step.startedAt), " (since ", time(step.startedAt), ")"] : null, `, ${invocations(step)}`] : null,
  );
}

// ---- fan-out (DECISIONS 151, 158) ---------------------------------------------------

/** Where the Gate's latest rollout stands on each of its targets, wave by wave, as ops reads the record. */
function targetsPanel(ctx, t, index) {
  const { ns } = ctx;
  if (!t || !t.spansTargets) return null;
  const r = t.rollout;
  if (!r) return c.section("Targets", null, c.empty("No crossing has reached the Gate's targets yet."));
  return c.section(
    "Targets",
    null,
    h(
      "p",
      { class: "rollout", "data-rollout": r.now.phase },
      c.bundle(r.bundle, ns, index),
      " by ",
      c.link("/passages/", { name: r.passage, namespace: ns }, r.passage),
      " ",
      rollout.phasePill(r.now.phase),
      r.active ? null : " (finished)",
      ": ",
      r.now.occupancy,
    ),
    r.now.message ? h("p", { class: "small server-text" }, r.now.message) : null,
    rollout.targetsTable(`Where ${r.version} stands on each of ${t.gate}'s targets, by wave`, r.targets),
    r.omittedTargets ? h("p", { class: "small muted" }, `${r.omittedTargets} departed targets' records left out.`) : null,
    sinceList(ns, r.since || []),
    fixesList(ctx, t.fixes || []),
  );
}

/** What ops offers to do about the targets now (a finished rollout's failed ones), each with its command and a button. */
function fixesList(ctx, fixes) {
  if (!fixes.length) return null;
  return h(
    "ul",
    { class: "target-fixes" },
    fixes.map((f) =>
      h(
        "li",
        { "data-kind": f.action.type },
        h("p", { class: "fix" }, h("span", { class: "muted" }, "Fix: "), h("code", null, f.fix)),
        remedyButton(ctx, f.action, 0, 0, null, null),
      ),
    ),
  );
}

/** Crossings of some of the rollout's targets since — rollbacks of some, catch-ups — newest first (DECISIONS 163, 164). */
function sinceList(ns, since) {
  if (!since.length) return null;
  return [
    h("h3", null, "Since, crossings of some targets"),
    h(
      "ul",
      { class: "since" },
      since.map((s) =>
        h(
          "li",
          { "data-passage": s.passage, "data-kind": s.rollbackOf ? "rollback" : "catch-up" },
          c.link("/passages/", { name: s.passage, namespace: ns }, s.passage),
          `: ${s.rollbackOf ? "rollback" : "catch-up"} of ${(s.targets || []).map((t) => t.name).join(", ")} to ${s.version} `,
          rollout.phasePill(s.now.phase),
        ),
      ),
    ),
  ];
}

/** The Gate's windows as ops words them, with how far off the next change is. */
function windowWords(explanation, windows) {
  const words = explanation.windows || [];
  if (!words.length) return windows.map((w) => `${w.deny ? "deny" : "allow"} ${w.schedule} for ${w.duration}${w.timeZone ? ` (${w.timeZone})` : ""}`).join("; ");
  return h(
    "ul",
    { class: "windows" },
    // "in 1d 3h": how far off the next change is, to the hour (the exact time on hover).
    words.map((w) => h("li", { "data-open": w.open ? "true" : "false" }, w.text, w.next ? [" (", until(w.next), ")"] : null, inYourZone(w))),
  );
}

/**
 * The window's opening — the one under way, else the next (ops' `opens`, `closes`) —
 * in the viewer's zone, when their clock reads it differently from the window's own.
 */
function inYourZone(w) {
  if (!w.opens || !w.closes || (sameClock(w.opens, w.zone) && sameClock(w.closes, w.zone))) return null;
  return h("span", { class: "small muted your-zone", "data-your-zone": "" }, `In your time zone: ${w.open ? "now, " : "next "}${local(w.opens)} – ${local(w.closes)}`);
}

async function detail(ctx) {
  const { ns, name } = ctx;
  ctx.title(`Gate ${name}`);
  const [explanation, gate, bundles, passages, flux, yours, approvals, targets, told] = await Promise.all([
    get(nsPath(ns, "gates", name, "explain"), { signal: ctx.signal }),
    get(nsPath(ns, "gates", name), { signal: ctx.signal }),
    get(nsPath(ns, "bundles"), { signal: ctx.signal }).catch(() => []),
    get(`${nsPath(ns, "passages")}?gate=${encodeURIComponent(name)}`, { signal: ctx.signal }).catch(() => []),
    get(nsPath(ns, "gates", name, "flux"), { signal: ctx.signal }).catch(() => []),
    // What the signed-in person's own promote would meet (Explain is everyone's);
    // unanswered, the buttons stay and the cluster says no when asked.
    get(nsPath(ns, "gates", name, "you"), { signal: ctx.signal }).catch(() => null),
    // Whose approval would count, for the Approve buttons (the Approvals page's queue).
    get(nsPath(ns, "approvals"), { signal: ctx.signal }).catch(() => null),
    // Where the latest rollout stands on each target (a Gate that is one place has none).
    get(nsPath(ns, "gates", name, "targets"), { signal: ctx.signal }).catch(() => null),
    // Who is told about the Gate; someone who may not read Notifiers sees no panel.
    get(nsPath(ns, "gates", name, "notifications"), { signal: ctx.signal }).catch(() => null),
  ]);
  ctx.approvals = approvals;
  ctx.yours = yours;
  // Fides is asked again only when the eligible list changes, not on every update.
  const preflight = ctx.once(`preflight:${(explanation.eligible || []).join(",")}`, () =>
    get(nsPath(ns, "gates", name, "preflight"), { signal: ctx.signal }).catch(() => []),
  );
  const verdicts = new Map((preflight.done && preflight.value ? preflight.value : []).map((p) => [p.bundle, p]));
  const refused = (b) => wouldRefuse(yours, verdicts, b);
  const index = c.index(bundles, explanation.versions);
  const steps = ((gate.spec.passage && gate.spec.passage.steps) || []).length;
  const history = (gate.status && gate.status.history) || [];
  const occupant = gate.status && gate.status.current;
  const verifying = verifies(gate);
  const windows = gate.spec.windows || [];
  const eligible = explanation.eligible || [];
  const waiting = explanation.waiting || [];
  const emitted = (b) => (index.get(b) ? time(c.emittedAt(index.get(b))) : "");
  // Ops says which eligible Bundles failed here last time: marked before anyone crosses.
  const failed = new Map((explanation.failedBefore || []).map((f) => [f.bundle, f]));
  const eligibleBundle = (b) => [c.bundle(b, ns, index), failedBefore(ns, failed.get(b))];
  return h(
    "div",
    { class: "page" },
    c.title(name, " ", c.state(explanation.state), " ", c.health(explanation.health)),
    h("p", { class: "lead summary" }, withLocalTimes(explanation.summary)),
    c.facts([
      ["Running now", c.bundle(explanation.current, ns, index)],
      explanation.leftBehind ? ["On its branch", leftBehind(ns, explanation.leftBehind, index)] : null,
      ["Namespace", ns],
      ["Crosses", gate.spec.auto ? "automatically, when a newer Bundle is eligible" : "when someone asks (promote)"],
      ["Admits", ((gate.spec.admits || []).map((a) => `${a.from.beacon}${(a.after || []).length ? ` after ${a.after.join(", ")}` : ""}${a.requireApproval ? " (approval required)" : ""}`).join("; ")) || "nothing"],
      ["Steps", steps ? count(steps, "step") : "none"],
      windows.length ? ["Windows", windowWords(explanation, windows)] : null,
      explanation.crossing ? ["Crossing", crossingNow(ns, explanation.crossing)] : null,
      gate.spec.suspend ? ["Suspended", "yes: nothing crosses until it is resumed"] : null,
    ]),
    verdict(explanation.evidence),
    c.section("In the way", null, blockers(ctx, explanation, gate, index, steps, refused)),
    targetsPanel(ctx, targets, index),
    fluxPanel(ctx, name, flux),
    // Blocked with eligible Bundles: something Gate-wide (a window, a suspension) is
    // in the way, so a button would only earn a refusal.
    // Crossing: the rest waits for it, so nothing is offered until it ends.
    (explanation.state === "Blocked" || explanation.state === "Crossing") && eligible.length
      ? c.section(
          explanation.state === "Crossing" ? "Could cross after this crossing" : "Could cross once the way is clear",
          null,
          c.table(
            `Bundles that could cross ${name} once nothing is in the way, newest first`,
            ["Bundle", "Emitted"],
            eligible.map((b) => ({ cells: [eligibleBundle(b), emitted(b)], attrs: { "data-bundle": b } })),
          ),
        )
      : c.section(
          "Could cross now",
          null,
          eligible.length
            ? verdicts.size
              ? c.table(
                  `Bundles that could cross ${name} now, newest first, with what Fides' evidence gate would say`,
                  ["Bundle", "Emitted", "Evidence", "Action"],
                  eligible.map((b) => ({
                    cells: [eligibleBundle(b), emitted(b), preflightVerdict(verdicts.get(b)), promoteButton(ctx, name, b, index, steps, refused(b))],
                    attrs: { "data-bundle": b },
                  })),
                )
              : c.table(
                  `Bundles that could cross ${name} now, newest first`,
                  ["Bundle", "Emitted", "Action"],
                  eligible.map((b) => ({ cells: [eligibleBundle(b), emitted(b), promoteButton(ctx, name, b, index, steps, refused(b))], attrs: { "data-bundle": b } })),
                )
            : c.empty("No Bundle can cross now."),
        ),
    c.section(
      "Waiting",
      null,
      waiting.length
        ? c.table(
            `Bundles that cannot cross ${name}, and why`,
            ["Bundle", "Why not", "Action"],
            waiting.map((w) => ({
              cells: [c.bundle(w.bundle, ns, index), [w.reason, w.kind ? h("code", { class: "small muted" }, ` ${w.kind}`) : null], (w.action && w.action.type === "approve" && remedyButton(ctx, w.action, index, null, null, gate)) || ""],
              attrs: { "data-bundle": w.bundle },
            })),
          )
        : c.empty("Nothing is waiting."),
    ),
    c.section(
      "History",
      null,
      history.length
        ? c.table(
            `Bundles that entered ${name}, newest first`,
            // A Gate that verifies nothing has no verified state to show.
            ["Bundle", "Entered", "By", "Passage", ...(verifying ? ["Verified"] : []), "Action"],
            history.map((o) => {
              const now = isCurrent(occupant, o);
              // A rollback goes back to a Bundle the Gate held, never to one whose
              // verification here said no, and undoes the current occupant's crossing.
              const back = !now && o.verified !== false && occupant;
              return {
                cells: [
                  [c.bundle(o.bundle, ns, index), now ? [" ", c.pill("running now", "info")] : null],
                  time(o.enteredAt),
                  o.actor || "automatically",
                  o.passage ? c.link("/passages/", { name: o.passage, namespace: ns }, o.passage) : "",
                  ...(verifying ? [verifiedMark(o, now)] : []),
                  back ? rollbackControl(ctx, name, o.bundle, { index, steps, current: occupant, blockedBecause: rollbackRefused(ctx.yours, o.bundle) }) : "",
                ],
                attrs: { class: now ? "current" : null, "data-bundle": o.bundle, "data-passage": o.passage || null },
              };
            }),
          )
        : c.empty(`Nothing has entered ${name} yet.`),
    ),
    c.section(
      "Passages",
      null,
      passages.length
        ? [
            h("ol", { class: "passages" }, passages.slice(0, 10).map((p) => passageRow(ns, p, index))),
            passages.length > 10 ? h("p", null, c.link("/passages/", { namespace: ns, gate: name }, `All ${passages.length} Passages of ${name}`)) : null,
          ]
        : c.empty(`No Passage has tried to cross ${name}.`),
    ),
    toldPanel(name, told),
  );
}

const OUTCOME_TONE = { Sent: "ok", Retrying: "warn", Failed: "bad" };

/** Who is told about the Gate — the namespace's Notifiers that hear it — and the last things they sent, as ops reads their records (DECISION 166). */
function toldPanel(gate, told) {
  if (!told) return null;
  const notifiers = told.notifiers || [];
  const sent = (told.sent || []).slice(0, 5);
  const delivers = (n) =>
    n.suspended
      ? c.pill("suspended", "warn")
      : n.ready === undefined
        ? c.pill("not looked at yet")
        : [c.pill(n.ready ? "delivers" : "does not deliver", n.ready ? "ok" : "bad"), n.ready || !n.message ? null : h("span", { class: "small server-text" }, ` ${n.message}`)];
  return c.section(
    "Who is told",
    null,
    notifiers.length
      ? c.table(
          `The Notifiers that tell people about ${gate}`,
          ["Notifier", "Sends to", "Hears", "Delivers"],
          notifiers.map((n) => ({ cells: [n.name, n.destination, n.hears, delivers(n)], attrs: { "data-notifier": n.name } })),
        )
      : c.empty(`Nobody is told about ${gate}: a Notifier in this namespace would tell people on Slack, Teams, GitHub or a webhook.`),
    sent.length
      ? c.table(
          `What was last sent about ${gate}, newest first`,
          ["Sent", "By", "What", "Outcome"],
          sent.map((s) => ({
            cells: [time(s.at), s.notifier, s.summary, [c.pill(s.outcome, OUTCOME_TONE[s.outcome] || ""), s.error ? h("span", { class: "small server-text" }, ` ${s.error}`) : null]],
            attrs: { "data-sent": s.kind },
          })),
        )
      : null,
  );
}
