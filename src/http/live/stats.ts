/**
 * The `live` section of `/v1/stats`: per question, the threshold in force
 * and why, audits and disagreements, feedback, and the live estimate of
 * the disagreement rate at the threshold in force with its interval; plus
 * the pending audits. Also the same in words, for the dashboard and
 * `inspect --server`.
 *
 * @module
 */

import type { LiveReason, LiveState } from "../../engine/live.ts";
import type { Table } from "../../engine/table.ts";
import { record } from "../stats/document.ts";
import type { LiveController } from "../../live/controller.ts";

/** One question's live certificate, as `/v1/stats` shows it. */
export interface LiveQuestionStats {
  /** The threshold in force; null when withdrawn or uncalibrated. */
  threshold: number | null;
  reason: LiveReason;
  bundle_threshold: number | null;
  audited: number;
  audit_disagreements: number;
  /** Feedback on uncertified answers, and the uncertified decisions it covers. */
  feedback: number;
  uncertified_decisions: number;
  /** At the threshold in force (the bundle's when withdrawn): decisions, labelled answers, weighted estimate and interval. */
  decisions: number;
  labelled: number;
  estimate: number | null;
  lower: number | null;
  upper: number | null;
  /** The question's target rate and the confidence of the interval (1 - delta). */
  alpha: number;
  confidence: number;
  /** The same in one line of plain words. */
  summary: string;
}

/** The `live` section of `/v1/stats`. */
export interface LiveStatsDocument {
  /** False when the audit rate is 0 (no audits, thresholds never move). */
  enabled: boolean;
  audit_rate: number;
  pending_audits: number;
  pending_capacity: number;
  audit_ttl_s: number;
  /** Audits dropped unanswered (expired, or the oldest when full). */
  audits_dropped: number;
  questions: Record<string, LiveQuestionStats>;
}

const REASON_WORDS: Record<LiveReason, string> = {
  bundle: "bundle's",
  live_lower: "lowered by live audits",
  live_stricter: "raised by live audits",
  withdrawn: "withdrawn",
  uncalibrated: "uncalibrated",
};

function percent(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

/**
 * One line an operator reads at a glance, e.g. "threshold 0.710 (bundle's),
 * 412 audits, 9 disagreed, live rate 2.2% (95% up to 3.9%)".
 */
export function liveInWords(s: LiveState, delta: number): string {
  const head = s.reason === "withdrawn"
    ? "certification withdrawn by live audits"
    : s.reason === "uncalibrated"
    ? "uncalibrated (never certified)"
    : `threshold ${s.threshold!.toFixed(3)} (${REASON_WORDS[s.reason]})`;
  const audits = `${s.audited} audit${
    s.audited === 1 ? "" : "s"
  }, ${s.auditDisagreements} disagreed`;
  const c = s.inForce;
  const rate = c === null || c.estimate === null
    ? "no live rate yet"
    : `live rate ${percent(c.estimate)}${
      c.upper === null
        ? ` (too few audits for a ${Math.round((1 - delta) * 100)}% bound)`
        : ` (${Math.round((1 - delta) * 100)}% up to ${percent(c.upper)})`
    }`;
  return `${head}, ${audits}, ${rate}`;
}

/** The `live` section for the served `table`. */
export function liveStats(
  live: LiveController,
  table: Table,
): LiveStatsDocument {
  const states = live.states(table);
  return {
    enabled: live.enabled,
    audit_rate: live.auditRate,
    pending_audits: live.pending.size,
    pending_capacity: live.pending.capacity,
    audit_ttl_s: live.pending.ttlMs / 1000,
    audits_dropped: live.pending.dropped,
    questions: record(
      table.questions.flatMap((q) => {
        const s = states.get(q.name);
        if (s === undefined) return [];
        const c = s.inForce;
        const out: LiveQuestionStats = {
          threshold: s.threshold,
          reason: s.reason,
          bundle_threshold: s.bundleThreshold,
          audited: s.audited,
          audit_disagreements: s.auditDisagreements,
          feedback: s.feedback,
          uncertified_decisions: s.uncertifiedDecisions,
          decisions: c?.decisions ?? 0,
          labelled: c?.labelled ?? 0,
          estimate: c?.estimate ?? null,
          lower: c?.lower ?? null,
          upper: c?.upper ?? null,
          alpha: q.calibration.alpha,
          confidence: 1 - q.calibration.delta,
          summary: liveInWords(s, q.calibration.delta),
        };
        return [[q.name, out] as [string, LiveQuestionStats]];
      }),
    ),
  };
}
