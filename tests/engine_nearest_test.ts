import assert from "node:assert/strict";
import { smallTier } from "./_small_tier.ts";
import { nearestDistance, quantizeTexts } from "../src/engine/nearest.ts";
import { seededRandom } from "../src/engine/random.ts";
import {
  guardPValue,
  semanticAssess,
  spreadOfProbabilities,
} from "../src/engine/semantic.ts";
import type { SemanticTier } from "../src/engine/table.ts";

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb);
}

Deno.test("nearestDistance() over byte-coded texts is one minus the largest cosine, to about 1e-2", () => {
  const r = seededRandom(7);
  const dim = 64;
  const texts = Array.from(
    { length: 40 },
    () => Float32Array.from({ length: dim }, () => r() - 0.5),
  );
  const stored = [...Array(30).keys()];
  const ref = {
    dim,
    ...quantizeTexts(texts, stored, dim),
    scores: new Float32Array(0),
  };
  assert.equal(ref.codes.length, 30 * dim);
  for (const q of texts) {
    const exact = 1 - Math.max(...stored.map((i) => cosine(q, texts[i]!)));
    assert.ok(Math.abs(nearestDistance(ref, q) - exact) < 1e-2);
  }
  // A stored text is at distance about 0 from itself.
  assert.ok(nearestDistance(ref, texts[3]!) < 1e-2);
  assert.equal(nearestDistance(ref, new Float32Array(dim)), 2);
  assert.throws(() => nearestDistance(ref, new Float32Array(3)), RangeError);
});

/** The small tier with a guard of the given tests at level 0.1. */
function tier(
  tests: { maha?: boolean; nearest?: boolean; spread?: boolean },
): SemanticTier {
  const stored = [Float32Array.of(1, 0, 0), Float32Array.of(0, 1, 0)];
  return smallTier(
    [0, 0],
    // Calibration distances 0..1.9 (20 texts).
    tests.maha
      ? Float32Array.from({ length: 20 }, (_, i) => i / 10)
      : new Float32Array(0),
    0.1,
    {
      ...(tests.nearest
        ? {
          nearest: {
            dim: 3,
            ...quantizeTexts(stored, [0, 1], 3),
            scores: Float32Array.from({ length: 20 }, (_, i) => i / 200),
          },
        }
        : {}),
      ...(tests.spread
        ? {
          spreads: Float32Array.from({ length: 20 }, (_, i) => -i / 100).sort(),
        }
        : {}),
    },
  );
}

Deno.test("semanticAssess() withholds a text near an option's mean but far from every stored fit text, with the nearest-text test only", () => {
  // Squared Mahalanobis distance to option 0's mean (1,0,0): 0.25 (among
  // of the calibration's); cosine distance to (1,0,0): 1 - 1/sqrt(1.25).
  const text = Float32Array.of(1, 0, 0.5);
  const maha = semanticAssess(tier({ maha: true }), text);
  assert.equal(maha.novel, false);
  assert.ok(Number.isNaN(maha.nearest));
  const both = semanticAssess(tier({ maha: true, nearest: true }), text);
  assert.ok(Math.abs(both.nearest - (1 - 1 / Math.sqrt(1.25))) < 1e-2);
  assert.equal(both.novel, true);
  // Two tests: each p-value doubled (Bonferroni), the smallest kept.
  assert.equal(both.noveltyP, 2 * (1 / 21));
  // A text along a stored one passes both.
  assert.equal(
    semanticAssess(
      tier({ maha: true, nearest: true }),
      Float32Array.of(1, 0, 0),
    ).novel,
    false,
  );
});

Deno.test("semanticAssess() withholds an answer spread over its options with the spread test", () => {
  // Equal distance to both options: the answer is split, spread -ln 2.
  const split = Float32Array.of(1, 1, 0);
  const a = semanticAssess(tier({ spread: true }), split);
  assert.ok(Math.abs(a.spread + Math.log(2)) < 1e-9);
  assert.equal(a.novel, true);
  assert.equal(
    semanticAssess(tier({ spread: true }), Float32Array.of(1, 0, 0)).novel,
    false,
  );
});

Deno.test("guardPValue() is the smallest test p-value times the number of tests, at most 1; 1 with no test", () => {
  const t = tier({ maha: true, nearest: true, spread: true });
  // Mahalanobis 0.95: 10 of 20 at or above -> 11/21; nearest 0.185: none -> 1/21;
  // spread 0: 20 at or below -> 21/21.
  assert.ok(
    Math.abs(guardPValue(t.novelty, 0.95, 0.185, 0) - 3 / 21) < 1e-9,
  );
  assert.equal(guardPValue(t.novelty, 0, 0, 0), 1);
  assert.equal(guardPValue(tier({}).novelty, 99, 99, -99), 1);
  assert.ok(Math.abs(spreadOfProbabilities([0.5, 0.5]) + Math.log(2)) < 1e-12);
  assert.equal(spreadOfProbabilities([1, 0]), 0);
});
