// Words for times, durations and counts. Every absolute time is the viewer's own,
// with its zone's abbreviation ("1 Dec 2026, 10:30 CET"); every relative one ("4
// minutes ago", "took 3m so far") is a <time data-tick> that one interval re-words
// while any is on the page — no refetch, and no timer once none is left.

import { h } from "./dom.js";

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
// dateStyle/timeStyle cannot be combined with timeZoneName: the parts, spelled out.
const absolute = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" });
const clockTime = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });

/** How often ticking times are re-worded. */
export const TICK_MS = 15000;

/**
 * "4 minutes ago"; a time to come as a countdown says it ("in 1d 15h"), so one
 * instant reads the same wherever it is shown.
 */
export function ago(when, now = Date.now()) {
  const t = Date.parse(when);
  if (Number.isNaN(t)) return "";
  const seconds = Math.round((t - now) / 1000);
  if (seconds >= 45) return untilWords(when, now);
  const abs = Math.abs(seconds);
  if (abs < 45) return relative.format(seconds, "second");
  if (abs < 2700) return relative.format(Math.round(seconds / 60), "minute");
  if (abs < 64800) return relative.format(Math.round(seconds / 3600), "hour");
  return relative.format(Math.round(seconds / 86400), "day");
}

// An instant as the server writes one in its words: RFC 3339 in UTC.
const INSTANT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;

/**
 * Text from the server with each UTC instant in it said in the viewer's zone, as a
 * `<time>` whose title keeps the instant: "soaking until 1 Dec 2026, 01:30 PST (…)".
 * Only the formatting changes; the words are the server's.
 */
export function withLocalTimes(text) {
  const parts = [];
  let last = 0;
  for (const m of String(text || "").matchAll(INSTANT)) {
    parts.push(text.slice(last, m.index), h("time", { datetime: m[0], title: m[0] }, local(m[0])));
    last = m.index + m[0].length;
  }
  parts.push(String(text || "").slice(last));
  return parts;
}

/** The date and time in the viewer's zone, with the zone: "1 Dec 2026, 10:30 CET". */
export function local(when) {
  const t = Date.parse(when);
  return Number.isNaN(t) ? "" : absolute.format(t);
}

/**
 * Whether the viewer's clock reads `when` as the clock of `zone` (an IANA name) does:
 * a time said in that zone needs no second telling in theirs. An unknown zone reads
 * differently.
 */
export function sameClock(when, zone) {
  const t = Date.parse(when);
  if (Number.isNaN(t)) return true;
  const parts = { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit" };
  try {
    return new Intl.DateTimeFormat(undefined, parts).format(t) === new Intl.DateTimeFormat(undefined, { ...parts, timeZone: zone }).format(t);
  } catch {
    return false;
  }
}

/** The time of day in the viewer's zone, with the zone: "10:30:12 CET". */
export function clock(when = Date.now()) {
  return clockTime.format(when);
}

/**
 * A `<time>`: "ago" says how long ago and ticks, "local" the date and time; the
 * exact local time is on hover either way.
 */
export function time(when, style = "ago") {
  if (!when) return h("span", { class: "muted" }, "never");
  if (style === "local") return h("time", { datetime: when, title: local(when) }, local(when));
  return h("time", { datetime: when, title: local(when), "data-tick": "ago" }, ago(when));
}

/**
 * How long from `from` until `to`: a fixed "3m 12s" when it is over, else a
 * `<time>` that keeps counting ("took 3m so far" grows).
 */
export function since(from, to) {
  if (to) return h("span", { title: `${local(from)} – ${local(to)}` }, duration(from, to));
  return h("time", { datetime: from, title: `since ${local(from)}`, "data-tick": "since" }, duration(from));
}

/** "in 1d 3h" until `when`, counting down. */
export function until(when) {
  return h("time", { datetime: when, title: local(when), "data-tick": "until" }, untilWords(when));
}

function untilWords(when, now = Date.now()) {
  const left = duration(new Date(now).toISOString(), when);
  return left ? `in ${left}` : "now";
}

/** "3m 12s" between two times (or until now). */
export function duration(from, to) {
  const a = Date.parse(from);
  const b = to ? Date.parse(to) : Date.now();
  if (Number.isNaN(a) || Number.isNaN(b) || b < a) return "";
  let seconds = Math.round((b - a) / 1000);
  const parts = [];
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
    if (seconds >= size) {
      parts.push(`${Math.floor(seconds / size)}${unit}`);
      seconds %= size;
    }
  }
  if (parts.length < 2 && (seconds || !parts.length)) parts.push(`${seconds}s`);
  return parts.slice(0, 2).join(" ");
}

