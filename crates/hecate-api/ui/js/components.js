// Pieces every page uses: badges that always carry a word (colour is never the only
// signal), tables with headers, sections with headings, links that keep the
// namespace, and Bundle names with their aliases.

import { h } from "./dom.js";
import { href } from "./router.js";

const HEALTH_WORDS = {
  Healthy: "Healthy",
  Progressing: "Progressing",
  Degraded: "Degraded",
  Unknown: "Unknown",
  NotApplicable: "Not applicable",
};

const PHASE_ICONS = {
  Pending: "○",
  Running: "◐",
  Succeeded: "✓",
  Failed: "✗",
  Aborted: "■",
  Skipped: "↷",
  // A crossing's verification (DECISION 139); `Failed` is a phase's.
  Verifying: "◐",
  Verified: "✓",
  Superseded: "⤼",
};

const STATE_ICONS = { Crossing: "➜", Ready: "●", Blocked: "‖", Idle: "–", Failed: "✗" };

/** A Gate's health as a coloured badge with its word. */
export function health(value) {
  const v = value || "Unknown";
  return h("span", { class: ["badge", `health-${v}`], "data-health": v }, h("span", { class: "dot", "aria-hidden": "true" }), HEALTH_WORDS[v] || v);
}

/** A Gate's state, in one word. */
export function state(value) {
  return h("span", { class: ["badge", `state-${value}`], "data-state": value }, h("span", { "aria-hidden": "true" }, STATE_ICONS[value] || ""), " ", value);
}

/** A Passage's, step's or verification's phase with an icon and its word. */
export function phase(value) {
  const v = value || "Pending";
  return h("span", { class: ["badge", `phase-${v}`], "data-phase": v }, h("span", { "aria-hidden": "true" }, PHASE_ICONS[v] || ""), " ", v);
}

/** A small label. */
export function pill(text, kind = "") {
  return h("span", { class: ["pill", kind && `pill-${kind}`] }, text);
}

/** A link within the UI that keeps the namespace. */
export function link(path, params, ...children) {
  return h("a", { href: href(path, params) }, ...children);
}

/**
 * Bundles by name, for their versions. `versions` (name → version, a Map or an
 * object) are ops' words for them — Explain's `versions`, the timeline's `alias` —:
 * a Bundle without an alias (made before Beacons wrote one, or by hand), or one not in
 * `bundles`, still reads "v1.3.0" rather than its hash.
 */
export function index(bundles, versions) {
  const byName = new Map((bundles || []).map((b) => [b.metadata.name, b]));
  byName.versions = versions instanceof Map ? versions : new Map(Object.entries(versions || {}));
  return byName;
}

/** Bundle `name`'s version: its alias, else ops' version for it (`index`), else "". */
export function alias(name, bundles) {
  const b = bundles && bundles.get(name);
  return (b && b.spec && b.spec.alias) || (bundles && bundles.versions && bundles.versions.get(name)) || "";
}

/** When a Bundle was emitted: the nanosecond time its Beacon records
 *  (`hecate.dev/created-at`), else its creation time — the time ops orders Bundles by
 *  (eligibility::created_at), so the column agrees with the order. */
export function emittedAt(b) {
  const annotations = (b && b.metadata && b.metadata.annotations) || {};
  return annotations["hecate.dev/created-at"] || (b && b.metadata && b.metadata.creationTimestamp);
}

/** "v1.10.0 (shop-abc123)": how an action names a Bundle, exactly. */
export function bundleText(name, bundles) {
  const a = alias(name, bundles);
  // The version people know first, the name that tells it apart after (#53).
  return a ? `${a} (${name})` : name;
}

/** A link to a Bundle: its alias, and its name in small print. */
export function bundle(name, ns, bundles) {
  if (!name) return h("span", { class: "muted" }, "nothing yet");
  const a = alias(name, bundles);
  return h(
    "span",
    { class: "bundle" },
    link("/bundles/", { name, namespace: ns }, a || name),
    a ? h("span", { class: "muted small" }, " ", name) : null,
  );
}

/** A section with a heading (level 2 unless told). */
export function section(title, attrs, ...children) {
  const id = `s-${String(title).toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  const level = (attrs && attrs.level) || 2;
  return h(
    "section",
    { class: ["panel", attrs && attrs.class], "aria-labelledby": id },
    h(`h${level}`, { id }, title),
    ...children,
  );
}

/** Emptiness, said in words. */
export function empty(text) {
  return h("p", { class: "empty" }, text);
}

/** A table: `columns` are header labels; `rows` arrays of cells (or `{cells, attrs}`). */
export function table(caption, columns, rows, attrs = {}) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      attrs,
      h("caption", { class: attrs.showCaption ? "" : "visually-hidden" }, caption),
      h("thead", null, h("tr", null, columns.map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        null,
        rows.map((row) => {
          const cells = Array.isArray(row) ? row : row.cells;
          // `data-label`: on a phone a row stacks, each cell under its column's name.
          return h("tr", Array.isArray(row) ? null : row.attrs, cells.map((c, i) => (i === 0 ? h("th", { scope: "row", "data-label": columns[i] }, c) : h("td", { "data-label": columns[i] }, c))));
        }),
      ),
    ),
  );
}

/** A list of terms and their descriptions. */
export function facts(pairs) {
  return h(
    "dl",
    { class: "facts" },
    pairs.filter(Boolean).map(([term, value]) => h("div", null, h("dt", null, term), h("dd", null, value))),
  );
}

/** The page's heading, focusable so a route change can move focus to it. */
export function title(text, ...after) {
  return h("h1", { tabindex: "-1" }, text, ...after);
}

/** A Bundle's artifacts, described in their own terms. */
export function artifact(a) {
  if (a.image) return { kind: "image", ref: `${a.image.repo}:${a.image.tag}`, digest: a.image.digest || "" };
  if (a.chart) return { kind: "chart", ref: `${a.chart.name} ${a.chart.version}`, digest: a.chart.repo || "" };
  if (a.commit) return { kind: "commit", ref: `${a.commit.repo}@${a.commit.tag || a.commit.branch || ""}`, digest: a.commit.sha || "" };
  return { kind: "unknown", ref: "", digest: "" };
}

/** `text` as a link to a page outside Hecate (a forge's, a chart repository's) when `href` is one; else the text. */
export function outLink(href, text) {
  return href ? h("a", { href, class: "out", rel: "noopener noreferrer" }, text) : text;
}

/** Only http(s) links from the server become links; anything else stays text. */
export function safeUrl(url) {
  try {
    const u = new URL(url, location.href);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : "";
  } catch {
    return "";
  }
}
