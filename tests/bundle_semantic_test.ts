import assert from "node:assert/strict";
import { loadBundle, writeBundleAtomically } from "../src/bundle/files.ts";
import {
  BundleError,
  encodeBundle,
  MANIFEST_FILE,
  WEIGHTS_FILE,
} from "../src/bundle/codec.ts";
import { SEMANTIC_FILE } from "../src/bundle/semantic_part.ts";
import { semanticAssess } from "../src/engine/semantic.ts";
import { seededRandom } from "../src/engine/random.ts";
import { quantizeTexts } from "../src/engine/nearest.ts";
import { trainedContents, type TrainResult } from "../src/train/contents.ts";
import { THIS_ENCODER } from "../src/encoder/identity.ts";
import { rejectsWith, smallTable, tempDir } from "./_fixtures.ts";
import { withSemanticTier } from "./_two_tier.ts";
import type { SemanticTier } from "../src/engine/table.ts";

/** A second tier of random numbers for a question of `k` options over `dim` numbers. */
function randomTier(k: number, dim: number, seed: number): SemanticTier {
  const r = seededRandom(seed);
  const f = (n: number) => Float32Array.from({ length: n }, () => r() - 0.5);
  return {
    dim,
    scale: 2,
    weights: f(dim * k),
    bias: f(k),
    temperature: 0.7,
    tableWeight: 0.5,
    novelty: {
      projection: f(dim * 8),
      rank: 8,
      means: f(k * 8),
      scores: Float32Array.from(f(50)).sort(),
      p: 0.05,
    },
    calibration: {
      status: "calibrated",
      threshold: 0.61,
      alpha: 0.05,
      delta: 0.05,
      reason: null,
      candidates: [0.8, 0.61, 0.5],
    },
  };
}

/** A random tier whose guard also stores `stored` fit texts and calibration spreads. */
function guardedTier(k: number, dim: number, stored: number): SemanticTier {
  const t = randomTier(k, dim, 5);
  const r = seededRandom(11);
  const texts = Array.from(
    { length: stored },
    () => Float32Array.from({ length: dim }, () => r() - 0.5),
  );
  return {
    ...t,
    novelty: {
      ...t.novelty,
      nearest: {
        dim,
        ...quantizeTexts(texts, [...texts.keys()], dim),
        scores: Float32Array.from({ length: 30 }, () => r()).sort(),
      },
      spreads: Float32Array.from({ length: 40 }, () => -r()).sort(),
    },
  };
}

/** The small table with a second tier on its first question. */
function withTier(
  make = (k: number) => randomTier(k, 16, 3),
): TrainResult {
  const r = smallTable();
  const q = r.table.questions[0]!;
  return withSemanticTier(r, q.name, make(q.options.length));
}

Deno.test("encodeBundle() writes format 4 with semantic.bin and the encoder for a table with a second tier", async () => {
  await using tmp = await tempDir();
  const r = withTier();
  const dir = `${tmp.path}/b`;
  await writeBundleAtomically(dir, await encodeBundle(trainedContents(r)));
  const manifest = JSON.parse(
    await Deno.readTextFile(`${dir}/${MANIFEST_FILE}`),
  );
  assert.equal(manifest.format_version, 4);
  assert.deepEqual(manifest.encoder, THIS_ENCODER);
  assert.equal(manifest.questions[0].semantic.dim, 16);
  assert.equal(manifest.questions[1]?.semantic ?? null, null);
  const loaded = await loadBundle(dir);
  assert.equal(loaded.info.format_version, 4);
  const q = r.table.questions[0]!;
  const lq = loaded.questions[0]!;
  assert.ok(lq.semantic !== undefined);
  assert.equal(
    loaded.questions.slice(1).some((x) => x.semantic !== undefined),
    false,
  );
  const e = Float32Array.from({ length: 16 }, (_, i) => Math.sin(i));
  const p = Float64Array.from(
    { length: q.options.length },
    (_, i) => (i + 1) / 10,
  );
  assert.deepEqual(
    semanticAssess(lq.semantic!, e, undefined, p),
    semanticAssess(q.semantic!, e, undefined, p),
  );
  assert.deepEqual(Array.from(lq.weights), Array.from(q.weights));
  assert.deepEqual(lq.semantic!.calibration, q.semantic!.calibration);
  assert.deepEqual(lq.calibration, q.calibration);
});

