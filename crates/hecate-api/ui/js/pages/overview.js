// `/`: every Gate of every namespace the caller may read, each namespace drawn as its
// pipeline graph (graph.js, stages from ops) with its recent Bundles' timeline
// (timeline.js), with headline counts and the last 14 days of crossings.

import { API, get } from "../api.js";
import * as c from "../components.js";
import { h, s } from "../dom.js";
import { count, plural } from "../format.js";
import { pipelineGraph } from "../graph.js";
import { href } from "../router.js";
import { timeline as timelineView } from "../timeline.js";

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

function headline(totals, namespaces) {
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
  const calm = totals.degraded + totals.failed + totals.suspended === 0;
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
    calm ? h("p", { class: "calm" }, "Nothing needs attention: no Gate is degraded or suspended, and no crossing has failed.") : null,
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

/** Gates whose health reports issues, in words (the graph says the health; this says why). */
function issues(summaries) {
  const troubled = summaries.filter((x) => x.issues && x.issues.length);
  if (!troubled.length) return null;
  return h(
    "ul",
    { class: "issues-list" },
    troubled.map((x) => h("li", { class: "issues", "data-gate": x.name }, h("strong", null, `${x.name}: `), x.issues.join(" · "))),
  );
}

/** The Gates as graph.js draws them, from the Overview's summaries: each one's stage and admissions (ops'). */
function asGates(summaries) {
  return summaries.map((x) => ({ metadata: { name: x.name }, spec: { admits: x.admits || [], suspend: x.suspended }, stage: x.stage }));
}

export async function render(ctx) {
  ctx.title("Overview");
  const overview = await get(`${API}/overview`, { signal: ctx.signal });
  const namespaces = overview.namespaces.map((n) => n.namespace);
  ctx.follow(namespaces.length ? namespaces : [ctx.ns]);
  const sections = overview.namespaces.map((n) => {
    const timeline = n.timeline || [];
    // Aliases: the timeline carries every Bundle a Gate runs now.
    const aliases = new Map(timeline.map((t) => [t.bundle, t.alias || t.bundle]));
    return h(
      "section",
      { class: "namespace", "aria-labelledby": `ns-${n.namespace}`, "data-namespace": n.namespace },
      h("h3", { id: `ns-${n.namespace}` }, c.link("/gates/", { namespace: n.namespace }, n.namespace), h("span", { class: "muted small" }, ` · ${count(n.gates.length, "Gate")}`)),
      pipelineGraph(n.namespace, asGates(n.gates), n.gates, (b) => aliases.get(b) || b),
      issues(n.gates),
      timelineView(n.namespace, timeline),
    );
  });
  return h(
    "div",
    { class: "page" },
    c.title("Overview"),
    // Nothing readable is not "nothing needs attention": say which it is.
    overview.namespaces.length
      ? headline(overview.totals, overview.namespaces)
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
}
