/**
 * The split in words, one description for every place that shows it:
 * training's progress (`trainer.ts`), and `train`, `inspect` and the HTML
 * report reading a bundle's report.
 *
 * @module
 */

import type { SplitReport } from "./report.ts";

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
    } of a feedback log that ${
      feedback === 1 ? "is" : "are"
    } no sample of the traffic (uncertified answers the service did not pick, client-sent answers, or lines its ledger does not account for), kept in fit: none calibrates or tests`;
  return `${how} (${s.reason}): ${parts}${biased}${
    sampleInWords(s.feedback_sample)
  }`;
}

/**
 * What a feedback log's ledger made of its lines, per question, in words
 * (empty without a ledger).
 */
export function sampleInWords(
  sample: SplitReport["feedback_sample"],
): string {
  if (sample === undefined) return "";
  const each = Object.entries(sample).map(([name, f]) =>
    `${name}: ${f.held} picked decisions calibrate or test${
      f.missing > 0
        ? ` (${f.missing} picked but never answered count as certified disagreements)`
        : ""
    }${
      f.census > 0
        ? `, ${f.census} lines of complete censuses split like traces`
        : ""
    }`
  );
  return `; from the feedback log's ledger (${
    Object.values(sample).reduce((a, f) => a + f.stretches, 0)
  } stretches): ${each.join("; ")}`;
}
