/**
 * `eval` on a bundle with a second tier answers as `serve` does and splits
 * its figures by tier; `--table-only` answers with the table alone.
 */

import assert from "node:assert/strict";
import { runCli, syntheticTraces, tempDir, toJsonl } from "./_fixtures.ts";
import { writeTwoTierBundle } from "./_two_tier.ts";

Deno.test("eval splits a two-tier bundle's figures by tier, and --table-only keeps the table alone", async () => {
  await using tmp = await tempDir();
  const bundle = await writeTwoTierBundle(`${tmp.path}/b`);
  const traces = `${tmp.path}/t.jsonl`;
  // Noisy traces: some of them the table is unsure of.
  await Deno.writeTextFile(
    traces,
    toJsonl(syntheticTraces({ count: 300, seed: 99, noise: 0.2 })),
  );
  /** `eval` of the bundle on the traces, with `extra` flags. */
  const evalWith = (...extra: string[]) =>
    runCli(["eval", "--bundle", bundle, "--traces", traces, ...extra]);
  const both = await evalWith("--json");
  assert.equal(both.code, 0, both.stderr);
  const topic = JSON.parse(both.stdout).questions.topic;
  const tiers = topic.tiers;
  assert.ok(tiers !== undefined, "figures by tier");
  assert.equal(tiers.table.answers + tiers.semantic.answers, topic.n);
  assert.ok(tiers.semantic.asked > 0, "the table was unsure of some traces");
  assert.equal(
    tiers.semantic.answers,
    tiers.semantic.asked - tiers.semantic.novel,
  );
  assert.equal(
    tiers.table.certified + tiers.semantic.certified,
    topic.certified,
  );
  const words = await evalWith();
  assert.match(words.stdout, /by tier: table \d+ of \d+ certified/);

  const alone = await evalWith("--json", "--table-only");
  assert.equal(alone.code, 0, alone.stderr);
  assert.equal(JSON.parse(alone.stdout).questions.topic.tiers, undefined);
});
