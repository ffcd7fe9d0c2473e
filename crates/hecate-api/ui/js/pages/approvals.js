// `/approvals/`: every Bundle waiting for an approval, across the namespace's Gates.
// The queue is the Waiting entries whose typed remedy is an approval — the server's
// decision, never the words.

import { get, nsPath } from "../api.js";
import * as actions from "../actions.js";
import * as c from "../components.js";
import { h } from "../dom.js";

export async function render(ctx) {
  const { ns } = ctx;
  ctx.title("Approvals");
  const [gates, bundles] = await Promise.all([
    get(nsPath(ns, "gates"), { signal: ctx.signal }),
    get(nsPath(ns, "bundles"), { signal: ctx.signal }).catch(() => []),
  ]);
  const index = c.index(bundles);
  const explanations = await Promise.all(gates.map((g) => get(nsPath(ns, "gates", g.metadata.name, "explain"), { signal: ctx.signal })));
  const queue = explanations.flatMap((e) => (e.waiting || []).filter((w) => w.action && w.action.type === "approve").map((w) => ({ gate: w.action.gate, bundle: w.action.bundle })));
  return h(
    "div",
    { class: "page" },
    c.title("Approvals", h("span", { class: "muted small" }, ` in ${ns}`)),
    h("p", null, "Approving lets a Bundle cross a Gate that requires it; it does not cross the Gate. Someone other than the approver starts the crossing."),
    queue.length
      ? c.table(
          `Bundles waiting for an approval in ${ns}`,
          ["Bundle", "For Gate", "Action"],
          queue.map((q) => {
            const label = c.bundleText(q.bundle, index);
            return {
              attrs: { "data-bundle": q.bundle, "data-gate": q.gate },
              cells: [
                c.bundle(q.bundle, ns, index),
                ["→ ", c.link("/gates/", { name: q.gate, namespace: ns }, q.gate)],
                h(
                  "button",
                  {
                    type: "button",
                    "data-action": "approve",
                    "data-bundle": q.bundle,
                    "aria-label": `Approve for ${q.gate}: ${label}`,
                    onclick: async () => {
                      if (await actions.approve(ns, q.gate, q.bundle, label)) ctx.refresh();
                    },
                  },
                  `Approve for ${q.gate}`,
                ),
              ],
            };
          }),
        )
      : c.empty(`Nothing is waiting for an approval in ${ns}.`),
  );
}
