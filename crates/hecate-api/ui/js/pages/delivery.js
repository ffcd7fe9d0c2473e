// `/delivery/`: how well a namespace delivers — lead time, deployment frequency, change
// failure rate and time to restore — as ops judged them (DECISION 138). The plots are
// the page's own SVG: lead time over time, crossings per week with failures marked,
// and where the time goes. Times are the viewer's, in their zone.

import { get, nsPath } from "../api.js";
import * as c from "../components.js";
import { h, s } from "../dom.js";
import { count, local } from "../format.js";
import { refiltered } from "../router.js";

const PERIODS = [["7d", "7 days"], ["30d", "30 days"], ["90d", "90 days"], ["365d", "a year"]];
// The parts of a lead time, in the order they happen; they add up to the whole. Lead
// time starts at the commit where its Beacon recorded the commit's time (DECISION
// 140): the first part is the time before the Bundle existed.
const PARTS = [
  ["emissionSeconds", "before the Bundle", "from the commit until its Beacon emitted the Bundle: building, tagging, publishing, the Beacon's next look", "emission"],
  ["upstreamSeconds", "upstream", "until the Gates before it cleared it", "upstream"],
  ["approvalSeconds", "approval", "waiting for the approval the Gate asks for", "approval"],
  ["windowSeconds", "window", "while every promotion window was closed", "window"],
  ["queuedSeconds", "queued", "waiting for someone to promote, or a crossing ahead", "queued"],
  ["stepsSeconds", "steps", "running the crossing's steps", "steps"],
];
const FAILURES = [["failed", "failed"], ["aborted", "aborted"], ["unverified", "failed verification"], ["rolledBack", "rolled back"]];
const DAY_MS = 86400000;

export async function render(ctx) {
  const { ns, params } = ctx;
  ctx.title("Delivery");
  const since = PERIODS.some(([p]) => p === params.get("since")) ? params.get("since") : "30d";
  const metrics = await get(`${nsPath(ns, "metrics")}?since=${since}`, { signal: ctx.signal });
  const names = metrics.gates.map((g) => g.gate);
  const asked = params.get("gate");
  const focus = metrics.gates.find((g) => g.gate === asked) || metrics.gates.find((g) => g.gate === metrics.pipeline?.gates[0]) || metrics.gates[metrics.gates.length - 1];
  const choose = refiltered("/delivery/", params);
  return h(
    "div",
    { class: "page delivery" },
    c.title("Delivery", h("span", { class: "muted small" }, ` in ${ns}`)),
    h(
      "form",
      { class: "filters", "aria-label": "Choose the period and the Gate", onsubmit: (e) => e.preventDefault() },
      h("label", { for: "delivery-since" }, "Period"),
      h("select", { id: "delivery-since", onchange: choose("since") }, PERIODS.map(([value, words]) => h("option", { value, selected: value === since }, `the last ${words}`))),
      names.length ? [h("label", { for: "delivery-gate" }, "Gate"), h("select", { id: "delivery-gate", onchange: choose("gate") }, names.map((n) => h("option", { value: n, selected: n === focus?.gate }, n)))] : null,
    ),
    metrics.gates.length ? null : c.empty(`There are no Gates in ${ns}.`),
    // The pipeline's figures, unless they are the shown Gate's own (a last stage of one).
    metrics.pipeline && !endsAt(metrics.pipeline, focus) ? pipelineSection(metrics.pipeline) : null,
    focus ? gateSection(focus, ns, endsAt(metrics.pipeline, focus)) : null,
    metrics.gates.length ? everyGate(metrics.gates, ns) : null,
  );
}

/** The four figures, as cards. */
function cards(f) {
  const lead = f.leadTime;
  const freq = f.deploymentFrequency;
  const rate = f.changeFailureRate;
  const restore = f.timeToRestore;
  const card = (label, value, basis) => h("div", { class: "figure" }, h("dt", null, label), h("dd", null, h("span", { class: "figure-value" }, value), h("span", { class: "small muted" }, basis)));
  const figures = h(
    "dl",
    { class: "figures" },
    card("Lead time (median)", lead.medianSeconds != null ? seconds(lead.medianSeconds) : "—", lead.crossings ? `p90 ${seconds(lead.p90Seconds)} · from ${count(lead.crossings, "deployment")}` : "nothing deployed"),
    card("Deployment frequency", `${freq.perDay} a day`, `${freq.perWeek} a week · ${count(freq.crossings, "deployment")} over ${count(freq.days, "day")}`),
    card("Change failure rate", rate.rate != null ? `${Math.round(rate.rate * 100)}%` : "—", rate.crossings ? `${rate.failed} of ${count(rate.crossings, "crossing")}${failureWords(rate.by)}` : "nothing crossed"),
    card(
      "Time to restore (median)",
      restore.medianSeconds != null ? seconds(restore.medianSeconds) : restore.openSince ? "not yet" : "—",
      [
        restore.failures ? `${restore.restored} of ${count(restore.failures, "failure")} restored` : "no failures",
        restore.longestSeconds != null ? ` · longest ${seconds(restore.longestSeconds)}` : "",
        restore.openSince ? ` · failing since ${local(restore.openSince)}` : "",
      ].join(""),
    ),
  );
  // Ops says when the figures rest on too few crossings to read as rates.
  return f.caution ? [figures, h("p", { class: "caution small", "data-field": "caution" }, f.caution)] : figures;
}

