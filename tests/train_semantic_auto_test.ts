/**
 * `--semantic auto`, the default of `train`: the texts are embedded only
 * where the table leaves enough of a question's calibration answers to low
 * confidence for the second tier to matter (`secondTierReach`); a table
 * that certifies nearly everything is trained alone, no encoder loaded.
 */

import assert from "node:assert/strict";
import { loadBundle } from "../src/bundle/mod.ts";
import { MIN_REACH } from "../src/train/semantic.ts";
import { secondTierReach } from "../src/train/second_tier_reach.ts";
import { trainTable, trainTiers } from "../src/train/trainer.ts";
import {
  runCli,
  smallTrainOptions,
  syntheticTraces,
  syntheticTraceSet,
  tempDir,
  toJsonl,
} from "./_fixtures.ts";

Deno.test("secondTierReach() finds the share the table leaves to low confidence, and auto embeds only where it reaches MIN_REACH", async () => {
  const options = smallTrainOptions({ workers: 1, learningCurve: false });
  // Clean labels: the table certifies nearly every calibration answer.
  const clean = syntheticTraceSet({ count: 1500, seed: 7, noise: 0 });
  const reach = secondTierReach(trainTable(clean, options));
  assert.equal(reach.worth, false, JSON.stringify(reach));
  for (const q of reach.questions) assert.ok(q.reach < MIN_REACH);
  let embedded = 0;
  const r = await trainTiers(clean, options, () => {
    embedded++;
    return Promise.reject(new Error("not to be embedded"));
  });
  assert.equal(embedded, 0);
  assert.ok(r.table.questions.every((q) => q.semantic === undefined));
  // A coin toss: never certified, all its answers left to low confidence.
  const coin = syntheticTraceSet({ count: 1500, seed: 7, coin: true });
  const withCoin = secondTierReach(trainTable(coin, options));
  assert.equal(withCoin.worth, true);
  assert.equal(withCoin.questions.find((q) => q.name === "coin")!.reach, 1);
  await assert.rejects(
    trainTiers(coin, options, () => {
      embedded++;
      return Promise.reject(new Error("embedding asked"));
    }),
    /embedding asked/,
  );
  assert.equal(embedded, 1);
  // --semantic off never asks; on always does.
  await trainTiers(coin, { ...options, semantic: "off" }, () => {
    throw new Error("off embeds nothing");
  });
  await assert.rejects(
    trainTiers(
      clean,
      { ...options, semantic: "on" },
      () => Promise.reject(new Error("on embeds")),
    ),
    /on embeds/,
  );
});

Deno.test("train by default on traces the table certifies nearly all of says why it embeds nothing, and writes a table-only bundle", async () => {
  await using tmp = await tempDir();
  const traces = `${tmp.path}/t.jsonl`;
  await Deno.writeTextFile(
    traces,
    toJsonl(syntheticTraces({ count: 1500, seed: 7, noise: 0 })),
  );
  const run = await runCli([
    "train",
    "--traces",
    traces,
    "--out",
    `${tmp.path}/b`,
    "--workers",
    "1",
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stderr,
    /second tier \(--semantic auto\): the table leaves at most \d+\.\d% of a question's calibration answers to low confidence .*no text embedded/,
  );
  assert.doesNotMatch(run.stderr, /loading the encoder/);
  const table = await loadBundle(`${tmp.path}/b`);
  assert.ok(table.questions.every((q) => q.semantic === undefined));
});
