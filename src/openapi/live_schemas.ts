/**
 * JSON Schema of the live certificate's parts: `POST /v1/feedback` and the
 * `live` section of `/v1/stats`, and the TypeScript types the service
 * builds them with.
 *
 * @module
 */

import { type Static, Type } from "@sinclair/typebox";
import type { LiveReason } from "../guarantee/mod.ts";
import type { AuditMiss } from "../live/mod.ts";
import type { MissedAudit as LiveMissedAudit } from "../live/mod.ts";
import {
  count,
  nullable,
  nullableNumber,
  oneOf,
  probability,
  recordOf,
  ref,
} from "../wire/mod.ts";
import type { Same } from "./type_equality.ts";

const AUDIT_MISSES = [
  "unknown",
  "expired",
  "answered",
  "other_question",
  "forged",
  "other_bundle",
  "not_shared",
  "malformed",
  "store_error",
  "text_mismatch",
] as const;

/** An audit id that was not counted, and why. */
export const MissedAudit = Type.Object({
  audit: Type.String(),
  reason: oneOf(AUDIT_MISSES),
});

/** A feedback item refused because its answer is an option the bundle lacks. */
export const RefusedFeedback = Type.Object({
  index: Type.Integer({
    minimum: 0,
    description: "The item's position in the body (0 for a single item).",
  }),
  question: Type.String(),
  answer: Type.String({ description: "The option the item named." }),
  reason: oneOf(["unknown_option"] as const),
  known: Type.Array(Type.String(), {
    description: "The question's options in the bundle.",
  }),
  did_you_mean: Type.Optional(Type.String({
    description: "The known option it most likely meant, when one is close.",
  })),
});

/** The reply of `/v1/feedback`. */
export const FeedbackResponse = Type.Object({
  received: count,
  kept: Type.Integer({
    minimum: 0,
    description:
      "Items written to the feedback log as labels (0 without one): what the next training reads, to fit the table or to calibrate it, as the service drew for each decision (which one is not told: it would tell the calibration picks). An audit's or a counted item's label is kept too; traces_only says only that the live certificate did not count it.",
  }),
  not_labels: Type.Integer({
    minimum: 0,
    description:
      "Items that were no label at all (an id no key signed, one given for another text or question, or with unusable numbers): listed in missed_audits, logged nowhere but the log's side file.",
  }),
  audits: Type.Integer({ minimum: 0, description: "Items counted as audits." }),
  feedback: Type.Integer({
    minimum: 0,
    description: "Items counted as feedback on an uncertified answer.",
  }),
  traces_only: Type.Integer({
    minimum: 0,
    description:
      "Items the live certificate did not count (a certified answer, one no threshold could change, a missed audit id, or the live certificate off): not counted as evidence about the threshold in force, yet kept as labels when kept says so.",
  }),
  missed_audits: Type.Array(MissedAudit, {
    description:
      "Audit ids that were not counted: unknown (never given), expired (dropped unanswered, or answered long ago), answered (answered already: each id counts once, across a fleet with a live store), other_question (given for another question); with signed ids (serve --audit-key-file) also forged (not signed by a key this replica holds), other_bundle (given by a replica serving another bundle) or not_shared (its decision was counted in evidence this replica does not share: another replica without a common live store, or a store that lost its data since), malformed (signed, but carrying a confidence outside [0, 1], an issue time that is not a time, or a question or answer the bundle lacks) or store_error (the fleet's store refused the sync that carried it; the replica logs why); text_mismatch (given for another text than the item's: no label, the decision stays open). forged, unknown, malformed, other_question and text_mismatch items are no label: counted in received only, logged nowhere but the log's side file.",
  }),
  refused: Type.Array(RefusedFeedback, {
    description:
      "Items neither logged nor counted: their answer names an option the bundle lacks (reason unknown_option; serve --accept-new-options takes them). `received` counts them.",
  }),
});

/** The reply of `/v1/feedback`. */
export type FeedbackReply = Static<typeof FeedbackResponse>;

const LIVE_REASONS = [
  "bundle",
  "live_lower",
  "live_stricter",
  "withdrawn",
  "uncalibrated",
] as const;

