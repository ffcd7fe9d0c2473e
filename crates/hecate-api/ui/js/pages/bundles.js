// `/bundles/`: every Bundle, newest first, by its version, with what it is (its
// commit's subject) and where it has got to.
// `/bundles/?name=X`: its version first, the commit it is and who made it when, what
// changed (ops' diff: against its Beacon's previous Bundle, or what a Gate of its
// pipeline runs now, `&against=`), its artifacts and digests, where it stands at each
// Gate (ops' timeline: cleared, verified, being verified, not verified), the Gates it
// cleared, its approvals, and the evidence Fides holds — where "unavailable" is said
// as such and a Fides that did not answer is never shown as a clean record.

import { API, ApiError, get, nsPath } from "../api.js";
import * as c from "../components.js";
import * as diffs from "../diff.js";
import { h } from "../dom.js";
import { commitHref, count, local, short, sourceHref, time } from "../format.js";
import { refiltered } from "../router.js";
import { stops } from "../timeline.js";
import { queuedFor } from "./approvals.js";

export async function render(ctx) {
  return ctx.name ? detail(ctx) : list(ctx);
}

function lastCleared(b) {
  const cleared = ((b.status && b.status.cleared) || []).slice().sort((x, y) => Date.parse(x.at) - Date.parse(y.at));
  return cleared.length ? cleared[cleared.length - 1].gate : "";
}

async function list(ctx) {
  ctx.title("Bundles");
  const [bundles, overview] = await Promise.all([
    get(nsPath(ctx.ns, "bundles"), { signal: ctx.signal }),
    // Which Gate holds which Bundle now is ops' answer (the Overview's timeline).
    get(`${API}/overview`, { signal: ctx.signal }).catch(() => ({ namespaces: [] })),
  ]);
  // Ops' timeline names the Gates that run each Bundle (every Bundle a Gate runs is
  // on it).
  const timeline = (overview.namespaces.find((n) => n.namespace === ctx.ns) || {}).timeline || [];
  const running = new Map(timeline.map((t) => [t.bundle, t.holding]));
  const holding = (b) => running.get(b) || [];
  // Versions as ops says them (the timeline's), for a Bundle made without an alias.
  const index = c.index(bundles, new Map(timeline.filter((t) => t.alias).map((t) => [t.bundle, t.alias])));
  return h(
    "div",
    { class: "page" },
    c.title("Bundles", h("span", { class: "muted small" }, ` in ${ctx.ns}`)),
    bundles.length
      ? c.table(
          `Bundles in ${ctx.ns}, newest first`,
          ["Version", "Subject", "Beacon", "Where", "Artifacts", "Approvals", "Failed", "Emitted"],
          bundles.map((b) => {
            const st = b.status || {};
            const now = holding(b.metadata.name);
            const gate = lastCleared(b);
            return {
              attrs: { "data-bundle": b.metadata.name },
              cells: [
                c.bundle(b.metadata.name, ctx.ns, index),
                subject(b, { short: true }),
                b.spec.beacon,
                // "in" only while a Gate holds it; otherwise where it last crossed.
                now.length ? `in ${now.join(", ")}` : gate ? h("span", { class: "muted" }, `crossed ${gate}, since replaced`) : h("span", { class: "muted" }, "not yet crossed"),
                String((b.spec.artifacts || []).length),
                (st.approvedFor || []).length ? `approved for ${st.approvedFor.map((a) => a.gate).join(", ")}` : "",
                (st.blocked || []).map((x) => h("div", { class: "error-text small" }, `failed at ${x.gate}: ${x.reason}`)),
                time(c.emittedAt(b)),
              ],
            };
          }),
        )
      : c.empty(`No Bundles in ${ctx.ns}, or none you may read.`),
  );
}

/** The Bundle's first commit artifact: the commit it is, as its Beacon recorded it. */
function commitOf(b) {
  return ((b.spec && b.spec.artifacts) || []).map((a) => a.commit).find(Boolean) || null;
}

/**
 * What the Bundle is, from its commit: its subject, then who made it and when (`short`:
 * a table's cell, without the SHA); nothing when no commit says.
 */
