/**
 * The live certificate in serving, beside the engine: per served table and
 * question a `LiveCertificate` (`src/engine/live.ts`) fed by the answers
 * given and by what a reference model answered (audits and feedback), the
 * audit sampler and the audits waiting for an answer. It holds state and
 * reads the clock, so it lives outside the pure engine; it knows no HTTP
 * (`src/http/` parses requests into its types and writes its results).
 *
 * @module
 */

export {
  AUDIT_TTL_MS,
  type AuditMiss,
  AuditSampler,
  MAX_PENDING_AUDITS,
  type PendingAudit,
  PendingAudits,
  type PendingAuditsOptions,
} from "./audits.ts";
export {
  DEFAULT_AUDIT_RATE,
  isEligible,
  LiveController,
  type LiveOptions,
  RECENT_ANSWERS,
  type RecentAnswer,
} from "./controller.ts";
export {
  countFeedback,
  type FeedbackItem,
  type FeedbackTally,
  feedbackTrace,
  type MissedAudit,
} from "./feedback.ts";
