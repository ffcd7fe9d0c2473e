// The writes (promote, rollback, approve, reject, abort, Flux) and poll. Each write is confirmed in a
// dialog that says exactly what will happen; the server's answer is shown as it is —
// a refusal in the API's own words beside the button that asked, a 401 as an expired
// session, a 403 explained as the separation of permissions it is. Writes never send an actor: the server records
// whoever the token belongs to.

import { ApiError, Unauthenticated, nsPath, post } from "./api.js";
import * as diffs from "./diff.js";
import * as previews from "./preview.js";
import { h, setText } from "./dom.js";
import { count, local, syncTicking } from "./format.js";
import * as notice from "./notice.js";

/** Why a 403 is not a bug: one sentence per action. */
const FORBIDDEN = {
  promote:
    "Starting a crossing is its own permission (creating Passages, the hecate-promoter role). The cluster decides who holds it; Hecate only asks.",
  rollback:
    "Rolling back starts a crossing, so it is the promoter's permission (creating Passages, the hecate-promoter role). The cluster decides who holds it; Hecate only asks.",
  reject:
    "Rejecting is an approver's permission (updating bundles/status, the hecate-approver role): ask someone who may approve.",
  approve:
    "Approving is a separate permission from promoting (updating bundles/status, the hecate-approver role). This separation is the control working, not a misconfiguration: ask someone who may approve.",
  abort:
    "Aborting a crossing is a separate permission from starting one (patching Passages). Ask someone who may abort.",
  retryTargets:
    "Retrying a rollout's targets is a promoter's permission (patching Passages, the hecate-promoter role). Ask someone who may promote.",
  acceptFailures:
    "Accepting a rollout's failures is a promoter's permission (patching Passages, the hecate-promoter role). Ask someone who may promote.",
  poll: "Asking a Beacon to look is its own permission (patching Beacons, the hecate-poker role).",
  flux:
    "Operating Flux is a separate permission from reading and promoting (patch on Flux's kustomizations, the hecate-flux-operator role). Ask someone who holds it.",
};

/** Each dialog opened: what is drawn into one that has closed since is dropped. */
let asked = 0;

/**
 * What `changes` (a promise of a node: what the action would change) says, drawn into
 * the dialog when it comes; the dialog can be answered before it does.
 */
function showChanges(changes) {
  const slot = document.getElementById("confirm-changes");
  const mine = ++asked;
  slot.replaceChildren();
  slot.hidden = !changes;
  if (!changes) return;
  slot.setAttribute("aria-busy", "true");
  slot.append(h("p", { class: "muted small", "data-diff": "reading" }, "Reading what changes…"));
  changes.then((node) => {
    if (mine !== asked) return;
    slot.replaceChildren(node);
    slot.removeAttribute("aria-busy");
    syncTicking();
  });
}

/**
 * Asks in the dialog; resolves true when confirmed. With `reason`, the dialog asks for
 * one too (the confirm button waits for it) and resolves to the text instead.
 * `changes`: a promise of what the action would change, shown when it comes.
 */
export function confirm({ title, text, detail, ok, reason = false, changes = null }) {
  const dialog = document.getElementById("confirm");
  const opener = document.activeElement;
  const field = document.getElementById("confirm-reason-field");
  const input = document.getElementById("confirm-reason");
  const okButton = document.getElementById("confirm-ok");
  setText(document.getElementById("confirm-title"), title);
  setText(document.getElementById("confirm-text"), text);
  setText(document.getElementById("confirm-detail"), detail || "");
  showChanges(changes);
  setText(okButton, ok);
  field.hidden = !reason;
  input.value = "";
  input.required = reason;
  okButton.disabled = reason;
  const typed = () => {
    okButton.disabled = reason && input.value.trim() === "";
  };
  input.addEventListener("input", typed);
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        input.removeEventListener("input", typed);
        okButton.disabled = false;
        showChanges(null);
        if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
        const confirmed = dialog.returnValue === "ok";
        resolve(reason ? (confirmed ? input.value.trim() : null) : confirmed);
      },
      { once: true },
    );
    dialog.showModal();
    (reason ? input : document.getElementById("confirm-cancel")).focus();
  });
}

// ---- refusals beside the button that asked ------------------------------------------

/**
 * The write button last clicked: a refusal is said beside it, where the eye is, rather
 * than at the top of a long page (hundreds of pixels away on a phone). Heard on the
 * document, before any page's own handler, so no page has to pass it along.
 */
