// The pipeline as a graph: an SVG with a node per Beacon and Gate and a line from
// each upstream to its downstream. Where each Gate stands is the server's decision
// (`stage.index` from `GET …/gates`, ops' longest-path stages); the rows within a
// column keep the server's order. The lines are the Gates' own admissions (`after`,
// or a Beacon for an admission without one), an approval edge labelled. Every node
// is a link that says its state in words. On a narrow screen the graph keeps its
// size and the box around it scrolls — by touch, wheel, keyboard or dragging.

import { h, s } from "./dom.js";
import { count } from "./format.js";
import { href } from "./router.js";

const W = 196; // node width
const H = 84; // node height
const GAP_X = 72;
const GAP_Y = 20;
const PAD = 12;

/** At most `n` characters, with an ellipsis. */
function clip(text, n) {
  const t = String(text || "");
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

/** The edges the Gates' admissions draw: `{from, to, beacon, approval}`, once each. */
function edges(gates) {
  const gateNames = new Set(gates.map((g) => g.metadata.name));
  const found = new Map();
  for (const gate of gates) {
    const to = gate.metadata.name;
    for (const admission of (gate.spec && gate.spec.admits) || []) {
      const after = admission.after || [];
      const from = after.length ? after.filter((a) => gateNames.has(a)).map((a) => ["gate", a]) : admission.from && admission.from.beacon ? [["beacon", admission.from.beacon]] : [];
      for (const [kind, name] of from) {
        const key = `${kind}:${name}→${to}`;
        const edge = found.get(key) || { kind, from: name, to, approval: false };
        edge.approval = edge.approval || Boolean(admission.requireApproval);
        found.set(key, edge);
      }
    }
  }
  return [...found.values()];
}

/**
 * Words for a node: what its link says to a screen reader — the words drawn on it
 * first, in their order (a name that starts with what is seen: WCAG 2.5.3, label in
 * name), then in full what the drawing cut short.
 */
function spoken(shown, full) {
  const cut = full.filter(([drawn, whole]) => drawn !== whole).map(([, whole]) => whole);
  return `${shown.filter(Boolean).join(", ")}${cut.length ? ` (${cut.join(", ")})` : ""}`;
}

function gateNode(ns, node) {
  const name = clip(node.name, 22);
  const current = clip(node.currentLabel, 24);
  const running = clip(node.running, 18);
  const lines = [
    [`${node.state ? node.state + " · " : ""}${node.health}`, "graph-state"],
    [node.current ? `now ${current}` : "nothing yet", "graph-small"],
    [node.running ? `crossing: ${running}` : node.waiting ? `${node.waiting} waiting` : node.suspended ? "suspended" : "", node.running ? "graph-small graph-running" : "graph-small"],
  ];
  const words = spoken(
    [name, ...lines.map(([text]) => text)],
    [
      [name, `Gate ${node.name}`],
      [current, node.current ? `running ${node.currentLabel}` : current],
      [running, node.running ? `crossing: ${node.running}` : running],
    ],
  );
  return tipped(
    node,
    // On hover, also where it is in one line (the Overview's summary, when known).
    node.summary ? `${words}. ${node.summary}` : words,
    s(
      "a",
      {
        href: href("/gates/", { name: node.name, namespace: ns }),
        class: ["graph-node", `graph-${node.health}`, node.state && `graph-state-${node.state}`],
        "data-gate": node.name,
        "data-state": node.state || "",
        "data-health": node.health,
        "aria-label": words,
      },
      s("rect", { width: W, height: H, rx: 8 }),
      s("rect", { class: "graph-edge-mark", width: 5, height: H, rx: 2 }),
      s("text", { x: 14, y: 22, class: "graph-name" }, name),
      lines.map(([text, cls], i) => (text ? s("text", { x: 14, y: 42 + i * 16, class: cls }, text) : null)),
    ),
  );
}

/**
 * A node placed where it stands, with its hover text: the `<title>` beside the link,
 * not in it — inside, it would count as the link's own words, which its name must
 * then contain (label in name).
 */
function tipped(node, tip, link) {
  return s("g", { transform: `translate(${node.x} ${node.y})` }, s("title", null, tip), link);
}

function beaconNode(ns, node) {
  const name = clip(node.name, 22);
  const words = spoken([name, "Beacon"], [[name, node.name]]);
  return tipped(
    node,
    `Beacon ${node.name}`,
    s(
      "a",
      { href: href("/beacons/", { name: node.name, namespace: ns }), class: "graph-node graph-beacon", "data-beacon": node.name, "aria-label": words },
      s("rect", { width: W, height: H, rx: 8 }),
      s("text", { x: 14, y: 22, class: "graph-name" }, name),
      s("text", { x: 14, y: 42, class: "graph-small" }, "Beacon"),
    ),
  );
}

/** Drag to pan, for a mouse (touch scrolls by itself). */
function pannable(box) {
  let start = null;
  box.addEventListener("pointerdown", (event) => {
    if (event.pointerType !== "mouse" || event.button !== 0 || event.target.closest("a")) return;
    start = { x: event.clientX, y: event.clientY, left: box.scrollLeft, top: box.scrollTop };
    box.classList.add("panning");
  });
  box.addEventListener("pointermove", (event) => {
    if (!start) return;
    box.scrollLeft = start.left - (event.clientX - start.x);
    box.scrollTop = start.top - (event.clientY - start.y);
  });
  const stop = () => {
    start = null;
    box.classList.remove("panning");
  };
  box.addEventListener("pointerup", stop);
  box.addEventListener("pointerleave", stop);
  return box;
}

/**
 * The graph of namespace `ns`: `gates` as `GET …/gates` answers them (each with its
 * `stage`), `summaries` the Overview's for the namespace (state, health, crossing,
 * waiting; may be empty), `label(bundle)` a Bundle's alias or name.
 */
export function pipelineGraph(ns, gates, summaries, label) {
  const summary = new Map((summaries || []).map((x) => [x.name, x]));
  const lines = edges(gates);
  const beacons = [...new Set(lines.filter((e) => e.kind === "beacon").map((e) => e.from))].sort();
  const offset = beacons.length ? 1 : 0;
  // Rows keep the server's order: the Overview's (upstream first), else the list's.
  const order = summaries && summaries.length ? summaries.map((x) => x.name) : gates.map((g) => g.metadata.name);
  const byName = new Map(gates.map((g) => [g.metadata.name, g]));
  const columns = [];
  const nodes = new Map();
  const place = (column, node) => {
    while (columns.length <= column) columns.push([]);
    node.x = PAD + column * (W + GAP_X);
    node.y = PAD + columns[column].length * (H + GAP_Y);
    columns[column].push(node);
    return node;
  };
  for (const name of beacons) nodes.set(`beacon:${name}`, place(0, { kind: "beacon", name }));
  for (const name of order) {
    const gate = byName.get(name);
    if (!gate) continue;
    const sum = summary.get(name) || {};
    const st = gate.status || {};
    const current = sum.current || (st.current && st.current.bundle) || "";
    nodes.set(
      `gate:${name}`,
      place(((gate.stage && gate.stage.index) || 0) + offset, {
        kind: "gate",
        name,
        state: sum.state || "",
        health: sum.health || (st.health && st.health.status) || "Unknown",
        current,
        currentLabel: current ? label(current) : "",
        running: sum.running || st.activePassage || "",
        waiting: sum.ahead ?? (st.eligible || []).length,
        suspended: Boolean(gate.spec && gate.spec.suspend),
        summary: sum.summary || "",
      }),
    );
  }
  const width = PAD * 2 + columns.length * W + Math.max(0, columns.length - 1) * GAP_X;
  const height = PAD * 2 + Math.max(1, ...columns.map((c) => c.length)) * (H + GAP_Y) - GAP_Y;
  const paths = lines
    .map((e) => {
      const a = nodes.get(`${e.kind}:${e.from}`);
      const b = nodes.get(`gate:${e.to}`);
      if (!a || !b) return null;
      const [x1, y1, x2, y2] = [a.x + W, a.y + H / 2, b.x, b.y + H / 2];
      const mid = (x1 + x2) / 2;
      return s(
        "g",
        { class: ["graph-line", e.approval && "graph-approval"], "data-from": e.from, "data-to": e.to },
        s("path", { d: `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2 - 4} ${y2}`, "marker-end": `url(#graph-arrow-${ns})` }),
        e.approval ? s("text", { x: mid, y: (y1 + y2) / 2 - 6, "text-anchor": "middle", class: "graph-small" }, "approval") : null,
      );
    })
    .filter(Boolean);
  const svg = s(
    "svg",
    {
      class: "graph-svg",
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "group",
      "aria-label": `Pipeline of ${ns}: ${count(columns.length, "column")}, upstream on the left; each Gate links to its page`,
    },
    s("defs", null, s("marker", { id: `graph-arrow-${ns}`, viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" }, s("path", { d: "M 0 0 L 8 4 L 0 8 z", class: "graph-arrowhead" }))),
    s("g", { class: "graph-lines", "aria-hidden": "true" }, paths),
    [...nodes.values()].map((n) => (n.kind === "beacon" ? beaconNode(ns, n) : gateNode(ns, n))),
  );
  return pannable(h("div", { class: "graph-scroll", tabindex: "0", role: "region", "aria-label": `Pipeline graph of ${ns} (scrolls sideways when it is wider than the screen)` }, svg));
}
