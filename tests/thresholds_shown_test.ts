/**
 * The threshold in force wherever a threshold is shown: for a question
 * served with its second tier, the two-tier rule's threshold `L`, named as
 * such, with the table's own beside it (`serve`'s banner, `/v1/stats`,
 * `inspect`, `versions`, the HTML report of `eval`), and the table's own
 * where the second tier is not served.
 */

import assert from "node:assert/strict";
import { encodeBundle, writeBundleVersioned } from "../src/bundle/mod.ts";
import { writeBundleAtomically } from "../src/bundle/files.ts";
import { questionThresholds } from "../src/engine/mod.ts";
import { trainedContents } from "../src/train/contents.ts";
import type { TrainResult } from "../src/train/contents.ts";
import { bundleFiles, runCli, tempDir } from "./_fixtures.ts";
import { getText, startServer } from "./_http_helpers.ts";
import { favouriteOf, twoTierResult, withSemanticTier } from "./_two_tier.ts";

const ENCODER_SOURCE = new URL("../src/encoder", import.meta.url).pathname;

/** The two-tier bundle with `L` below the table's own threshold. */
function lowered(): { r: TrainResult; table: number; l: number } {
  const r = twoTierResult();
  const q = r.table.byName.get("topic")!;
  const table = q.calibration.threshold!;
  const l = Math.round((table - 0.05) * 10_000) / 10_000;
  const tier = structuredClone(q.semantic!);
  // The two-tier rule's calibration has no bands of its own.
  const { bands: _, ...calibration } = tier.calibration;
  tier.calibration = { ...calibration, threshold: l, candidates: [l] };
  return { r: withSemanticTier(r, "topic", tier), table, l };
}

Deno.test("the threshold shown is the one in force, the table's own named beside it", async (t) => {
  await using tmp = await tempDir();
  const { r, table, l } = lowered();
  const q = r.table.byName.get("topic")!;
  assert.deepEqual(questionThresholds(q), {
    inForce: l,
    table,
    twoTier: l,
  });
  assert.equal(questionThresholds(q, false).inForce, table);
  const f = (x: number) => x.toFixed(4);
  const bundle = `${tmp.path}/b`;
  await writeBundleAtomically(bundle, await bundleFiles(r));

  await t.step("serve's banner and /v1/stats", async () => {
    const server = await startServer({ bundle, read: [ENCODER_SOURCE] });
    try {
      assert.match(
        server.output().stdout,
        new RegExp(
          `question topic: .*certified at confidence >= ${
            f(l)
          } \\(alpha 0\\.05; the two-tier rule's, for both tiers; the table's own: ${
            f(table)
          }\\)`,
        ),
      );
      const got = await getText(server.base, "/v1/stats");
      const stats = JSON.parse(got.text);
      const topic = stats.bundle.questions.find((x: { name: string }) =>
        x.name === "topic"
      );
      assert.equal(topic.threshold, l);
      assert.equal(topic.table_threshold, table);
      const urgent = stats.bundle.questions.find((x: { name: string }) =>
        x.name === "urgent"
      );
      assert.equal("table_threshold" in urgent, false);
      // inspect --server does not tell to retrain a bundle just trained.
      const live = await runCli(["inspect", "--server", server.base]);
      assert.equal(live.code, 0, live.stderr);
      assert.match(
        live.stdout,
        /- topic: .*\n {2}feedback check: not run for a question served with its second tier/,
      );
      assert.doesNotMatch(live.stdout, /- topic: .*\n.*retrain to enable/);
    } finally {
      await server.stop();
    }
    const alone = await startServer({
      bundle,
      args: ["--semantic-workers", "0"],
    });
    try {
      assert.match(
        alone.output().stdout,
        new RegExp(
          `certified at confidence >= ${
            f(table)
          } \\(alpha 0\\.05; the table's own, its second tier not served; the two-tier rule's: ${
            f(l)
          }\\)`,
        ),
      );
    } finally {
      await alone.stop();
    }
  });

  await t.step("inspect", async () => {
    const run = await runCli(["inspect", "--bundle", bundle]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      new RegExp(
        `- topic .*threshold in force ${
          f(l)
        } \\(the two-tier rule's, for both tiers; the table's own: ${
          f(table)
        }\\)`,
      ),
    );
    const json = await runCli(["inspect", "--bundle", bundle, "--json"]);
    const topic = JSON.parse(json.stdout).questions.find((
      x: { name: string },
    ) => x.name === "topic");
    assert.deepEqual(topic.thresholds, {
      in_force: l,
      table,
      two_tier: l,
    });
  });

  await t.step("versions", async () => {
    const out = `${tmp.path}/kept`;
    await writeBundleVersioned(
      out,
      await encodeBundle(trainedContents(r)),
      3,
    );
    const run = await runCli(["versions", "--bundle", out]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      new RegExp(
        `topic: threshold in force ${
          f(l)
        } \\(the two-tier rule's, for both tiers; the table's own: ${
          f(table)
        }\\)`,
      ),
    );
    const json = JSON.parse(
      (await runCli(["versions", "--bundle", out, "--json"])).stdout,
    );
    assert.equal(json.versions[0].questions.topic.threshold, l);
    assert.equal(json.versions[0].questions.topic.table_threshold, table);
  });

  await t.step(
    "eval's HTML report, with both tiers and with the table alone",
    async () => {
      const traces = `${tmp.path}/traces.jsonl`;
      const favourite = favouriteOf(r.table);
      await Deno.writeTextFile(
        traces,
        ["tracking parcel delivery late", "refund return money back"].map((
          text,
        ) => JSON.stringify({ text, answers: { topic: favourite } }) + "\n")
          .join(""),
      );
      const html = `${tmp.path}/report.html`;
      const both = await runCli([
        "eval",
        "--bundle",
        bundle,
        "--traces",
        traces,
        "--report-html",
        html,
        "--json",
      ]);
      assert.equal(both.code, 0, both.stderr);
      const page = await Deno.readTextFile(html);
      assert.ok(
        page.includes(
          `calibrated, threshold in force ${
            f(l)
          } (the two-tier rule&#39;s, for both tiers; the table&#39;s own: ${
            f(table)
          })`,
        ),
        page.slice(0, 3000),
      );
      const frontier = JSON.parse(both.stdout).questions.topic.frontier as {
        threshold: number;
        in_force: boolean;
      }[];
      assert.deepEqual(
        frontier.filter((p) => p.in_force).map((p) => p.threshold),
        [l],
      );
      const alone = await runCli([
        "eval",
        "--bundle",
        bundle,
        "--traces",
        traces,
        "--report-html",
        html,
        "--table-only",
      ]);
      assert.equal(alone.code, 0, alone.stderr);
      assert.ok(
        (await Deno.readTextFile(html)).includes(
          `calibrated, threshold in force ${
            f(table)
          } (the table&#39;s own, its second tier not served; the two-tier rule&#39;s: ${
            f(l)
          })`,
        ),
      );
    },
  );
});
