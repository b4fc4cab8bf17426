/**
 * The live certificate in the Prometheus text exposition, after the
 * service's families in `/metrics` (same writer and conventions:
 * `dtable_live_` prefix, counters end in `_total`, labels only question
 * names; the second tier's certificate as `dtable_live_semantic_*`).
 *
 * @module
 */

import type { Exposition, MetricType } from "./exposition.ts";
import type { LiveQuestionStats, LiveStatsDocument } from "../openapi/mod.ts";

/** A per-question family; a null value writes no sample for the question. */
type Family = [
  name: string,
  type: MetricType,
  help: string,
  value: (q: LiveQuestionStats) => number | null,
];

const QUESTION_FAMILIES: readonly Family[] = [
  [
    "dtable_live_threshold",
    "gauge",
    "Threshold in force by the live certificate (absent while withdrawn or uncalibrated).",
    (q) => q.threshold,
  ],
  [
    "dtable_live_bundle_threshold",
    "gauge",
    "The bundle's own threshold.",
    (q) => q.bundle_threshold,
  ],
  [
    "dtable_live_withdrawn",
    "gauge",
    "1 while live audits have withdrawn the question's certification.",
    (q) => q.reason === "withdrawn" ? 1 : 0,
  ],
  [
    "dtable_live_audits_total",
    "counter",
    "Audits answered.",
    (q) => q.audited,
  ],
  [
    "dtable_live_audit_disagreements_total",
    "counter",
    "Audits where the reference model disagreed with the certified answer.",
    (q) => q.audit_disagreements,
  ],
  [
    "dtable_live_feedback_total",
    "counter",
    "Feedback counted on uncertified answers.",
    (q) => q.feedback,
  ],
  [
    "dtable_live_uncertified_decisions_total",
    "counter",
    "Uncertified answers the feedback should cover.",
    (q) => q.uncertified_decisions,
  ],
  [
    "dtable_live_disagreement_estimate",
    "gauge",
    "Live estimate of the disagreement rate at the threshold in force, inverse-probability weighted and clamped to [0, 1] (absent before any decision).",
    (q) => q.estimate,
  ],
  [
    "dtable_live_feedback_agrees_too_much",
    "gauge",
    "1 once the feedback agrees with the table far more than calibration allows (an echoing proxy?); the threshold is then never more lenient than the bundle's. Absent for a bundle without calibration bands.",
    (q) =>
      q.feedback_check === null
        ? null
        : q.feedback_check.agrees_too_much
        ? 1
        : 0,
  ],
  [
    "dtable_live_feedback_disagrees_too_much",
    "gauge",
    "1 once the feedback disagrees far more than calibration allows (a lying proxy, or a changed model). Absent for a bundle without calibration bands.",
    (q) =>
      q.feedback_check === null
        ? null
        : q.feedback_check.disagrees_too_much
        ? 1
        : 0,
  ],
  [
    "dtable_live_feedback_labelled",
    "gauge",
    "Labelled answers (audits and feedback on uncertified answers) the feedback check has weighed.",
    (q) => q.feedback_check?.labelled ?? null,
  ],
  [
    "dtable_live_feedback_disagreed",
    "gauge",
    "Of those, the ones that disagreed with the table.",
    (q) => q.feedback_check?.disagreed ?? null,
  ],
  [
    "dtable_live_feedback_expected_disagreements",
    "gauge",
    "Disagreements the bundle's calibration expects on those labelled answers.",
    (q) => q.feedback_check?.expected ?? null,
  ],
  [
    "dtable_live_disagreement_upper",
    "gauge",
    "Upper end of the anytime-valid interval of that rate (absent while unknown).",
    (q) => q.upper,
  ],
];

/** Writes the `live` section of `/v1/stats`. */
export function writeLiveMetrics(e: Exposition, live: LiveStatsDocument): void {
  e.single(
    "dtable_live_audit_rate",
    "gauge",
    "Probability that a certified answer is picked for audit (0: the live certificate is off).",
    live.audit_rate,
  );
  e.single(
    "dtable_live_pending_audits",
    "gauge",
    "Audits waiting for the proxy's answer.",
    live.pending_audits,
  );
  e.single(
    "dtable_live_audits_dropped_total",
    "counter",
    "Audits dropped unanswered (expired, or the oldest when full).",
    live.audits_dropped,
  );
  if (live.fleet !== null) {
    e.single(
      "dtable_live_store_rejected_syncs_total",
      "counter",
      "Syncs and policy changes the fleet's store answered with an error; a refused sync's audits were given up.",
      live.fleet.rejected_syncs,
    );
  }
  e.single(
    "dtable_live_resets_total",
    "counter",
    "Resets of the live evidence applied here (POST /v1/live/reset, or learnt from the fleet's store).",
    live.resets.total,
  );
  writeQuestionFamilies(e, live.questions, "dtable_live_", "");
  // The second tier's certificate, per question that has one (families of
  // their own: a `tier` label would mix the two streams under one name).
  if (live.semantic_questions !== undefined) {
    writeQuestionFamilies(
      e,
      live.semantic_questions,
      "dtable_live_semantic_",
      "The second tier's certificate: ",
    );
  }
}

/** Writes every per-question family of `questions`, its name's `dtable_live_` replaced by `prefix`. */
function writeQuestionFamilies(
  e: Exposition,
  questions: Record<string, LiveQuestionStats>,
  prefix: string,
  helpPrefix: string,
): void {
  const entries = Object.entries(questions);
  for (const [family, type, help, value] of QUESTION_FAMILIES) {
    const name = prefix + family.slice("dtable_live_".length);
    e.family(name, type, helpPrefix + help);
    for (const [question, q] of entries) {
      const v = value(q);
      if (v !== null) e.sample(name, v, { question });
    }
  }
}
