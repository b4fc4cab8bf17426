/**
 * A fleet for real: a Redis server (Debian's `redis-server`) and three
 * `main.ts serve` processes on loopback ports, sharing `--audit-key-file`
 * and `--live-store`, under locked-down permissions. A client sends
 * decisions round-robin and each feedback item to another replica: no
 * audit missed, one threshold everywhere after the stream, a replica
 * killed (SIGKILL) and restarted mid-stream loses no counted evidence, and
 * the per-replica feedback logs hold every item. Then nginx with
 * `deploy/nginx.conf` in front of three replicas. The compose file's
 * command lines are checked with `serve`'s own flag parser.
 */

import assert from "node:assert/strict";
import { parseServeFlags } from "../src/cli/serve_flags.ts";
import { DecisionClient } from "../src/client/mod.ts";
import { parseJsonlTraces } from "../src/traces/mod.ts";
import { tempDir } from "./_fixtures.ts";
import { freePort, postJson, writeTestBundle } from "./_http_helpers.ts";
import { missingTool } from "./_tools.ts";
import {
  type Json,
  missingRedis,
  replicaStarter,
  stats,
  withRedis,
} from "./_fleet.ts";
import { startNginx, startRedis } from "../scripts/processes.ts";

const noRedis = missingRedis("fleet_redis_test");
const noNginx = missingTool(
  "fleet_redis_test",
  "nginx",
  "apt-get install nginx",
);

const DEPLOY = new URL("../deploy/", import.meta.url).pathname;

/** A fleet of the test bundle on `store`, in `dir`: each replica logs its feedback there. */
async function fleet(dir: string, store: string) {
  const bundle = await writeTestBundle(`${dir}/bundle`);
  const start = await replicaStarter({
    bundle,
    dir,
    store,
    auditRate: "0.5",
    feedbackLogs: true,
  });
  return { dir, start };
}

const TEXTS = [
  "my invoice was overcharged",
  "the parcel never arrived",
  "please reset my password",
  "refund the double charge on my bill",
  "where is my package",
  "I cannot log in to my account",
  "the delivery is late again",
  "billing statement looks wrong",
];

Deno.test({
  name:
    "three replicas and Redis: decisions round-robin, feedback elsewhere, no audit missed, one threshold, a killed replica loses nothing counted",
  ignore: noRedis !== null,
  fn: () =>
    withRedis(async (redis, dir) => {
      const f = await fleet(dir.path, redis.url);
      const rs = await Promise.all([1, 2, 3].map((i) => f.start(`r${i}`, i)));
      try {
        let ids = 0;
        let counted = 0;
        let items = 0;
        const missed: Json[] = [];
        const send = async (n: number, offset: number, wrongEvery: number) => {
          for (let i = 0; i < n; i++) {
            const at = rs[i % 3]!;
            const next = rs[(i + 1) % 3]!;
            const text = TEXTS[(i + offset) % TEXTS.length]!;
            const { json } = await postJson(at.base, "/v1/decide", {
              state: text,
              questions: { topic: {} },
            });
            const a = (json.answers as Json).topic;
            if (a.certified && a.audit === undefined) continue;
            // The model disagrees now and then.
            const answer = i % wrongEvery === 0
              ? (a.choice === "billing" ? "shipping" : "billing")
              : a.choice;
            const item: Json = { question: "topic", state: text, answer };
            if (a.audit !== undefined) {
              item.audit = a.audit;
              ids++;
            }
            items++;
            const fb = await postJson(next.base, "/v1/feedback", item);
            assert.equal(fb.status, 200);
            counted += fb.json.audits as number;
            missed.push(...(fb.json.missed_audits as Json[]));
          }
        };
        await send(90, 0, 4);
        // Killed without a chance to flush, then started again.
        const killed = rs[1]!;
        await killed.stop("SIGKILL");
        const before = await stats(rs[0]!);
        rs[1] = await f.start("r2", 22);
        const restarted = await stats(rs[1]);
        assert.equal(
          restarted.live.questions.topic.audited,
          before.live.questions.topic.audited,
          "the restarted replica reads every audit counted",
        );
        await send(90, 3, 4);
        assert.deepEqual(missed, []);
        assert.equal(counted, ids);
        // One sync later every replica shows the same pooled state.
        await new Promise((r) => setTimeout(r, 600));
        const all = await Promise.all(rs.map(stats));
        for (const s of all) {
          const q = s.live.questions.topic;
          assert.equal(s.live.fleet.link, "connected");
          assert.equal(s.live.audit_ids, "signed");
          assert.equal(q.audited, ids, "every audit counted once");
          assert.equal(q.threshold, all[0]!.live.questions.topic.threshold);
          assert.equal(q.reason, all[0]!.live.questions.topic.reason);
          assert.equal(s.bundle.id, all[0]!.bundle.id);
        }
        assert.ok(ids >= 5, `${ids} audits`);
        // Each replica's own feedback log; together they hold every item.
        let lines = 0;
        for (const name of ["r1", "r2", "r3"]) {
          const path = `${f.dir}/feedback-${name}.jsonl`;
          // Trace lines only: the picked decisions' texts are rows too.
          const set = parseJsonlTraces(path, await Deno.readTextFile(path));
          lines += set.texts.length - (set.picks?.length ?? 0);
        }
        assert.equal(lines, items);
      } finally {
        await Promise.all(rs.map((s) => s.stop()));
      }
    }),
});

