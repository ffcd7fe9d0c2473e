// `/passages/` (optionally `?gate=`): every crossing attempt, newest first.
// `/passages/?name=P`: one crossing, step by step, with abort while it runs.

import { get, nsPath } from "../api.js";
import * as actions from "../actions.js";
import * as c from "../components.js";
import { h } from "../dom.js";
import { duration, time } from "../format.js";

export async function render(ctx) {
  return ctx.name ? detail(ctx) : list(ctx);
}

const TERMINAL = ["Succeeded", "Failed", "Aborted"];

function done(p) {
  const steps = (p.status && p.status.steps) || [];
  const total = steps.length || (p.spec.steps || []).length;
  return `${steps.filter((s) => ["Succeeded", "Skipped"].includes(s.phase)).length}/${total} steps`;
}

async function list(ctx) {
  const gate = ctx.params.get("gate") || "";
  ctx.title(gate ? `Passages of ${gate}` : "Passages");
  const query = gate ? `?gate=${encodeURIComponent(gate)}` : "";
  const [passages, bundles] = await Promise.all([
    get(nsPath(ctx.ns, "passages") + query, { signal: ctx.signal }),
    get(nsPath(ctx.ns, "bundles"), { signal: ctx.signal }).catch(() => []),
  ]);
  const index = c.index(bundles);
  return h(
    "div",
    { class: "page" },
    c.title(gate ? `Passages of ${gate}` : "Passages", h("span", { class: "muted small" }, ` in ${ctx.ns}`)),
    gate ? h("p", null, c.link("/passages/", { namespace: ctx.ns }, "Show the Passages of every Gate")) : null,
    passages.length
      ? c.table(
          "Passages, newest first",
          ["Passage", "Crossing", "Phase", "Progress", "Took", "By", "Started", "Message"],
          passages.map((p) => {
            const st = p.status || {};
            return {
              attrs: { "data-passage": p.metadata.name, class: st.phase === "Failed" ? "refused" : "" },
              cells: [
                c.link("/passages/", { name: p.metadata.name, namespace: ctx.ns }, p.metadata.name),
                [c.bundle(p.spec.bundle, ctx.ns, index), " → ", c.link("/gates/", { name: p.spec.gate, namespace: ctx.ns }, p.spec.gate)],
                c.phase(st.phase),
                done(p),
                st.startedAt ? duration(st.startedAt, st.finishedAt) : "",
                p.spec.actor || "automatically",
                st.startedAt ? time(st.startedAt) : h("span", { class: "muted" }, "not started"),
                st.message ? h("span", { class: st.phase === "Failed" ? "error-text" : "" }, st.message) : "",
              ],
            };
          }),
        )
      : c.empty(gate ? `No Passage has tried to cross ${gate}.` : `No Passages in ${ctx.ns}.`),
  );
}

async function detail(ctx) {
  const { ns, name } = ctx;
  ctx.title(`Passage ${name}`);
  const p = await get(nsPath(ns, "passages", name), { signal: ctx.signal });
  const b = await get(nsPath(ns, "bundles", p.spec.bundle), { signal: ctx.signal }).catch(() => null);
  const index = c.index(b ? [b] : []);
  const st = p.status || {};
  const phase = st.phase || "Pending";
  const steps = st.steps && st.steps.length ? st.steps : (p.spec.steps || []).map((s) => ({ uses: s.uses, as: s.as, phase: "Pending" }));
  const label = `${c.bundleText(p.spec.bundle, index)} → ${p.spec.gate}`;
  let abortSection = null;
  if (!TERMINAL.includes(phase)) {
    abortSection = c.section(
      "Abort",
      null,
      p.spec.abort
        ? h("p", null, "An abort has been asked for; the Passage stops at its next step.")
        : [
            h("p", null, "Stops the crossing: the remaining steps do not run."),
            h(
              "button",
              {
                type: "button",
                class: "danger",
                "data-action": "abort",
                "data-passage": name,
                onclick: async () => {
                  if (await actions.abort(ns, name, label)) ctx.refresh();
                },
              },
              "Abort this Passage",
            ),
          ],
    );
  }
  return h(
    "div",
    { class: "page" },
    c.title(name, " ", c.phase(phase)),
    h(
      "p",
      { class: "lead" },
      c.bundle(p.spec.bundle, ns, index),
      " → ",
      c.link("/gates/", { name: p.spec.gate, namespace: ns }, p.spec.gate),
      " · ",
      p.spec.actor ? `by ${p.spec.actor}` : "automatically",
      st.startedAt ? ` · took ${duration(st.startedAt, st.finishedAt)}${TERMINAL.includes(phase) ? "" : " so far"}` : " · not started",
    ),
    st.message ? h("p", { class: ["message-line", phase === "Failed" && "error-text"], "data-field": "message" }, st.message) : null,
    c.section(
      "Steps",
      null,
      c.table(
        `Steps of ${name}`,
        ["#", "Step", "Phase", "Took", "Attempts", "Reason", "Message"],
        steps.map((s, i) => ({
          attrs: { class: s.phase === "Failed" ? "refused" : "" },
          cells: [
            String(i + 1),
            [s.as || s.uses, s.as ? h("span", { class: "muted small" }, ` (${s.uses})`) : null],
            c.phase(s.phase),
            s.startedAt ? duration(s.startedAt, s.finishedAt) : "",
            s.attempts > 1 ? `${s.attempts} attempts` : "",
            s.reason ? h("code", null, s.reason) : "",
            s.message || "",
          ],
        })),
      ),
    ),
    abortSection,
    st.evidence
      ? c.section("Evidence", null, h("p", null, `${st.evidence.verdict || "no verdict"}${st.evidence.risk != null ? ` · risk ${st.evidence.risk}/100` : ""}${st.evidence.trail ? ` · trail ${st.evidence.trail}` : ""}`))
      : null,
  );
}
