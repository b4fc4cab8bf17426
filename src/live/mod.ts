/**
 * The live certificate as serving keeps it, the way in from outside `src/live/`:
 * one process's `LiveController` or a fleet's `FleetLive` over a `LiveStore`
 * (`redis_store.ts` is imported where asked for, never through here),
 * the store a learning fleet pools its labels and bundles in
 * (`learn_store.ts`; `redis_learn_store.ts` likewise imported where asked),
 * feedback counting, audit keys and the bundle id. The arithmetic of the
 * certificate is the engine's (`src/engine/live_certificate.ts`); its HTTP
 * routes are in `src/http/live_routes/`.
 *
 * @module
 */

export { AuditKeyFile } from "./audit_key.ts";
export { type AuditMiss } from "./audits.ts";
export { bundleIdOf, SHOWN_ID_DIGITS, shownBundleId } from "./bundle_id.ts";
export {
  DEFAULT_AUDIT_RATE,
  LiveController,
  type LiveOptions,
} from "./controller.ts";
export {
  countFeedback,
  type FeedbackItem,
  type FeedbackOrigin,
  feedbackOrigin,
  type FeedbackTally,
  feedbackTrace,
  idlessFeedback,
  type MissedAudit,
  type ScreenedItem,
  screenFeedback,
} from "./feedback.ts";
export { loggableItems } from "./feedback_log_items.ts";
export { FLEET_SYNC_MS, FleetLive, STOP_SYNC_MS } from "./fleet.ts";
export {
  DecisionLedger,
  LEDGER_STRETCH_MS,
  type StretchSummary,
} from "./ledger.ts";
export {
  journalAudits,
  journalBeside,
  type JournalEntry,
  journalTemp,
  readJournal,
  writeJournal,
} from "./journal.ts";
export { countFleetFeedback } from "./fleet_feedback.ts";
export { type LiveStore, parseStoreUrl, randomHex8 } from "./store.ts";
export {
  type Chunk,
  type ChunkKind,
  type LearnStore,
  type Lease,
  MemoryLearnStore,
  POOL_MAX_CHUNKS,
  type PooledChunk,
  poolIdBefore,
  type PoolRead,
  type PublishedBundle,
} from "./learn_store.ts";
export {
  type CertificateSource,
  type LiveSnapshot,
  readSnapshot,
  restoreSnapshot,
  snapshotLine,
  takeSnapshot,
} from "./snapshot.ts";
