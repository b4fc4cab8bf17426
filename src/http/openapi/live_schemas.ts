/**
 * JSON Schema of the live certificate's parts: `POST /v1/feedback` and the
 * `live` section of `/v1/stats`, and the TypeScript types the service
 * builds them with.
 *
 * @module
 */

import { type Static, Type } from "@sinclair/typebox";
import type { LiveReason } from "../../engine/live.ts";
import type { AuditMiss } from "../../live/audits.ts";
import type { MissedAudit as LiveMissedAudit } from "../../live/feedback.ts";
import { MAX_FEEDBACK_ITEMS } from "../live/feedback.ts";
import {
  count,
  nullableNumber,
  oneOf,
  probability,
  recordOf,
  ref,
} from "./schema_parts.ts";
import type { Same } from "./same.ts";

/** One item of `/v1/feedback`. */
export const FeedbackItem = Type.Object({
  question: Type.String({ description: "A question of the bundle." }),
  state: Type.Unsafe<string | Record<string, unknown>>({
    type: ["string", "object"],
    description:
      "The text the answer was about; an object is serialised with JSON.stringify first.",
  }),
  answer: Type.Unsafe<string | boolean>({
    type: ["string", "boolean"],
    description:
      "What the reference model answered: an option (choice question) or true / false (yes/no question).",
  }),
  audit: Type.Optional(Type.String({
    description:
      "The audit id the service gave with the answer, when this answers an audit.",
  })),
});

/** The body of `/v1/feedback`: one item or an array of them. */
export const FeedbackRequest = Type.Union([
  ref("FeedbackItem", FeedbackItem),
  Type.Array(ref("FeedbackItem", FeedbackItem), {
    minItems: 1,
    maxItems: MAX_FEEDBACK_ITEMS,
  }),
]);

const AUDIT_MISSES = [
  "unknown",
  "expired",
  "answered",
  "other_question",
] as const;

/** An audit id that was not counted, and why. */
export const MissedAudit = Type.Object({
  audit: Type.String(),
  reason: oneOf(AUDIT_MISSES),
});

/** The reply of `/v1/feedback`. */
export const FeedbackResponse = Type.Object({
  received: count,
  audits: Type.Integer({ minimum: 0, description: "Items counted as audits." }),
  feedback: Type.Integer({
    minimum: 0,
    description: "Items counted as feedback on an uncertified answer.",
  }),
  traces_only: Type.Integer({
    minimum: 0,
    description:
      "Items kept as traces only (a certified answer, one no threshold could change, a missed audit id, or the live certificate off).",
  }),
  missed_audits: Type.Array(MissedAudit, {
    description:
      "Audit ids that were not counted: unknown (never given), expired (dropped unanswered, or answered long ago), answered (answered already: each id counts once) or other_question (given for another question).",
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
  estimate: nullableNumber,
  lower: nullableNumber,
  upper: nullableNumber,
  alpha: probability,
  confidence: probability,
  summary: Type.String(),
});

/** One question's live certificate, as `/v1/stats` shows it. */
export type LiveQuestionStats = Static<typeof LiveQuestion>;

/** The `live` section of `/v1/stats`. */
export const LiveStats = Type.Object({
  enabled: Type.Boolean(),
  audit_rate: probability,
  pending_audits: count,
  pending_capacity: count,
  audit_ttl_s: Type.Number({ minimum: 0 }),
  audits_dropped: count,
  questions: recordOf(ref("LiveQuestion", LiveQuestion)),
});

/** The `live` section of `/v1/stats`. */
export type LiveStatsDocument = Static<typeof LiveStats>;

/** The component schemas of the live certificate. */
export const LIVE_SCHEMAS = {
  FeedbackItem,
  FeedbackRequest,
  FeedbackResponse,
  LiveQuestion,
  LiveStats,
};

// `src/live/` and the engine own these types; the schemas must say the same.
const _reasons: Same<(typeof LIVE_REASONS)[number], LiveReason> = true;
const _misses: Same<(typeof AUDIT_MISSES)[number], AuditMiss> = true;
const _missed: Same<Static<typeof MissedAudit>, LiveMissedAudit> = true;
