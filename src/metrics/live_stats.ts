/**
 * The `live` section of `/v1/stats`: per question, the threshold in force
 * and why, audits and disagreements, feedback, and the live estimate of
 * the disagreement rate at the threshold in force with its interval; plus
 * the pending audits. Also the same in words, for the dashboard and
 * `inspect --server`.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import {
  type DisagreeRegion,
  FEEDBACK_ALARM_RATE,
  type FeedbackCheckState,
  type LiveReason,
  type LiveState,
} from "../guarantee/mod.ts";
import type {
  LiveFeedbackCheckStats,
  LiveQuestionStats,
  LiveStatsDocument,
} from "../openapi/mod.ts";
import { record } from "./stats_document.ts";

import type { LiveController } from "../live/mod.ts";
import { percent } from "../format.ts";

const REASON_WORDS: Record<LiveReason, string> = {
  bundle: "bundle's",
  live_lower: "lowered by live audits",
  live_stricter: "raised by live audits",
  withdrawn: "withdrawn",
  uncalibrated: "uncalibrated",
};

/** The estimate as shown: clamped to [0, 1] (null stays null). */
export function clampRate(x: number | null): number | null {
  return x === null ? null : Math.min(1, Math.max(0, x));
}

/** The feedback check's figures for `/v1/stats`. */
export function feedbackCheckStats(
  c: FeedbackCheckState,
): LiveFeedbackCheckStats {
  const suspect = c.agreesTooMuch || c.disagreesTooMuch;
  return {
    status: suspect ? "suspect" : "ok",
    agrees_too_much: c.agreesTooMuch,
    disagrees_too_much: c.disagreesTooMuch,
    labelled: c.labelled,
    disagreed: c.disagreed,
    expected: round(c.expected),
    expected_low: round(c.expectedLow),
    expected_high: round(c.expectedHigh),
    agree_log10_capital: round(c.agreeLogCapital / Math.LN10),
    disagree_log10_capital: round(c.disagreeLogCapital / Math.LN10),
    disagree_audits_log10_capital: round(
      c.disagreeRegionLogCapitals[0] / Math.LN10,
    ),
    disagree_reported_log10_capital: round(
      c.disagreeRegionLogCapitals[1] / Math.LN10,
    ),
    disagrees_in: c.disagreeRegion,
    alarm_log10_capital: round(c.logBar / Math.LN10),
    lenient_allowed: c.echoPowered && !suspect,
    false_alarm_rate: FEEDBACK_ALARM_RATE,
    summary: feedbackCheckInWords(c),
  };
}

function round(x: number): number {
  return Number.isFinite(x) ? Math.round(x * 1000) / 1000 : 0;
}

/**
 * The disagrees-too-much alarm in words, by where its evidence lies: lies
 * on audits and a model changed on the answers the table is sure of look
 * the same, so the words say what to check.
 */
const DISAGREE_WORDS: Record<DisagreeRegion, string> = {
  audits:
    "disagrees far more than calibration allows on the audits, while the feedback on uncertified answers does not (a proxy answering audits wrongly, or a model changed on the answers the table is sure of: ask the model about a few audited texts yourself and compare with what the proxy sent)",
  reported:
    "disagrees far more than calibration allows on the uncertified answers, while the audits do not (a proxy reporting wrong answers, or a model or traffic changed on the texts the table is unsure of: compare a few reported answers with the model's)",
  both:
    "disagrees far more than calibration allows on the audits and the uncertified answers alike (a changed model or changed traffic, or a proxy lying on everything: compare a few answers with the model's)",
};

/**
 * The feedback check in words, e.g. "SUSPECT FEEDBACK: disagrees far more
 * than calibration allows (3 of 3 labelled answers disagreed; calibration
 * expects 0.1, at most 0.2): check the proxy, then reset".
 */
export function feedbackCheckInWords(c: FeedbackCheckState): string {
  const seen = `${c.disagreed} of ${c.labelled} labelled answer${
    c.labelled === 1 ? "" : "s"
  } disagreed; calibration expects ${c.expected.toFixed(1)}, between ${
    c.expectedLow.toFixed(1)
  } and ${c.expectedHigh.toFixed(1)}`;
  const alarms: string[] = [];
  if (c.agreesTooMuch) {
    alarms.push(
      "agrees far more than calibration allows (an echoing proxy?): never more lenient than the bundle's threshold",
    );
  }
  if (c.disagreesTooMuch) alarms.push(DISAGREE_WORDS[c.disagreeRegion!]);
  if (alarms.length === 0 && c.labelled === 0) {
    return "no labelled answers to check yet";
  }
  if (alarms.length > 0) {
    return `SUSPECT FEEDBACK: ${
      alarms.join("; and ")
    } (${seen}; ${c.auditDisagreed} of ${c.audits} audit${
      c.audits === 1 ? "" : "s"
    }): check the proxy, then reset with the feedback token (dtable inspect --server URL --live-reset)`;
  }
  return `feedback consistent with calibration (${seen})`;
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
    : c.estimate > 1
    ? `live rate 100% at most (the weighted estimate, ${
      percent(c.estimate)
    } before clamping, is unstable on ${c.labelled} labelled answer${
      c.labelled === 1 ? "" : "s"
    })`
    : `live rate ${percent(c.estimate)}${
      c.upper === null
        ? ` (too few audits for a ${Math.round((1 - delta) * 100)}% bound)`
        : ` (${Math.round((1 - delta) * 100)}% up to ${percent(c.upper)})`
    }`;
  const check = s.feedbackCheck;
  const suspect = check !== null &&
      (check.agreesTooMuch || check.disagreesTooMuch)
    ? `; ${feedbackCheckInWords(check)}`
    : "";
  return `${head}, ${audits}, ${rate}${suspect}`;
}

/** The `live` section for the served `table`. */
export function liveStats(
  live: LiveController,
  table: Table,
): LiveStatsDocument {
  const semantic = live.semanticStates(table);
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
      journal_audits: fleet.journalAudits,
    },
    audit_rate: live.auditRate,
    pending_audits: live.pending.size,
    pending_capacity: live.pending.capacity,
    audit_ttl_s: live.pending.ttlMs / 1000,
    audits_dropped: live.pending.dropped,
    rates: Object.fromEntries(
      table.questions.map((q, slot) => [q.name, live.rateOf(table, slot)]),
    ),
    feedback_without_ids: {
      items: live.idless.items,
      picks_expected: Math.round(live.idless.picksExpected * 10) / 10,
    },
    resets: {
      total: live.resets.total,
      last: live.resets.last.map((r) => ({
        at: r.at.toISOString(),
        question: r.question,
        source: r.source,
      })),
    },
    questions: questionStats(table, live.states(table)),
    ...(semantic.size === 0
      ? {}
      : { semantic_questions: questionStats(table, semantic) }),
  };
}

/** Per question of `table` with a state in `states`, its live figures. */
function questionStats(
  table: Table,
  states: Map<string, LiveState>,
): Record<string, LiveQuestionStats> {
  return record(
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
        estimate: clampRate(c?.estimate ?? null),
        estimate_raw: c?.estimate ?? null,
        lower: c?.lower ?? null,
        upper: c?.upper ?? null,
        alpha: q.calibration.alpha,
        confidence: 1 - q.calibration.delta,
        feedback_check: s.feedbackCheck === null
          ? null
          : feedbackCheckStats(s.feedbackCheck),
        summary: liveInWords(s, q.calibration.delta),
      };
      return [[q.name, out] as [string, LiveQuestionStats]];
    }),
  );
}
