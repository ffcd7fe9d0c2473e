// `/beacons/`: what each Beacon watches and when it last looked.
// `/beacons/?name=B`: its sources and conditions, and "Check for new versions", which
// shows "Asked…" until the Beacon echoes the request's token, then "Checked.".

import { get, nsPath } from "../api.js";
import * as actions from "../actions.js";
import * as c from "../components.js";
import { h } from "../dom.js";
import { sourceHref, time } from "../format.js";

// requestedAt tokens of polls asked from this tab, by namespace/name.
const asked = new Map();

export async function render(ctx) {
  return ctx.name ? detail(ctx) : list(ctx);
}

function describe(w) {
  if (w.image) return { kind: "image", text: [w.image.repo, w.image.constraint].filter(Boolean).join(" ") };
  if (w.chart) return { kind: "chart", text: [w.chart.name ? `${w.chart.name} ` : "", c.outLink(sourceHref(w.chart.repo), w.chart.repo), w.chart.constraint ? ` ${w.chart.constraint}` : ""] };
  if (w.git) return { kind: "git", text: c.outLink(sourceHref(w.git.repo), w.git.repo) };
  if (w.provider) return { kind: "provider", text: w.provider.name };
  return { kind: "unknown", text: "" };
}

function status(beacon) {
  if (beacon.spec.suspend) return c.pill("suspended", "warn");
  const ready = ((beacon.status && beacon.status.conditions) || []).find((x) => x.type === "Ready");
  if (!ready || ready.status !== "True") return [c.pill("not ready", "bad"), ready && ready.message ? h("span", { class: "small" }, ` ${ready.message}`) : null];
  return c.pill("watching", "ok");
}

async function list(ctx) {
  ctx.title("Beacons");
  const beacons = await get(nsPath(ctx.ns, "beacons"), { signal: ctx.signal });
  return h(
    "div",
    { class: "page" },
    c.title("Beacons", h("span", { class: "muted small" }, ` in ${ctx.ns}`)),
    beacons.length
      ? c.table(
          `Beacons in ${ctx.ns}`,
          ["Beacon", "Status", "Watches", "Every", "Looked", "Latest Bundle"],
          beacons.map((b) => {
            const st = b.status || {};
            return [
              c.link("/beacons/", { name: b.metadata.name, namespace: ctx.ns }, b.metadata.name),
              status(b),
              h("ul", { class: "plain" }, (b.spec.watch || []).map((w) => {
                const d = describe(w);
                return h("li", null, h("span", { class: "muted" }, `${d.kind}: `), d.text);
              })),
              b.spec.interval || "",
              time(st.lastPolled),
              st.latestBundle ? c.link("/bundles/", { name: st.latestBundle, namespace: ctx.ns }, st.latestBundle) : h("span", { class: "muted" }, "none yet"),
            ];
          }),
        )
      : c.empty(`No Beacons in ${ctx.ns}.`),
  );
}

async function detail(ctx) {
  const { ns, name } = ctx;
  ctx.title(`Beacon ${name}`);
  const b = await get(nsPath(ns, "beacons", name), { signal: ctx.signal });
  const st = b.status || {};
  const token = asked.get(`${ns}/${name}`);
  const progress = token ? (st.lastHandledReconcileAt === token ? "Checked." : "Asked… (waiting for the Beacon to look)") : "";
  return h(
    "div",
    { class: "page" },
    c.title(name, " ", status(b)),
    c.facts([
      ["Looks every", b.spec.interval || "default interval"],
      ["Emits", b.spec.emit || "on every change"],
      ["Last looked", time(st.lastPolled)],
      ["Latest Bundle", st.latestBundle ? c.link("/bundles/", { name: st.latestBundle, namespace: ns }, st.latestBundle) : "none yet"],
    ]),
    c.section(
      "Check for new versions",
      null,
      b.spec.suspend ? h("p", { class: "warn-text" }, "This Beacon is suspended: it will not emit anything until it is resumed.") : null,
      h(
        "button",
        {
          type: "button",
          "data-action": "poll",
          onclick: async () => {
            const answer = await actions.poll(ns, name);
            if (answer) {
              asked.set(`${ns}/${name}`, answer.requestedAt);
              ctx.refresh();
            }
          },
        },
        "Check for new versions",
      ),
      progress ? h("p", { class: "progress", role: "status" }, progress) : null,
    ),
    c.section(
      "Watches",
      null,
      c.table(`Sources ${name} watches`, ["Kind", "Source"], (b.spec.watch || []).map((w) => {
        const d = describe(w);
        return [d.kind, d.text];
      })),
    ),
    c.section(
      "Conditions",
      null,
      (st.conditions || []).length
        ? c.table(`Conditions of ${name}`, ["Type", "Status", "Reason", "Message", "Since"], st.conditions.map((x) => [x.type, x.status, x.reason, x.message, time(x.lastTransitionTime)]))
        : c.empty("No conditions reported: nothing has looked at this Beacon yet."),
    ),
  );
}
