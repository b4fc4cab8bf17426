/**
 * The signed audit ids this process counted lately, so that an id sent
 * again is told apart and not counted twice (within one process; a fleet's
 * store does the same across replicas). Bounded: at most `capacity` ids;
 * when one must be forgotten to make room, every id issued no later than it
 * is refused from then on as if expired (it can no longer be told whether
 * it was counted), so nothing is ever counted twice.
 *
 * @module
 */

/** Why an id is not counted again: seen already, or issued too long ago to tell. */
export type ReplayMiss = "answered" | "expired";

/** The ids counted lately (see the module doc). */
export class ReplayGuard {
  /** Tag to issue time, in the order first seen. */
  readonly #seen = new Map<string, number>();
  readonly #capacity: number;
  readonly #ttlMs: number;
  /** Ids issued at or before this time are refused (one such was forgotten). */
  #horizon = -Infinity;

  /** A guard of at most `capacity` ids, each kept for `ttlMs` after its issue time. */
  constructor(capacity: number, ttlMs: number) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) {
      throw new RangeError(
        `A replay guard needs a positive integer capacity: got ${capacity}`,
      );
    }
    this.#capacity = capacity;
    this.#ttlMs = ttlMs;
  }

  /** Ids kept now. */
  get size(): number {
    return this.#seen.size;
  }

  /** True when `tag` was counted lately (nothing is recorded). */
  has(tag: string): boolean {
    return this.#seen.has(tag);
  }

  /**
   * Records `tag`, issued at `issuedAt`, as counted at `now`; or says why
   * it must not be counted.
   */
  admit(tag: string, issuedAt: number, now: number): ReplayMiss | null {
    if (this.#seen.has(tag)) return "answered";
    if (issuedAt <= this.#horizon) return "expired";
    for (const [old, at] of this.#seen) {
      if (now - at <= this.#ttlMs && this.#seen.size < this.#capacity) break;
      this.#seen.delete(old);
      // A forgotten id that could still be sent again: refuse its elders.
      if (now - at <= this.#ttlMs) this.#horizon = Math.max(this.#horizon, at);
    }
    this.#seen.set(tag, issuedAt);
    return null;
  }
}
