/**
 * A retrain's passes are handed on as each ends: the quick pass with the
 * table alone (its bundle written and swapped in) is shown before the
 * encoder's pass is over, and stays shown when that pass fails.
 */

import assert from "node:assert/strict";
import {
  LEARN_FILES,
  QUICK_SHARE,
  type RetrainOutcome,
  retrainPasses,
} from "../src/learn/mod.ts";
import { testLevel } from "../src/guarantee/mod.ts";
import { syntheticTraces, tempDir, toJsonl } from "./_fixtures.ts";

Deno.test("retrainPasses hands on the quick pass's swap before the encoder's pass, which then fails", async () => {
  await using temp = await tempDir();
  const dir = temp.path;
  const seed = `${dir}/seed.jsonl`;
  await Deno.writeTextFile(
    seed,
    toJsonl(syntheticTraces({ count: 1500, seed: 7, noise: 0 })),
  );
  // The embedding cache is a folder: the encoder's pass fails on reading it.
  await Deno.mkdir(`${dir}/${LEARN_FILES.embeddings}`);
  const events: string[] = [];
  const passes: RetrainOutcome[] = [];
  await assert.rejects(
    retrainPasses(
      {
        dir,
        seeds: [seed],
        training: { semantic: "on", workers: 1, learningCurve: false },
        inForce: null,
        settledBefore: Date.now(),
        keep: 3,
        added: {},
        settled: 10,
        held: [],
        calibrateAfter: {},
        encoderTriedAt: 0,
        tests: {},
        minPassChance: 0,
        minCalibration: {},
      },
      () => {},
      true,
      () => {
        events.push("swapped");
        return Promise.resolve();
      },
      (outcome) => {
        events.push(`pass ${outcome.encoder ? "encoder" : "table"}`);
        passes.push(outcome);
      },
    ),
  );
  // Without the hand-on, the failure would have taken the swap's record
  // with it; the pass (and the test it spent) is told before the swap.
  assert.deepEqual(events, ["pass table", "swapped"]);
  assert.equal(passes[0]!.swapped, true);
  // Each question's first test, at the quick pass's part of the first
  // share of delta (the encoder's pass would have had the rest).
  assert.equal(passes[0]!.tested.topic, QUICK_SHARE * testLevel(0.05, 1));
  assert.match(passes[0]!.reason, /^table alone: the first calibrated bundle/);
  await Deno.stat(`${dir}/${LEARN_FILES.bundle}`); // written
});
