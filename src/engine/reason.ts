/**
 * Certification verdicts in words, for people (playground, dashboard).
 *
 * @module
 */

import type { Assessment } from "./answer.ts";
import type { DriftState } from "./drift.ts";

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

/**
 * The online drift guard's state in words, for one question: quiet or
 * alarmed, since which request, and the evidence against the alarm level.
 */
export function driftInWords(state: DriftState): string {
  const evidence = `evidence ${formatEvidence(state.evidence)} of ${
    formatEvidence(state.alarm_level)
  }`;
  return state.status === "alarmed"
    ? `Drift guard: alarmed since request ${state.alarmed_at} of this question (${evidence}).`
    : `Drift guard: quiet (${evidence}, after ${state.observed} requests).`;
}

function formatEvidence(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toPrecision(2);
}

/**
 * One sentence saying why an answer is or is not certified; with the
 * question's drift guard `state`, a second sentence on the guard.
 */
export function reasonInWords(a: Assessment, state?: DriftState): string {
  const main = verdictInWords(a, state);
  return state === undefined || a.answer.flag === "unsupported"
    ? main
    : `${main} ${driftInWords(state)}`;
}

function verdictInWords(a: Assessment, state: DriftState | undefined): string {
  const { answer, threshold, alpha, fullConfidence } = a;
  const bound = alpha === null
    ? ""
    : ` (certified answers disagree with the model at most ${
      pct(alpha)
    } of the time)`;
  switch (answer.flag) {
    case null:
      return `Certified: confidence ${
        pct(fullConfidence)
      } reaches the threshold ${pct(threshold ?? 0)}${bound}.`;
    case "empty_input":
      return "Not certified: the text is empty, and an empty text is never served.";
    case "unsupported":
      return `Not certified: the table has no question named "${a.question}".`;
    case "options_changed":
      return "Not certified: an offered option is one the table never learned, so the language model must decide.";
    case "new_options_served":
      return "Served by configuration but not certified: an offered option is one the table never learned.";
    case "option_removed":
      return "Not certified: the answer over all options is one the request removed.";
    case "uncalibrated":
      return "Not certified: this question has no calibrated threshold (too little held-out data, or no threshold passed the test).";
    case "drift":
      if (state?.status === "alarmed") {
        return "Not certified: the drift guard's alarm stands for this question (recent traffic does not look like the calibration data).";
      }
      return state === undefined
        ? "Not certified: the drift guard withholds certification (recent traffic, or this text, does not look like the calibration data)."
        : `Not certified: this text does not look like the calibration texts (${
          pct(a.novelty)
        } of its features were never seen in training).`;
    case "low_confidence":
      return `Not certified: confidence ${
        pct(fullConfidence)
      } is below the threshold ${pct(threshold ?? 1)}.`;
    case "low_radius":
      return `Not certified: ${answer.radius} inserted word(s) could change the answer, fewer than the bundle's minimum for exposed input.`;
    case "manual_threshold":
      return `Served by a forced threshold but not certified: confidence ${
        pct(fullConfidence)
      } is below the calibrated threshold.`;
  }
}