/** The check of a question's feedback against the bundle's calibration bands. */
export const FeedbackCheck = Type.Object({
  status: oneOf(["ok", "suspect"] as const, {
    description:
      "suspect once either alarm is raised (it stays until a reset of the question's live evidence or a new bundle).",
  }),
  agrees_too_much: Type.Boolean({
    description:
      "The feedback agrees with the table far more than calibration allows (an echoing proxy): the threshold is never more lenient than the bundle's while it stands.",
  }),
  disagrees_too_much: Type.Boolean({
    description:
      "The feedback disagrees far more than calibration allows (a lying proxy, or a model or traffic that changed): counted as before, named here.",
  }),
  labelled: count,
  disagreed: count,
  expected: Type.Number({
    minimum: 0,
    description:
      "Disagreements the bundle's calibration expects on those labelled answers (each band's calibration rate).",
  }),
  expected_low: Type.Number({ minimum: 0 }),
  expected_high: Type.Number({ minimum: 0 }),
  agree_log10_capital: Type.Number({
    description: "log10 of the agrees-too-much test's capital now.",
  }),
  disagree_log10_capital: Type.Number({
    description:
      "log10 of the disagrees-too-much test's capital now: 0.9 times the audits' capital plus 0.1 times the reported uncertified answers' (each region's share of the test's level).",
  }),
  disagree_audits_log10_capital: Type.Number({
    description:
      "log10 of the disagrees-too-much capital of the audits alone (alone it must reach the bar plus log10(1 / 0.9)).",
  }),
  disagree_reported_log10_capital: Type.Number({
    description:
      "log10 of the disagrees-too-much capital of the feedback on uncertified answers alone (alone it must reach the bar plus 1).",
  }),
  disagrees_in: nullable(oneOf(["audits", "reported", "both"] as const), {
    description:
      "While disagrees_too_much stands, where its evidence lies now: the audits (lies on audits, or a model changed on the answers the table is sure of), the reported uncertified answers, or both; null otherwise.",
  }),
  alarm_log10_capital: Type.Number({
    description: "log10 of the capital an alarm needs (1 / the Ville level).",
  }),
  lenient_allowed: Type.Boolean({
    description:
      "The leniency gate: a pure echo of these labelled answers would have raised the alarm, and none is raised.",
  }),
  false_alarm_rate: probability,
  summary: Type.String(),
});

/** The check of a question's feedback, as `/v1/stats` shows it. */
export type LiveFeedbackCheckStats = Static<typeof FeedbackCheck>;

/** One question's live certificate, as `/v1/stats` shows it. */
export const LiveQuestion = Type.Object({
  threshold: nullableNumber,
  reason: oneOf(LIVE_REASONS),
  bundle_threshold: nullableNumber,
  audited: count,
  audit_disagreements: count,
  feedback: count,
  uncertified_decisions: count,
  decisions: count,
  labelled: count,
  estimate: nullable(Type.Number({ minimum: 0, maximum: 1 }), {
    description:
      "The inverse-probability-weighted estimate of the disagreement rate at the threshold in force, clamped to [0, 1] (null before any decision).",
  }),
  estimate_raw: nullable(Type.Number({ minimum: 0 }), {
    description:
      "The same estimate unclamped: audited disagreements weigh 1 / audit rate, so on few decisions it can pass 1.",
  }),
  lower: nullableNumber,
  upper: nullableNumber,
  alpha: probability,
  confidence: probability,
  feedback_check: nullable(ref("FeedbackCheck", FeedbackCheck), {
    description:
      "The feedback checked against the bundle's calibration bands; null for a bundle without them (retrain to enable: its threshold is then never made more lenient live).",
  }),
  summary: Type.String(),
});

/** One question's live certificate, as `/v1/stats` shows it. */
export type LiveQuestionStats = Static<typeof LiveQuestion>;

