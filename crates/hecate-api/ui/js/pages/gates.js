// `/gates/`: the pipeline drawn from the Gates' admissions, and a card per Gate.
// `/gates/?name=G`: why G is where it is — its blockers with their fixes (as buttons
// where there is an action to take), what could cross and what waits, its history and
// its Passages step by step.

import { API, get, nsPath } from "../api.js";
import * as actions from "../actions.js";
import * as c from "../components.js";
import { h } from "../dom.js";
import { count, time } from "../format.js";
import { byStage, needsApproval, sources, upstream } from "../pipeline.js";

export async function render(ctx) {
  return ctx.name ? detail(ctx) : list(ctx);
}

// ---- the list ----------------------------------------------------------------------

function node(ns, gate, bundles) {
  const st = gate.status || {};
  const health = (st.health && st.health.status) || "Unknown";
  const waiting = (st.eligible || []).length;
  return h(
    "div",
    { class: ["node", `edge-${health}`] },
    h("strong", null, c.link("/gates/", { name: gate.metadata.name, namespace: ns }, gate.metadata.name)),
    " ",
    c.health(health),
    h("div", { class: "small" }, st.current ? c.bundle(st.current.bundle, ns, bundles) : h("span", { class: "muted" }, "nothing yet")),
    waiting ? h("div", { class: "small" }, `${waiting} waiting`) : null,
    needsApproval(gate) ? h("div", { class: "small" }, c.pill("needs approval", "warn")) : null,
  );
}

function graph(ns, gates, summaries, bundles) {
  const beacons = [...new Set(gates.flatMap(sources))].sort();
  const byName = new Map(gates.map((g) => [g.metadata.name, g]));
  // Without the Overview (no access, or a failure) the Gates still show, unordered.
  const columns = summaries.length ? byStage(summaries) : [gates.map((g) => ({ name: g.metadata.name, stage: {} }))];
  return h(
    "ol",
    { class: "pipeline graph", "aria-label": `Pipeline of ${ns}, derived from the Gates' admissions` },
    beacons.length
      ? h(
          "li",
          { class: "stage" },
          h("span", { class: "stage-label" }, "Beacons"),
          beacons.map((b) => h("div", { class: "node beacon" }, c.link("/beacons/", { name: b, namespace: ns }, b), h("div", { class: "small muted" }, "Beacon"))),
        )
      : null,
    columns.map((stage, i) =>
      h(
        "li",
        { class: "stage" },
        h("span", { class: "stage-label" }, i === 0 ? "First" : `After ${[...new Set(stage.flatMap((s) => s.stage.after || []))].join(", ")}`),
        stage.filter((s) => byName.has(s.name)).map((s) => node(ns, byName.get(s.name), bundles)),
      ),
    ),
  );
}

function gateCard(ns, gate, bundles) {
  const st = gate.status || {};
  const health = st.health || {};
  const eligible = st.eligible || [];
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
      eligible.length ? c.pill(`${eligible.length} waiting`, "info") : null,
      gate.spec.auto ? c.pill("automatic") : null,
      needsApproval(gate) ? c.pill("needs approval", "warn") : null,
    ),
    h("p", { class: "small" }, `admits ${beacons.join(", ") || "nothing"}${after.length ? ` after ${after.join(", ")}` : ""}`),
    (health.issues || []).length ? h("p", { class: "issues" }, health.issues.join(" · ")) : null,
    eligible.length
      ? h("p", { class: "small" }, "waiting: ", eligible.slice(0, 3).map((b, i) => [i ? ", " : "", c.bundle(b, ns, bundles)]), eligible.length > 3 ? ` and ${eligible.length - 3} more` : "")
      : null,
  );
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
  return h(
    "div",
    { class: "page" },
    c.title("Gates", h("span", { class: "muted small" }, ` in ${ctx.ns}`)),
    gates.length
      ? [
          c.section("Pipeline", null, graph(ctx.ns, gates, summaries, index)),
          c.section("Every Gate", null, h("div", { class: "cards" }, gates.map((g) => gateCard(ctx.ns, g, index)))),
        ]
      : c.empty(`No Gates in ${ctx.ns}, or none you may read.`),
  );
}

// ---- one Gate ----------------------------------------------------------------------

function button(label, attrs, onclick) {
  return h("button", { type: "button", ...attrs, onclick }, label);
}

function promoteButton(ctx, gate, bundle, index, steps) {
  const label = c.bundleText(bundle, index);
  return button(`Cross ${gate}`, { class: "primary", "aria-label": `Cross ${gate} with ${label}`, "data-action": "promote", "data-bundle": bundle }, async () => {
    if (await actions.promote(ctx.ns, gate, bundle, label, steps)) ctx.refresh();
  });
}

function approveButton(ctx, gate, bundle, index) {
  const label = c.bundleText(bundle, index);
  return button(`Approve for ${gate}`, { "aria-label": `Approve for ${gate}: ${label}`, "data-action": "approve", "data-bundle": bundle }, async () => {
    if (await actions.approve(ctx.ns, gate, bundle, label)) ctx.refresh();
  });
}

function abortButton(ctx, passage, label) {
  return button(`Abort ${passage}`, { class: "danger", "data-action": "abort", "data-passage": passage }, async () => {
    if (await actions.abort(ctx.ns, passage, label)) ctx.refresh();
  });
}

