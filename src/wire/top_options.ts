/**
 * Which options a reply with `top` (the request field that limits a choice
 * answer's probabilities to the k most probable options) prints, and in
 * which order: the answer first, then the others from the most probable
 * down, ties in option order. The answer and its certification are the
 * engine's and are not touched: `top` only chooses what is printed.
 *
 * @module
 */

/** Above this many options printed, the positions are sorted; below, picked one by one. */
const PICK_LIMIT = 16;

/**
 * The positions (indices into `probabilities`) of the `top` options to
 * print: `chosen` (the answer) first, then the most probable of the
 * others, best first, ties by position; `min(top, length)` of them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { topPositions } from "./top_options.ts";
 * assert.deepEqual(topPositions([0.1, 0.2, 0.6, 0.1], 2, 3), [2, 1, 0]);
 * assert.deepEqual(topPositions([0.5, 0.5], 1, 5), [1, 0]);
 * assert.deepEqual(topPositions([], 0, 3), []);
 * ```
 */
export function topPositions(
  probabilities: readonly number[],
  chosen: number,
  top: number,
): number[] {
  const n = probabilities.length;
  // No options to print (a question nothing has taught the service yet).
  if (n === 0) return [];
  const count = Math.min(top, n);
  const out = [chosen];
  if (count <= PICK_LIMIT) {
    for (let r = 1; r < count; r++) {
      let best = -1;
      for (let i = 0; i < n; i++) {
        if (out.includes(i)) continue;
        if (best < 0 || probabilities[i]! > probabilities[best]!) best = i;
      }
      out.push(best);
    }
    return out;
  }
  const rest: number[] = [];
  for (let i = 0; i < n; i++) if (i !== chosen) rest.push(i);
  rest.sort((a, b) => probabilities[b]! - probabilities[a]! || a - b);
  for (let r = 0; r < count - 1; r++) out.push(rest[r]!);
  return out;
}
