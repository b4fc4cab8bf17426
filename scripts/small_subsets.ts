/**
 * The random subsets of a trace set that `bench-small.ts` and
 * `bench-plan.ts` train on: the same seed and size give the same traces in
 * both, so their figures describe the same runs.
 *
 * @module
 */

import type { TraceSet } from "../src/traces/types.ts";
import { shuffle } from "../src/train/split.ts";
import { seededRandom } from "../src/engine/random.ts";

/** `size` traces of `traces` (all when it has fewer), drawn at random for `seed`. */
export function smallSubset(
  traces: TraceSet,
  size: number,
  seed: number,
): TraceSet {
  const n = Math.min(size, traces.texts.length);
  const indices = shuffle(
    traces.texts.map((_, i) => i),
    seededRandom(seed * 7919 + n),
  ).slice(0, n);
  return tracesAt(traces, indices);
}

/** The traces of `traces` at `indices`, in that order (without times or groups). */
export function tracesAt(
  traces: TraceSet,
  indices: readonly number[],
): TraceSet {
  return {
    texts: indices.map((i) => traces.texts[i]!),
    questions: traces.questions.map((q) => ({
      ...q,
      labels: Int32Array.from(indices, (i) => q.labels[i]!),
    })),
    times: null,
    groups: null,
    groupNames: [],
  };
}
