/**
 * The second tier's live certificate shared by a fleet for real: a Redis
 * server (Debian's `redis-server`) and two `main.ts serve` processes of a
 * format-4 bundle (the small table with a constructed second tier on
 * `topic`, see `_two_tier.ts`), sharing `--audit-key-file` and
 * `--live-store`, under locked-down permissions. A second-tier audit given
 * by one replica and answered at the other is counted once fleet-wide;
 * lying second-tier audits move the second tier's threshold stricter on
 * both replicas while the table's stays; `/v1/stats` and `/metrics` show
 * it on each; a replica killed and restarted reads it back; a reset at one
 * replica clears both tiers everywhere.
 */

import assert from "node:assert/strict";
import {
  getText,
  postFeedback,
  postJson,
  type RunningServer,
} from "./_http_helpers.ts";
import {
  favouriteOf,
  tierTexts,
  twoTierResult,
  writeTwoTierBundle,
} from "./_two_tier.ts";
import {
  type Json,
  missingRedis,
  replicaStarter,
  stats,
  withRedis,
} from "./_fleet.ts";

const noRedis = missingRedis("fleet_tier_redis_test");

const ENCODER_SOURCE = new URL("../src/encoder", import.meta.url).pathname;

async function live(s: RunningServer): Promise<Json> {
  return (await stats(s)).live;
}

/** Waits (at most 15 s) until `ok` holds of `s`'s live statistics; returns them. */
async function until(
  s: RunningServer,
  what: string,
  ok: (live: Json) => boolean,
): Promise<Json> {
  const end = Date.now() + 15_000;
  for (;;) {
    const l = await live(s);
    if (ok(l)) return l;
    assert.ok(Date.now() < end, `${what}: ${JSON.stringify(l)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test({
  name:
    "two replicas of a format-4 bundle and Redis: the second tier's audits counted once fleet-wide, its threshold moved on both, the table's kept, kept over a restart, cleared by a reset",
  ignore: noRedis !== null,
  fn: () =>
    withRedis(async (redis, dir) => {
      const bundle = await writeTwoTierBundle(`${dir.path}/b`);
      const start = await replicaStarter({
        bundle,
        dir: dir.path,
        store: redis.url,
        auditRate: "1",
        args: [
          "--semantic-workers",
          "1",
          // The same unsure text again and again is a drift the online
          // test would alarm on (and withhold from both tiers): made rare.
          "--drift-delta",
          "1e-12",
        ],
        read: [ENCODER_SOURCE],
      });
      const rs = await Promise.all([start("a", 1), start("b", 2)]);
      const { low } = tierTexts();
      const favourite = favouriteOf(twoTierResult().table);
      const wrong = twoTierResult().table.byName.get("topic")!.options.find((
        o,
      ) => o !== favourite)!;
      const decide = async (s: RunningServer): Promise<Json> => {
        const r = await postJson(s.base, "/v1/decide", { state: low });
        assert.equal(r.status, 200, JSON.stringify(r.json));
        return (r.json.answers as Json).topic;
      };
      const feedback = async (
        s: RunningServer,
        answer: string,
        audit: string,
      ): Promise<Json> => {
        const r = await postFeedback(s.base, low, answer, audit);
        assert.equal(r.status, 200, JSON.stringify(r.json));
        return r.json;
      };
      const semantic = (l: Json) => l.semantic_questions?.topic ?? {};
      try {
        // Once each replica has read the store, the second tier certifies.
        let first: Json = {};
        for (let i = 0; i < 100; i++) {
          first = await decide(rs[0]!);
          if (first.certified === true) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(first.tier, "semantic", JSON.stringify(first));
        assert.equal(typeof first.audit, "string", JSON.stringify(first));
        // Given by a, answered at b: counted; at a again: answered already.
        const atB = await feedback(rs[1]!, favourite, first.audit);
        assert.equal(atB.audits, 1, JSON.stringify(atB));
        const atA = await feedback(rs[0]!, favourite, first.audit);
        assert.equal(atA.audits, 0, JSON.stringify(atA));
        assert.deepEqual(
          atA.missed_audits.map((m: Json) => m.reason),
          ["answered"],
        );
        for (const s of rs) {
          const l = await until(
            s,
            "one second-tier audit",
            (l) => semantic(l).audited === 1,
          );
          assert.equal(l.fleet.link, "connected");
          assert.equal(l.questions.topic.audited, 0);
        }

        // A liar: each second-tier audit comes back wrong, at the other replica.
        let counted = 1;
        let withdrawn = false;
        for (let i = 0; i < 120 && !withdrawn; i++) {
          const t = await decide(rs[i % 2]!);
          assert.equal(t.tier, "semantic", JSON.stringify(t));
          if (t.certified !== true) {
            withdrawn = true;
            break;
          }
          const r = await feedback(rs[(i + 1) % 2]!, wrong, t.audit);
          counted += r.audits;
        }
        assert.ok(withdrawn, "the second tier's answers came back uncertified");
        for (const s of rs) {
          const l = await until(
            s,
            "the lies pooled",
            (l) =>
              semantic(l).audited === counted &&
              semantic(l).reason !== "bundle",
          );
          assert.equal(l.questions.topic.reason, "bundle");
          assert.equal(l.questions.topic.audited, 0);
          const metrics = (await getText(s.base, "/metrics")).text;
          assert.match(
            metrics,
            new RegExp(
              `^dtable_live_semantic_audits_total\\{question="topic"\\} ${counted}$`,
              "m",
            ),
          );
          assert.match(
            metrics,
            /^dtable_live_audits_total\{question="topic"\} 0$/m,
          );
        }
        // Both replicas withhold certification from the second tier now.
        for (const s of rs) {
          const t = await decide(s);
          assert.equal(t.tier, "semantic");
          assert.notEqual(t.certified, true, JSON.stringify(t));
        }

        // A replica killed and started again reads the second tier's evidence.
        const before = semantic(await live(rs[1]!));
        await rs[1]!.stop("SIGKILL");
        rs[1] = await start("b", 3);
        const back = await until(
          rs[1]!,
          "the restart",
          (l) =>
            l.fleet.link === "connected" && semantic(l).audited === counted,
        );
        assert.equal(semantic(back).reason, before.reason);
        assert.equal(semantic(back).threshold, before.threshold);

        // A reset at a clears both tiers on both replicas.
        const reset = await postJson(rs[0]!.base, "/v1/live/reset", {
          question: "topic",
        });
        assert.equal(reset.status, 200, JSON.stringify(reset.json));
        for (const s of rs) {
          const l = await until(
            s,
            "the reset",
            (l) => semantic(l).audited === 0 && semantic(l).reason === "bundle",
          );
          assert.equal(l.questions.topic.audited, 0);
          assert.equal(l.questions.topic.reason, "bundle");
        }
        const again = await decide(rs[1]!);
        assert.equal(again.tier, "semantic");
        assert.equal(again.certified, true, JSON.stringify(again));
      } finally {
        await Promise.all(rs.map((s) => s.stop()));
      }
    }),
});
