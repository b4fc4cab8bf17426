/**
 * The out-of-scope rule: a single text that looks like none of the options
 * is not certified, even when one option wins it clearly.
 *
 * The score is the text's energy, `T log sum_j exp(logit_j / T)` (Liu et
 * al., "Energy-based out-of-distribution detection", 2020): how much
 * evidence the table's rows give any option at all. A request for none of
 * the options shares few strong features with any of them, so its energy is
 * low even when the softmax still leans to one option. Measured on BANKING77
 * with whole topics held out of training, energy, the largest logit and the
 * evidence of known features told those requests apart best (AUROC 0.90-0.93
 * against 0.88-0.89 for the confidence itself; the nearest training text and
 * the unseen-feature share did worse).
 *
 * The rule is a conformal test against the calibration texts' energies: a
 * text's p-value is the share of calibration texts with energy at or below
 * its own (plus one, over n + 1); at or below `scope_p` the text is not
 * certified. By exchangeability this costs at most `scope_p` of in-scope
 * texts, and less of certified ones (low-energy texts are mostly uncertified
 * anyway).
 *
 * @module
 */

import { countAtMost } from "./sorted.ts";

/**
 * The energy of raw scores at temperature `t`: `t log sum exp(logit / t)`,
 * computed stably. Higher means more evidence for some option.
 */
export function energyOf(logits: ArrayLike<number>, t: number): number {
  let max = -Infinity;
  for (let j = 0; j < logits.length; j++) {
    if (logits[j]! > max) max = logits[j]!;
  }
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (let j = 0; j < logits.length; j++) {
    sum += Math.exp((logits[j]! - max) / t);
  }
  return max + t * Math.log(sum);
}

/**
 * Conformal p-value of a text's energy against the calibration texts'
 * energies (ascending): `(#{e_i <= energy} + 1) / (n + 1)`. Small means the
 * text has less evidence than almost every calibration text.
 */
export function scopePValue(sorted: Float32Array, energy: number): number {
  return (countAtMost(sorted, Math.fround(energy)) + 1) / (sorted.length + 1);
}

/**
 * True when a text's energy is in scope: no calibration reference, or a
 * p-value above `scopeP` (0 turns the rule off).
 */
export function looksInScope(
  scopeP: number,
  sorted: Float32Array,
  energy: number,
): boolean {
  return scopeP <= 0 || sorted.length === 0 ||
    scopePValue(sorted, energy) > scopeP;
}

/**
 * For each calibration text, whether the rule would pass it with its p-value
 * taken against the other calibration texts (leave one out): what the
 * certification test must see so that the threshold it picks covers the
 * rule too. `energies` in any order; the flags follow that order.
 */
export function calibrationInScope(
  energies: Float32Array,
  scopeP: number,
): Uint8Array {
  const n = energies.length;
  const out = new Uint8Array(n).fill(1);
  if (scopeP <= 0 || n < 2) return out;
  const sorted = Float32Array.from(energies).sort();
  for (let i = 0; i < n; i++) {
    // Others at or below: all at or below, minus the text itself.
    const below = countAtMost(sorted, energies[i]!) - 1;
    if ((below + 1) / n <= scopeP) out[i] = 0;
  }
  return out;
}