function subject(b, { short: brief = false } = {}) {
  const commit = commitOf(b);
  if (!commit || !(commit.message || commit.author || commit.committedAt)) return brief ? "" : null;
  const by = [
    commit.author ? [brief ? "" : "by ", diffs.person(commit.author)] : null,
    commit.committedAt ? time(commit.committedAt) : null,
    !brief && commit.sha ? c.outLink(commitHref(commit.repo, commit.sha), h("code", { title: commit.sha }, short(commit.sha, 7))) : null,
  ].filter(Boolean);
  return h(
    brief ? "span" : "p",
    { class: brief ? "bundle-subject-cell" : "lead bundle-subject", "data-field": "subject" },
    commit.message ? h("span", { class: "server-text" }, commit.message) : h("span", { class: "muted" }, "no subject recorded"),
    by.length ? h("span", { class: "muted small" }, by.map((x, i) => [i ? " · " : brief ? " · " : " — ", x])) : null,
  );
}

/**
 * What to compare the Bundle with: its Beacon's previous Bundle, or what each Gate of
 * its pipeline (`gates`) runs now. The choice is the URL's (`&against=`).
 */
function compareWith(ctx, gates, against) {
  const choose = refiltered("/bundles/", ctx.params)("against");
  const options = [["", "its previous Bundle"], ...gates.map((g) => [g, `what ${g} runs now`])];
  if (against && !gates.includes(against)) options.push([against, against]);
  return h(
    "form",
    { class: "compare", onsubmit: (e) => e.preventDefault() },
    h("label", { for: "bundle-against" }, "Compare with"),
    h("select", { id: "bundle-against", onchange: choose }, options.map(([value, words]) => h("option", { value, selected: value === against }, words))),
  );
}

function evidencePanel(state) {
  if (!state.done) return h("p", { class: "muted" }, "Asking Fides for this Bundle's evidence…");
  if (state.error) {
    const e = state.error;
    if (e instanceof ApiError && e.status === 403) return h("p", { class: "error-text" }, h("strong", null, "Not permitted: "), h("span", { class: "server-text" }, e.message));
    return h(
      "div",
      { class: "evidence-error", "data-evidence": "error" },
      h("p", { class: "error-text" }, h("strong", null, "Fides did not answer: "), h("span", { class: "server-text" }, e.message)),
      h("p", null, "This is not the same as having no evidence: nobody could check. Try again later."),
    );
  }
  const ev = state.value;
  if (ev.unavailable) {
    return h(
      "div",
      { class: "evidence-unavailable", "data-evidence": "unavailable" },
      h("p", null, h("strong", null, "Evidence unavailable: "), h("span", { class: "server-text" }, ev.unavailable)),
      h("p", { class: "muted" }, "Nothing here is a clean bill of health: no evidence was checked."),
    );
  }
  const v = ev.verdict;
  const change = ev.change;
  const controls = (title, items) =>
    items && items.length ? h("div", null, h("h4", null, title), h("ul", null, items.map((x) => h("li", null, [x.control, x.name].filter(Boolean).join(" "), (x.reasons || x.waived_reasons || []).length ? ` (${(x.reasons || x.waived_reasons).join(", ")})` : "")))) : null;
  return h(
    "div",
    { "data-evidence": "verdict" },
    v
      ? [
          h("p", { class: "lead" }, h("strong", null, v.recommendation || "no recommendation"), ` · risk ${v.risk_score}/100${v.risk_level ? ` (${v.risk_level})` : ""}`),
          v.summary ? h("p", null, v.summary) : null,
          c.facts([
            ["Controls passed", String((v.passed || []).length)],
            ["Controls failed", String((v.failed || []).length)],
            ["Missing evidence", String((v.missing_evidence || []).length)],
            ["Waived", String((v.waived || []).length)],
            ["Attestations", String((v.attestations && v.attestations.total) || 0)],
            ["Non-compliant attestations", String((v.attestations && v.attestations.non_compliant) || 0)],
            ["Human approvers", String((v.approvals && v.approvals.human_approvers) || 0)],
            ["Four eyes", v.approvals && v.approvals.four_eyes ? "yes" : "no"],
          ]),
          controls("Failed controls", v.failed),
          controls("Missing evidence", v.missing_evidence),
          controls("Waived controls", v.waived),
          v.segregation_of_duties
            ? h(
                "div",
                null,
                h("h4", null, "Segregation of duties"),
                c.facts([
                  ["Committer", v.segregation_of_duties.committer || "unknown"],
                  ["Approvers", (v.segregation_of_duties.approvers || []).join(", ") || "none"],
                  ["Deployers", (v.segregation_of_duties.deployers || []).join(", ") || "none"],
                  ["Compliant", v.segregation_of_duties.compliant ? "yes" : "no"],
                  (v.segregation_of_duties.violations || []).length ? ["Violations", v.segregation_of_duties.violations.join("; ")] : null,
                ]),
              )
            : null,
        ]
      : h("p", null, "Fides gave no change-gate verdict."),
    change
      ? change.found
        ? c.facts([
            ["Change request", change.number],
            ["Description", change.short_description || ""],
            ["Approval", change.approval],
            ["State", `${change.state}${change.on_hold ? " (on hold)" : ""}`],
            ["Risk", change.risk || ""],
          ])
        : h("p", null, "No change request in ServiceNow for this artifact.")
      : null,
    ev.trail ? h("p", { class: "small" }, `Trail ${ev.trail}`, ev.gate ? ` (via Gate ${ev.gate})` : "", ev.digest ? ` for ${ev.digest}` : "") : null,
  );
}