Deno.test({
  name:
    "a replica started while the store is down withholds certification, and serves the fleet's threshold once it answers",
  ignore: noRedis !== null,
  async fn() {
    await using dir = await tempDir();
    const port = freePort();
    const f = await fleet(dir.path, `redis://127.0.0.1:${port}`);
    const s = await f.start("r1", 1);
    let redis: { stop(): Promise<void> } | null = null;
    try {
      assert.match(
        s.output().stdout,
        /certification withheld until it answers/,
      );
      const down = await postJson(s.base, "/v1/decide", { state: TEXTS[0] });
      const topic = (down.json.answers as Json).topic;
      assert.equal(topic.certified, false);
      assert.equal(topic.flag, "drift");
      // The store comes up on the address given.
      redis = await startRedis(port);
      const end = Date.now() + 15_000;
      let link = "";
      while (Date.now() < end && link !== "connected") {
        await new Promise((r) => setTimeout(r, 200));
        link = (await stats(s)).live.fleet.link;
      }
      assert.equal(link, "connected");
      const up = await postJson(s.base, "/v1/decide", { state: TEXTS[0] });
      assert.equal((up.json.answers as Json).topic.certified, true);
    } finally {
      await s.stop();
      await redis?.stop();
    }
  },
});

Deno.test({
  name:
    "deploy/nginx.conf in front of three replicas: the client's decisions and feedback spread over them, no audit missed",
  ignore: noRedis !== null || noNginx !== null,
  fn: () =>
    withRedis(async (redis, dir) => {
      const f = await fleet(dir.path, redis.url);
      const rs = await Promise.all([1, 2, 3].map((i) => f.start(`r${i}`, i)));
      const nginx = await startNginx(dir.path, rs.map((r) => r.port));
      try {
        const base = nginx.base;
        const misses: string[] = [];
        const replies: Json[] = [];
        let audited = 0;
        const client = new DecisionClient({
          url: base,
          model: ({ question, reason }) => {
            if (reason === "audit") audited++;
            return question === "topic" ? "billing" : false;
          },
          onFeedbackError: (e) => misses.push(e.message),
          fetch: async (input, init) => {
            const res = await fetch(input, init);
            if (String(input).endsWith("/v1/feedback")) {
              replies.push(await res.clone().json());
            }
            return res;
          },
        });
        for (let i = 0; i < 60; i++) {
          await client.decide(TEXTS[i % TEXTS.length]!);
        }
        assert.deepEqual(misses, []);
        assert.deepEqual(replies.flatMap((r) => r.missed_audits), []);
        await new Promise((r) => setTimeout(r, 600));
        const all = await Promise.all(rs.map(stats));
        const decisions = all.map((s) => s.counts.requests as number);
        assert.ok(
          decisions.every((n) => n > 0),
          `every replica answered some: ${decisions}`,
        );
        assert.ok(audited > 0);
        assert.equal(replies.reduce((n, r) => n + r.audits, 0), audited);
        const pooled = all.map((s) =>
          Object.values(s.live.questions as Record<string, Json>).reduce(
            (n, q) => n + q.audited,
            0,
          )
        );
        assert.deepEqual(pooled, [audited, audited, audited]);
        const health = await (await fetch(`${base}/v1/health`)).json();
        assert.equal(health.bundle_id, all[0]!.bundle.id);
      } finally {
        await nginx.stop();
        await Promise.all(rs.map((s) => s.stop()));
      }
    }),
});

Deno.test("deploy/compose.yaml runs every replica with flags serve accepts, each with its own name and feedback log", async () => {
  const compose = await Deno.readTextFile(`${DEPLOY}compose.yaml`);
  // Flow sequences of strings: JSON once a trailing comma is dropped.
  const commands = [
    ...compose.matchAll(/^\s+command: (\[\s*"serve"[^\]]*\])/gm),
  ].map((m) => JSON.parse(m[1]!.replace(/,\s*\]$/, "]")) as string[]);
  assert.equal(commands.length, 3);
  const settings = commands.map((c) => parseServeFlags(c.slice(1))!);
  assert.deepEqual(settings.map((s) => s.replica), [
    "replica1",
    "replica2",
    "replica3",
  ]);
  assert.equal(new Set(settings.map((s) => s.feedbackLog)).size, 3);
  for (const s of settings) {
    assert.equal(s.liveStore, "redis://store:6379");
    assert.equal(s.auditKeyFile, "/run/secrets/audit_key");
  }
  const nginx = await Deno.readTextFile(`${DEPLOY}nginx-compose.conf`);
  for (const name of ["replica1", "replica2", "replica3"]) {
    assert.match(nginx, new RegExp(`server ${name}:8010 `));
  }
  assert.match(compose, /--allow-net=0\.0\.0\.0:8010,store:6379/);
});
