// `/`: every Gate of every namespace the caller may read, each namespace drawn as its
// pipeline graph (graph.js, stages from ops) with its recent Bundles' timeline
// (timeline.js), with headline counts and the last 14 days of crossings.

import * as actions from "../actions.js";
import { API, get, nsPath } from "../api.js";
import * as c from "../components.js";
import { h, s } from "../dom.js";
import { count, plural, time, withLocalTimes } from "../format.js";
import { pipelineGraph } from "../graph.js";
import { href } from "../router.js";
import { timeline as timelineView } from "../timeline.js";
import { approveRefused, heldBy } from "./approvals.js";

// The overview spans namespaces: it follows their streams itself.
export const live = "self";

// What list each total opens: the Gates or Passages it counts, in a namespace.
const OPENS = {
  gates: ["/gates/", {}],
  degraded: ["/gates/", { show: "degraded" }],
  failed: ["/passages/", { phase: "Failed" }],
  suspended: ["/gates/", { show: "suspended" }],
  running: ["/passages/", { phase: "running" }],
  ahead: ["/gates/", { show: "waiting" }],
};

/** A total's number and words, as a link to the list it counts (one per namespace when several hold some). */
function total(key, n, label, namespaces) {
  const [path, params] = OPENS[key];
  const where = namespaces.filter((x) => x.totals && x.totals[key] > 0);
  const words = [h("strong", null, String(n)), " ", label];
  if (where.length === 1) return h("a", { href: href(path, { ...params, namespace: where[0].namespace }) }, words);
  // Every namespace has Gates, and each heading below links to them already.
  if (where.length === 0 || key === "gates") return words;
  return [words, ": ", where.map((x, i) => [i ? ", " : "", h("a", { href: href(path, { ...params, namespace: x.namespace }) }, `${x.totals[key]} in ${x.namespace}`)])];
}

function headline(totals, namespaces, waiting) {
  const cards = [["gates", totals.gates, plural(totals.gates, "Gate"), ""]];
  for (const [key, n, label, kind] of [
    ["degraded", totals.degraded, "degraded", "bad"],
    ["failed", totals.failed, plural(totals.failed, "failed crossing"), "bad"],
    ["suspended", totals.suspended, "suspended", "warn"],
    ["running", totals.running, "crossing now", "info"],
    // Ops' count of Bundles ahead of each Gate's current one: rollback candidates are not waiting.
    ["ahead", totals.ahead || 0, "waiting to cross", "info"],
  ]) {
    if (n > 0) cards.push([key, n, label, kind]);
  }
  const calm = totals.degraded + totals.failed + totals.suspended + waiting === 0;
  return h(
    "div",
    null,
    h(
      "ul",
      { class: "totals", "aria-label": "Totals" },
      cards.map(([key, n, label, kind]) =>
        h("li", { class: ["total", kind && `total-${kind}`], "data-total": key }, total(key, n, label, namespaces)),
      ),
    ),
    calm ? h("p", { class: "calm" }, "Nothing needs attention: no Gate is degraded or suspended, no crossing has failed, and nothing waits on anyone.") : null,
  );
}

function activity(days) {
  const crossed = days.reduce((n, d) => n + d.crossed, 0);
  const failed = days.reduce((n, d) => n + d.failed, 0);
  if (!crossed && !failed) return c.section("Last 14 days", null, c.empty("No crossings and no failures in the last 14 days."));
  const max = Math.max(1, ...days.map((d) => d.crossed + d.failed));
  const width = 28;
  const height = 120;
  const label = `Crossings per day over the last 14 days: ${count(crossed, "crossing")} and ${count(failed, "failure")} in all.`;
  const chart = s(
    "svg",
    { class: "chart", viewBox: `0 0 ${days.length * width} ${height}`, role: "img", "aria-label": label, preserveAspectRatio: "none" },
    days.map((d, i) => {
      const x = i * width + 4;
      const hc = (d.crossed / max) * height;
      const hf = (d.failed / max) * height;
      return s(
        "g",
        null,
        s("title", null, `${d.date}: ${d.crossed} crossed, ${d.failed} failed`),
        s("rect", { class: "bar-crossed", x, y: height - hc - hf, width: width - 8, height: hc }),
        s("rect", { class: "bar-failed", x, y: height - hf, width: width - 8, height: hf }),
      );
    }),
  );
  return c.section(
    "Last 14 days",
    null,
    h("p", { class: "legend" }, h("span", { class: "key key-crossed", "aria-hidden": "true" }), " crossed ", h("span", { class: "key key-failed", "aria-hidden": "true" }), " failed — ", label),
    chart,
    // The days under their bars, as text the chart's stretching cannot distort.
    h("ol", { class: "chart-days", "aria-hidden": "true" }, days.map((d) => h("li", null, d.date.slice(8)))),
    h(
      "details",
      null,
      h("summary", null, "The same as a table"),
      c.table("Crossings and failures per day", ["Day (UTC)", "Crossed", "Failed"], days.map((d) => [d.date, String(d.crossed), String(d.failed)])),
    ),
  );
}