Deno.test("a second tier's nearest-text and spread tests survive the bundle: stored texts as bytes, same verdicts", async () => {
  await using tmp = await tempDir();
  // 13 numbers × 7 texts: 91 bytes of codes, padded to 92.
  const r = withTier((k) => guardedTier(k, 13, 7));
  const dir = `${tmp.path}/b`;
  await writeBundleAtomically(dir, await encodeBundle(trainedContents(r)));
  const manifest = JSON.parse(
    await Deno.readTextFile(`${dir}/${MANIFEST_FILE}`),
  );
  const entry = manifest.questions[0].semantic;
  assert.equal(entry.nearest, 7);
  assert.equal(entry.nearest_scores, 30);
  assert.equal(entry.spread_scores, 40);
  const loaded = await loadBundle(dir);
  const q = r.table.questions[0]!;
  const lt = loaded.questions[0]!.semantic!;
  const t = q.semantic!;
  assert.deepEqual(
    Array.from(lt.novelty.nearest!.codes),
    Array.from(t.novelty.nearest!.codes),
  );
  assert.deepEqual(
    Array.from(lt.novelty.spreads!),
    Array.from(t.novelty.spreads!),
  );
  const p = Float64Array.from(
    { length: q.options.length },
    () => 1 / q.options.length,
  );
  for (let s = 0; s < 5; s++) {
    const e = Float32Array.from(
      { length: 13 },
      (_, i) => Math.sin(i * (s + 1)),
    );
    assert.deepEqual(
      semanticAssess(lt, e, undefined, p),
      semanticAssess(t, e, undefined, p),
    );
  }
});

Deno.test("encodeBundle() keeps a table without a second tier at format 3, without semantic.bin", async () => {
  const files = await encodeBundle(trainedContents(smallTable()));
  assert.equal(files.has(SEMANTIC_FILE), false);
  const manifest = JSON.parse(
    new TextDecoder().decode(files.get(MANIFEST_FILE)),
  );
  assert.equal(manifest.format_version, 3);
  assert.equal("encoder" in manifest, false);
  assert.equal(
    new DataView(files.get(WEIGHTS_FILE)!.buffer).getUint32(8, true),
    3,
  );
});

Deno.test("loadBundle() refuses a format 4 bundle of another encoder, or with a damaged or missing semantic.bin, in one line", async (t) => {
  const files = await encodeBundle(trainedContents(withTier()));
  const cases: [string, (dir: string) => Promise<void>, RegExp][] = [
    [
      "another encoder's hash",
      async (dir) => {
        const m = JSON.parse(
          await Deno.readTextFile(`${dir}/${MANIFEST_FILE}`),
        );
        m.encoder.sha256 = "0".repeat(64);
        await Deno.writeTextFile(`${dir}/${MANIFEST_FILE}`, JSON.stringify(m));
      },
      /needs the encoder @energetic-ai\/model-embeddings-en@0\.2\.0 \(sha256 000000000000\); this program has/,
    ],
    ["another encoder's version", async (dir) => {
      const m = JSON.parse(await Deno.readTextFile(`${dir}/${MANIFEST_FILE}`));
      m.encoder.version = "9.9.9";
      await Deno.writeTextFile(`${dir}/${MANIFEST_FILE}`, JSON.stringify(m));
    }, /needs the encoder .*@9\.9\.9/],
    ["a flipped byte in semantic.bin", async (dir) => {
      const b = await Deno.readFile(`${dir}/${SEMANTIC_FILE}`);
      b[100]! ^= 1;
      await Deno.writeFile(`${dir}/${SEMANTIC_FILE}`, b);
    }, /semantic\.bin does not match its checksum/],
    [
      "a missing semantic.bin",
      (dir) => Deno.remove(`${dir}/${SEMANTIC_FILE}`),
      /semantic\.bin is missing/,
    ],
  ];
  for (const [name, damage, pattern] of cases) {
    await t.step(name, async () => {
      await using tmp = await tempDir();
      const dir = `${tmp.path}/b`;
      await writeBundleAtomically(dir, files);
      await damage(dir);
      const e = await rejectsWith(loadBundle(dir), BundleError, pattern);
      assert.ok(!e.message.includes("\n"));
    });
  }
});
