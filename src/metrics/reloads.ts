/**
 * The bundles a service has served: when the current one began serving,
 * how many reloads there were, and the last few (time, the bundle id
 * before and after), so that `/v1/stats`, `/metrics` and the dashboard
 * show where a reload falls among the figures.
 *
 * @module
 */

/** Reloads remembered in `/v1/stats` (the count covers all of them). */
export const RELOADS_KEPT = 20;

/** One reload: when, and the bundle served before and after it. */
export interface Reload {
  /** Wall time of the swap, in milliseconds since the epoch. */
  at: number;
  bundleId: string;
  previousBundleId: string;
}

/** The reloads of one service, and when its current bundle began serving. */
export class ReloadLog {
  #loadedAt: number;
  #bundleId: string;
  #count = 0;
  readonly #recent: Reload[] = [];

  /** A log whose first bundle, `bundleId`, began serving at `at` (ms). */
  constructor(bundleId: string, at: number) {
    this.#bundleId = bundleId;
    this.#loadedAt = at;
  }

  /** Records that `bundleId` began serving at `at` (ms), replacing the current bundle. */
  reload(bundleId: string, at: number): void {
    this.#recent.push({ at, bundleId, previousBundleId: this.#bundleId });
    if (this.#recent.length > RELOADS_KEPT) this.#recent.shift();
    this.#bundleId = bundleId;
    this.#loadedAt = at;
    this.#count++;
  }

  /** Wall time (ms) the current bundle began serving. */
  get loadedAt(): number {
    return this.#loadedAt;
  }

  /** Reloads since the service started (the first bundle is not one). */
  get count(): number {
    return this.#count;
  }

  /** The last `RELOADS_KEPT` reloads, oldest first. */
  get recent(): readonly Reload[] {
    return this.#recent;
  }
}
