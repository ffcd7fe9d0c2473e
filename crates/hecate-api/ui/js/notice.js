// The result of the last action, in a live region under the header: read out by
// screen readers, visible until dismissed or replaced.

import { h, replace } from "./dom.js";

function region() {
  return document.getElementById("notice");
}

/** Shows `parts` (text or nodes) as a success ("ok"), refusal or error ("error"). */
export function show(kind, ...parts) {
  const el = region();
  if (!el) return;
  const close = h("button", { type: "button", class: "link", onclick: () => clear() }, "Dismiss");
  replace(el, h("div", { class: ["message", kind], "data-kind": kind }, h("div", { class: "text" }, ...parts), close));
  // A result is said where it is seen: a click far down the page brings it into view
  // (nothing is laid over the page, so nothing is covered). "Asking the cluster…" is
  // not a result: a refusal is said beside the click, which must stay in view.
  if (kind !== "pending") el.scrollIntoView({ block: "nearest" });
}

export function clear() {
  const el = region();
  if (el) replace(el);
}