/** The Bundle's records, oldest first; records of one second keep their order. */
function byTime(records) {
  // A stable sort: equal times keep the order the status lists them in.
  return records.slice().sort((x, y) => (Date.parse(x.at) || 0) - (Date.parse(y.at) || 0));
}

// The audit's entries that are people's decisions on a Bundle, in a person's words.
const DECISIONS = new Set(["approved", "rejected", "withdrawn"]);
const DECISION_WORDS = { approved: "approved", rejected: "rejected", withdrawn: "withdrew a rejection" };

async function detail(ctx) {
  const { ns, name } = ctx;
  const against = ctx.params.get("against") || "";
  ctx.title(`Bundle ${name}`);
  const evidence = ctx.once("evidence", () => get(nsPath(ns, "bundles", name, "evidence"), { signal: ctx.signal }));
  const [b, overview, changed, queue, audit, gateList] = await Promise.all([
    get(nsPath(ns, "bundles", name), { signal: ctx.signal }),
    // Where it stands at each Gate is ops' answer (the Overview's timeline), for the
    // Bundles it keeps there: the newest, and any a Gate runs.
    get(`${API}/overview`, { signal: ctx.signal }).catch(() => ({ namespaces: [] })),
    // What changed is ops' too; a diff that cannot be read is said, the page stays.
    diffs.read(ns, name, against, { signal: ctx.signal }).then(
      (diff) => ({ diff }),
      (error) => ({ error }),
    ),
    // The decision record: where its approvals stand for the signed-in person (the
    // Approvals page's queue), and every approval and rejection ops' trail holds.
    get(nsPath(ns, "approvals"), { signal: ctx.signal }).catch(() => null),
    get(nsPath(ns, "audit"), { signal: ctx.signal }).catch(() => null),
    get(nsPath(ns, "gates"), { signal: ctx.signal }).catch(() => []),
  ]);
  ctx.approvals = queue;
  const st = b.status || {};
  const index = c.index([b]);
  const automatic = new Set(gateList.filter((g) => g.spec && g.spec.auto).map((g) => g.metadata.name));
  const decided = (audit || []).filter((e) => e.bundle === name && DECISIONS.has(e.kind));
  const cleared = st.cleared || [];
  const mine = overview.namespaces.find((n) => n.namespace === ns) || {};
  const track = (mine.timeline || []).find((t) => t.bundle === name);
  // Its version as ops says it: the alias, else derived from its artifacts.
  const version = b.spec.alias || (changed.diff && changed.diff.to.version) || (track && track.alias) || "";
  // The Gates of its pipeline: those on its way (the timeline's), else those that admit its Beacon.
  const gates = track
    ? track.gates.map((s) => s.gate)
    : (mine.gates || []).filter((g) => (g.admits || []).some((a) => a.from && a.from.beacon === b.spec.beacon)).map((g) => g.name);
  const timeline = [
    // Its emission first, whatever the clocks say: nothing happens to a Bundle before
    // it exists, and its time (nanoseconds) is finer than its records' (seconds), so
    // a Gate cleared within the second it was emitted would otherwise sort before it.
    { at: c.emittedAt(b), what: "emitted", gate: "", actor: b.spec.beacon ? `Beacon ${b.spec.beacon}` : "", reason: "", passage: "" },
    ...byTime([
      ...cleared.map((x) => ({ ...x, what: "cleared" })),
      ...(st.blocked || []).map((x) => ({ ...x, what: "failed" })),
      // Crossed, and its verification there said no (DECISION 139).
      ...(st.unverified || []).map((x) => ({ ...x, what: "not verified" })),
    ]),
  ];
  return h(
    "div",
    { class: "page" },
    c.title(version || name, version ? h("span", { class: "muted small" }, ` ${name}`) : null),
    subject(b),
    c.facts([
      ["Beacon", c.link("/beacons/", { name: b.spec.beacon, namespace: ns }, b.spec.beacon)],
      ["Content digest", h("code", { class: "digest" }, b.spec.digest || "none")],
      ["Emitted", [time(c.emittedAt(b)), ` (${local(c.emittedAt(b))})`]],
    ]),
    c.section(
      "What changed",
      { class: "what-changed" },
      compareWith(ctx, gates, against),
      changed.diff ? diffs.view(changed.diff, { limit: 50 }) : diffs.unread(changed.error),
    ),
    c.section(
      "Approvals",
      { class: "decisions" },
      queuedFor(ctx, queue, name, index, automatic),
      decided.length
        ? c.table(
            `Approvals and rejections of ${name}, newest first`,
            ["When", "What", "Gate", "Who", "Detail"],
            decided.map((e) => ({
              attrs: { "data-decision": e.kind, "data-gate": e.gate },
              cells: [time(e.at, "local"), DECISION_WORDS[e.kind] || e.kind, c.link("/gates/", { name: e.gate, namespace: ns }, e.gate), e.actor, e.detail ? h("span", { class: "server-text" }, e.detail) : ""],
            })),
          )
        : c.empty(audit ? "No approvals or rejections recorded." : "The record of approvals could not be read."),
    ),
    c.section(
      "Artifacts",
      null,
      c.table(
        `Artifacts of ${name}`,
        ["Kind", "Artifact", "Digest or source"],
        (b.spec.artifacts || []).map((a) => {
          const x = c.artifact(a);
          const digest = h("code", { class: "digest" }, x.digest);
          if (a.commit) return [x.kind, [c.outLink(sourceHref(a.commit.repo), a.commit.repo), `@${a.commit.tag || a.commit.branch || ""}`], c.outLink(commitHref(a.commit.repo, a.commit.sha), digest)];
          if (a.chart) return [x.kind, x.ref, c.outLink(sourceHref(a.chart.repo), digest)];
          return [x.kind, x.ref, digest];
        }),
      ),
    ),
    track && track.gates.length ? c.section("Where it stands", { class: "timeline" }, stops(ns, track, version || name)) : null,
    c.section(
      "Gates cleared",
      null,
      cleared.length
        ? c.table(`Gates ${name} has cleared`, ["Gate", "When", "By", "Passage"], cleared.map((x) => [c.link("/gates/", { name: x.gate, namespace: ns }, x.gate), time(x.at), x.actor || "automatically", x.passage ? c.link("/passages/", { name: x.passage, namespace: ns }, x.passage) : ""]))
        : c.empty("It has not cleared any Gate yet."),
    ),
    c.section("Evidence", null, evidencePanel(evidence)),
    c.section(
      "Timeline",
      null,
      c.table(
        `What happened to ${name}, oldest first`,
        ["When", "What", "Gate", "Who", "Passage", "Why"],
        timeline.map((x) => ({
          attrs: { class: x.what === "failed" || x.what === "not verified" ? "refused" : "", "data-what": x.what },
          cells: [time(x.at, "local"), x.what, x.gate, x.actor, x.passage ? c.link("/passages/", { name: x.passage, namespace: ns }, x.passage) : "", x.reason],
        })),
      ),
    ),
  );
}
