/**
 * A fleet that learns, for real: three `serve --learn DIR --live-store URL`
 * replicas, each on its own folder, sharing a `redis-server`; decisions go
 * to the replicas in turn and each label to the next one. One replica
 * learns, counting the labels all of them took; every replica serves the
 * bundle it publishes; a non-learner shows the learner in its statistics.
 * The learner killed with SIGKILL: another learns within 30 s, every label
 * a proxy got a 2xx for is in its folder and its count, no two leases
 * swapped bundles in on the same labels, and the survivors serve one
 * bundle id. The store stopped for longer than a lease: serving goes on,
 * and once it is back every label acknowledged meanwhile is counted.
 */

import assert from "node:assert/strict";
import { type SyntheticTrace, syntheticTraces } from "./_fixtures.ts";
import {
  eventually,
  postJson,
  type RunningServer,
  startServer,
} from "./_http_helpers.ts";
import { type Json, missingRedis, stats } from "./_fleet.ts";
import { missingTool } from "./_tools.ts";
import { freePort, startRedis } from "../scripts/processes.ts";
import { tempDir } from "./_fixtures.ts";

const noRedis = missingRedis("fleet_learn_redis_test");
const CHROMIUM = "/usr/bin/chromium";
/** Why the dashboard step is left out (no Chromium), or null. */
const noBrowser = missingTool(
  "fleet_learn_redis_test (its dashboard step)",
  CHROMIUM,
  "apt-get install chromium",
);
/** The program's folder: the retrain worker is loaded from it. */
const PROGRAM = new URL("../", import.meta.url).pathname.replace(/\/$/, "");

/** Starts replica `name` learning in `dir` through `store`. */
function replica(dir: string, store: string, name: string, seed: number) {
  return startServer({
    args: [
      "--learn",
      dir,
      "--semantic",
      "off",
      "--live-store",
      store,
      "--replica",
      name,
      "--audit-seed",
      String(seed),
    ],
    // Locked down as docs/operations.md gives it: its own folder, the
    // program's (the retrain worker is loaded from it), the network.
    permissions: [
      "--allow-net=127.0.0.1",
      `--allow-read=${dir},${PROGRAM}`,
      `--allow-write=${dir}`,
      "--allow-env=SERVICE_PROXY_TOKEN",
    ],
  });
}

/** The replicas' statistics (null for one that does not answer). */
function allStats(rs: readonly RunningServer[]): Promise<(Json | null)[]> {
  return Promise.all(rs.map((r) => stats(r).catch(() => null)));
}

/** Index of the replica that learns now (-1: none). */
async function learnerIndex(rs: readonly RunningServer[]): Promise<number> {
  return (await allStats(rs)).findIndex((s) => s?.learn?.learner === true);
}

/** Label lines in a learning folder's log. */
async function labelLines(dir: string): Promise<number> {
  let n = 0;
  for (const name of ["feedback.1.jsonl", "feedback.jsonl"]) {
    const text = await Deno.readTextFile(`${dir}/${name}`).catch(() => "");
    for (const l of text.split("\n")) if (l.startsWith('{"text"')) n++;
  }
  return n;
}

/**
 * Streams `traces[from, to)` at `rate` a second: decision i to replica i
 * mod n, its label (for an uncertified answer or an audit) to the next;
 * returns the labels acknowledged (`kept`) and stops early once `done()`
 * (asked every 200 requests) says so.
 */
async function stream(
  rs: readonly RunningServer[],
  traces: readonly SyntheticTrace[],
  from: number,
  to: number,
  rate: number,
  done: () => Promise<boolean> = () => Promise.resolve(false),
): Promise<{ acknowledged: number; next: number }> {
  let acknowledged = 0;
  const started = performance.now();
  let i = from;
  for (; i < to; i++) {
    const wait = started + (1000 * (i - from)) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = traces[i]!;
    const r = rs[i % rs.length]!;

    const { status, json } = await postJson(r.base, "/v1/decide", {
      state: t.text,
      questions: { topic: {} },
    });
    assert.equal(status, 200, JSON.stringify(json));
    const a = (json.answers as Record<string, Json>).topic!;
    if (!a.certified || a.audit !== undefined) {
      const f = await postJson(rs[(i + 1) % rs.length]!.base, "/v1/feedback", {
        question: "topic",
        state: t.text,
        answer: t.answers.topic,
        ...(a.audit !== undefined ? { audit: a.audit } : {}),
        ...(a.feedback_id !== undefined ? { feedback_id: a.feedback_id } : {}),
      });
      assert.equal(f.status, 200, JSON.stringify(f.json));
      acknowledged += f.json.kept as number;
    }

    if (i % 200 === 199 && await done()) {
      i++;
      break;
    }
  }
  return { acknowledged, next: i };
}