let clicked = null;
document.addEventListener(
  "click",
  (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-action]") : null;
    if (button) clicked = button;
  },
  true,
);

/** Refusals said on this page: a button's key → `{text, heard}`; kept across redraws. */
const REFUSED = new Map();

/**
 * What names each action button under `root` across redraws: its action, what it acts
 * on, its accessible words, and which of the buttons so alike it is — a Bundle's Cross
 * button stands both in its row and under "In the way", and a refusal belongs beside
 * the one that was clicked.
 */
function buttonKeys(root) {
  const alikeSoFar = new Map();
  const keys = new Map();
  for (const button of root.querySelectorAll("button[data-action]")) {
    const { action, bundle = "", passage = "" } = button.dataset;
    const alike = `${action}|${bundle}|${passage}|${button.getAttribute("aria-label") || button.textContent.trim()}`;
    const nth = alikeSoFar.get(alike) || 0;
    alikeSoFar.set(alike, nth + 1);
    keys.set(button, `${alike}#${nth}`);
  }
  return keys;
}

/** `button`'s key among the buttons of the page it is on (see `buttonKeys`). */
function buttonKey(button) {
  return buttonKeys(button.closest("main") || button.parentElement || button).get(button);
}

/** The refusal's line for `button` (`heard`: already announced, so said quietly). */
function refusalLine(button, said) {
  const attrs = { class: "refused-here server-text", "data-refused": button.dataset.bundle || button.dataset.passage || button.dataset.action };
  // Announced once, when it appears; a redraw that puts it back says nothing again.
  if (!said.heard) attrs.role = "alert";
  return h("span", attrs, said.text);
}

/** Puts the refusal for `button` (named `key`), if any, right after it (replacing an older one). */
function placeRefusal(button, key) {
  const said = REFUSED.get(key);
  const old = button.parentElement && button.parentElement.querySelector(":scope > .refused-here");
  if (old) old.remove();
  if (!said) return;
  button.insertAdjacentElement("afterend", refusalLine(button, said));
  said.heard = true;
}

/** Says `text` beside `button`, now and after every redraw until it is clicked again. */
export function refuseBeside(button, text) {
  const key = buttonKey(button);
  REFUSED.set(key, { text, heard: false });
  placeRefusal(button, key);
}

/** After a redraw: each refusal said on this page back beside its button. */
export function besides(root) {
  if (!REFUSED.size || !root) return;
  for (const [button, key] of buttonKeys(root)) placeRefusal(button, key);
}

/** A new page: what was refused on the last one is not said here. */
export function forgetRefusals() {
  REFUSED.clear();
}

/** Shows why a write failed. */
export function failed(action, error) {
  if (error instanceof Unauthenticated) {
    notice.show("error", h("strong", null, "Your session has expired."), " The cluster no longer accepts the token; sign in again. Nothing was changed.");
    return;
  }
  if (error instanceof ApiError && error.status === 403) {
    notice.show(
      "error",
      h("strong", null, "Not permitted: "),
      h("span", { class: "server-text" }, error.message),
      ". ",
      FORBIDDEN[action] || "",
    );
    return;
  }
  if (error instanceof ApiError && error.status === 409) {
    notice.show(
      "error",
      h("strong", null, "Refused: "),
      h("span", { class: "server-text" }, error.message),
      error.code ? h("span", { class: "muted" }, ` (${error.code})`) : null,
    );
    return;
  }
  notice.show("error", h("strong", null, "It did not work: "), h("span", { class: "server-text" }, error.message || String(error)));
}

/**
 * Why a write failed, in one line for beside the button that asked for it (the
 * notice says it at length), or null when there is nothing to say there (an expired
 * session is the whole page's business).
 */
export function refusalText(error, action = "") {
  if (error instanceof Unauthenticated) return null;
  if (error instanceof ApiError && error.status === 403) return `Not permitted: ${error.message}. ${FORBIDDEN[action] || ""}`.trim();
  // The API's refusals say so themselves ("rollback refused: …").
  if (error instanceof ApiError && error.status === 409) return `${error.message}${error.code ? ` (${error.code})` : ""}`;
  return `It did not work: ${error.message || String(error)}`;
}

/**
 * Confirms, performs, reports. Resolves to the server's answer, or null. A refusal is
 * said beside the button that asked (announced there: `role=alert`); without one — or
 * for an expired session, the whole page's business — in the notice. `onError` hears
 * a failure too.
 */
