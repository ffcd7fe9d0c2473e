// A rollout across a Gate's targets as its record says it (DECISIONS 151, 158), drawn
// the same way on the Gate page (ops' reading of the latest rollout) and the Passage
// page (the Passage's own record). Formatting only: the record's words are the
// controller's, its phases ops'.

import * as c from "./components.js";
import { h } from "./dom.js";
import { time } from "./format.js";

const ROLLOUT_TONE = { Progressing: "info", Halted: "bad", Completed: "ok", Accepted: "warn" };
const TARGET_TONE = { Running: "info", Verifying: "info", Succeeded: "ok", Failed: "bad", Aborted: "warn" };

/** A rollout's phase (`Progressing`, `Halted`, `Completed`, `Accepted`) as a pill. */
export function phasePill(phase) {
  return c.pill(phase, ROLLOUT_TONE[phase] || "");
}

/** `main@sha1:3f1c2a9d0e4b…` as `main@sha1:3f1c2a9d0e4b`: the source, and enough of the ID. */
function shortRevision(revision) {
  const cut = revision.lastIndexOf(":") + 1;
  return revision.slice(0, cut) + revision.slice(cut, cut + 12);
}

/** Each target's record, wave by wave: phase, attempt, the step it is on or failed at, the revision it pushed. */
export function targetsTable(caption, targets) {
  // The record leaves out what is zero (the first wave, no attempt, the first step).
  const wave = (x) => (x.wave || 0) + 1;
  const byWave = [...targets].filter((x) => !x.departedAt).sort((a, b) => wave(a) - wave(b));
  const step = (x) => (x.phase === "Pending" ? "–" : `${(x.currentStep || 0) + 1}${x.reason ? ` (${x.reason})` : ""}`);
  return c.table(
    caption,
    ["Wave", "Target", "Phase", "Attempt", "Step", "Revision", "Started"],
    byWave.map((x) => ({
      cells: [
        String(wave(x)),
        x.name,
        c.pill(x.phase, TARGET_TONE[x.phase] || ""),
        x.attempt ? String(x.attempt) : "–",
        step(x),
        x.pushedRevision ? h("code", { title: x.pushedRevision }, shortRevision(x.pushedRevision)) : "–",
        x.startedAt ? time(x.startedAt) : "–",
      ],
      attrs: { "data-target": x.name, "data-phase": x.phase, "data-wave": String(wave(x)) },
    })),
  );
}