// ---- what waits on a person (ops' `attention`, DECISION 141) -----------------------

// When this browser last showed the Overview: what happened since is marked new. Read
// once per visit, so that redrawing a live page does not clear the marks.
const SEEN_KEY = "hecate.overview.seen";
const seenBefore = (() => {
  try {
    return Number(localStorage.getItem(SEEN_KEY)) || 0;
  } catch {
    return 0;
  }
})();

const KIND_WORDS = { Failed: "Failed", Slow: "Running long", Approval: "Waiting for approval", Rejected: "Held by a rejection", Scheduled: "Crosses by itself" };
const KIND_PILL = { Failed: "bad", Slow: "warn", Approval: "info", Rejected: "warn", Scheduled: "info" };

/**
 * The control that settles an item: a button where the action is taken here, else a
 * link to where it is. `automatic`: the Gates (`ns/gate`) that cross by themselves
 * (ops' `auto`), whose approve dialog says the approval starts the crossing.
 */
function settle(ctx, a, aliases, automatic) {
  const act = a.action || {};
  const label = (a.bundle && aliases.get(a.bundle)) || a.bundle;
  const open = c.link("/gates/", { namespace: a.namespace, name: a.gate }, `Open ${a.gate}`);
  // Only the selected namespace's items are listed, so the page's rights are theirs.
  if (act.type === "approve") {
    const crossesItself = automatic.has(`${a.namespace}/${a.gate}`);
    // Judged before the click, as the Approvals page judges it.
    const why = approveRefused(ctx.approvals, a.gate, a.bundle);
    return [
      h("button", { type: "button", "data-action": "approve", "data-bundle": a.bundle, "aria-label": `Approve ${label} for ${a.gate}`, disabled: why ? true : undefined, title: why ? `Your approval would not count: ${why}` : undefined, onclick: async () => (await actions.approve(a.namespace, a.gate, a.bundle, label, crossesItself, heldBy(ctx.approvals, a.gate, a.bundle))) && ctx.refresh() }, `Approve ${label} for ${a.gate}`),
      " ",
      open,
    ];
  }
  if (act.type === "rollback") {
    return [
      h("button", { type: "button", "data-action": "rollback", onclick: async () => (await actions.rollback(a.namespace, a.gate)) && ctx.refresh() }, `Roll back ${a.gate}`),
      " ",
      open,
    ];
  }
  if (a.passage) return [c.link("/passages/", { namespace: a.namespace, name: a.passage }, `Open ${a.passage}`), " · ", open];
  return open;
}

/** The Bundle an item is about: its version, its name in small print. */
function aboutBundle(a, aliases) {
  if (!a.bundle) return null;
  const version = aliases.get(a.bundle);
  return h(
    "span",
    { class: "bundle" },
    " · ",
    c.link("/bundles/", { namespace: a.namespace, name: a.bundle }, version && version !== a.bundle ? version : a.bundle),
    version && version !== a.bundle ? h("span", { class: "muted small" }, ` ${a.bundle}`) : null,
  );
}

/**
 * Where else things wait, one link per namespace: the Overview's totals span every
 * namespace, but its list is the selected one's — ages and buttons read as this team's.
 */
function elsewhere(items) {
  const by = new Map();
  for (const a of items) by.set(a.namespace, (by.get(a.namespace) || 0) + 1);
  if (!by.size) return null;
  return h(
    "p",
    { class: "attention-elsewhere" },
    "Also waiting in other namespaces: ",
    [...by].map(([ns, n], i) => [i ? ", " : "", h("a", { href: href("/", { namespace: ns }), "data-namespace": ns }, `${n} in ${ns}`)]),
  );
}

