/**
 * A second tier small enough to reason about by hand: two options over
 * three numbers (option 0 points along x, option 1 along y, the third
 * number neutral), embedding scale 2, temperature 0.5, identity whitening,
 * calibrated at 0.9. Tests give the bias and the novelty guard they need.
 *
 * @module
 */

import type { NoveltyReference, SemanticTier } from "../src/engine/table.ts";

/** The small tier with `bias` and the guard's `scores`, level `p` and other tests (`extra`). */
export function smallTier(
  bias: [number, number],
  scores: Float32Array,
  p: number,
  extra: Pick<NoveltyReference, "nearest" | "spreads"> = {},
): SemanticTier {
  return {
    dim: 3,
    scale: 2,
    weights: Float32Array.of(3, -3, -3, 3, 0, 0),
    bias: Float32Array.of(...bias),
    temperature: 0.5,
    tableWeight: 0,
    novelty: {
      projection: Float32Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1),
      rank: 3,
      means: Float32Array.of(1, 0, 0, 0, 1, 0),
      scores,
      p,
      ...extra,
    },
    calibration: {
      status: "calibrated",
      threshold: 0.9,
      alpha: 0.05,
      delta: 0.05,
      reason: null,
      candidates: [0.9],
    },
  };
}
