/**
 * A latency histogram cheap enough to update on every request: a fine
 * log-scale one for percentiles (16 buckets per doubling, so a reported
 * percentile is within about 4.4% of the true value) and the coarse fixed
 * buckets that `/metrics` exposes.
 *
 * @module
 */

import type { LatencySummary } from "../openapi/mod.ts";

/** Upper bounds of the exposed buckets, in seconds (Prometheus `le`). */
export const EXPOSED_BOUNDS_S: readonly number[] = [
  0.000005,
  0.00001,
  0.000025,
  0.00005,
  0.0001,
  0.00025,
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.1,
  1,
];

const EXPOSED_BOUNDS_US = EXPOSED_BOUNDS_S.map((s) => s * 1e6);
const STEPS_PER_DOUBLING = 16;
/** Fine buckets: index 0 holds values up to 1 µs, the last one everything above ~2^31 µs. */
const FINE_BUCKETS = 1 + STEPS_PER_DOUBLING * 32;

/** A histogram of durations in microseconds. */
export class LatencyHistogram {
  #count = 0;
  #sumUs = 0;
  #maxUs = 0;
  #minUs = Infinity;
  readonly #fine = new Float64Array(FINE_BUCKETS);
  readonly #exposed = new Float64Array(EXPOSED_BOUNDS_US.length + 1);

  /** Records one duration in microseconds. */
  record(us: number): void {
    this.#count++;
    this.#sumUs += us;
    if (us > this.#maxUs) this.#maxUs = us;
    if (us < this.#minUs) this.#minUs = us;
    const i = us <= 1 ? 0 : Math.min(
      FINE_BUCKETS - 1,
      1 + Math.floor(Math.log2(us) * STEPS_PER_DOUBLING),
    );
    this.#fine[i]!++;
    let j = 0;
    while (j < EXPOSED_BOUNDS_US.length && us > EXPOSED_BOUNDS_US[j]!) j++;
    this.#exposed[j]!++;
  }

  /** Number of recorded durations. */
  get count(): number {
    return this.#count;
  }

  /** Sum of recorded durations, in seconds. */
  get sumSeconds(): number {
    return this.#sumUs / 1e6;
  }

  /**
   * Cumulative counts per exposed bound (`EXPOSED_BOUNDS_S`), then the total
   * (the `+Inf` bucket).
   */
  cumulative(): number[] {
    const out: number[] = [];
    let running = 0;
    for (const n of this.#exposed) {
      running += n;
      out.push(running);
    }
    return out;
  }

  /**
   * The smallest recorded-bucket bound under which at least share `q` of the
   * durations fall, clamped to the observed range; null when empty.
   */
  quantile(q: number): number | null {
    if (this.#count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.#count));
    let running = 0;
    for (let i = 0; i < FINE_BUCKETS; i++) {
      running += this.#fine[i]!;
      if (running >= rank) {
        const upper = i === 0 ? 1 : 2 ** (i / STEPS_PER_DOUBLING);
        return round1(Math.min(this.#maxUs, Math.max(this.#minUs, upper)));
      }
    }
    return round1(this.#maxUs);
  }

  /** A new histogram holding the durations of both. */
  static merged(a: LatencyHistogram, b: LatencyHistogram): LatencyHistogram {
    const out = new LatencyHistogram();
    for (const h of [a, b]) {
      out.#count += h.#count;
      out.#sumUs += h.#sumUs;
      out.#maxUs = Math.max(out.#maxUs, h.#maxUs);
      out.#minUs = Math.min(out.#minUs, h.#minUs);
      for (let i = 0; i < FINE_BUCKETS; i++) out.#fine[i]! += h.#fine[i]!;
      for (let i = 0; i < out.#exposed.length; i++) {
        out.#exposed[i]! += h.#exposed[i]!;
      }
    }
    return out;
  }

  /** Count and the 50th, 90th and 99th percentiles and maximum, in microseconds. */
  summary(): LatencySummary {
    return {
      count: this.#count,
      p50: this.quantile(0.5),
      p90: this.quantile(0.9),
      p99: this.quantile(0.99),
      max: this.#count === 0 ? null : round1(this.#maxUs),
    };
  }
}

/** Rounds to one decimal place. */
export function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/**
 * Latency over the last `windowS` to `2 × windowS` seconds: the running
 * window and the one before it. A new histogram is made only when a window
 * rolls over.
 */
export class WindowedLatency {
  readonly #windowMs: number;
  #current = new LatencyHistogram();
  #previous = new LatencyHistogram();
  #start = -Infinity;

  /** Windows of `windowS` seconds each. */
  constructor(windowS: number) {
    this.#windowMs = windowS * 1000;
  }

  /** Records one duration at wall time `nowMs`. */
  record(nowMs: number, us: number): void {
    this.#roll(nowMs);
    this.#current.record(us);
  }

  /** The summary of both windows at wall time `nowMs`. */
  summary(nowMs: number): LatencySummary {
    this.#roll(nowMs);
    return LatencyHistogram.merged(this.#previous, this.#current).summary();
  }

  #roll(nowMs: number): void {
    if (nowMs - this.#start < this.#windowMs) return;
    const stale = nowMs - this.#start >= 2 * this.#windowMs;
    this.#previous = stale ? new LatencyHistogram() : this.#current;
    this.#current = new LatencyHistogram();
    this.#start = nowMs;
  }
}