/** What waits on a person in the selected namespace, most pressing first; nothing when nothing waits anywhere. */
function attention(ctx, all, aliases, automatic) {
  if (!all.length) return null;
  const items = all.filter((a) => a.namespace === ctx.ns);
  return c.section(
    "Waiting on people",
    { "data-attention": String(items.length) },
    items.length ? null : c.empty(`Nothing waits on anyone in ${ctx.ns}.`),
    elsewhere(all.filter((a) => a.namespace !== ctx.ns)),
    items.length ? h(
      "ul",
      { class: "attention" },
      items.map((a) => {
        const at = a.since ? Date.parse(a.since) : 0;
        const fresh = a.kind === "Failed" && at > seenBefore && seenBefore > 0;
        return h(
          "li",
          { class: "attention-item", "data-kind": a.kind, "data-namespace": a.namespace, "data-gate": a.gate },
          h(
            "p",
            null,
            c.pill(KIND_WORDS[a.kind] || a.kind, KIND_PILL[a.kind] || ""),
            fresh ? [" ", c.pill("new since you last looked", "bad")] : null,
            " ",
            h("strong", null, `${a.namespace}/${a.gate}`),
            aboutBundle(a, aliases),
            a.since ? h("span", { class: "muted small" }, " · since ", time(a.since)) : null,
            a.due ? h("span", { class: "small", "data-due": a.due }, " · at ", time(a.due, "local")) : null,
          ),
          h("p", { class: "attention-detail" }, withLocalTimes(a.detail)),
          h("p", { class: "attention-act" }, settle(ctx, a, aliases, automatic)),
        );
      }),
    ) : null,
  );
}

/** Gates whose health reports issues, in words (the graph says the health; this says why). */
function issues(summaries) {
  const troubled = summaries.filter((x) => x.issues && x.issues.length);
  if (!troubled.length) return null;
  return h(
    "ul",
    { class: "issues-list" },
    troubled.map((x) => h("li", { class: "issues", "data-gate": x.name, "data-health": x.health }, h("strong", null, `${x.name}: `), x.issues.join(" · "))),
  );
}

/** The Gates as graph.js draws them, from the Overview's summaries: each one's stage and admissions (ops'). */
function asGates(summaries) {
  return summaries.map((x) => ({ metadata: { name: x.name }, spec: { admits: x.admits || [], suspend: x.suspended }, stage: x.stage }));
}

export async function render(ctx) {
  ctx.title("Overview");
  const [overview, approvals] = await Promise.all([
    get(`${API}/overview`, { signal: ctx.signal }),
    // Whose approval would count here, for the Approve buttons (the Approvals page's
    // queue: ops' judgement for the signed-in person). Buttons are offered in this
    // namespace only.
    get(nsPath(ctx.ns, "approvals"), { signal: ctx.signal }).catch(() => null),
  ]);
  ctx.approvals = approvals;
  const namespaces = overview.namespaces.map((n) => n.namespace);
  ctx.follow(namespaces.length ? namespaces : [ctx.ns]);
  const aliases = new Map();
  // The Gates that cross by themselves (ops' `auto`), by `namespace/gate`.
  const automatic = new Set();
  const sections = overview.namespaces.map((n) => {
    const timeline = n.timeline || [];
    // Versions, as ops says them: the timeline carries every Bundle a Gate runs now,
    // and the newest.
    for (const t of timeline) aliases.set(t.bundle, t.alias || t.bundle);
    for (const g of n.gates) if (g.auto) automatic.add(`${n.namespace}/${g.name}`);
    return h(
      "section",
      { class: "namespace", "aria-labelledby": `ns-${n.namespace}`, "data-namespace": n.namespace },
      h("h3", { id: `ns-${n.namespace}` }, c.link("/gates/", { namespace: n.namespace }, n.namespace), h("span", { class: "muted small" }, ` · ${count(n.gates.length, "Gate")}`)),
      pipelineGraph(n.namespace, asGates(n.gates), n.gates, (b) => aliases.get(b) || b),
      issues(n.gates),
      timelineView(n.namespace, timeline),
    );
  });
  const page = h(
    "div",
    { class: "page" },
    c.title("Overview"),
    // Nothing readable is not "nothing needs attention": say which it is.
    overview.namespaces.length
      ? [headline(overview.totals, overview.namespaces, (overview.attention || []).length), attention(ctx, overview.attention || [], aliases, automatic)]
      : h(
          "p",
          { class: "unreadable", "data-readable": "none" },
          h("strong", null, "You can read no namespace."),
          " The cluster decides what each person may see: ask for a Role (for example hecate-viewer) in the namespaces you work in.",
        ),
    c.section(
      "Pipelines",
      null,
      sections.length
        ? sections
        : c.empty("No Gates to show. There may be none, or you may not be allowed to read them: the cluster decides what each person may see."),
    ),
    activity(overview.activity || []),
  );
  try {
    localStorage.setItem(SEEN_KEY, String(Date.now()));
  } catch {
    // A browser that keeps nothing marks nothing new.
  }
  return page;
}