/** The button for a typed remedy the server offers, when it is something done here. */
function remedyButton(ctx, action, index, steps) {
  if (!action) return null;
  if (action.type === "approve") return approveButton(ctx, action.gate, action.bundle, index);
  if (action.type === "promote") return promoteButton(ctx, action.gate, action.bundle, index, steps);
  return null;
}

function blockers(ctx, explanation, gate, index, steps) {
  const list = explanation.blockers || [];
  if (!list.length) return c.empty("Nothing stands in the way.");
  const active = gate.status && gate.status.activePassage;
  return [
    h(
      "ul",
      { class: "blockers" },
      list.map((b) => {
        // A button only where the server's remedy is an action taken here; the
        // cluster still decides whether the caller may.
        const button = remedyButton(ctx, b.action, index, steps);
        return h(
          "li",
          { class: "blocker", "data-kind": b.kind },
          h("p", null, h("code", { class: "kind" }, b.kind), " ", h("span", { class: "detail" }, b.detail)),
          b.until ? h("p", { class: "small" }, "Lifts by itself ", time(b.until), ` (${new Date(b.until).toLocaleString()}).`) : null,
          b.fix ? h("p", { class: "fix" }, h("span", { class: "muted" }, "Fix: "), h("code", null, b.fix)) : null,
          button ? h("div", { class: "buttons" }, button) : null,
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

async function detail(ctx) {
  const { ns, name } = ctx;
  ctx.title(`Gate ${name}`);
  const [explanation, gate, bundles, passages] = await Promise.all([
    get(nsPath(ns, "gates", name, "explain"), { signal: ctx.signal }),
    get(nsPath(ns, "gates", name), { signal: ctx.signal }),
    get(nsPath(ns, "bundles"), { signal: ctx.signal }).catch(() => []),
    get(`${nsPath(ns, "passages")}?gate=${encodeURIComponent(name)}`, { signal: ctx.signal }).catch(() => []),
  ]);
  const index = c.index(bundles);
  const steps = ((gate.spec.passage && gate.spec.passage.steps) || []).length;
  const history = (gate.status && gate.status.history) || [];
  const windows = gate.spec.windows || [];
  const eligible = explanation.eligible || [];
  const waiting = explanation.waiting || [];
  const emitted = (b) => (index.get(b) ? time(index.get(b).metadata.creationTimestamp) : "");
  return h(
    "div",
    { class: "page" },
    c.title(name, " ", c.state(explanation.state), " ", c.health(explanation.health)),
    h("p", { class: "lead summary" }, explanation.summary),
    c.facts([
      ["Running now", c.bundle(explanation.current, ns, index)],
      ["Namespace", ns],
      ["Crosses", gate.spec.auto ? "automatically, when a newer Bundle is eligible" : "when someone asks (promote)"],
      ["Admits", ((gate.spec.admits || []).map((a) => `${a.from.beacon}${(a.after || []).length ? ` after ${a.after.join(", ")}` : ""}${a.requireApproval ? " (approval required)" : ""}`).join("; ")) || "nothing"],
      ["Steps", steps ? count(steps, "step") : "none"],
      windows.length ? ["Windows", windows.map((w) => `${w.deny ? "deny" : "allow"} ${w.schedule} for ${w.duration}${w.timeZone ? ` (${w.timeZone})` : ""}`).join("; ")] : null,
      gate.spec.suspend ? ["Suspended", "yes: nothing crosses until it is resumed"] : null,
    ]),
    verdict(explanation.evidence),
    c.section("In the way", null, blockers(ctx, explanation, gate, index, steps)),
    // Blocked with eligible Bundles: something Gate-wide (a window, a suspension) is
    // in the way, so a button would only earn a refusal.
    explanation.state === "Blocked" && eligible.length
      ? c.section(
          "Could cross once the way is clear",
          null,
          c.table(
            `Bundles that could cross ${name} once nothing is in the way, newest first`,
            ["Bundle", "Emitted"],
            eligible.map((b) => ({ cells: [c.bundle(b, ns, index), emitted(b)], attrs: { "data-bundle": b } })),
          ),
        )
      : c.section(
          "Could cross now",
          null,
          eligible.length
            ? c.table(
                `Bundles that could cross ${name} now, newest first`,
                ["Bundle", "Emitted", "Action"],
                eligible.map((b) => ({ cells: [c.bundle(b, ns, index), emitted(b), promoteButton(ctx, name, b, index, steps)], attrs: { "data-bundle": b } })),
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
              cells: [c.bundle(w.bundle, ns, index), [w.reason, w.kind ? h("code", { class: "small muted" }, ` ${w.kind}`) : null], (w.action && w.action.type === "approve" && remedyButton(ctx, w.action, index, null)) || ""],
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
            ["Bundle", "Entered", "By", "Passage", "Verified"],
            history.map((o) => [
              c.bundle(o.bundle, ns, index),
              time(o.enteredAt),
              o.actor || "automatically",
              o.passage ? c.link("/passages/", { name: o.passage, namespace: ns }, o.passage) : "",
              o.verified === true ? "verified" : o.verified === false ? "verification failed" : "not verified",
            ]),
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
  );
}
