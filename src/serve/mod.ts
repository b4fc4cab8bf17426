/**
 * The running service's process concerns, the way in from outside
 * `src/serve/`: loading the served table and loading it again (SIGHUP,
 * `--watch`) into a `SwapTarget`, the feedback log (a sink of whole lines,
 * torn tails cut, rotation that waits for a reader), and the full
 * collection after a reload. The `serve` command and the learner both
 * use them; none of it knows HTTP.
 *
 * @module
 */

export {
  type FeedbackLog,
  FeedbackLogError,
  type FeedbackLogOptions,
  type FeedbackSink,
  openFeedbackLog,
  rotatedPath,
} from "./feedback_log.ts";
export {
  openRefusedLog,
  REFUSED_LOG_MAX_BYTES,
  type RefusedLine,
  type RefusedLog,
  refusedPath,
  type RefusedSink,
} from "./refused_log.ts";
export { collectGarbage } from "./full_collection.ts";
export {
  type DrainsLines,
  LEDGER_FLUSH_MS,
  type LedgerFlush,
  startLedgerFlush,
} from "./ledger_flush.ts";
export {
  loadBundleToServe,
  type LoadSettings,
  RELOAD_COLLECT_MS,
  type Reloader,
  startReloader,
  type SwapTarget,
  WATCH_SETTLE_MS,
} from "./reload.ts";
export { cutTornTail, type TornTail } from "./torn_tail.ts";
export { SNAPSHOT_EVERY_MS, withLiveSnapshots } from "./live_snapshots.ts";
