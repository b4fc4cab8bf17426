/**
 * A retrain that began before the traffic changed is ended when the model
 * begins answering an option the bundle lacks: what it would make holds
 * the question all the same, and the retrain on the labels since should
 * not wait for it (an encoder's pass takes tens of seconds).
 */

import assert from "node:assert/strict";
import { loadBundle } from "../src/bundle/mod.ts";
import type { Table } from "../src/engine/mod.ts";
import { Learner } from "../src/learn/mod.ts";
import { trainTiers } from "../src/train/trainer.ts";
import {
  smallTrainOptions,
  syntheticTraces,
  syntheticTraceSet,
  tempDir,
  toJsonl,
} from "./_fixtures.ts";

Deno.test("a change of the model's options ends the retrain running, which is recorded as interrupted", async () => {
  await using temp = await tempDir();
  const dir = temp.path;
  const seed = `${dir}/seed.jsonl`;
  await Deno.writeTextFile(
    seed,
    toJsonl(syntheticTraces({ count: 1500, seed: 7, noise: 0 })),
  );
  let table: Table = (await trainTiers(
    syntheticTraceSet({ count: 300, seed: 8, noise: 0 }),
    smallTrainOptions({ workers: 1, learningCurve: false, semantic: "off" }),
    () => Promise.reject(new Error("nothing to embed")),
  )).table;
  let inForce: string | null = null;
  const lines: string[] = [];
  const learner = new Learner({
    dir,
    seeds: [seed],
    // The quick pass with the table alone, then the encoder's (slow) pass.
    training: () => ({ semantic: "on", workers: 1, learningCurve: false }),
    inForce: () => inForce,
    swapIn: async () => {
      table = await loadBundle(`${dir}/bundle`);
      inForce = `${dir}/bundle`;
    },
    served: () => table,
    log: (line) => lines.push(line),
    tickMs: 0,
  });
  try {
    const running = learner.retrainNow();
    // The quick pass is recorded (and swapped in) as soon as it ends.
    for (let i = 0; i < 600 && learner.history.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(learner.history.length, 1, lines.join("\n"));
    assert.match(learner.history[0]!.reason, /^table alone: /);
    assert.equal(learner.running, true, "the encoder's pass runs");
    // The model answers an option the bundle (of 300 traces) lacks, again
    // and again: the traffic changed.
    for (let i = 0; i < 3; i++) {
      learner.observe("topic", "brand_new_product", table);
    }
    await running;
    const last = learner.history.at(-1)!;
    assert.match(
      last.reason,
      /^interrupted: the model began answering topic/,
      lines.join("\n"),
    );
    assert.equal(last.swapped, false);
    assert.ok(
      !learner.history.some((r) => r.reason.startsWith("both tiers")),
      "the encoder's pass never ended",
    );
    assert.ok(lines.some((l) => l.startsWith("learn: retrain interrupted")));
  } finally {
    learner.close();
  }
});
