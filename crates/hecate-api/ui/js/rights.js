// What the signed-in person may do here: `GET {ns}/rights` answers every operation of
// ops' catalogue as the cluster decided it for them, with the shipped role that grants
// it. The header says who is signed in and what they may do; a write button they may
// not use is disabled, the role that would allow it said in words beside it — every
// disabled write button says why in text tied to it (`aria-describedby`), never only
// in a tooltip that a keyboard or a phone cannot reach. Only advice: the cluster still
// decides each write when it is made, and a page whose rights could not be read keeps
// its buttons.

import { get, nsPath } from "./api.js";
import { h, shown } from "./dom.js";

// A write button's `data-action` → the operation the server names.
const ACTIONS = {
  promote: "promote",
  rollback: "rollback",
  approve: "approve",
  reject: "reject",
  withdraw: "withdrawRejection",
  abort: "abort",
  retryTargets: "retryTargets",
  acceptFailures: "acceptFailures",
  poll: "poll",
  suspend: "suspendFlux",
  resume: "suspendFlux",
  reconcile: "reconcileFlux",
};

// The writes the header names, in the catalogue's order, in a person's words.
const WORDS = {
  promote: "promote",
  approve: "approve",
  abort: "abort",
  poll: "poll Beacons",
  suspendFlux: "operate Flux",
  setGateEvidence: "change evidence settings",
  connectCluster: "connect clusters",
};

let memo = { ns: null, promise: null };

/** The caller's rights in `ns` (asked once per namespace and page visit), or null. */
export function load(ns, { fresh = false } = {}) {
  if (fresh || memo.ns !== ns || !memo.promise) {
    memo = { ns, promise: get(nsPath(ns, "rights")).catch(() => null) };
  }
  return memo.promise;
}

/** Forgets what was answered (signing out, or in as someone else). */
export function forget() {
  memo = { ns: null, promise: null };
}

/** "a, b and c". */
function and(items) {
  if (items.length < 2) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/**
 * What the header says after the name: "may read", "may read, promote and abort",
 * "may read nothing in default", or — when no namespace at all is readable —
 * "can read no namespace".
 */
export function words(rights, visible) {
  const writes = [...new Set((rights.may || []).map((o) => WORDS[o]).filter(Boolean))];
  if (!rights.reads) {
    if (visible && visible.length === 0 && !writes.length) return "can read no namespace";
    return writes.length ? `may ${and(writes)} in ${rights.namespace}, and read nothing there` : `may read nothing in ${rights.namespace}`;
  }
  return `may ${and(["read", ...writes])}`;
}

/** The header's "alice · may read". */
export function badge(rights, visible) {
  if (!rights) return null;
  return h(
    "p",
    { id: "whoami", class: "whoami", "data-user": rights.user, "data-reads": String(rights.reads) },
    h("span", { class: "visually-hidden" }, "Signed in as "),
    h("strong", null, rights.user),
    " · ",
    h("span", { "data-rights": (rights.may || []).join(" ") }, words(rights, visible)),
  );
}

/** Why the caller may not perform `right`, naming the role that would allow it. */
function refusal(right, rights) {
  const role = right.role ? `the ${right.role} role` : "a cluster administrator's rights";
  const permission = `${right.permission.verb} ${right.permission.resource}${right.permission.subresource ? "/" + right.permission.subresource : ""}`;
  return `${rights.user} may not do this in ${rights.namespace}: it needs ${role} (${permission}).`;
}

/** The right to `operation` in `rights`, or null when unknown. */
function right(rights, operation) {
  return (rights && (rights.operations || []).find((r) => r.operation === operation)) || null;
}

/**
 * Why the caller may not perform `operation` here, in words, or "" when they may (or
 * their rights are unknown: the cluster will say when asked).
 */
export function whyNot(rights, operation) {
  const r = right(rights, operation);
  return r && !r.allowed ? refusal(r, rights) : "";
}

/**
 * Disables every write button under `root` the caller may not use, the role that
 * would allow it in its title — the more basic reason than any the page gave — and
 * then says why beside every disabled write button ([`explainDisabled`]). Unknown
 * rights (null) disable nothing.
 */
export function enforce(root, rights) {
  if (!root) return;
  const byOperation = new Map(((rights && rights.operations) || []).map((r) => [r.operation, r]));
  for (const button of root.querySelectorAll("button[data-action]")) {
    const r = byOperation.get(ACTIONS[button.dataset.action]);
    if (!r || r.allowed) continue;
    button.disabled = true;
    button.title = shown(refusal(r, rights));
    button.dataset.whyNot = r.operation;
    if (r.role) button.dataset.needsRole = r.role;
  }
  explainDisabled(root);
}

/**
 * Every disabled write button under `root` says why in a small line after it, tied to
 * it by `aria-describedby`: its title (the page's reason, or the role it needs) as
 * text. A button the page already points at its reason on the page (its own
 * `aria-describedby`) keeps that — and gains the line only when the caller's rights
 * are what disabled it. The ids follow the buttons' order, so a redraw of the same
 * page makes the same nodes.
 */
function explainDisabled(root) {
  let n = 0;
  for (const button of root.querySelectorAll("button[data-action]")) {
    if (!button.disabled || !button.title) continue;
    const own = button.getAttribute("aria-describedby") || "";
    if (own && !button.dataset.whyNot) continue;
    const id = `why-not-${n++}`;
    const next = button.nextElementSibling;
    const why = next && next.classList.contains("why-not") ? next : button.insertAdjacentElement("afterend", h("span", { class: "why-not" }));
    why.id = id;
    why.textContent = button.title;
    if (button.dataset.whyNot) why.dataset.whyNot = button.dataset.whyNot;
    button.setAttribute("aria-describedby", [own, id].filter(Boolean).join(" "));
  }
}
