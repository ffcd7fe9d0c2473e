// Live updates: one event stream per namespace the page shows, kept open across page
// changes within the namespace. Each `changed` event (and each (re)connection, which
// may have missed some) makes the page refetch its live queries, coalesced so a burst
// of writes is one refetch.

import { nsPath } from "./api.js";
import { replace } from "./dom.js";
import { clock } from "./format.js";
import * as sse from "./sse.js";
import * as session from "./session.js";

// Browsers allow six HTTP/1.1 connections per server; each stream holds one for good.
// Past this many namespaces the page refreshes on a timer instead.
const MAX_STREAMS = 3;
const POLL_MS = 30000;
const SETTLE_MS = 150;

const streams = new Map(); // namespace → {handle, state}
let listener = null;
let timer = null;
let poller = null;
let lastEvent = null;
let onUnauthenticated = () => {};

export function whenUnauthenticated(handler) {
  onUnauthenticated = handler;
}

function indicator() {
  const el = document.getElementById("live");
  if (!el) return;
  const states = [...streams.values()].map((s) => s.state);
  let text = "";
  if (poller) text = `Refreshing every ${POLL_MS / 1000} s (too many namespaces to follow live)`;
  else if (!states.length) text = "";
  else if (states.every((s) => s === "live")) text = "Live: updates appear as they happen";
  else if (states.includes("denied")) text = "Not live: no access to the event stream";
  else if (states.includes("reconnecting")) text = "Live updates lost; reconnecting…";
  else text = "Connecting live updates…";
  el.dataset.state = poller ? "polling" : states.every((s) => s === "live") && states.length ? "live" : "other";
  if (el.textContent !== text) replace(el, text);
}

function changed(event) {
  lastEvent = event;
  clearTimeout(timer);
  timer = setTimeout(() => {
    if (listener) listener(lastEvent);
  }, SETTLE_MS);
}

/** Follows exactly `namespaces`; `onChange(event)` runs after changes settle. */
export function follow(namespaces, onChange) {
  listener = onChange;
  clearInterval(poller);
  poller = null;
  const wanted = new Set(namespaces.length > MAX_STREAMS ? [] : namespaces);
  for (const [ns, stream] of streams) {
    if (!wanted.has(ns)) {
      stream.handle.close();
      streams.delete(ns);
    }
  }
  if (namespaces.length > MAX_STREAMS) {
    poller = setInterval(() => changed({ event: "poll" }), POLL_MS);
  }
  for (const ns of wanted) {
    if (streams.has(ns)) continue;
    const entry = { state: "connecting", handle: null };
    streams.set(ns, entry);
    entry.handle = sse.follow(nsPath(ns, "watch"), session.token(), {
      onEvent: (message) => {
        if (message.event === "changed" || message.event === "open") {
          let data = {};
          try {
            data = JSON.parse(message.data);
          } catch {
            // An event without JSON still means "look again".
          }
          changed({ event: message.event, ...data });
        }
      },
      onState: (state) => {
        entry.state = state;
        if (state === "unauthenticated") onUnauthenticated();
        indicator();
      },
    });
  }
  indicator();
}

/** Closes every stream (signing out, or a page that is not live). */
export function stop() {
  for (const stream of streams.values()) stream.handle.close();
  streams.clear();
  clearInterval(poller);
  poller = null;
  listener = null;
  clearTimeout(timer);
  indicator();
}

/** Says, in the live region, that the page was just redrawn and why. */
export function announce(event) {
  const el = document.getElementById("live");
  if (!el || poller) return;
  const what = event && event.kind && event.name ? ` after ${event.kind} ${event.name} changed` : "";
  replace(el, `Live: updated at ${clock()}${what}`);
}
