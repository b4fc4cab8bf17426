import assert from "node:assert/strict";
import { smallTier } from "./_small_tier.ts";
import {
  noveltyPValue,
  noveltyScore,
  semanticAssess,
  semanticLogits,
  twoTierVerdict,
} from "../src/engine/semantic.ts";
import { noveltyReference } from "../src/train/semantic_fit.ts";
import type { SemanticTier } from "../src/engine/table.ts";

/** The small tier (`_small_tier.ts`), bias 0.5 towards option 0, guard at level `p`. */
function tier(p = 0): SemanticTier {
  return smallTier([0.5, 0], Float32Array.of(0.1, 0.2, 0.3, 0.4, 0.5), p);
}

Deno.test("semanticLogits() scales the embedding and adds the bias", () => {
  const z = semanticLogits(tier(), Float32Array.of(1, 0, 1));
  assert.deepEqual(Array.from(z), [6.5, -6]);
  assert.throws(
    () => semanticLogits(tier(), Float32Array.of(1, 0)),
    RangeError,
  );
});

Deno.test("semanticAssess() answers with the temperature's softmax, narrowed to offered options", () => {
  const a = semanticAssess(tier(), Float32Array.of(0.2, 0.1, 0));
  // Logits 2*(0.6-0.3)+0.5 = 1.1 and 2*(-0.6+0.3) = -0.6, over t = 0.5.
  const p0 = 1 / (1 + Math.exp(-(1.1 + 0.6) / 0.5));
  assert.equal(a.best, 0);
  assert.ok(Math.abs(a.confidence - p0) < 1e-6);
  assert.ok(Math.abs(a.probabilities[1]! - (1 - p0)) < 1e-6);
  assert.equal(a.fullBest, 0);
  assert.equal(a.fullConfidence, a.confidence);
  const only1 = semanticAssess(tier(), Float32Array.of(0.2, 0.1, 0), [1]);
  assert.equal(only1.best, 1);
  assert.equal(only1.confidence, 1);
  // The full-option answer stays what the rule judges.
  assert.equal(only1.fullBest, 0);
  assert.ok(Math.abs(only1.fullConfidence - p0) < 1e-6);
});

Deno.test("semanticAssess() withholds a text farther from every option mean than the calibration texts", () => {
  const near = semanticAssess(tier(0.2), Float32Array.of(1, 0.1, 0));
  assert.ok(Math.abs(near.novelty - 0.01) < 1e-6);
  assert.equal(near.novel, false);
  const far = semanticAssess(tier(0.2), Float32Array.of(0, 0, 3));
  assert.equal(far.novelty, 10); // 1 + 9 to the nearer mean
  assert.ok(Math.abs(far.noveltyP - 1 / 6) < 1e-12);
  assert.equal(far.novel, true);
  // With the guard off (p 0), nothing is withheld.
  assert.equal(semanticAssess(tier(0), Float32Array.of(0, 0, 3)).novel, false);
});

Deno.test("noveltyPValue() counts calibration scores at or above the text's", () => {
  const sorted = Float32Array.of(1, 2, 2, 3);
  assert.equal(noveltyPValue(sorted, 0), 1);
  assert.equal(noveltyPValue(sorted, 2), 4 / 5);
  assert.equal(noveltyPValue(sorted, 3.5), 1 / 5);
  assert.equal(noveltyPValue(new Float32Array(0), 9), 1);
});

Deno.test("noveltyReference() whitens by the shared covariance: the distance is Mahalanobis", () => {
  // Two options, 2 numbers; spread 10 times larger along x than along y.
  const embeddings: Float32Array[] = [];
  const labels: number[] = [];
  for (let i = 0; i < 400; i++) {
    const y = i % 2;
    const sx = Math.sin(i * 1.7) * 1;
    const sy = Math.cos(i * 2.3) * 0.1;
    embeddings.push(Float32Array.of(sx + 5 * y, sy));
    labels.push(y);
  }
  const ref = noveltyReference(
    embeddings,
    Int32Array.from(labels),
    labels.map((_, i) => i),
    2,
    2,
    0,
    0.05,
  );
  // A step of 0.5 along y is as far as about 5 along x would be.
  const alongY = noveltyScore(ref, Float32Array.of(0, 0.5));
  const alongX = noveltyScore(ref, Float32Array.of(-0.5, 0));
  assert.ok(alongY > 50 * alongX, `${alongY} vs ${alongX}`);
});

Deno.test("twoTierVerdict() takes the table first, then the second tier, never a withheld one", () => {
  assert.equal(twoTierVerdict({ table: 0.95, semantic: 0.99 }, 0.9), "table");
  assert.equal(twoTierVerdict({ table: 0.5, semantic: 0.9 }, 0.9), "semantic");
  assert.equal(twoTierVerdict({ table: 0.5, semantic: 0.5 }, 0.9), null);
  assert.equal(twoTierVerdict({ table: -1, semantic: -1 }, 0), null);
  assert.equal(twoTierVerdict({ table: 0.99, semantic: 0.99 }, null), null);
});

Deno.test("semanticLogits() adds the table's log-probabilities by the tier's weight, and needs them", () => {
  const t = { ...tier(), tableWeight: 0.5 };
  const z = semanticLogits(t, Float32Array.of(1, 0, 1), [0.25, 0.75]);
  assert.ok(Math.abs(z[0]! - (6.5 + 0.5 * Math.log(0.25))) < 1e-9);
  assert.ok(Math.abs(z[1]! - (-6 + 0.5 * Math.log(0.75))) < 1e-9);
  assert.throws(
    () => semanticLogits(t, Float32Array.of(1, 0, 1)),
    /reads the table's 2 probabilities: got none/,
  );
});
