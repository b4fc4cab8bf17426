/**
 * Deterministic splits, disjoint by normalised text.
 *
 * @module
 */

import { textKey } from "../engine/text.ts";
import { seededRandom } from "../engine/random.ts";

export { seededRandom };

/** Where a trace goes. */
export const TRAIN = 0;
export const CALIBRATION = 1;
export const TEST = 2;

/** Shares of the traces for calibration and test; the rest trains. */
export interface SplitShares {
  calibration: number;
  test: number;
}

/** A number in [0, 1) from a string and a seed (FNV-1a then a mixer). */
export function unitHash(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ Math.imul(seed, 0x9e3779b1)) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/**
 * Assigns each text to train, calibration or test. Texts equal after
 * normalisation (NFKC, lower case, collapsed white space) always share a split.
 */
export function assignSplits(
  texts: readonly string[],
  shares: SplitShares,
  seed: number,
): Uint8Array {
  const out = new Uint8Array(texts.length);
  for (let i = 0; i < texts.length; i++) {
    const u = unitHash(textKey(texts[i]!), seed);
    out[i] = u < shares.test
      ? TEST
      : u < shares.test + shares.calibration
      ? CALIBRATION
      : TRAIN;
  }
  return out;
}

/** Fisher-Yates shuffle in place with a seeded generator. */
export function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
