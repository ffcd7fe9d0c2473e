// The shell: signs in and out, picks the landing namespace, routes to a page module,
// and re-renders the page when live updates arrive — keeping focus and scroll where
// they were, and leaving the page alone when nothing it shows has changed.

import * as actions from "./actions.js";
import { ApiError, Unauthenticated, whenUnauthenticated } from "./api.js";
import { h, replace, shown } from "./dom.js";
import { syncTicking } from "./format.js";
import * as live from "./live.js";
import * as menu from "./menu.js";
import * as notice from "./notice.js";
import * as router from "./router.js";
import * as rights from "./rights.js";
import * as session from "./session.js";
import * as shell from "./shell.js";
import * as signin from "./pages/signin.js";
import * as overview from "./pages/overview.js";
import * as gates from "./pages/gates.js";
import * as bundles from "./pages/bundles.js";
import * as passages from "./pages/passages.js";
import * as beacons from "./pages/beacons.js";
import * as approvals from "./pages/approvals.js";
import * as audit from "./pages/audit.js";
import * as delivery from "./pages/delivery.js";
import * as settings from "./pages/settings.js";

const PAGES = {
  "/": overview,
  "/gates/": gates,
  "/bundles/": bundles,
  "/passages/": passages,
  "/beacons/": beacons,
  "/approvals/": approvals,
  "/audit/": audit,
  "/delivery/": delivery,
  "/settings/": settings,
};

const main = () => document.getElementById("main");
let page = null; // {module, ctx, controller, seq, path}
let booted = false;

/** Something other code can focus on again after the page is redrawn. */
function focusKey(el) {
  if (el.id) return `#${el.id}`;
  if (el.dataset.key) return `k:${el.dataset.key}`;
  return `${el.tagName}|${el.getAttribute("href") || ""}|${el.textContent.trim()}`;
}

const FOCUSABLE = "a[href], button, select, input, textarea, summary, [tabindex]";

/** Puts `node` in <main>, unless it shows exactly what is there already. */
function swap(node, { focusHeading }) {
  const el = main();
  const old = el.firstElementChild;
  if (old && old.isEqualNode(node)) return false;
  const active = document.activeElement;
  const key = active && active !== el && el.contains(active) ? focusKey(active) : null;
  const x = window.scrollX;
  const y = window.scrollY;
  el.replaceChildren(node);
  if (focusHeading) {
    const heading = el.querySelector("h1");
    if (heading) heading.focus();
    window.scrollTo(0, 0);
    return true;
  }
  if (key) {
    const match = [...el.querySelectorAll(FOCUSABLE)].find((candidate) => focusKey(candidate) === key);
    if (match) match.focus({ preventScroll: true });
  }
  if (window.scrollX !== x || window.scrollY !== y) window.scrollTo(x, y);
  return true;
}

/** What a page shows when its data could not be read. */
function problem(error, retry) {
  if (error instanceof ApiError && error.status === 403) {
    return h(
      "div",
      { class: "page" },
      h("h1", { tabindex: "-1" }, "Not permitted"),
      h("p", { class: "server-text" }, error.message),
      h("p", null, "The cluster decides what you may read, not Hecate: ask for a Role in this namespace (for example hecate-viewer), or pick another namespace."),
    );
  }
  if (error instanceof ApiError && error.status === 404) {
    return h("div", { class: "page" }, h("h1", { tabindex: "-1" }, "Not found"), h("p", { class: "server-text" }, error.message));
  }
  return h(
    "div",
    { class: "page" },
    h("h1", { tabindex: "-1" }, "Could not load"),
    h("p", { class: "server-text" }, error.message || String(error)),
    h("p", null, "Nothing in the cluster was changed."),
    h("button", { type: "button", onclick: retry }, "Try again"),
  );
}

async function draw(current, { first, moved }) {
  const seq = ++current.seq;
  const el = main();
  el.setAttribute("aria-busy", "true");
  let node;
  try {
    node = await current.module.render(current.ctx);
  } catch (error) {
    if (error && error.name === "AbortError") return;
    if (error instanceof Unauthenticated) return; // the shell is showing the sign-in form
    node = problem(error, () => draw(current, { first: false, moved: false }));
  }
  if (current.controller.signal.aborted || seq !== current.seq || page !== current) return;
  // What the caller may not do is disabled before the page is compared or shown, and
  // what the cluster refused stays said beside the button that asked.
  const may = await current.rights;
  if (current.controller.signal.aborted || seq !== current.seq || page !== current) return;
  if (node instanceof Element) {
    rights.enforce(node, may);
    actions.besides(node);
  }
  el.removeAttribute("aria-busy");
  const changed = swap(node, { focusHeading: first && moved });
  // Relative times tick while the page shows some, and only then.
  syncTicking();
  if (!first && changed && current.lastEvent) live.announce(current.lastEvent);
}