async function perform(action, question, run, report, onError) {
  const button = clicked && clicked.isConnected ? clicked : null;
  clicked = null;
  // Named now: once the page is redrawn, the button is no longer among its buttons.
  const key = button && buttonKey(button);
  if (button) {
    REFUSED.delete(key);
    placeRefusal(button, key);
  }
  if (question && !(await confirm(question))) return null;
  notice.show("pending", "Asking the cluster…");
  try {
    const answer = await run();
    notice.show("ok", ...report(answer));
    return answer;
  } catch (error) {
    const text = refusalText(error, action);
    // The page may have been redrawn while asking: the button that now stands there.
    const here = button && (button.isConnected ? button : sameButton(key));
    if (text && here) {
      notice.clear();
      refuseBeside(here, text);
    } else {
      failed(action, error);
    }
    if (onError) onError(error);
    return null;
  }
}

/** The button on the page now that was named `key` before a redraw, if there is one. */
function sameButton(key) {
  const page = document.querySelector("main");
  if (!page) return null;
  for (const [button, now] of buttonKeys(page)) if (now === key) return button;
  return null;
}

/** Where the UI shows Passage `name`. */
function passageHref(ns, name) {
  return `/passages/?name=${encodeURIComponent(name)}&namespace=${encodeURIComponent(ns)}`;
}

/**
 * What crossing `gate` with `bundle` would change — ops' diff against what the Gate
 * runs now —, drawn for the dialog; a diff that cannot be read is said, and the
 * dialog still asks.
 */
function whatChanges(ns, gate, bundle) {
  return diffs
    .read(ns, bundle, gate)
    .then((d) => diffs.view(d, { limit: 10, scroll: true }))
    .catch((error) => diffs.unread(error));
}

/** What crossing `gate` with `bundle` would run — ops' preview for the signed-in person —, drawn for the dialog. */
function whatRuns(ns, gate, bundle) {
  return previews
    .read(ns, gate, bundle)
    .then((p) => previews.view(p))
    .catch((error) => previews.unread(error));
}

/** Starts a crossing of `gate` with `bundle` (named as `label`). */
export function promote(ns, gate, bundle, label, steps) {
  return perform(
    "promote",
    {
      title: `Cross ${gate}`,
      text: `Start crossing ${label} through ${gate} as you.`,
      detail: `This creates a Passage in namespace ${ns} that runs ${gate}'s ${steps ? count(steps, "step") : "steps"}. The cluster records you as the one who asked.`,
      ok: `Cross ${gate}`,
      changes: Promise.all([whatChanges(ns, gate, bundle), whatRuns(ns, gate, bundle)]).then((parts) => h("div", null, ...parts)),
    },
    () => post(nsPath(ns, "gates", gate, "promote"), { bundle }),
    (passage) => [
      h("strong", null, "Crossing started: "),
      `${label} is crossing ${gate} in Passage `,
      h("a", { href: passageHref(ns, passage.metadata.name) }, passage.metadata.name),
      ".",
    ],
  );
}

/**
 * Rolls `gate` back (DECISION 139): crosses `to` (a Bundle it held before, named as
 * `label`) again — or, without `to`, the newest earlier Bundle the Gate verified, which
 * the server chooses — undoing the crossing of its current occupant (`current`, a
 * label). `onError` hears a refusal, to say it beside the button.
 */
export function rollback(ns, gate, { to = null, label = null, current = null, steps = 0 } = {}, onError = null) {
  const undoing = current ? `undoing the crossing of ${current}` : "undoing its latest crossing";
  return perform(
    "rollback",
    {
      title: `Roll back ${gate}`,
      text: to ? `Roll ${gate} back to ${label || to} as you, ${undoing}.` : `Roll ${gate} back to the newest Bundle it verified before, as you, ${undoing}.`,
      detail: `This creates a Passage in namespace ${ns} that crosses ${to ? label || to : "that Bundle"} through ${gate} again and runs its ${steps ? count(steps, "step") : "steps"}, under the same rules as any crossing (windows, approvals). The cluster records you as the one who asked.`,
      ok: `Roll back ${gate}`,
      // What it changes, as the Cross dialog says: the commits it would undo.
      changes: to ? whatChanges(ns, gate, to) : null,
    },
    () => post(nsPath(ns, "gates", gate, "rollback"), to ? { to } : {}),
    (passage) => {
      const undone = passage.metadata.annotations && passage.metadata.annotations["hecate.dev/rollback-of"];
      return [
        h("strong", null, "Rollback started: "),
        `${passage.spec.bundle} is crossing ${gate} again in Passage `,
        h("a", { href: passageHref(ns, passage.metadata.name), "data-rollback-passage": passage.metadata.name }, passage.metadata.name),
        undone ? [`, undoing `, h("a", { href: passageHref(ns, undone) }, undone)] : null,
        ".",
      ];
    },
    onError,
  );
}

