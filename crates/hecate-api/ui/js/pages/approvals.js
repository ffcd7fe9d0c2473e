// `/approvals/`: every Bundle waiting on a person, across the namespace's Gates — the
// server's queue (`GET {ns}/approvals`): how far each Bundle's approvals have come
// against its Gate's policy, and what the signed-in person's own approval would do.
// Nothing here judges: whether an approval counts is ops' answer, shown in its words.

import { get, nsPath } from "../api.js";
import * as actions from "../actions.js";
import * as c from "../components.js";
import { h } from "../dom.js";

export async function render(ctx) {
  const { ns } = ctx;
  ctx.title("Approvals");
  const [queue, bundles, gates] = await Promise.all([
    get(nsPath(ns, "approvals"), { signal: ctx.signal }),
    get(nsPath(ns, "bundles"), { signal: ctx.signal }).catch(() => []),
    get(nsPath(ns, "gates"), { signal: ctx.signal }).catch(() => []),
  ]);
  // Each row's version as ops says it, for a Bundle made without an alias.
  const index = c.index(bundles, new Map(queue.filter((q) => q.version).map((q) => [q.bundle, q.version])));
  const automatic = new Set(gates.filter((g) => g.spec && g.spec.auto).map((g) => g.metadata.name));
  return h(
    "div",
    { class: "page" },
    c.title("Approvals", h("span", { class: "muted small" }, ` in ${ns}`)),
    h(
      "p",
      null,
      "A Bundle waits here while a Gate asks for approvals it does not have yet, or while someone's rejection holds it. The one who promotes never counts as an approver.",
    ),
    queue.length
      ? c.table(
          `Bundles waiting on a person in ${ns}`,
          ["Bundle", "For Gate", "Where it stands", "You", "Action"],
          queue.map((q, i) => row(ctx, q, i, index, automatic.has(q.gate))),
        )
      : c.empty(`Nothing is waiting for an approval in ${ns}.`),
  );
}

/**
 * `bundle`'s rows of the approvals `queue` (ops' answer for the signed-in person), as
 * this page draws them — where its approvals stand for each Gate, their part in it,
 * and the buttons: the Bundle page's decision record asks the same. `automatic`: the
 * Gates that cross by themselves.
 */
export function queuedFor(ctx, queue, bundle, index, automatic) {
  const rows = (queue || []).filter((q) => q.bundle === bundle);
  if (!rows.length) return null;
  return c.table(
    `Where the approvals of ${c.bundleText(bundle, index)} stand, Gate by Gate`,
    ["Bundle", "For Gate", "Where it stands", "You", "Action"],
    rows.map((q, i) => row(ctx, q, `${bundle}-${i}`, index, automatic.has(q.gate))),
  );
}

/**
 * One queued Bundle: its progress in ops' words, and the caller's part in it — which
 * is also why a button of theirs is disabled (tied to it, `aria-describedby`).
 * `crossesItself`: the Gate's spec says it crosses by itself.
 */
function row(ctx, q, i, index, crossesItself) {
  const label = c.bundleText(q.bundle, index);
  const rejected = q.progress.rejected;
  const why = `you-${i}`;
  return {
    attrs: { "data-bundle": q.bundle, "data-gate": q.gate },
    cells: [
      c.bundle(q.bundle, ctx.ns, index),
      [
        "→ ",
        c.link("/gates/", { name: q.gate, namespace: ctx.ns }, q.gate),
        // Where an approval sends it, when the Gate spans targets (issue 52).
        q.reach ? h("span", { class: "small muted server-text", "data-reach": "" }, ` ${q.reach}`) : null,
      ],
      h("span", { class: "server-text", "data-progress": "" }, q.progress.summary),
      h("span", { id: why, "data-you": "" }, you(q)),
      h("div", { class: "actions" }, rejected ? withdrawButton(ctx, q, label, why) : approveButtons(ctx, q, label, crossesItself, why)),
    ],
  };
}

/** What the caller's own approval would do, in words anyone can read (not a tooltip). */
/**
 * Why the signed-in person's Approve of `bundle` for `gate` would not count, from the
 * server's queue (ops' judgement for them, the one this page shows), or "" when it
 * would. A Bundle the queue does not hold waits on no approval. Unanswered (`queue`
 * null), nothing is said and the cluster answers the click.
 */
export function approveRefused(queue, gate, bundle) {
  if (!queue) return "";
  const q = queue.find((x) => x.gate === gate && x.bundle === bundle);
  if (!q) return "no approval is asked of it now";
  if (q.you.approved) return "you approved it";
  return q.you.canApprove ? "" : q.you.whyNot;
}

/** What holds `gate` now — its windows, ops' answer in the approvals `queue` — or null. */
export function heldBy(queue, gate, bundle) {
  const q = queue && queue.find((x) => x.gate === gate && x.bundle === bundle);
  return (q && q.held) || null;
}

function you(q) {
  if (q.progress.rejected) return q.you.canWithdraw ? "You may withdraw the rejection." : "Only those who may withdraw the rejection can lift it.";
  if (q.you.approved) return "You approved it.";
  if (q.you.canApprove) return "Your approval would count.";
  return `Your approval would not count: ${q.you.whyNot}.`;
}

function approveButtons(ctx, q, label, crossesItself, why) {
  const approve = h(
    "button",
    {
      type: "button",
      "data-action": "approve",
      "data-bundle": q.bundle,
      "aria-label": `Approve for ${q.gate}: ${label}`,
      disabled: !q.you.canApprove || undefined,
      "aria-describedby": q.you.canApprove ? undefined : why,
      onclick: async () => {
        if (await actions.approve(ctx.ns, q.gate, q.bundle, label, crossesItself, q.held || null)) ctx.refresh();
      },
    },
    `Approve for ${q.gate}`,
  );
  const reject = h(
    "button",
    {
      type: "button",
      class: "danger",
      "data-action": "reject",
      "data-bundle": q.bundle,
      "aria-label": `Reject for ${q.gate}: ${label}`,
      onclick: async () => {
        if (await actions.reject(ctx.ns, q.gate, q.bundle, label)) ctx.refresh();
      },
    },
    `Reject for ${q.gate}`,
  );
  return [approve, reject];
}

function withdrawButton(ctx, q, label, why) {
  const rejected = q.progress.rejected;
  return [
    h("p", { class: "small" }, "Rejected by ", h("strong", null, rejected.by), ": ", h("span", { class: "server-text" }, rejected.reason)),
    h(
      "button",
      {
        type: "button",
        "data-action": "withdraw",
        "data-bundle": q.bundle,
        "aria-label": `Withdraw the rejection for ${q.gate}: ${label}`,
        disabled: !q.you.canWithdraw || undefined,
        "aria-describedby": q.you.canWithdraw ? undefined : why,
        onclick: async () => {
          if (await actions.withdrawRejection(ctx.ns, q.gate, q.bundle, label)) ctx.refresh();
        },
      },
      "Withdraw the rejection",
    ),
  ];
}
