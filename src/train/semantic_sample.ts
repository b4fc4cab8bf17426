/**
 * The second tier on large logs: which traces are embedded. The encoder
 * takes milliseconds a text, so beyond `max` traces the second tier is
 * fitted, validated, calibrated and tested on a seeded uniform sample of
 * `max` traces, while the table trains on all of them. A uniform sample of
 * the calibration part is as exchangeable with the traffic as the part
 * itself, so the two-tier rule's promise holds the same way; its bound is
 * only set by fewer calibration answers (about a fifth of `max`).
 *
 * @module
 */

import { seededRandom } from "../engine/mod.ts";

/** Traces embedded at most by default: about 70 s on two quiet cores. */
export const SEMANTIC_SAMPLE_MAX = 12_000;

/**
 * The indices (ascending) of the traces to embed among `n`: all of them
 * when `n <= max`, else a uniform sample of `max` drawn with `seed`
 * (deterministic: the same traces for the same seed).
 */
export function semanticSample(n: number, max: number, seed: number): number[] {
  if (n <= max) return Array.from({ length: n }, (_, i) => i);
  // Floyd's algorithm: `max` distinct indices, each set equally likely.
  const random = seededRandom(seed ^ 0x5a17);
  const chosen = new Set<number>();
  for (let j = n - max; j < n; j++) {
    const t = Math.floor(random() * (j + 1));
    chosen.add(chosen.has(t) ? j : t);
  }
  return [...chosen].sort((a, b) => a - b);
}