/** A fleet's shared live certificate, as one replica sees it. */
export const LiveFleet = Type.Object({
  replica: Type.String({
    description: "This replica's name (serve --replica).",
  }),
  store: Type.String({
    description: "The live store's address, without a password.",
  }),
  link: oneOf(["connecting", "connected", "unreachable"] as const),
  epoch: Type.String({
    description:
      "The evidence pool of the bundle served in the store; empty before the first sync.",
  }),
  last_sync_ago_ms: nullable(Type.Integer({ minimum: 0 })),
  syncs: count,
  failures: count,
  waiting_audits: Type.Integer({
    minimum: 0,
    description:
      "Audits counted here while the store was unreachable, not yet in the store.",
  }),
  waiting_batches: count,
  rejected_syncs: Type.Integer({
    minimum: 0,
    description:
      "Syncs and policy changes the store answered with an error (each logged on stderr): a refused sync's audits were given up (missed as store_error), a refused policy change applies on this replica only when stricter; the link stayed up.",
  }),
  rejected_audits: Type.Integer({
    minimum: 0,
    description: "Audits given up with the syncs the store refused.",
  }),
  journal_audits: Type.Integer({
    minimum: 0,
    description:
      "Audits read from the live journal at start (serve --live-journal: what a stop could not deliver) and not yet replayed into the store.",
  }),
});

/** The `live` section of `/v1/stats`. */
export const LiveStats = Type.Object({
  enabled: Type.Boolean(),
  audit_ids: oneOf(["kept", "signed"] as const, {
    description:
      "kept: audit ids name audits this process keeps; signed: ids carry what they stand for, signed with the audit key (any replica with the key counts them).",
  }),
  fleet: nullable(ref("LiveFleet", LiveFleet), {
    description:
      "The fleet's shared live certificate (serve --live-store); null for a lone replica. The questions then show the fleet's pooled evidence.",
  }),
  audit_rate: probability,
  pending_audits: count,
  pending_capacity: count,
  audit_ttl_s: Type.Number({ minimum: 0 }),
  audits_dropped: count,
  rates: recordOf(probability, {
    description:
      "The calibration coin's rate in force per question of the bundle served: the probability each decision is picked, whatever its verdict (a picked certified answer is an audit). The audit rate on a plain service; a learning service's own per question (what one more calibration answer is worth). A question the bundle lacks is picked at audit_rate.",
  }),
  feedback_without_ids: Type.Object({
    items: Type.Integer({
      minimum: 0,
      description:
        "Feedback items without an id on answers that carried one (the table leaves them uncertified, or a learning service has not learned their question): a picked decision answered so is not known to be answered, and counts as a disagreement in the next calibration.",
    }),
    picks_expected: Type.Number({
      minimum: 0,
      description:
        "The picks expected among them (the sum of their rates; which ones were picked is never told).",
    }),
  }),
  resets: Type.Object({
    total: count,
    last: Type.Array(Type.Object({
      at: Type.String({ format: "date-time" }),
      question: nullable(Type.String(), {
        description: "The question reset; null for every question.",
      }),
      source: oneOf(["local", "store"] as const, {
        description:
          "local: a server without a live store, asked itself; store: applied from the fleet's store (on every replica, the one asked included).",
      }),
    })),
  }, {
    description:
      "Resets of the live evidence applied here (POST /v1/live/reset), the last 20.",
  }),
  questions: recordOf(ref("LiveQuestion", LiveQuestion)),
  semantic_questions: Type.Optional(
    recordOf(ref("LiveQuestion", LiveQuestion), {
      description:
        "Present only while a bundle with a second tier is served: per question with one, the live certificate of the second tier's certified answers, a stream of their own (its own audits, evidence and threshold, over the two-tier rule's candidates). The table's answers stay under questions.",
    }),
  ),
});

/** The `live` section of `/v1/stats`. */
export type LiveStatsDocument = Static<typeof LiveStats>;

/** The reply of `/v1/live/reset`. */
export const LiveResetResponse = Type.Object({
  reset: Type.Array(Type.String(), { description: "The questions reset." }),
  fleet: Type.Boolean({
    description:
      "True when the reset went through the fleet's store (every replica starts afresh).",
  }),
  resets: count,
});

/** The reply of `/v1/live/reset`. */
export type LiveResetReply = Static<typeof LiveResetResponse>;

/** The component schemas of the live certificate. */
export const LIVE_SCHEMAS = {
  FeedbackCheck,
  LiveResetResponse,
  FeedbackResponse,
  LiveQuestion,
  LiveFleet,
  LiveStats,
};

// `src/live/` and the engine own these types; the schemas must say the same.
const _reasons: Same<(typeof LIVE_REASONS)[number], LiveReason> = true;
const _misses: Same<(typeof AUDIT_MISSES)[number], AuditMiss> = true;
const _missed: Same<Static<typeof MissedAudit>, LiveMissedAudit> = true;
