// What every page shares: the navigation (links carry the namespace; the current
// page is marked), the namespace picker, the sign-out control and the version.

import { API, get, version } from "./api.js";
import { h, replace } from "./dom.js";
import { current, href, navigate } from "./router.js";

let known = [];

/** The namespaces the caller may read (`GET /namespaces`), remembered for the picker. */
export async function namespaces() {
  try {
    const answer = await get(`${API}/namespaces`);
    known = (answer && answer.namespaces) || [];
  } catch {
    // Discovery failing leaves the picker with the current namespace only.
  }
  return known;
}

/** Marks the current page in the navigation and points every link at `ns`. */
export function nav(ns) {
  const here = current().path;
  for (const a of document.querySelectorAll("#nav a")) {
    const path = new URL(a.href).pathname;
    a.setAttribute("href", href(path, { namespace: ns }));
    if (path === here) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const brand = document.querySelector(".brand");
  if (brand) brand.setAttribute("href", href("/", { namespace: ns }));
}

/** The header's right side: who is signed in and what they may do (`who`), the picker (not on the overview, which spans them all) and sign out. */
export function session({ signedIn, ns, onSignOut, who }) {
  const el = document.getElementById("session");
  if (!signedIn) {
    replace(el);
    return;
  }
  const route = current();
  const options = [...new Set([...known, ns].filter(Boolean))].sort();
  const picker =
    route.path === "/"
      ? null
      : h(
          "div",
          { class: "picker" },
          h("label", { for: "namespace-picker" }, "Namespace"),
          h(
            "select",
            {
              id: "namespace-picker",
              onchange: (event) => navigate(href(route.path, { namespace: event.target.value })),
            },
            options.map((n) => h("option", { value: n, selected: n === ns }, n)),
          ),
        );
  replace(el, who || null, picker, h("button", { type: "button", id: "sign-out", onclick: onSignOut }, "Sign out"));
}

/** The footer's `hecate <version>`, from /healthz (which needs no sign-in). */
export async function footer() {
  const el = document.getElementById("version");
  try {
    replace(el, `hecate ${await version()}`);
  } catch {
    replace(el, "hecate (version unknown: /healthz did not answer)");
  }
}
