/**
 * Requests per second over the last few seconds: one counter per
 * wall-clock second in a fixed ring, so counting allocates nothing.
 *
 * @module
 */

/** Counts events per second over the last `windowS` seconds. */
export class RequestRate {
  readonly #windowS: number;
  readonly #seconds: Float64Array;
  readonly #counts: Float64Array;

  /** A rate over the last `windowS` seconds (10 by default). */
  constructor(windowS = 10) {
    this.#windowS = windowS;
    this.#seconds = new Float64Array(windowS).fill(-1);
    this.#counts = new Float64Array(windowS);
  }

  /** Counts one event at wall time `nowMs`. */
  count(nowMs: number): void {
    const second = Math.floor(nowMs / 1000);
    const slot = second % this.#windowS;
    if (this.#seconds[slot] !== second) {
      this.#seconds[slot] = second;
      this.#counts[slot] = 0;
    }
    this.#counts[slot]!++;
  }

  /**
   * Events per second at wall time `nowMs`: the last full seconds plus the
   * running one, over no longer than `uptimeS`; to 0.001.
   */
  perSecond(nowMs: number, uptimeS: number): number {
    const w = this.#windowS;
    const second = Math.floor(nowMs / 1000);
    let n = 0;
    for (let i = 0; i < w; i++) {
      const s = this.#seconds[i]!;
      if (s > second - w && s <= second) n += this.#counts[i]!;
    }
    const windowS = Math.min((w - 1) + (nowMs % 1000) / 1000, uptimeS);
    return windowS <= 0 ? 0 : Math.round((n / windowS) * 1000) / 1000;
  }
}
