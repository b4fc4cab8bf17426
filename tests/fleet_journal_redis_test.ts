/**
 * No acknowledged audit lost on a stop, for real: two replicas of `main.ts
 * serve` on a Redis server with an append-only file (Debian's
 * `redis-server`), locked down. While Redis is down, replica r2
 * acknowledges audits given by r1 (and one of them again at r1, a proxy's
 * retry); SIGTERM stops r2, which keeps them in its live journal (beside
 * its feedback log, by default) and says so; Redis and r2 come back, r2
 * replays the journal, and the fleet counts every acknowledged audit
 * exactly once. Ctrl-C and a journal of its own (`--live-journal`) do the
 * same.
 */

import assert from "node:assert/strict";
import { tempDir } from "./_fixtures.ts";
import {
  freePort,
  postJson,
  type RunningServer,
  writeTestBundle,
} from "./_http_helpers.ts";
import {
  type Json,
  missingRedis,
  startReplica,
  stats,
  writeAuditKey,
} from "./_fleet.ts";
import { type RedisProcess, startRedis } from "../scripts/processes.ts";

const noRedis = missingRedis("fleet_journal_redis_test");

const TEXTS = [
  "my invoice was overcharged",
  "the parcel never arrived",
  "refund the double charge on my bill",
  "where is my package",
  "billing statement looks wrong",
  "the delivery is late again",
];

async function until(
  what: string,
  test: () => Promise<boolean>,
  ms = 15_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Decisions at `at`, the feedback of each audit (the model agreeing) at
 * `to`; returns the items `to` acknowledged as counted.
 */
async function audits(
  at: RunningServer,
  to: RunningServer,
  n: number,
  offset: number,
): Promise<Json[]> {
  const acknowledged: Json[] = [];
  for (let i = 0; i < n; i++) {
    const state = TEXTS[(i + offset) % TEXTS.length]!;
    const { json } = await postJson(at.base, "/v1/decide", {
      state,
      questions: { topic: {} },
    });
    const a = (json.answers as Json).topic;
    if (a.audit === undefined) continue;
    const item = { question: "topic", state, answer: a.choice, audit: a.audit };
    const fb = await postJson(to.base, "/v1/feedback", item);
    assert.equal(fb.status, 200);
    assert.deepEqual(fb.json.missed_audits, []);
    if (fb.json.audits === 1) acknowledged.push(item);
  }
  return acknowledged;
}

for (
  const [signal, journalFlag] of [
    ["SIGTERM", false],
    ["SIGINT", true],
  ] as const
) {
  Deno.test({
    name:
      `a replica stopped by ${signal} during a store outage keeps the audits it acknowledged in its live journal (${
        journalFlag ? "--live-journal" : "beside its feedback log"
      }); after the restart the fleet counts every one exactly once`,
    ignore: noRedis !== null,
    async fn() {
      await using dir = await tempDir();
      const bundle = await writeTestBundle(`${dir.path}/bundle`);
      const key = await writeAuditKey(dir.path);
      const data = `${dir.path}/redis`;
      await Deno.mkdir(data);
      const port = freePort();
      let redis: RedisProcess | null = await startRedis(port, data);
      const store = `redis://127.0.0.1:${port}`;
      const journal = journalFlag
        ? `${dir.path}/r2.journal`
        : `${dir.path}/feedback-r2.live-journal.jsonl`;
      const start = (name: string, seed: number) =>
        startReplica({
          bundle,
          key,
          store,
          name,
          seed,
          auditRate: "0.5",
          feedbackLog: `${dir.path}/feedback-${name}.jsonl`,
          args: [
            "--drift-delta",
            "1e-12",
            "--drift-single-p",
            "0",
            "--drift-max-novelty",
            "1",
            ...(journalFlag && name === "r2"
              ? ["--live-journal", journal]
              : []),
          ],
          read: [journal, `${journal}.tmp`],
          write: [journal, `${journal}.tmp`],
        });
      const r1 = await start("r1", 1);
      let r2: RunningServer | null = await start("r2", 2);
      try {
        assert.match(
          r2.output().stdout,
          new RegExp(`live journal: ${journal}`),
        );
        const before = await audits(r1, r2, 30, 0);
        assert.ok(before.length >= 5, `${before.length}`);
        await redis.stop();
        redis = null;
        const during = await audits(r1, r2, 60, 1);
        assert.ok(during.length >= 10, `${during.length} acknowledged`);
        // A proxy's retry of one of them at the other replica.
        const retry = await postJson(r1.base, "/v1/feedback", during[0]);
        assert.equal(retry.json.audits, 1);
        const waiting = (await stats(r2)).live.fleet;
        assert.equal(waiting.link, "unreachable");
        assert.equal(waiting.waiting_audits, during.length);
        // The stop: the store does not answer within the bound.
        const end = await r2.stop(signal);
        r2 = null;
        assert.equal(end.code, 0, end.stderr);
        assert.match(
          end.stderr,
          new RegExp(
            `kept ${during.length} acknowledged audit\\(s\\) .* in the live journal ${journal}; the next start replays them`,
          ),
        );
        const text = await Deno.readTextFile(journal);
        assert.ok(text.endsWith("\n"));
        await assert.rejects(Deno.stat(`${journal}.tmp`), Deno.errors.NotFound);
        // Redis comes back with its data, then r2.
        redis = await startRedis(port, data);
        await until(
          "r1 to reach the store",
          async () => (await stats(r1)).live.fleet.link === "connected",
        );
        r2 = await start("r2", 22);
        assert.match(
          r2.output().stderr,
          new RegExp(`live journal ${journal}: ${during.length} audit\\(s\\)`),
        );
        const all = before.length + during.length;
        await until("the journal to be replayed", async () => {
          const s = await stats(r2!);
          return s.live.fleet.journal_audits === 0 &&
            s.live.questions.topic.audited === all;
        });
        await until("the journal to be removed", async () => {
          try {
            await Deno.stat(journal);
            return false;
          } catch {
            return true;
          }
        });
        await new Promise((r) => setTimeout(r, 600));
        for (const s of [r1, r2]) {
          const q = (await stats(s)).live.questions.topic;
          assert.equal(q.audited, all, "every acknowledged audit, once");
        }
        assert.match(
          r2.output().stderr,
          /live journal: replayed .*counted, 1 counted before/,
        );
        console.log(
          `${signal}: ${during.length} audits acknowledged during the outage, kept in ${
            journal.slice(dir.path.length + 1)
          }; after the restart ${all} counted (${before.length} before the outage)`,
        );
      } finally {
        await r1.stop();
        await r2?.stop();
        await redis?.stop();
      }
    },
  });
}