Deno.test({
  name:
    "three learning replicas: one learner counts every replica's labels, every replica serves its bundle; killed with SIGKILL, another learns on, no label acknowledged lost",
  ignore: noRedis !== null,
  fn: async (t) => {
    await using dir = await tempDir();
    const redis = await startRedis();
    const dirs = [1, 2, 3].map((i) => `${dir.path}/r${i}`);
    const rs: RunningServer[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        rs.push(await replica(dirs[i]!, redis.url, `r${i + 1}`, i + 1));
      }
      assert.match(
        rs[0]!.output().stdout,
        /learning as a fleet in .* through redis:/,
      );
      await eventually(
        async () => (await learnerIndex(rs)) >= 0,
        () => "a learner",
      );
      const counts = (await allStats(rs)).map((s) => s!.learn.learner);
      assert.equal(counts.filter((l) => l === true).length, 1);
      const traces = syntheticTraces({ count: 9000, seed: 31, noise: 0.01 });
      // Until the learner swapped a bundle in.
      const first = await stream(rs, traces, 0, 7000, 200, async () => {
        const s = await allStats(rs);
        return s.some((x) => x?.learn?.learner === true && x.learn.swaps > 0);
      });
      const li = await learnerIndex(rs);
      const learner = (await stats(rs[li]!)).learn;
      assert.ok(
        learner.swaps > 0,
        `the fleet swapped a bundle in: ${
          JSON.stringify(learner.history.at(-1))
        }`,
      );
      // Every replica serves the learner's bundle within 5 s.
      const published = learner.fleet.bundle.id as string;
      await eventually(
        async () =>
          (await allStats(rs)).every((s) => s?.bundle?.id === published),
        () => `every replica on bundle ${published.slice(0, 12)}`,
        5_000,
      );
      // A replica that does not learn shows the learner and its labels.
      const other = (await allStats(rs)).find((s) =>
        s?.learn?.learner === false
      )!;
      assert.equal(other.learn.fleet.learner, `r${li + 1}`);
      assert.ok(other.learn.labels > 0);
      // inspect --server says so.
      const inspect = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL("../main.ts", import.meta.url).pathname,
          "inspect",
          "--server",
          rs.find((_, i) => i !== li)!.base,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.match(
        new TextDecoder().decode(inspect.stdout),
        new RegExp(`fleet: r${li + 1} learns \\(lease \\d+\\); this is r`),
      );
      await t.step({
        name: "its dashboard names the learner",
        ignore: noBrowser !== null,
        fn: async () => {
          const oi = (await allStats(rs)).findIndex((s) =>
            s?.learn?.learner === false
          );
          const { withPage } = await import("./_browser_playwright.ts");
          await withPage(`${rs[oi]!.base}/`, async (page) => {
            await page.waitForSelector("#learn-fleet");
            assert.match(
              await page.textContent("#learn-fleet") ?? "",
              new RegExp(
                `Fleet: r${li + 1} learns \\(lease \\d+\\); this is r${oi + 1}`,
              ),
            );
          });
        },
      });
      // Each replica's picks reach the learner.
      const shares = learner.fleet.replicas as Record<string, Json>;
      for (const name of ["r1", "r2", "r3"]) {
        assert.ok(
          shares[name]?.labels > 0,
          `${name} took labels: ${JSON.stringify(shares)}`,
        );
        assert.ok(shares[name]?.decisions > 0, `${name} made decisions`);
      }

      // SIGKILL the learner; another learns within 30 s.
      const killed = rs[li]!;
      await killed.stop("SIGKILL");
      const survivors = rs.filter((_, i) => i !== li);
      const survivorDirs = dirs.filter((_, i) => i !== li);
      const killedAt = performance.now();
      await eventually(
        async () => (await learnerIndex(survivors)) >= 0,
        () => "another learner",
        30_000,
      );
      const takeover = (performance.now() - killedAt) / 1000;
      assert.ok(takeover < 30, `took over in ${takeover} s`);
      const second = await stream(
        survivors,
        traces,
        first.next,
        first.next + 800,
        200,
      );
      const acknowledged = first.acknowledged + second.acknowledged;
      const ni = await learnerIndex(survivors);
      await eventually(
        async () => (await stats(survivors[ni]!)).learn.labels === acknowledged,
        () => `the new learner counts ${acknowledged} labels`,
        15_000,
      );
      for (const d of survivorDirs) {
        await eventually(
          async () => (await labelLines(d)) === acknowledged,
          () => `${acknowledged} label lines in ${d}`,
          5_000,
        );
      }
      // No two leases swapped bundles in on the same labels.
      const history =
        (await Deno.readTextFile(`${survivorDirs[0]}/retrains.jsonl`))
          .trim().split("\n").map((l) => JSON.parse(l));
      assert.ok(
        history.every((h) =>
          typeof h.lease === "number" && typeof h.learner === "string"
        ),
      );
      const swapped = history.filter((h) => h.swapped);
      for (let k = 1; k < swapped.length; k++) {
        if (swapped[k].lease === swapped[k - 1].lease) continue;
        assert.ok(
          swapped[k].lease > swapped[k - 1].lease &&
            swapped[k].labels > swapped[k - 1].labels,
          `lease ${swapped[k].lease} swapped in on ${
            swapped[k].labels
          } labels after lease ${swapped[k - 1].lease} on ${
            swapped[k - 1].labels
          }`,
        );
      }
      // The survivors serve one bundle id.
      await eventually(
        async () => {
          const s = await allStats(survivors);
          return s[0]?.bundle?.id === s[1]?.bundle?.id;
        },
        () => "the survivors on one bundle",
        5_000,
      );
    } finally {
      for (const r of rs) await r.stop("SIGTERM").catch(() => {});
      await redis.stop();
    }
  },
});