function failureWords(by) {
  const parts = FAILURES.filter(([key]) => by[key]).map(([key, words]) => `${by[key]} ${words}`);
  return parts.length ? ` (${parts.join(", ")})` : "";
}

/** "from 14 crossings since 3 Nov 2026, 10:00 CET", and whether older ones are gone. */
function reachWords(reach, crossings) {
  const words = `from ${count(crossings, "crossing")} since ${local(reach.from)}`;
  return reach.partial ? `${words}; older crossings are no longer kept (the Gate keeps its newest Passages only)` : words;
}

function pipelineSection(p) {
  const crossings = p.changeFailureRate.crossings;
  return c.section(
    `Where releases end up: ${p.gates.join(", ")}`,
    { class: "pipeline-figures" },
    h("p", { class: "small muted" }, reachWords(p.reach, crossings)),
    cards(p),
  );
}

/** Whether the pipeline's last stage is `gate` alone. */
function endsAt(pipeline, gate) {
  return !!pipeline && !!gate && pipeline.gates.length === 1 && pipeline.gates[0] === gate.gate;
}

function gateSection(g, ns, last) {
  return c.section(
    last ? `Where releases end up: ${g.gate}` : `Gate ${g.gate}`,
    { class: "gate-figures" },
    h("p", { class: "small muted" }, reachWords(g.reach, g.changeFailureRate.crossings), " · ", c.link("/gates/", { name: g.gate, namespace: ns }, "open the Gate")),
    cards(g),
    g.crossings.length
      ? h("div", { class: "plots" }, leadTimePlot(g), weeklyPlot(g), partsPlot(g))
      : c.empty("Nothing crossed this Gate in the period."),
  );
}

function everyGate(gates, ns) {
  return c.section(
    "Every Gate",
    {},
    c.table(
      "The delivery figures of every Gate, upstream first",
      ["Gate", "Lead time", "Deployments", "Failure rate", "Time to restore"],
      gates.map((g) => [
        c.link("/delivery/", { gate: g.gate, namespace: ns }, g.gate),
        g.leadTime.medianSeconds != null ? `${seconds(g.leadTime.medianSeconds)} median` : "—",
        `${g.deploymentFrequency.perDay} a day`,
        g.changeFailureRate.rate != null ? `${Math.round(g.changeFailureRate.rate * 100)}% of ${g.changeFailureRate.crossings}` : "—",
        g.timeToRestore.medianSeconds != null ? seconds(g.timeToRestore.medianSeconds) : g.timeToRestore.openSince ? "failing now" : "—",
      ]),
    ),
  );
}

// The plots: fixed viewBox, scaled by CSS; each is an image with its own words.
const W = 640;
const H = 220;
const PAD = { left: 56, right: 12, top: 12, bottom: 36 };

function frame(label, summary, ...children) {
  return framed(H, label, summary, ...children);
}

function framed(height, label, summary, ...children) {
  return h(
    "figure",
    { class: "plot" },
    s("svg", { viewBox: `0 0 ${W} ${height}`, role: "img", "aria-label": `${label}: ${summary}`, preserveAspectRatio: "xMidYMid meet" }, s("title", null, label), ...children),
    h("figcaption", null, h("strong", null, label), " ", h("span", { class: "small muted" }, summary)),
  );
}

function axisY(max, fmt) {
  const ticks = [0, max / 2, max];
  return ticks.map((v) => {
    const y = PAD.top + (H - PAD.top - PAD.bottom) * (1 - (max ? v / max : 0));
    return s("g", { class: "tick" }, s("line", { x1: PAD.left, x2: W - PAD.right, y1: y, y2: y }), s("text", { x: PAD.left - 6, y: y + 4, "text-anchor": "end" }, fmt(v)));
  });
}

