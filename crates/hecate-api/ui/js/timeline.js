// The timeline (Kargo's freight view): a namespace's recent Bundles, newest first,
// each with a dot per Gate on its way, upstream first — cleared (verified, where the
// Gate verifies), being verified, not verified, crossing now, failed, aborted, or not
// yet — and which Gate runs it now. Every fact is ops' (the
// Overview's `timeline`, one `BundleTrack` per Bundle); here they become words,
// colours and links. Each dot is a link whose name says the Gate and what happened
// there: to the Passage that did it, or to the Gate when nothing has yet.

import * as c from "./components.js";
import { h } from "./dom.js";
import { count, local, time } from "./format.js";
import { href } from "./router.js";

// What each outcome is called beside its dot.
const WORDS = { crossed: "cleared", running: "crossing now", failed: "failed", aborted: "aborted" };
// A crossing of a Gate that verifies what crossed, by where its verification stands
// (ops' `verification`, DECISIONS 139, 150): verified, being verified, not verified, or
// cut short by a newer crossing.
const VERIFIED_WORDS = { Verified: "verified", Verifying: "being verified", Failed: "not verified", Superseded: "cut short" };
const VERIFIED_CLASS = { Verifying: "stop-verifying", Failed: "stop-unverified" };

function stop(ns, s) {
  const outcome = s.outcome || "none";
  const verification = s.outcome === "crossed" ? s.verification || "" : "";
  const word = VERIFIED_WORDS[verification] || WORDS[s.outcome] || "not yet";
  const what = [word];
  // A relative time that ticks, the exact local time on hover; a verification under
  // way is said without one (it has not ended).
  if (s.at && s.outcome && s.outcome !== "running" && verification !== "Verifying") what.push(" ", time(s.at));
  if (s.holding) what.push(", running here now");
  const target = s.passage ? href("/passages/", { name: s.passage, namespace: ns }) : href("/gates/", { name: s.gate, namespace: ns });
  const title = [s.gate, s.reason, s.progress, s.at ? `${s.outcome ? word : ""} ${local(s.at)}` : "not yet"].filter(Boolean).join(" · ");
  return h(
    "li",
    {
      class: ["stop", `stop-${outcome}`, VERIFIED_CLASS[verification], s.holding && "stop-holding"],
      "data-gate": s.gate,
      "data-outcome": outcome,
      "data-verification": verification || null,
      "data-holding": s.holding ? "true" : "false",
    },
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

/** The dots of one Bundle's way (`track`: a `BundleTrack`), upstream first. */
export function stops(ns, track, label) {
  return h("ol", { class: "stops", "aria-label": `Gates on the way of ${label}, upstream first` }, track.gates.map((s) => stop(ns, s)));
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
    track.gates.length ? stops(ns, track, label) : h("p", { class: "muted small" }, "No Gate admits its Beacon."),
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
