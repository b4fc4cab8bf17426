/**
 * The two ways a store call fails other than an outage, which every store
 * (the live certificate's and the fleet learning's) reports alike.
 *
 * @module
 */

/** Thrown by a store when a request may have reached it (its reply was lost). */
export class StoreReplyLost extends Error {
  override name = "StoreReplyLost";
}

/**
 * Thrown by a store that answered a request with an error (a script that
 * failed, a value it refused): the store is reachable, nothing of the
 * request was applied, and the same request would fail again.
 */
export class StoreRejected extends Error {
  override name = "StoreRejected";
}