/** Shows the page the URL names. `moved`: a navigation within the app. */
async function show({ moved = false } = {}) {
  if (page) page.controller.abort();
  page = null;
  actions.forgetRefusals();
  const route = router.current();
  const el = main();
  // A draw the abort cut short never clears its busy mark: this is a new page.
  el.removeAttribute("aria-busy");
  if (!session.signedIn()) {
    live.stop();
    shell.nav(route.ns);
    shell.session({ signedIn: false });
    document.title = "Sign in · Hecate";
    replace(el, signin.render({ onSignedIn: () => show({ moved: true }) }));
    syncTicking();
    const field = el.querySelector("input");
    if (field && booted) field.focus();
    booted = true;
    return;
  }
  booted = true;
  const module = PAGES[route.path];
  if (!module) {
    location.reload(); // not a page of ours: the server answers its 404 page
    return;
  }
  if (!route.ns) {
    // The URL is the source of truth for the namespace; without one, land on the
    // first namespace the caller may read, and say so in the URL.
    const list = await shell.namespaces();
    if (!session.signedIn()) return;
    const params = Object.fromEntries(router.current().params);
    router.navigate(router.href(route.path, { ...params, namespace: list[0] || "default" }), { replace: true });
    return;
  }
  const controller = new AbortController();
  const memo = new Map();
  const current = { module, controller, seq: 0, lastEvent: null, rights: rights.load(route.ns, { fresh: true }), who: null };
  current.ctx = {
    ns: route.ns,
    name: route.name,
    params: route.params,
    signal: controller.signal,
    /**
     * A query fetched once per page visit, not refetched on live updates (evidence:
     * Fides may take seconds). Returns `{done, value, error}` at once; the page is
     * drawn again when it settles.
     */
    once(key, fetch) {
      if (!memo.has(key)) {
        const entry = { done: false, value: undefined, error: undefined };
        memo.set(key, entry);
        fetch()
          .then((value) => Object.assign(entry, { done: true, value }))
          .catch((error) => Object.assign(entry, { done: true, error }))
          .finally(() => {
            if (page === current) draw(current, { first: false, moved: false });
          });
      }
      return memo.get(key);
    },
    /** Follows these namespaces' event streams (pages default to theirs). */
    follow(namespaces) {
      live.follow(namespaces, (event) => {
        current.lastEvent = event;
        draw(current, { first: false, moved: false });
      });
    },
    refresh: () => draw(current, { first: false, moved: false }),
    title(text) {
      document.title = `${shown(text)} · Hecate`;
    },
  };
  page = current;
  shell.nav(route.ns);
  const header = () => shell.session({ signedIn: true, ns: route.ns, onSignOut: signOut, who: current.who });
  header();
  if (moved && el.dataset.path !== route.path) {
    replace(el, h("p", { class: "loading" }, "Loading…"));
    syncTicking();
  }
  el.dataset.path = route.path;
  if (module.live !== "self") current.ctx.follow([route.ns]);
  Promise.all([current.rights, shell.namespaces()]).then(([may, visible]) => {
    if (page !== current) return;
    current.who = rights.badge(may, visible);
    header();
  });
  await draw(current, { first: true, moved });
}

async function signOut() {
  const sso = session.sso();
  session.forget();
  rights.forget();
  live.stop();
  // Signed in through the identity provider: the server clears its session cookie
  // (before the sign-in page asks whether the cookie still signs this browser in).
  if (sso) await fetch("/auth/logout", { method: "POST", credentials: "same-origin" }).catch(() => {});
  notice.show("ok", "Signed out. This tab has forgotten the token.");
  show({ moved: true });
}

function expired() {
  if (!session.signedIn()) return;
  session.forget();
  rights.forget();
  live.stop();
  notice.show("error", h("strong", null, "Your session has expired."), " The cluster no longer accepts the token: sign in again.");
  show({ moved: true });
}

// A page being left closes its streams itself: Chromium may keep a left page's
// fetch streams open (back/forward cache), and six of them use up every connection
// the browser allows this server, so the next page would never load.
window.addEventListener("pagehide", () => {
  if (page) page.controller.abort();
  page = null;
  live.stop();
});
window.addEventListener("pageshow", (event) => {
  if (event.persisted) show();
});

whenUnauthenticated(expired);
live.whenUnauthenticated(expired);
menu.start();
router.start(show);
shell.footer();
show();