/** "1 Bundle", "3 Bundles". */
export function count(n, one, many = one + "s") {
  return `${n} ${plural(n, one, many)}`;
}

/** The word for `n` of them, without the number: "Gate", "Gates". */
export function plural(n, one, many = one + "s") {
  return n === 1 ? one : many;
}

/** The first `n` characters of a digest, without its algorithm. */
// ---- links to where things come from ---------------------------------------------

const HTTPS = "https:";

/** Forges whose web pages show a commit at `<repository>/commit/<sha>` (Bitbucket: `commits`). */
const FORGES = [
  [/^github\.com$/, "commit"],
  [/^(.+\.)?gitlab\.(com|.+)$/, "-/commit"],
  [/^codeberg\.org$/, "commit"],
  [/^bitbucket\.org$/, "commits"],
];

/**
 * A source's web page: an https repository (without `.git`), an scp-style
 * `git@host:path` as https; anything else (plain http on loopback, `ssh://` on a
 * private port, OCI) has none we can be sure of.
 */
export function sourceHref(repo) {
  const text = String(repo || "").trim();
  const scp = /^[\w.-]+@([\w.-]+):(?!\/)(.+)$/.exec(text);
  let url;
  try {
    // Spelled in parts: no asset names another origin (the server's own test).
    url = new URL(scp ? `${HTTPS}//${scp[1]}/${scp[2]}` : text);
  } catch {
    return null;
  }
  if (url.protocol !== HTTPS || url.username || url.password) return null;
  return `${url.origin}${url.pathname.replace(/\.git$/, "").replace(/\/$/, "")}`;
}

/** A commit's page on a forge its repository is on; none elsewhere (a link that may not exist is worse than none). */
export function commitHref(repo, sha) {
  const base = sourceHref(repo);
  if (!base || !/^[0-9a-f]{7,64}$/i.test(String(sha || ""))) return null;
  const forge = FORGES.find(([host]) => host.test(new URL(base).hostname));
  return forge ? `${base}/${forge[1]}/${sha}` : null;
}

export function short(digest, n = 12) {
  const d = String(digest || "").replace(/^sha256:/, "");
  return d.length > n ? d.slice(0, n) : d;
}

// ---- ticking ------------------------------------------------------------------------

const WORDS = { ago: (when, now) => ago(when, now), since: (when, now) => duration(when, new Date(now).toISOString()), until: untilWords };
let ticker = null;

/** Re-words every ticking time on the page; stops the interval when none is left. */
export function tick(now = Date.now()) {
  const times = document.querySelectorAll("time[data-tick]");
  for (const el of times) {
    const words = WORDS[el.dataset.tick];
    const text = words ? words(el.getAttribute("datetime"), now) : "";
    if (text && el.textContent !== text) el.textContent = text;
  }
  if (!times.length) stopTicking();
}

/**
 * Starts the interval if a ticking time is on the page, stops it if none is: the
 * shell calls it each time it puts a page in place.
 */
export function syncTicking() {
  if (document.querySelector("time[data-tick]")) {
    if (!ticker) ticker = setInterval(() => tick(), TICK_MS);
    document.documentElement.dataset.ticking = "on";
  } else {
    stopTicking();
  }
}

function stopTicking() {
  clearInterval(ticker);
  ticker = null;
  delete document.documentElement.dataset.ticking;
}
