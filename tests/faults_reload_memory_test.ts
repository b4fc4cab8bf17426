/**
 * Memory per reload on the real server: a BANKING77 bundle served, then 30
 * SIGHUP reloads with 300 decisions between, resident memory (VmRSS) read
 * from `/proc` after each. Memory must come back to its level: over the
 * last 10 reloads it may not keep growing. Before, every remembered answer
 * kept its table alive, and each reload kept about 15 MB (30 reloads: +500
 * MB). The figures themselves go to `docs/benchmarks.md`
 * (`scripts/bench-faults.ts`); this asserts only the plateau.
 */

import { rssMb } from "../scripts/processes.ts";
import assert from "node:assert/strict";
import { runCli, tempDir } from "./_fixtures.ts";
import { skipped } from "./_tools.ts";
import { startServer } from "./_http_helpers.ts";

const DATA = new URL("../../shared/data/", import.meta.url).pathname;
const TRAIN = `${DATA}banking77/train.csv`;
const missing = (() => {
  try {
    Deno.statSync(TRAIN);
    if (Deno.build.os !== "linux") throw new Error("no /proc");
    return null;
  } catch {
    return skipped(
      "faults_reload_memory_test",
      `needs ${TRAIN} and /proc (Linux)`,
    );
  }
})();

const TEXTS = [
  "my card has not arrived yet",
  "how do I top up with a bank transfer",
  "I was charged twice for the same purchase",
  "can I change my PIN at an ATM",
  "the exchange rate on my payment looks wrong",
  "why was my transfer declined",
];

Deno.test({
  name:
    "memory comes back to its level after each reload (30 reloads, 300 decisions between)",
  ignore: missing !== null,
}, async () => {
  await using dir = await tempDir();
  const bundle = `${dir.path}/banking77`;
  const trained = await runCli([
    "train",
    "--traces",
    TRAIN,
    "--out",
    bundle,
    "--quiet",
  ]);
  assert.equal(trained.code, 0, trained.stderr);
  const s = await startServer({
    bundle,
    permissions: [
      "--v8-flags=--max-semi-space-size=4,--expose-gc",
      "--allow-net=127.0.0.1",
      `--allow-read=${dir.path}`,
      "--allow-env=SERVICE_PROXY_TOKEN",
    ],
  });
  const rss: number[] = [];
  try {
    for (let round = 1; round <= 30; round++) {
      for (let i = 0; i < 300; i++) {
        const state = i % 2 === 0
          ? TEXTS[i % 6]!
          : `${TEXTS[i % 6]} ${round} ${i}`;
        const res = await fetch(`${s.base}/v1/decide`, {
          method: "POST",
          body: JSON.stringify({ state }),
        });
        assert.equal(res.status, 200);
        await res.body?.cancel();
      }
      const before = s.output().stderr.split("reloaded bundle").length;
      Deno.kill(s.pid, "SIGHUP");
      while (s.output().stderr.split("reloaded bundle").length === before) {
        await new Promise((r) => setTimeout(r, 20));
      }
      rss.push(await rssMb(s.pid));
    }
  } finally {
    await s.stop();
  }
  console.log(`RSS after each reload (MB): ${rss.map(Math.round).join(" ")}`);
  const lastTen = rss[29]! - rss[19]!;
  assert.ok(
    lastTen < 30,
    `RSS grew ${lastTen.toFixed(0)} MB over the last 10 reloads: ${
      rss.map(Math.round).join(" ")
    }`,
  );
});
