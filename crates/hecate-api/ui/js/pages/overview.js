// `/`: every Gate of every namespace the caller may read, each namespace drawn as its
// pipeline (stages derived from `admits[].after`), with headline counts and the last
// 14 days of crossings.

import { API, get, nsPath } from "../api.js";
import * as c from "../components.js";
import { h, s } from "../dom.js";
import { count } from "../format.js";
import { byStage } from "../pipeline.js";
import { href } from "../router.js";

// The overview spans namespaces: it follows their streams itself.
export const live = "self";

// What list each total opens: the Gates or Passages it counts, in a namespace.
const OPENS = {
  gates: ["/gates/", {}],
  degraded: ["/gates/", { show: "degraded" }],
  failed: ["/passages/", { phase: "Failed" }],
  suspended: ["/gates/", { show: "suspended" }],
  running: ["/passages/", { phase: "running" }],
  eligible: ["/gates/", { show: "waiting" }],
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
  const cards = [["gates", totals.gates, totals.gates === 1 ? "Gate" : "Gates", ""]];
  for (const [key, n, label, kind] of [
    ["degraded", totals.degraded, "degraded", "bad"],
    ["failed", totals.failed, totals.failed === 1 ? "failed crossing" : "failed crossings", "bad"],
    ["suspended", totals.suspended, "suspended", "warn"],
    ["running", totals.running, "crossing now", "info"],
    ["eligible", totals.eligible, "waiting to cross", "info"],
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

function card(ns, summary, bundles) {
  const after = (summary.stage && summary.stage.after) || [];
  const waiting = summary.eligible > 0 && !summary.running;
  return h(
    "article",
    { class: ["gate-card", `edge-${summary.health || "Unknown"}`], "data-gate": summary.name },
    h(
      "header",
      null,
      h("h4", null, c.link("/gates/", { name: summary.name, namespace: ns }, summary.name)),
      c.state(summary.state),
      c.health(summary.health),
    ),
    h("p", { class: "current" }, h("span", { class: "muted" }, "Running now: "), c.bundle(summary.current, ns, bundles)),
    h("p", { class: "summary" }, summary.summary),
    h(
      "p",
      { class: "pills" },
      summary.suspended ? c.pill("suspended", "warn") : null,
      summary.running ? h("a", { class: "pill pill-info", href: `/passages/?name=${encodeURIComponent(summary.running)}&namespace=${encodeURIComponent(ns)}` }, `crossing: ${summary.running}`) : null,
      waiting ? c.pill(`${summary.eligible} waiting`, "info") : null,
      after.length ? h("span", { class: "muted small" }, `after ${after.join(", ")}`) : null,
    ),
    summary.issues && summary.issues.length ? h("p", { class: "issues" }, summary.issues.join(" · ")) : null,
  );
}

/** A namespace's Gates as stages, upstream first, as the server ordered them. */
export function pipeline(ns, summaries, bundles) {
  const grouped = byStage(summaries);
  return h(
    "ol",
    { class: "pipeline", "aria-label": `Pipeline of ${ns}` },
    grouped.map((stage, i) =>
      h(
        "li",
        { class: "stage" },
        h("span", { class: "visually-hidden" }, `Stage ${i + 1} of ${grouped.length}`),
        stage.map((summary) => card(ns, summary, bundles)),
      ),
    ),
  );
}

export async function render(ctx) {
  ctx.title("Overview");
  const overview = await get(`${API}/overview`, { signal: ctx.signal });
  const namespaces = overview.namespaces.map((n) => n.namespace);
  ctx.follow(namespaces.length ? namespaces : [ctx.ns]);
  // The Overview has each Gate's state and stage; aliases need the Bundles. Without
  // them the page still says everything.
  const extra = await Promise.all(namespaces.map((ns) => get(nsPath(ns, "bundles"), { signal: ctx.signal }).catch(() => [])));
  const sections = overview.namespaces.map((n, i) => {
    const bundles = extra[i];
    return h(
      "section",
      { class: "namespace", "aria-labelledby": `ns-${n.namespace}` },
      h("h3", { id: `ns-${n.namespace}` }, c.link("/gates/", { namespace: n.namespace }, n.namespace), h("span", { class: "muted small" }, ` · ${count(n.gates.length, "Gate")}`)),
      pipeline(n.namespace, n.gates, c.index(bundles)),
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
