import assert from "node:assert/strict";
import { loadBundle } from "../src/bundle/mod.ts";
import { runCli, syntheticTraces, tempDir, toJsonl } from "./_fixtures.ts";

Deno.test("train --semantic refuses a mode it does not know, and --embed-cache without it", async () => {
  await using tmp = await tempDir();
  const traces = `${tmp.path}/t.jsonl`;
  await Deno.writeTextFile(
    traces,
    toJsonl(syntheticTraces({ count: 400, seed: 3 })),
  );
  const bad = await runCli([
    "train",
    "--traces",
    traces,
    "--out",
    `${tmp.path}/b`,
    "--semantic",
    "maybe",
  ]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /--semantic must be one of auto, on, off: got "maybe"/,
  );
  const lone = await runCli([
    "train",
    "--traces",
    traces,
    "--out",
    `${tmp.path}/b`,
    "--semantic",
    "off",
    "--embed-cache",
    `${tmp.path}/c`,
  ]);
  assert.equal(lone.code, 2);
  assert.match(lone.stderr, /--embed-cache needs --semantic auto or on/);
  const base = ["train", "--traces", traces, "--out", `${tmp.path}/b`];
  const few = await runCli([...base, "--semantic", "on", "--embed-max", "50"]);
  assert.equal(few.code, 2);
  assert.match(
    few.stderr,
    /--embed-max must be an integer of at least 100: got "50"/,
  );
  const off = await runCli([
    ...base,
    "--semantic",
    "off",
    "--embed-max",
    "500",
  ]);
  assert.equal(off.code, 2);
  assert.match(off.stderr, /--embed-max needs --semantic auto or on/);
});

Deno.test("train --semantic on writes a format 4 bundle and a cache that a retrain reuses", async () => {
  await using tmp = await tempDir();
  const traces = `${tmp.path}/t.jsonl`;
  await Deno.writeTextFile(
    traces,
    toJsonl(syntheticTraces({ count: 600, seed: 4 })),
  );
  const cache = `${tmp.path}/embeddings.bin`;
  const args = [
    "train",
    "--traces",
    traces,
    "--semantic",
    "on",
    "--embed-cache",
    cache,
    "--allow-uncalibrated",
    "--workers",
    "1",
  ];
  const first = await runCli([...args, "--out", `${tmp.path}/b1`]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /embedded \d+ texts/);
  assert.match(first.stdout, /second tier: kept \(--semantic on\)/);
  const table = await loadBundle(`${tmp.path}/b1`);
  assert.equal(table.info.format_version, 4);
  assert.ok(table.questions.every((q) => q.semantic !== undefined));
  // The retrain reads every embedding from the cache: no encoder at all.
  const second = await runCli([...args, "--out", `${tmp.path}/b2`]);
  assert.equal(second.code, 0, second.stderr);
  assert.doesNotMatch(second.stderr, /embedded \d+ texts|loading the encoder/);
  const [a, b] = await Promise.all([
    Deno.readFile(`${tmp.path}/b1/semantic.bin`),
    Deno.readFile(`${tmp.path}/b2/semantic.bin`),
  ]);
  assert.deepEqual(a, b);
  // Beyond --embed-max, a sample is embedded and the second tier says so.
  const sampleCache = `${tmp.path}/sample.bin`;
  const sampled = await runCli([
    ...args.map((x) => x === cache ? sampleCache : x),
    "--embed-max",
    "300",
    "--out",
    `${tmp.path}/b3`,
  ]);
  assert.equal(sampled.code, 0, sampled.stderr);
  assert.match(
    sampled.stderr,
    /embedding a sample of 300 of 600 traces \(--embed-max 300\)/,
  );
  assert.match(sampled.stderr, /second tier on a sample of \d+ of \d+ traces/);
  const report = JSON.parse(
    await Deno.readTextFile(`${tmp.path}/b3/report.json`),
  );
  const s = report.questions[0].semantic;
  assert.ok(s.sample.used < s.sample.of, JSON.stringify(s.sample));
});
