/**
 * The second tier: a softmax regression on a text's sentence embedding,
 * asked when the table is not sure, and its novelty guard. Pure: the
 * embedding is an input (the encoder lives in `src/encoder/`, an edge).
 *
 * The tiers are certified as one rule (see `twoTierVerdict`): an answer is
 * certified when the table's confidence reaches the threshold `L`, or else
 * when the second tier's does; one Learn-then-Test fixed sequence over `L`
 * on the calibration part chose `L` with both tiers as served, so the
 * promise (at most `alpha` of certified answers disagree with the reference
 * model, with probability `1 - delta`) holds for all certified answers
 * together.
 *
 * The novelty guard: the squared Mahalanobis distance (shared covariance of
 * the fit texts' embeddings, shrunk towards its diagonal) from the text's
 * embedding to the nearest option mean, judged by a conformal p-value
 * against the calibration texts' distances. A text farther than all but a
 * share `p` of calibration texts is withheld from the second tier (it looks
 * like none of the options); the table still answers it by its own rules.
 *
 * The guard may hold up to three tests, each a conformal p-value against
 * the calibration texts: that Mahalanobis distance, the cosine distance to
 * the nearest fit text (`nearest.ts`: a request near an option's mean but
 * far from every text the tier was fitted on), and the spread of the
 * second tier's own answer (`sum p ln p`, as the table's out-of-scope rule
 * in `scope.ts`: an answer spread over many options). A text is withheld
 * when any test's p-value is at or below `p / m` for `m` tests (Bonferroni:
 * together they withhold at most a share `p` of texts like the calibration
 * ones, the same in-scope cost as one test at `p`).
 *
 * @module
 */

import type { NoveltyReference, SemanticTier } from "./table.ts";
import { argmax, softmax } from "./score.ts";
import { nearestDistance } from "./nearest.ts";
import { scopePValue } from "./scope.ts";

/** What the second tier says of one text. */
export interface SemanticAssessment {
  /** Probabilities over all options (table order). */
  probabilities: Float64Array;
  /** The most probable option among those answered over (table index). */
  best: number;
  /** Its probability among those answered over. */
  confidence: number;
  /**
   * The most probable option over all options and its probability: what
   * the two-tier rule judges (as the table's rules judge the full-option
   * answer; an answer narrowed away from it is not certified).
   */
  fullBest: number;
  fullConfidence: number;
  /** The squared Mahalanobis distance to the nearest option mean. */
  novelty: number;
  /** The cosine distance to the nearest fit text (NaN without that test). */
  nearest: number;
  /** The spread of the second tier's answer over all options (`sum p ln p`). */
  spread: number;
  /**
   * The guard's p-value: the smallest of its tests' conformal p-values
   * times the number of tests (Bonferroni), at most 1; 1 with no test.
   */
  noveltyP: number;
  /** True when the guard withholds the text from the second tier. */
  novel: boolean;
}

/**
 * The second tier's logits for an embedding: `scale * x^T W + b`, plus
 * `tableWeight` times the log of the table's probabilities over all
 * options when the tier reads them, written to `out` (fresh when absent).
 * Throws a RangeError for an embedding or probabilities of the wrong size.
 */
export function semanticLogits(
  tier: SemanticTier,
  embedding: ArrayLike<number>,
  tableProbabilities?: ArrayLike<number>,
  out?: Float64Array,
): Float64Array {
  const k = tier.bias.length;
  if (embedding.length !== tier.dim) {
    throw new RangeError(
      `The embedding has ${embedding.length} numbers; the second tier takes ${tier.dim}`,
    );
  }
  const z = out ?? new Float64Array(k);
  for (let j = 0; j < k; j++) z[j] = tier.bias[j]!;
  const w = tier.weights;
  for (let d = 0; d < tier.dim; d++) {
    const x = embedding[d]! * tier.scale;
    if (x === 0) continue;
    const base = d * k;
    for (let j = 0; j < k; j++) z[j]! += x * w[base + j]!;
  }
  if (tier.tableWeight !== 0) {
    if (tableProbabilities === undefined || tableProbabilities.length !== k) {
      throw new RangeError(
        `The second tier reads the table's ${k} probabilities: got ${
          tableProbabilities?.length ?? "none"
        }`,
      );
    }
    for (let j = 0; j < k; j++) {
      z[j]! += tier.tableWeight *
        Math.log(Math.max(tableProbabilities[j]!, 1e-12));
    }
  }
  return z;
}

/**
 * The squared Mahalanobis distance from an embedding to the nearest option
 * mean (see the module doc); 0 when the reference has rank 0.
 */
export function noveltyScore(
  ref: NoveltyReference,
  embedding: ArrayLike<number>,
): number {
  const r = ref.rank;
  if (r === 0) return 0;
  const dim = embedding.length;
  const y = new Float64Array(r);
  const p = ref.projection;
  for (let d = 0; d < dim; d++) {
    const x = embedding[d]!;
    if (x === 0) continue;
    const base = d * r;
    for (let c = 0; c < r; c++) y[c]! += x * p[base + c]!;
  }
  const k = ref.means.length / r;
  let best = Infinity;
  for (let o = 0; o < k; o++) {
    let s = 0;
    const base = o * r;
    for (let c = 0; c < r; c++) {
      const e = y[c]! - ref.means[base + c]!;
      s += e * e;
    }
    if (s < best) best = s;
  }
  return best;
}

/**
 * Conformal p-value of a novelty score against the calibration texts'
 * (ascending): `(#{s_i >= score} + 1) / (n + 1)`; 1 with no reference.
 */
export function noveltyPValue(sorted: Float32Array, score: number): number {
  const n = sorted.length;
  if (n === 0) return 1;
  const s = Math.fround(score);
  // First index with a value >= s.
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < s) lo = mid + 1;
    else hi = mid;
  }
  return (n - lo + 1) / (n + 1);
}

