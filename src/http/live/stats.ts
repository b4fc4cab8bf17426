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
import type {
  LiveQuestionStats,
  LiveStatsDocument,
} from "../openapi/live_schemas.ts";
import { record } from "../stats/document.ts";

export type { LiveQuestionStats, LiveStatsDocument };
import type { LiveController } from "../../live/controller.ts";

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
  const fleet = live.fleet?.status() ?? null;
  return {
    enabled: live.enabled,
    audit_ids: live.signed ? "signed" : "kept",
    fleet: fleet === null ? null : {
      replica: fleet.replica,
      store: fleet.store,
      link: fleet.link,
      epoch: fleet.epoch,
      last_sync_ago_ms: fleet.lastSyncAgoMs,
      syncs: fleet.syncs,
      failures: fleet.failures,
      waiting_audits: fleet.waitingAudits,
      waiting_batches: fleet.waitingBatches,
      rejected_syncs: fleet.rejectedSyncs,
      rejected_audits: fleet.rejectedAudits,
    },
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
