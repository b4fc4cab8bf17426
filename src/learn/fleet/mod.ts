/**
 * A fleet that learns through its store (`serve --learn DIR --live-store
 * URL` on every replica): the outbox each replica's labels, ledger and
 * retrain records go through, the reader of the fleet's pool into each
 * folder, the lease that names one learner at a time, and the bundle every
 * replica serves. See `fleet_learning.ts`.
 *
 * @module
 */

export {
  FleetLearning,
  type FleetLearningOptions,
  type LearnerHooks,
  LEASE_RENEW_MS,
  LEASE_TTL_MS,
} from "./fleet_learning.ts";
export {
  Outbox,
  type OutboxOptions,
  parseOutbox,
  SHIP_WAIT_MS,
} from "./outbox.ts";
export { POOL_FILE, type PoolPosition, PoolReader } from "./pool_reader.ts";
export { BUNDLE_POLL_MS, BundleFollower } from "./bundle_follower.ts";
export { installBundle, packBundle, unpackBundle } from "./bundle_share.ts";
export { ReplicaCounts, type ReplicaShare } from "./replica_counts.ts";
