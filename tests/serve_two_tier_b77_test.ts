/**
 * A bundle trained by `train --semantic on` on real traces (1,500 BANKING77
 * texts, 10 intents) served by a real process, locked down: every test text
 * gets a 200, the table-certified ones come from the table, and texts the
 * table is unsure of come from the second tier (which reads the table's
 * probabilities beside the embedding), certified or not by the one rule.
 * Skipped when the data is absent.
 */

import assert from "node:assert/strict";
import { parse } from "csv-parse/sync";
import { runCli, tempDir } from "./_fixtures.ts";
import { getText, postJson, startServer } from "./_http_helpers.ts";

const DATA = new URL("../../shared/data/", import.meta.url).pathname;
const TRAIN = `${DATA}banking77/train.csv`;
const TEST = `${DATA}banking77/test.csv`;
const present = (() => {
  try {
    Deno.statSync(TRAIN);
    Deno.statSync(TEST);
    return true;
  } catch {
    return false;
  }
})();
if (!present) {
  console.log(`serve_two_tier_b77_test: skipped, no BANKING77 at ${DATA}`);
}
const ENCODER_SOURCE = new URL("../src/encoder", import.meta.url).pathname;

type Row = { text: string; category: string };

Deno.test({
  name:
    "train --semantic on over BANKING77, served locked down: both tiers answer, each where it should",
  ignore: !present,
  fn: async () => {
    await using tmp = await tempDir();
    const rows = parse(await Deno.readTextFile(TRAIN), {
      columns: true,
    }) as Row[];
    const intents = [...new Set(rows.map((r) => r.category))].slice(0, 10);
    const kept = rows.filter((r) => intents.includes(r.category)).slice(
      0,
      1500,
    );
    const traces = `${tmp.path}/t.jsonl`;
    await Deno.writeTextFile(
      traces,
      kept.map((r) =>
        JSON.stringify({ text: r.text, answers: { intent: r.category } })
      ).join("\n") + "\n",
    );
    const bundle = `${tmp.path}/b`;
    const trained = await runCli([
      "train",
      "--traces",
      traces,
      "--out",
      bundle,
      "--semantic",
      "on",
      "--allow-uncalibrated",
      "--quiet",
    ]);
    assert.equal(trained.code, 0, trained.stderr);
    const manifest = JSON.parse(
      await Deno.readTextFile(`${bundle}/manifest.json`),
    );
    assert.equal(manifest.format_version, 4);

    const tests = (parse(await Deno.readTextFile(TEST), {
      columns: true,
    }) as Row[]).filter((r) => intents.includes(r.category)).slice(0, 150);
    const real = await Deno.realPath(bundle);
    const server = await startServer({
      bundle,
      read: [real, ENCODER_SOURCE],
    });
    try {
      const tiers = { table: 0, semantic: 0 };
      for (const r of tests) {
        const reply = await postJson(server.base, "/v1/decide", {
          state: r.text,
        });
        assert.equal(reply.status, 200);
        const a =
          (reply.json.answers as Record<string, Record<string, unknown>>)
            .intent!;
        const tier = a.tier as "table" | "semantic";
        tiers[tier]++;
        if (tier === "table" && a.certified === false) {
          assert.notEqual(a.flag, null);
        }
        if (tier === "semantic") {
          assert.ok(a.flag === null || a.flag === "low_confidence");
          assert.equal(a.certified, a.flag === null);
        }
      }
      assert.ok(tiers.table > 0, JSON.stringify(tiers));
      assert.ok(tiers.semantic > 0, JSON.stringify(tiers));
      const stats = JSON.parse((await getText(server.base, "/v1/stats")).text);
      assert.equal(stats.tiers.semantic.answers, tiers.semantic);
      assert.equal(stats.tiers.table.answers, tiers.table);
    } finally {
      await server.stop();
    }
  },
});