Deno.test({
  name:
    "a learning fleet whose store stops for longer than a lease serves on, and counts every label acknowledged meanwhile once the store is back",
  ignore: noRedis !== null,
  fn: async () => {
    await using dir = await tempDir();
    const port = freePort();
    await Deno.mkdir(`${dir.path}/redis`);
    let redis = await startRedis(port, `${dir.path}/redis`);
    const dirs = [1, 2].map((i) => `${dir.path}/r${i}`);
    const rs: RunningServer[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        rs.push(await replica(dirs[i]!, redis.url, `r${i + 1}`, i + 1));
      }
      await eventually(
        async () => (await learnerIndex(rs)) >= 0,
        () => "a learner",
      );
      const traces = syntheticTraces({ count: 3000, seed: 7, noise: 0.01 });
      const before = await stream(rs, traces, 0, 400, 200);
      await redis.stop();
      // Longer than a lease (5 s): serving and acknowledging go on.
      const during = await stream(rs, traces, 400, 1800, 200);
      assert.ok(during.acknowledged > 0);
      assert.equal(
        await learnerIndex(rs),
        -1,
        "no replica learns without the store",
      );
      redis = await startRedis(port, `${dir.path}/redis`);
      const after = await stream(rs, traces, 1800, 2000, 200);
      const acknowledged = before.acknowledged + during.acknowledged +
        after.acknowledged;
      await eventually(
        async () => {
          const i = await learnerIndex(rs);
          return i >= 0 && (await stats(rs[i]!)).learn.labels === acknowledged;
        },
        () => `a learner again, counting ${acknowledged} labels`,
        20_000,
      );
      for (const d of dirs) {
        await eventually(
          async () => (await labelLines(d)) === acknowledged,
          () => `${acknowledged} label lines in ${d}`,
          5_000,
        );
      }
    } finally {
      for (const r of rs) await r.stop("SIGTERM").catch(() => {});
      await redis.stop();
    }
  },
});