/**
 * What an approval leads to, said at the moment of decision: with `held` (ops' answer:
 * the Gate's windows hold crossings now), that it waits for them — and, for a Gate
 * that crosses by itself, that it then crosses unattended, when, in the viewer's time.
 */
function approvalDetail(gate, crossesItself, held) {
  if (held) {
    const when = held.until ? ` (${local(held.until)} your time)` : "";
    return crossesItself
      ? `${gate}'s windows hold crossings now: ${held.reason}. Your approval waits for them: once nothing else holds it, ${gate} crosses by itself as they open${when}, with nobody watching.`
      : `${gate}'s windows hold crossings now: ${held.reason}. Approving does not cross the Gate: someone else starts the crossing once they open${when}.`;
  }
  return crossesItself
    ? `Approving lets ${gate} cross by itself: the controller starts the crossing as soon as nothing else holds it.`
    : "Approving does not cross the Gate: someone else starts the crossing, and the one who approved may not be the one who promotes.";
}

/**
 * Approves `bundle` for `gate`. `crossesItself`: the Gate's spec says it crosses by
 * itself (`spec.auto`), so an approval that leaves nothing else holding the Bundle is
 * what starts the crossing — the dialog must not say someone else will. `held`: the
 * approvals queue's `held` for it, when the Gate's windows hold crossings now.
 */
export function approve(ns, gate, bundle, label, crossesItself = false, held = null) {
  return perform(
    "approve",
    {
      title: `Approve for ${gate}`,
      text: `Approve ${label} for ${gate} as you.`,
      detail: approvalDetail(gate, crossesItself, held),
      ok: `Approve for ${gate}`,
      changes: whatChanges(ns, gate, bundle),
    },
    () => post(nsPath(ns, "bundles", bundle, "approve"), { gate }),
    (answer) => {
      const progress = answer.progress ? ` Now: ${answer.progress.summary}.` : "";
      return answer.recorded
        ? [h("strong", null, "Approved: "), `${label} is approved for ${gate}.${progress}`]
        : [h("strong", null, "Already approved: "), `${label} was approved for ${gate} by ${answer.approvedBy}; nothing changed.${progress}`];
    },
  );
}

/** Says no to `bundle` for `gate`, with a reason asked for in the dialog. */
export async function reject(ns, gate, bundle, label) {
  const reason = await confirm({
    title: `Reject for ${gate}`,
    text: `Reject ${label} for ${gate} as you.`,
    detail: `It is held from ${gate} — no one can promote it there, and the Gate does not take it by itself — until the rejection is withdrawn.`,
    ok: `Reject for ${gate}`,
    reason: true,
  });
  if (!reason) return null;
  return perform(
    "reject",
    null,
    () => post(nsPath(ns, "bundles", bundle, "reject"), { gate, reason }),
    (answer) =>
      answer.recorded
        ? [h("strong", null, "Rejected: "), `${label} is held from ${gate} until the rejection is withdrawn.`]
        : [h("strong", null, "Already rejected: "), `you had rejected ${label} for ${gate}; nothing changed.`],
  );
}

/** Withdraws the rejections holding `bundle` from `gate` that the caller may withdraw. */
export function withdrawRejection(ns, gate, bundle, label) {
  return perform(
    "reject",
    {
      title: `Withdraw the rejection`,
      text: `Withdraw the rejection of ${label} for ${gate} as you.`,
      detail: "The record stays in the audit trail; the Bundle is no longer held by it.",
      ok: "Withdraw",
    },
    () => post(nsPath(ns, "bundles", bundle, "withdraw-rejection"), { gate }),
    (answer) =>
      answer.rejectionsOf.length
        ? [h("strong", null, "Withdrawn: "), `${answer.rejectionsOf.join(", ")}'s rejection of ${label} for ${gate}.`]
        : [h("strong", null, "Nothing to withdraw: "), `no rejection holds ${label} from ${gate}.`],
  );
}

/** Asks Passage `passage` to stop. */
export function abort(ns, passage, label) {
  return perform(
    "abort",
    {
      title: "Abort this Passage",
      text: `Abort Passage ${passage} (${label}) as you.`,
      detail: "Its remaining steps will not run. What the finished steps did stays done.",
      ok: "Abort the Passage",
    },
    () => post(nsPath(ns, "passages", passage, "abort"), {}),
    (answer) => [h("strong", null, "Abort asked: "), `Passage ${passage} will stop (recorded as aborted by ${answer.abortedBy}).`],
  );
}

