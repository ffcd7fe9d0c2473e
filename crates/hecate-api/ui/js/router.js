// Routes are paths (`/gates/`); a detail view is the same path with `?name=`; the
// namespace is `?namespace=` everywhere. Links are plain <a href>: the router takes
// same-origin clicks over (history.pushState) so the event stream stays open, and
// anything it does not know is a normal navigation (the server answers the 404 page).

export const PAGES = ["/", "/gates/", "/bundles/", "/passages/", "/beacons/", "/approvals/", "/audit/", "/delivery/", "/settings/"];

let onRoute = () => {};

/** The current route: `{path, params, ns, name}`. */
export function current() {
  const params = new URLSearchParams(location.search);
  return {
    path: location.pathname,
    params,
    ns: params.get("namespace") || "",
    name: params.get("name") || "",
  };
}

/** A link target within the UI, carrying the namespace. */
export function href(path, params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(key, value);
  }
  const q = query.toString();
  return q ? `${path}?${q}` : path;
}

/**
 * Goes to `url` without reloading (replacing the history entry when asked).
 * `quiet`: the same page, redrawn in place (a filter changed): focus stays put.
 */
export function navigate(url, { replace = false, quiet = false } = {}) {
  const target = new URL(url, location.href);
  if (target.origin !== location.origin || !PAGES.includes(target.pathname)) {
    location.assign(target.href);
    return;
  }
  if (replace) history.replaceState(null, "", target.pathname + target.search);
  else history.pushState(null, "", target.pathname + target.search);
  onRoute({ moved: !quiet });
}

/**
 * A filter's change handler: `path` redrawn in place with the query parameter `key`
 * set to the control's value (the view stays shareable: the filters live in the URL).
 */
export function refiltered(path, params) {
  return (key) => (event) => {
    const next = Object.fromEntries(params);
    next[key] = event.target.value;
    navigate(href(path, next), { replace: true, quiet: true });
  };
}

/** Starts routing: `handler({moved})` runs for every route change. */
export function start(handler) {
  onRoute = handler;
  window.addEventListener("popstate", () => onRoute({ moved: true }));
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    // Attributes, not properties: an SVG link's `href` and `target` are not strings.
    if (!link || link.getAttribute("target") || link.hasAttribute("download")) return;
    const url = new URL(link.getAttribute("href"), location.href);
    if (url.origin !== location.origin || !PAGES.includes(url.pathname)) return;
    event.preventDefault();
    navigate(url.href);
  });
}
