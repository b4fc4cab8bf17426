/**
 * The figures the charts plot, one sample per statistics document received
 * while the page is open.
 *
 * @module
 */

import { isNum } from "./format.ts";
import type { Stats } from "./stats.ts";

/** One refresh's figures; null where the server had none. */
export interface Sample {
  /** When the document arrived, in ms since the epoch. */
  t: number;
  /** Median and 99th percentile of recent server latency, in µs. */
  p50: number | null;
  p99: number | null;
  /** Decision requests per second over the last seconds. */
  rate: number | null;
}

/** The last `capacity` samples, oldest first. */
export class SampleHistory {
  readonly samples: Sample[] = [];

  /** Keeps at most `capacity` samples (180 at one per 2 s: six minutes). */
  constructor(readonly capacity = 180) {}

  /**
   * Adds the figures of `stats`, received at `now`. The latency follows the
   * recent window (`latency_us_recent`); a server without it gives its
   * figures since start.
   */
  add(stats: Stats, now: number = Date.now()): void {
    const latency = stats.latency_us_recent ?? stats.latency_us;
    this.samples.push({
      t: now,
      p50: isNum(latency?.p50) ? latency.p50 : null,
      p99: isNum(latency?.p99) ? latency.p99 : null,
      rate: isNum(stats.rate?.requests_per_s)
        ? stats.rate.requests_per_s
        : null,
    });
    if (this.samples.length > this.capacity) {
      this.samples.splice(0, this.samples.length - this.capacity);
    }
  }

  /** The newest sample, or null before the first. */
  latest(): Sample | null {
    return this.samples.at(-1) ?? null;
  }
}