/** Lead time of each deployment over time; failed changes marked. */
function leadTimePlot(g) {
  const points = g.crossings.filter((x) => x.leadTime);
  if (!points.length) return frame("Lead time over time", "no deployment of the period has a lead time");
  const total = (p) => PARTS.reduce((sum, [key]) => sum + (p[key] || 0), 0);
  const times = points.map((x) => Date.parse(x.finishedAt));
  const t0 = Math.min(...times);
  const t1 = Math.max(...times, t0 + 1);
  const max = Math.max(...points.map((x) => total(x.leadTime)), 1);
  const x = (t) => PAD.left + ((W - PAD.left - PAD.right) * (t - t0)) / (t1 - t0);
  const y = (v) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  const path = points.map((p, i) => `${i ? "L" : "M"}${x(Date.parse(p.finishedAt)).toFixed(1)},${y(total(p.leadTime)).toFixed(1)}`).join(" ");
  return frame(
    "Lead time over time",
    `${count(points.length, "deployment")}, from ${seconds(Math.min(...points.map((p) => total(p.leadTime))))} to ${seconds(max)}`,
    axisY(max, seconds),
    s("path", { class: "line", d: path }),
    points.map((p) =>
      s(
        "circle",
        { class: `dot outcome-${p.outcome}`, cx: x(Date.parse(p.finishedAt)).toFixed(1), cy: y(total(p.leadTime)).toFixed(1), r: 4 },
        s("title", null, `${p.bundle}: ${seconds(total(p.leadTime))}, finished ${local(p.finishedAt)}${p.outcome === "succeeded" ? "" : ` (${p.outcome === "rolledBack" ? "rolled back" : "failed verification"})`}`),
      ),
    ),
    s("text", { class: "axis-label", x: PAD.left, y: H - 8 }, local(new Date(t0).toISOString())),
    s("text", { class: "axis-label", x: W - PAD.right, y: H - 8, "text-anchor": "end" }, local(new Date(t1).toISOString())),
  );
}

/** The Monday that starts `t`'s week, in the viewer's zone. */
function weekOf(t) {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
  return d.getTime();
}

/** Crossings per week, deployments and failed changes stacked. */
function weeklyPlot(g) {
  const weeks = new Map();
  for (const x of g.crossings) {
    const w = weekOf(Date.parse(x.finishedAt));
    const entry = weeks.get(w) || { ok: 0, failed: 0 };
    if (x.outcome === "succeeded") entry.ok += 1;
    else entry.failed += 1;
    weeks.set(w, entry);
  }
  const first = Math.min(...weeks.keys());
  const last = Math.max(...weeks.keys());
  const all = [];
  for (let w = first; w <= last; w = weekOf(w + 8 * DAY_MS)) all.push([w, weeks.get(w) || { ok: 0, failed: 0 }]);
  const max = Math.max(...all.map(([, e]) => e.ok + e.failed), 1);
  const slot = (W - PAD.left - PAD.right) / all.length;
  const bar = Math.min(48, slot * 0.7);
  const y = (v) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  const day = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" });
  const failed = g.crossings.filter((x) => x.outcome !== "succeeded").length;
  return frame(
    "Crossings per week",
    `${count(g.crossings.length, "crossing")} over ${count(all.length, "week")}, ${failed} failed`,
    axisY(max, (v) => String(Math.round(v * 10) / 10)),
    all.map(([w, e], i) => {
      const x = PAD.left + slot * i + (slot - bar) / 2;
      const words = `week of ${day.format(w)}: ${e.ok} succeeded, ${e.failed} failed`;
      return s(
        "g",
        { class: "week" },
        s("title", null, words),
        s("rect", { class: "bar-ok", x, width: bar, y: y(e.ok), height: y(0) - y(e.ok) }),
        s("rect", { class: "bar-failed", x, width: bar, y: y(e.ok + e.failed), height: y(e.ok) - y(e.ok + e.failed) }),
        s("text", { class: "axis-label", x: x + bar / 2, y: H - 8, "text-anchor": "middle" }, day.format(w)),
      );
    }),
  );
}

/** Where the lead time went, summed over the period's deployments. */
function partsPlot(g) {
  const parts = g.leadTime.parts;
  const total = PARTS.reduce((sum, [key]) => sum + (parts[key] || 0), 0);
  if (!total) return frame("Where the time goes", "no deployment of the period has a lead time");
  let x = PAD.left;
  const width = W - PAD.left - PAD.right;
  const shares = PARTS.map(([key, name, words, cls]) => ({ key, name, words, cls, value: parts[key] || 0, share: (parts[key] || 0) / total })).filter((p) => p.value);
  const summary = shares.map((p) => `${p.name} ${Math.round(p.share * 100)}%`).join(", ");
  return h(
    "div",
    { class: "parts" },
    framed(
      60,
      "Where the time goes",
      summary,
      shares.map((p) => {
        const w = width * p.share;
        const rect = s("rect", { class: `part part-${p.cls}`, x, y: 8, width: w, height: 44 }, s("title", null, `${p.name}: ${seconds(p.value)} (${Math.round(p.share * 100)}%), ${p.words}`));
        x += w;
        return rect;
      }),
    ),
    h("ul", { class: "legend small" }, shares.map((p) => h("li", { "data-part": p.cls }, h("span", { class: `swatch part-${p.cls}`, "aria-hidden": "true" }), `${p.name} — ${Math.round(p.share * 100)}% (${seconds(p.value)}): ${p.words}`))),
  );
}

/** "3m 12s", "2d 4h": the largest two units. */
function seconds(n) {
  if (n == null) return "—";
  let rest = Math.round(n);
  const parts = [];
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (parts.length < 2 && (rest || !parts.length)) parts.push(`${rest}s`);
  return parts.slice(0, 2).join(" ");
}
