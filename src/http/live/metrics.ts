/**
 * The live certificate in the Prometheus text exposition, appended to the
 * service's `/metrics` (same conventions: `dtable_live_` prefix, counters
 * end in `_total`, labels only question names and reasons).
 *
 * @module
 */

import { escapeLabel } from "../metrics.ts";
import type { LiveQuestionStats, LiveStatsDocument } from "./stats.ts";

type Family = [
  name: string,
  type: "gauge" | "counter",
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
    "Live estimate of the disagreement rate at the threshold in force (absent before any decision).",
    (q) => q.estimate,
  ],
  [
    "dtable_live_disagreement_upper",
    "gauge",
    "Upper end of the anytime-valid interval of that rate (absent while unknown).",
    (q) => q.upper,
  ],
];

/** Renders the `live` section as exposition lines (newline-terminated). */
export function renderLiveMetrics(live: LiveStatsDocument): string {
  const lines: string[] = [];
  const family = (name: string, type: string, help: string) =>
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  family(
    "dtable_live_audit_rate",
    "gauge",
    "Probability that a certified answer is picked for audit (0: the live certificate is off).",
  );
  lines.push(`dtable_live_audit_rate ${live.audit_rate}`);
  family(
    "dtable_live_pending_audits",
    "gauge",
    "Audits waiting for the proxy's answer.",
  );
  lines.push(`dtable_live_pending_audits ${live.pending_audits}`);
  family(
    "dtable_live_audits_dropped_total",
    "counter",
    "Audits dropped unanswered (expired, or the oldest when full).",
  );
  lines.push(`dtable_live_audits_dropped_total ${live.audits_dropped}`);
  const questions = Object.entries(live.questions);
  for (const [name, type, help, value] of QUESTION_FAMILIES) {
    family(name, type, help);
    for (const [question, q] of questions) {
      const v = value(q);
      if (v !== null) {
        lines.push(`${name}{question="${escapeLabel(question)}"} ${v}`);
      }
    }
  }
  return lines.join("\n") + "\n";
}
