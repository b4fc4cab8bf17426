import assert from "node:assert/strict";
import { loadBundle } from "../src/bundle/mod.ts";
import { DEFAULT_FEATURIZER } from "../src/engine/mod.ts";
import {
  trainBundle,
  TrainOptionError,
  trainOptionsOf,
  writeTrainedBundle,
} from "../src/train/mod.ts";
import { rejectsWith, syntheticTraceSet, tempDir } from "./_fixtures.ts";

const OPTIONS = {
  alpha: 0.1,
  seed: 7,
  maxEpochs: 5,
  calibrationShare: 0.25,
  semantic: "off" as const,
  featurizer: { ...DEFAULT_FEATURIZER, buckets_log2: 17 },
  settings: { min_radius: 3 },
};

Deno.test("trainBundle() trains, and a bundle's settings read back retrain it byte for byte", async (t) => {
  const traces = syntheticTraceSet({ count: 1500, seed: 3, noise: 0.01 });
  await using dir = await tempDir();
  const first = await trainBundle(
    { training: OPTIONS },
    traces,
  );
  assert.equal(first.refused, false);
  assert.equal(first.uncalibrated, null);
  assert.equal(first.options.alpha, 0.1);
  await writeTrainedBundle(`${dir.path}/a`, first, 1);

  await t.step(
    "trainOptionsOf() gives back the options that made it",
    async () => {
      const table = await loadBundle(`${dir.path}/a`);
      const options = trainOptionsOf(table);
      assert.equal(options.alpha, 0.1);
      assert.equal(options.seed, 7);
      assert.equal(options.maxEpochs, 5);
      assert.equal(options.calibrationShare, 0.25);
      assert.equal(options.semantic, "off");
      assert.equal(options.settings?.min_radius, 3);
      assert.equal(options.featurizer?.buckets_log2, 17);
      const again = await trainBundle({ training: options }, traces);
      await writeTrainedBundle(`${dir.path}/b`, again, 1);
      for (const file of ["manifest.json", "weights.bin", "report.json"]) {
        assert.deepEqual(
          await Deno.readFile(`${dir.path}/b/${file}`),
          await Deno.readFile(`${dir.path}/a/${file}`),
          file,
        );
      }
    },
  );
});

Deno.test("trainBundle() refuses a bundle with an uncalibrated question unless allowed", async () => {
  // `coin` is answered at random: no threshold can pass.
  const traces = syntheticTraceSet({ count: 1200, seed: 5, coin: true });
  const training = { semantic: "off", maxEpochs: 4 } as const;
  const refused = await trainBundle({ training }, traces);
  assert.equal(refused.refused, true);
  assert.match(
    refused.uncalibrated ?? "",
    /uncalibrated, never certified \(coin/,
  );
  await using dir = await tempDir();
  await rejectsWith(
    writeTrainedBundle(`${dir.path}/x`, refused, 1),
    RangeError,
    /A refused bundle is not written/,
  );
  const allowed = await trainBundle(
    { training, allowUncalibrated: true },
    traces,
  );
  assert.equal(allowed.refused, false);
  assert.notEqual(allowed.uncalibrated, null);
  await writeTrainedBundle(`${dir.path}/x`, allowed, 1);
  assert.deepEqual(
    (await loadBundle(`${dir.path}/x`)).questions.map((q) => q.name).sort(),
    ["coin", "topic", "urgent"],
  );
});

Deno.test("trainBundle() checks its options before any work", async () => {
  const traces = syntheticTraceSet({ count: 50, seed: 1 });
  await rejectsWith(
    trainBundle({ training: { alpha: 2 } }, traces),
    TrainOptionError,
    /alpha must be/,
  );
  await rejectsWith(
    trainBundle({ training: { semantic: "off" }, embedMax: 0 }, traces),
    RangeError,
    /embedMax must be a whole number/,
  );
});