/**
 * Answers a question's second tier for a text's embedding (and the table's
 * probabilities over all options, when the tier reads them: see
 * `fullProbabilities`): probabilities over all options, the best among
 * `known` (learned option indices offered, ascending; absent or empty:
 * all) with its probability among them, and the novelty verdict. No I/O,
 * no state: the same inputs give the same result.
 *
 * @example
 * ```ts
 * import { semanticAssess } from "./semantic.ts";
 * import type { SemanticTier } from "./table.ts";
 * const tier: SemanticTier = {
 *   dim: 2, scale: 1, temperature: 1,
 *   weights: Float32Array.of(2, -2, 0, 0), bias: Float32Array.of(0, 0), tableWeight: 0,
 *   novelty: { projection: new Float32Array(0), rank: 0, means: new Float32Array(0), scores: new Float32Array(0), p: 0 },
 *   calibration: { status: "calibrated", threshold: 0.9, alpha: 0.05, delta: 0.05, reason: null, candidates: [0.9] },
 * };
 * const a = semanticAssess(tier, Float32Array.of(1, 0));
 * a.best; // 0
 * a.novel; // false
 * ```
 */
export function semanticAssess(
  tier: SemanticTier,
  embedding: ArrayLike<number>,
  known?: readonly number[],
  tableProbabilities?: ArrayLike<number>,
): SemanticAssessment {
  const logits = semanticLogits(tier, embedding, tableProbabilities);
  const probabilities = softmax(logits, tier.temperature);
  let best: number;
  let confidence: number;
  if (known === undefined || known.length === 0) {
    best = argmax(probabilities);
    confidence = probabilities[best]!;
  } else {
    const narrowed = softmax(logits, tier.temperature, known);
    const chosen = argmax(narrowed, known.length);
    best = known[chosen]!;
    confidence = narrowed[chosen]!;
  }
  const fullBest = argmax(probabilities);
  const fullConfidence = probabilities[fullBest]!;
  const ref = tier.novelty;
  const novelty = noveltyScore(ref, embedding);
  const nearest = ref.nearest === undefined
    ? NaN
    : nearestDistance(ref.nearest, embedding);
  const spread = spreadOfProbabilities(probabilities);
  const noveltyP = guardPValue(ref, novelty, nearest, spread);
  const novel = ref.p > 0 && guardTests(ref) > 0 && noveltyP <= ref.p;
  return {
    probabilities,
    best,
    confidence,
    fullBest,
    fullConfidence,
    novelty,
    nearest,
    spread,
    noveltyP,
    novel,
  };
}

/** `sum p ln p` over probabilities (0 for a sure answer, `-ln K` for an even one). */
export function spreadOfProbabilities(p: ArrayLike<number>): number {
  let s = 0;
  for (let j = 0; j < p.length; j++) {
    const x = p[j]!;
    if (x > 0) s += x * Math.log(x);
  }
  return s;
}

/** How many tests a novelty reference applies (see the module doc). */
export function guardTests(ref: NoveltyReference): number {
  return (ref.scores.length > 0 ? 1 : 0) +
    (ref.nearest !== undefined && ref.nearest.scores.length > 0 ? 1 : 0) +
    (ref.spreads !== undefined && ref.spreads.length > 0 ? 1 : 0);
}

/**
 * The guard's combined p-value for a text's three scores (see
 * `SemanticAssessment.noveltyP`): each applied test's conformal p-value
 * (large distances and low spreads are novel), the smallest times the
 * number of tests, at most 1; 1 when no test applies.
 */
export function guardPValue(
  ref: NoveltyReference,
  mahalanobis: number,
  nearest: number,
  spread: number,
): number {
  const m = guardTests(ref);
  if (m === 0) return 1;
  let least = 1;
  if (ref.scores.length > 0) {
    least = Math.min(least, noveltyPValue(ref.scores, mahalanobis));
  }
  if (ref.nearest !== undefined && ref.nearest.scores.length > 0) {
    least = Math.min(least, noveltyPValue(ref.nearest.scores, nearest));
  }
  if (ref.spreads !== undefined && ref.spreads.length > 0) {
    least = Math.min(least, scopePValue(ref.spreads, spread));
  }
  return Math.min(1, m * least);
}

/** Which tier a certified answer comes from; null when neither certifies. */
export type Tier = "table" | "semantic";

/** The two-tier rule's inputs for one text. */
export interface TwoTierInputs {
  /**
   * The table's confidence, or -1 when one of its rules other than the
   * confidence withholds the answer (empty text, options, drift, scope).
   */
  table: number;
  /**
   * The second tier's confidence, or -1 when it is not asked or withheld
   * (no second tier, a withheld text, or its novelty guard).
   */
  semantic: number;
}

/**
 * The one rule that certifies both tiers (see the module doc): the table
 * when its confidence reaches `threshold`, or else the second tier when
 * its confidence does; null when neither does (or `threshold` is null).
 *
 * @example
 * ```ts
 * import { twoTierVerdict } from "./semantic.ts";
 * twoTierVerdict({ table: 0.95, semantic: 0.5 }, 0.9); // "table"
 * twoTierVerdict({ table: 0.4, semantic: 0.93 }, 0.9); // "semantic"
 * twoTierVerdict({ table: 0.4, semantic: -1 }, 0.9); // null
 * ```
 */
export function twoTierVerdict(
  inputs: TwoTierInputs,
  threshold: number | null,
): Tier | null {
  if (threshold === null) return null;
  if (inputs.table >= 0 && inputs.table >= threshold) return "table";
  if (inputs.semantic >= 0 && inputs.semantic >= threshold) return "semantic";
  return null;
}