/** Rolls the failed `targets` of `gate`'s finished rollout back to what they ran before it (DECISION 163). */
export function rollbackFailedTargets(ns, gate, targets) {
  return perform(
    "rollback",
    {
      title: "Roll the failed targets back",
      text: `Roll ${targets.join(", ")} back to what they ran before the rollout, as you.`,
      detail: `This creates a Passage in namespace ${ns} that crosses those targets of ${gate} alone, under the same rules as any crossing (windows, approvals). What ${gate} holds does not change. The cluster records you as the one who asked.`,
      ok: "Roll back",
    },
    () => post(nsPath(ns, "gates", gate, "rollback"), { targets: "failed" }),
    (passage) => [
      h("strong", null, "Rollback started: "),
      `${(passage.spec.targets || []).join(", ")} go back to ${passage.spec.bundle} in Passage `,
      h("a", { href: passageHref(ns, passage.metadata.name), "data-rollback-passage": passage.metadata.name }, passage.metadata.name),
      ".",
    ],
  );
}

/** Asks the halted rollout of Passage `passage` to cross its failed `targets` again. */
export function retryTargets(ns, passage, targets) {
  return perform(
    "retryTargets",
    {
      title: "Retry the failed targets",
      text: `Cross ${targets.join(", ")} again, for Passage ${passage}, as you.`,
      detail: "Each starts again from its first step, with a fresh clone; what succeeded elsewhere stays. The request is kept on the Passage in your name.",
      ok: "Retry",
    },
    () => post(nsPath(ns, "passages", passage, "retry"), {}),
    () => [h("strong", null, "Retry asked: "), `${targets.join(", ")} will cross again.`],
  );
}

/** Accepts the failures that halted Passage `passage`'s rollout, with a reason asked for in the dialog. */
export async function acceptFailures(ns, passage, targets) {
  const reason = await confirm({
    title: "Accept the failures",
    text: `Go on without ${targets.join(", ")}, for Passage ${passage}, as you.`,
    detail: "The later waves start; the failed targets stay as they are. Who, when and why are kept on the record.",
    ok: "Accept and go on",
    reason: true,
  });
  if (!reason) return null;
  return perform(
    "acceptFailures",
    null,
    () => post(nsPath(ns, "passages", passage, "accept-failures"), { reason }),
    (answer) => [h("strong", null, "Accepted: "), `the rollout of ${passage} goes on, in ${answer.by}'s name.`],
  );
}

/** Asks Beacon `beacon` to look for new versions now (no confirmation: it changes nothing). */
export function poll(ns, beacon) {
  return perform(
    "poll",
    null,
    () => post(nsPath(ns, "beacons", beacon, "poll"), {}),
    () => [h("strong", null, "Asked: "), `Beacon ${beacon} will check its sources.`],
  );
}

/** Suspends (`suspend`) or resumes Flux object `kind/name`, which Gate `gate` watches. */
export function fluxSuspend(ns, gate, kind, name, suspend) {
  const object = `${kind}/${name}`;
  return perform(
    "flux",
    {
      title: suspend ? `Suspend ${object}` : `Resume ${object}`,
      text: suspend ? `Suspend ${object} as you: Flux stops applying it until it is resumed.` : `Resume ${object} as you: Flux applies it again.`,
      detail: suspend
        ? `While it is suspended, changes that reach ${gate} through it are not applied, and ${gate}'s health cannot be judged from it.`
        : `Flux reconciles it at its next interval; use Reconcile now to have it look at once.`,
      ok: suspend ? "Suspend" : "Resume",
    },
    () => post(nsPath(ns, "gates", gate, "flux", "suspend"), { kind, name, suspend }),
    (answer) => [h("strong", null, answer.suspended ? "Suspended: " : "Resumed: "), `${object} (by ${answer.by}).`],
  );
}

/** Asks Flux to reconcile `kind/name` now (no confirmation: it applies what is there already). */
export function fluxReconcile(ns, gate, kind, name) {
  return perform(
    "flux",
    null,
    () => post(nsPath(ns, "gates", gate, "flux", "reconcile"), { kind, name }),
    (answer) => [h("strong", null, "Asked: "), `Flux will reconcile ${kind}/${name} now (requested at ${local(answer.requestedAt)}).`],
  );
}
