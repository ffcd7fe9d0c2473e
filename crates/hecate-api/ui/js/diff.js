// What changed between two Bundles (DECISION 140), as ops' `BundleDiff` says it: what
// runs now and what comes, each artifact that changes, the commits between them
// (newest first), which way it goes — back is a rollback, its commits undone — and why
// the list may not be whole (the API's own words). Nothing is compared here: the page
// and the confirmation dialogs draw the answer of `GET …/bundles/{name}/diff`.

import { get, nsPath } from "./api.js";
import { h } from "./dom.js";
import { outLink } from "./components.js";
import { commitHref, count, short, sourceHref, time } from "./format.js";

/** ops' diff of Bundle `bundle` against `against` (a Gate or a Bundle; "": its previous Bundle). */
export function read(ns, bundle, against = "", options = {}) {
  const query = against ? `?against=${encodeURIComponent(against)}` : "";
  return get(nsPath(ns, "bundles", bundle, "diff") + query, options);
}

/** A Bundle as the diff names it: its version, else its name. */
function named(ref) {
  return (ref && (ref.version || ref.name)) || "";
}

/**
 * The line that says what is compared: "production runs v1.2.0 now → v1.3.0",
 * "production runs nothing yet → v1.3.0", "v1.2.0 → v1.3.0".
 */
export function headline(d) {
  const to = named(d.to);
  if (d.gate) {
    if (!d.from) return `${d.gate} runs nothing yet → ${to}`;
    if (d.direction === "same") return `${d.gate} runs ${to} now: nothing changes`;
    return `${d.gate} runs ${named(d.from)} now → ${to}`;
  }
  if (!d.from) return `${to}: no earlier Bundle of its Beacon is kept to compare with`;
  if (d.direction === "same") return `${named(d.from)} and ${to} hold the same: nothing changes`;
  return `${named(d.from)} → ${to}`;
}

/** One artifact's change in words: "image ghcr.io/acme/shop: v1.2.0 → v1.3.0". */
function artifactLine(a) {
  const what = [`${a.kind} `, outLink(sourceHref(a.repo), a.repo), a.name ? ` ${a.name}` : ""];
  let change;
  if (a.from == null) change = `added, ${a.to || "no version"}`;
  else if (a.to == null) change = `removed (was ${a.from})`;
  else if (a.from === a.to && a.fromDigest !== a.toDigest) change = `${a.to}, rebuilt (${short(a.fromDigest, 7)} → ${short(a.toDigest, 7)})`;
  else change = `${a.from} → ${a.to}`;
  return h("li", { "data-kind": a.kind }, h("span", { class: "diff-artifact" }, what), ": ", h("span", { class: "diff-versions" }, change));
}

/** "Ann" from "Ann <ann@example.com>"; the whole on hover. */
export function person(who) {
  if (!who) return null;
  const name = who.replace(/\s*<[^>]*>\s*$/, "") || who;
  return h("span", { class: "diff-author", title: who }, name);
}

/** `repo`: the diff's one git repository, whose forge can show each commit; none when several or none. */
function commitLine(c, repo) {
  return h(
    "li",
    { class: "diff-commit", "data-sha": c.sha },
    h("span", { class: "diff-subject server-text" }, c.subject || "(no subject recorded)"),
    h(
      "span",
      { class: "muted small diff-by" },
      c.author ? [" · ", person(c.author)] : null,
      c.committedAt ? [" · ", time(c.committedAt)] : null,
      " · ",
      outLink(commitHref(repo, c.sha), h("code", { title: c.sha }, short(c.sha, 7))),
    ),
  );
}

/**
 * What an aborted crossing left on the Gate's branch (ops' `leftBehind`): the
 * headline's "runs" is the Gate's record, and Flux applies this commit instead until
 * the next crossing (#53).
 */
function leftBehindLine(d) {
  const left = d.leftBehind;
  return h(
    "p",
    { class: "diff-left-behind warn-text", "data-left-behind": left.passage },
    "But ",
    h("code", null, left.branch),
    " holds ",
    h("code", { title: left.commit }, short(left.commit, 7)),
    `, pushed by the aborted ${left.passage} (${left.bundle}): Flux applies it there until the next crossing, whatever ${d.gate}'s record says it runs.`,
  );
}

/**
 * The diff drawn: its headline, the artifacts that change (those that do not,
 * counted), the commits between them — at most `limit`, the rest "and N more", in a
 * box that scrolls on its own (`scroll`: a dialog on a phone stays small) — and any
 * gap in the API's words.
 */
export function view(d, { limit = 10, scroll = false } = {}) {
  const back = d.direction === "back";
  const changed = (d.artifacts || []).filter((a) => a.changed);
  const unchanged = (d.artifacts || []).length - changed.length;
  const commits = d.commits || [];
  const shown = commits.slice(0, limit);
  const more = commits.length - shown.length + (d.moreCommits || 0);
  const total = commits.length + (d.moreCommits || 0);
  const repos = [...new Set((d.artifacts || []).filter((a) => a.kind === "commit").map((a) => a.repo))];
  const list = h("ol", { class: "diff-commits" }, shown.map((x) => commitLine(x, repos.length === 1 ? repos[0] : null)));
  const heading = back ? `These commits would be undone (${total}):` : `Commits it brings (${total}):`;
  return h(
    "div",
    { class: "diff", "data-direction": d.direction, "data-gate": d.gate || null },
    h("p", { class: "diff-headline" }, h("strong", null, headline(d))),
    back ? h("p", { class: "diff-back" }, `Going back to an older Bundle: a rollback. ${named(d.to)} is older than ${named(d.from)}.`) : null,
    d.leftBehind ? leftBehindLine(d) : null,
    d.direction === "same"
      ? null
      : [
          changed.length
            ? h("ul", { class: "diff-artifacts" }, changed.map(artifactLine))
            : h("p", { class: "muted small" }, "No artifact changes."),
          unchanged ? h("p", { class: "muted small diff-unchanged" }, `${count(unchanged, "artifact")} unchanged.`) : null,
          commits.length
            ? [
                h("p", { class: "diff-commits-heading" }, heading),
                scroll ? h("div", { class: "diff-scroll", tabindex: "0", role: "region", "aria-label": back ? "Commits undone" : "Commits it brings" }, list) : list,
                more > 0 ? h("p", { class: "muted small diff-more" }, `and ${more} more`) : null,
              ]
            : d.gap
              ? null
              : h("p", { class: "muted small diff-none" }, "No commits are recorded between them."),
        ],
    d.gap ? h("p", { class: "diff-gap", "data-gap": d.gap }, h("strong", null, "Not every commit is listed: "), h("span", { class: "server-text" }, d.gapWords || d.gap), ".") : null,
  );
}

/** Said where the diff could not be read: whatever else was asked still works. */
export function unread(error) {
  return h(
    "p",
    { class: "diff-unread", "data-diff": "unread" },
    "What changes could not be read",
    error && error.message ? [": ", h("span", { class: "server-text" }, error.message)] : "",
    ".",
  );
}
