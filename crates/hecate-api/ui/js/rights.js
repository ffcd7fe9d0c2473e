// What the signed-in person may do here: `GET {ns}/rights` answers every operation of
// ops' catalogue as the cluster decided it for them, with the shipped role that grants
// it. The header says who is signed in and what they may do; a write button they may
// not use is disabled, its title naming the role that would allow it (and, where the
// page asks with `data-shows-why`, the same words beside it). Only advice:
// the cluster still decides each write when it is made, and a page whose rights could
// not be read keeps its buttons.

import { get, nsPath } from "./api.js";
import { h } from "./dom.js";

// A write button's `data-action` → the operation the server names.
const ACTIONS = {
  promote: "promote",
  rollback: "rollback",
  approve: "approve",
  reject: "reject",
  withdraw: "withdrawRejection",
  abort: "abort",
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

/**
 * Disables every write button under `root` the caller may not use, its title naming
 * the role that would allow it — and, for a button marked `data-shows-why`, the same
 * words as text after it (replacing the page's own `.why-not` there, the more basic
 * reason). Unknown rights (null) change nothing.
 */
export function enforce(root, rights) {
  if (!rights || !root) return;
  const byOperation = new Map((rights.operations || []).map((r) => [r.operation, r]));
  for (const button of root.querySelectorAll("button[data-action]")) {
    const right = byOperation.get(ACTIONS[button.dataset.action]);
    if (!right || right.allowed) continue;
    button.disabled = true;
    button.title = refusal(right, rights);
    if (right.role) button.dataset.needsRole = right.role;
    if (button.hasAttribute("data-shows-why")) {
      const next = button.nextElementSibling;
      const why = next && next.classList.contains("why-not") ? next : button.insertAdjacentElement("afterend", h("span", { class: "why-not" }));
      why.textContent = button.title;
      why.dataset.whyNot = right.operation;
    }
  }
}
