// The timeline (Kargo's freight view): a namespace's recent Bundles, newest first,
// each with a dot per Gate on its way, upstream first — cleared, crossing now, failed,
// aborted, or not yet — and which Gate runs it now. Every fact is ops' (the
// Overview's `timeline`, one `BundleTrack` per Bundle); here they become words,
// colours and links. Each dot is a link whose name says the Gate and what happened
// there: to the Passage that did it, or to the Gate when nothing has yet.

import * as c from "./components.js";
import { h } from "./dom.js";
import { count, local, time } from "./format.js";
import { href } from "./router.js";

// What each outcome is called beside its dot.
const WORDS = { crossed: "cleared", running: "crossing now", failed: "failed", aborted: "aborted" };

function stop(ns, s) {
  const outcome = s.outcome || "none";
  const what = [WORDS[s.outcome] || "not yet"];
  // A relative time that ticks, the exact local time on hover.
  if (s.at && s.outcome && s.outcome !== "running") what.push(" ", time(s.at));
  if (s.holding) what.push(", running here now");
  const target = s.passage ? href("/passages/", { name: s.passage, namespace: ns }) : href("/gates/", { name: s.gate, namespace: ns });
  const title = [s.gate, s.reason, s.at ? `${WORDS[s.outcome] || ""} ${local(s.at)}` : "not yet"].filter(Boolean).join(" · ");
  return h(
    "li",
    { class: ["stop", `stop-${outcome}`, s.holding && "stop-holding"], "data-gate": s.gate, "data-outcome": outcome, "data-holding": s.holding ? "true" : "false" },
    h(
      "a",
      { href: target, title },
      h("span", { class: "stop-dot", "aria-hidden": "true" }),
      // The spaces keep the link's name in words: "staging cleared 2 hours ago".
      h("span", { class: "stop-gate" }, s.gate),
      " ",
      h("span", { class: "stop-what" }, what),
    ),
  );
}

function row(ns, track) {
  const label = track.alias || track.bundle;
  return h(
    "li",
    { class: "track", "data-bundle": track.bundle },
    h(
      "p",
      { class: "track-head" },
      c.link("/bundles/", { name: track.bundle, namespace: ns }, label),
      track.alias ? h("span", { class: "muted small" }, ` ${track.bundle}`) : null,
      h("span", { class: "muted small" }, " · emitted ", track.emittedAt ? time(track.emittedAt) : "at an unknown time"),
      track.holding.length ? [" ", c.pill(`in ${track.holding.join(", ")}`, "ok")] : null,
      track.failed ? [" ", c.pill(count(track.failed, "failed crossing"), "bad")] : null,
    ),
    track.gates.length
      ? h("ol", { class: "stops", "aria-label": `Gates on the way of ${label}, upstream first` }, track.gates.map((s) => stop(ns, s)))
      : h("p", { class: "muted small" }, "No Gate admits its Beacon."),
  );
}

/** The timeline of namespace `ns` (`tracks`: its `NamespaceOverview.timeline`). */
export function timeline(ns, tracks, level = 4) {
  const id = `timeline-${ns}`;
  return h(
    "div",
    { class: "timeline" },
    h(`h${level}`, { id }, "Recent Bundles"),
    tracks.length
      ? h("ol", { class: "tracks", "aria-labelledby": id, "data-namespace": ns }, tracks.map((t) => row(ns, t)))
      : c.empty(`No Bundles in ${ns} yet.`),
  );
}
