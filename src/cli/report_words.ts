/**
 * The training report's split and leakage check in words, for `train` and
 * `inspect`.
 *
 * @module
 */

import type { LeakageReport } from "../train/leakage.ts";
import { percent } from "../train/meter.ts";
import type { SplitReport } from "../train/trainer.ts";

/**
 * The split in one line: mode, why, and the traces and units (texts,
 * clusters or groups kept together) of each part.
 */
export function splitInWords(s: SplitReport): string {
  const unit = s.mode === "group"
    ? "groups"
    : s.mode === "random"
    ? "clusters"
    : "texts";
  const how = s.mode === "random"
    ? s.similarity !== null && s.similarity < 1
      ? `random, texts with TF-IDF cosine >= ${s.similarity} kept together (${s.similar_links} joined a cluster)`
      : "random, equal texts kept together"
    : s.mode === "time"
    ? "time, calibrated and tested on the newest traces"
    : "group, no group in two parts";
  const parts = Object.entries(s.parts).map(([name, p]) =>
    `${name} ${p.traces} traces in ${p.units} ${unit}`
  ).join(", ");
  const feedback = s.feedback_in_fit ?? 0;
  const biased = feedback === 0
    ? ""
    : `; ${feedback} ${
      feedback === 1 ? "trace is a line" : "traces are lines"
    } of a feedback log (audited, uncertified or client-sent answers, not a sample of the traffic), kept in fit: none calibrates or tests`;
  return `${how} (${s.reason}): ${parts}${biased}`;
}

/**
 * The leakage check in one line; with a warning, the warning in full or
 * (`full` false, when it was already printed) a pointer to it.
 */
export function leakageInWords(l: LeakageReport, full = true): string {
  const n = l.with_twin.answers + l.without_twin.answers;
  if (n === 0) return "no calibration answers";
  const share = percent(l.with_twin.answers / n);
  const figures =
    `${share} of calibration answers have a near-twin in training ` +
    `(cosine >= ${l.similarity}); accuracy ${
      percent(l.with_twin.accuracy)
    } with, ` +
    `${percent(l.without_twin.accuracy)} without`;
  if (l.warning === null) return figures;
  return full
    ? `${figures}. Warning: ${l.warning}`
    : `${figures}: calibration may be optimistic for traffic with fewer near-twins (see the warning above)`;
}
