// Words for times, durations and counts.

import { h } from "./dom.js";

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** "4 minutes ago", "in 2 days". */
export function ago(when, now = Date.now()) {
  const t = Date.parse(when);
  if (Number.isNaN(t)) return "";
  const seconds = Math.round((t - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return relative.format(seconds, "second");
  if (abs < 2700) return relative.format(Math.round(seconds / 60), "minute");
  if (abs < 64800) return relative.format(Math.round(seconds / 3600), "hour");
  return relative.format(Math.round(seconds / 86400), "day");
}

/** The local date and time. */
export function local(when) {
  const t = Date.parse(when);
  return Number.isNaN(t) ? "" : absolute.format(t);
}

/** A `<time>` saying how long ago, with the exact local time on hover. */
export function time(when, style = "ago") {
  if (!when) return h("span", { class: "muted" }, "never");
  const text = style === "local" ? local(when) : ago(when);
  return h("time", { datetime: when, title: local(when) }, text);
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
  return `${n} ${n === 1 ? one : many}`;
}

/** The first `n` characters of a digest, without its algorithm. */
export function short(digest, n = 12) {
  const d = String(digest || "").replace(/^sha256:/, "");
  return d.length > n ? d.slice(0, n) : d;
}
