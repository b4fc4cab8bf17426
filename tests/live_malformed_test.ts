/**
 * Audit ids signed with the key yet carrying unusable numbers, and a
 * fleet's store that refuses a sync: each audit is listed in
 * `missed_audits` with a reason, nothing unusable reaches a certificate or
 * the store, and the link to the store stays up.
 */

import assert from "node:assert/strict";
import type { Hono } from "hono";
import { appFor } from "../src/http/app.ts";
import { Service } from "../src/http/service.ts";
import type { Table } from "../src/engine/table.ts";
import { AuditKeyFile } from "../src/live/audit_key.ts";
import { claimProblem } from "../src/live/audit_token.ts";
import { StoreRejected } from "../src/live/fleet.ts";
import { MemoryStore, type SyncRequest } from "../src/live/store.ts";
import type { LivePolicy } from "../src/guarantee/live_evidence.ts";
import { rng, smallTable, TOPIC_WORDS } from "./_fixtures.ts";
import { resign, TEST_AUDIT_KEY, withAuditKeys } from "./_audit_ids.ts";

const BUNDLE = "cd".repeat(32);

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

function table(): Table {
  const t = smallTable().table;
  return { ...t, info: { ...t.info, bundle_id: BUNDLE } };
}

/** A memory store whose next `failures` syncs are refused, as a failing script is. */
class RefusingStore extends MemoryStore {
  failures = 0;
  refused: SyncRequest[] = [];
  override sync(request: SyncRequest) {
    if (this.failures > 0 && request.batches.length > 0) {
      this.failures--;
      this.refused.push(request);
      return Promise.reject(
        new StoreRejected(
          "ERR Lua redis lib command arguments must be strings or integers",
        ),
      );
    }
    return super.sync(request);
  }
}

async function post(app: Hono, path: string, body: unknown): Promise<Json> {
  const res = await app.request(path, {
    method: "POST",
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
  return await res.json();
}

/**
 * A service of `table()` auditing at `auditRate` (drawn with `auditSeed`),
 * its ids signed with `keys`; with a `store`, a replica (`r1`, a sync every
 * 20 ms, its log lines kept in `logs`) of a fleet on it, started.
 */
async function startService(
  keys: AuditKeyFile,
  auditRate: number,
  auditSeed: number,
  store: MemoryStore | null,
  logs: string[],
): Promise<Service> {
  const service = new Service({
    table: table(),
    bundlePath: "b",
    live: {
      auditRate,
      auditSeed,
      auditKeys: keys,
      ...(store === null ? {} : {
        fleet: { store, replica: "r1", syncMs: 20, log: (m) => logs.push(m) },
      }),
    },
  });
  await service.live.fleet?.start();
  return service;
}

/** The app's `/v1/stats`. */
async function stats(app: Hono): Promise<Json> {
  return await (await app.request("/v1/stats")).json();
}

/** Decides texts until `n` audit ids of question `topic` are given. */
async function auditIds(app: Hono, n: number): Promise<[string, string][]> {
  const out: [string, string][] = [];
  const texts = [
    "my invoice was overcharged",
    "the parcel never arrived",
    "refund the double charge on my bill",
    "where is my package",
  ];
  for (let i = 0; out.length < n && i < 400; i++) {
    const text = texts[i % texts.length]!;
    const reply = await post(app, "/v1/decide", {
      state: text,
      questions: { topic: {} },
    });
    const a = reply.answers.topic;
    if (a.audit !== undefined) out.push([a.audit, text]);
  }
  assert.equal(out.length, n, "the table gave too few audit ids");
  return out;
}

Deno.test("claimProblem() refuses a NaN or out-of-range confidence or issue time", () => {
  const ok = {
    slot: 0,
    answer: 1,
    confidence: 0.9,
    issuedAt: 1.7e12,
    bundle: "",
    pool: "",
  };
  assert.equal(claimProblem(ok), null);
  for (const confidence of [NaN, -0.1, 1.5, Infinity]) {
    assert.match(claimProblem({ ...ok, confidence })!, /confidence/);
  }
  for (const issuedAt of [NaN, -1, Infinity, 1e300]) {
    assert.match(claimProblem({ ...ok, issuedAt })!, /issue time/);
  }
});

Deno.test("a re-signed audit id with a NaN issue time, a bad confidence or a position the table lacks is missed as malformed, alone or in a fleet", async (t) => {
  for (const fleet of [false, true]) {
    await t.step(fleet ? "in a fleet" : "in one process", async () => {
      await withAuditKeys(async (keys) => {
        const logs: string[] = [];
        const service = await startService(
          keys,
          1,
          1,
          fleet ? new MemoryStore() : null,
          logs,
        );
        try {
          const app = appFor(service);
          const ids = await auditIds(app, 6);
          const bad = [
            (_: Uint8Array, v: DataView) => v.setFloat64(13, NaN, true),
            (_: Uint8Array, v: DataView) => v.setFloat64(5, NaN, true),
            (_: Uint8Array, v: DataView) => v.setFloat64(5, 1.25, true),
            (_: Uint8Array, v: DataView) => v.setUint16(1, 999, true),
            (_: Uint8Array, v: DataView) => v.setUint16(3, 60000, true),
          ];
          const items = bad.map((mutate, i) => ({
            question: "topic",
            state: ids[i]![1],
            answer: "billing",
            audit: resign(ids[i]![0], TEST_AUDIT_KEY, mutate),
          }));
          const reply = await post(app, "/v1/feedback", items);
          assert.equal(reply.audits, 0);
          assert.deepEqual(
            reply.missed_audits.map((m: Json) => m.reason),
            bad.map(() => "malformed"),
          );
          // The link stays up and an honest audit still counts.
          const [id, text] = ids[5]!;
          const honest = await post(app, "/v1/feedback", {
            question: "topic",
            state: text,
            answer: "billing",
            audit: id,
          });
          assert.equal(honest.audits, 1, JSON.stringify(honest));
          if (fleet) {
            const s = await stats(app);
            assert.equal(s.live.fleet.link, "connected");
            assert.equal(s.live.fleet.rejected_syncs, 0);
            assert.deepEqual(logs, []);
          }
        } finally {
          await service.live.fleet?.stop();
        }
      });
    });
  }
});

Deno.test("a store that refuses a sync: its audits are missed as store_error, it is logged once and counted, the link stays up and later audits count", async () => {
  await withAuditKeys(async (keys) => {
    const store = new RefusingStore();
    const logs: string[] = [];
    const service = await startService(keys, 1, 2, store, logs);
    try {
      const app = appFor(service);
      const ids = await auditIds(app, 2);
      const item = ([audit, state]: [string, string]) => ({
        question: "topic",
        state,
        answer: "billing",
        audit,
      });
      store.failures = 1;
      const refused = await post(app, "/v1/feedback", item(ids[0]!));
      assert.equal(refused.audits, 0);
      assert.deepEqual(refused.missed_audits, [{
        audit: ids[0]![0],
        reason: "store_error",
      }]);
      assert.equal(store.refused.length, 1);
      const s = await stats(app);
      assert.equal(s.live.fleet.link, "connected");
      assert.equal(s.live.fleet.rejected_syncs, 1);
      assert.equal(s.live.fleet.rejected_audits, 1);
      const metrics = await (await app.request("/metrics")).text();
      assert.match(metrics, /^dtable_live_store_rejected_syncs_total 1$/m);
      const refusals = logs.filter((l) => l.includes("refused a sync"));
      assert.equal(refusals.length, 1, logs.join("\n"));
      assert.match(refusals[0]!, /must be strings or integers/);
      assert.ok(!logs.some((l) => l.includes("unreachable")), logs.join("\n"));
      // The next audit is counted.
      const next = await post(app, "/v1/feedback", item(ids[1]!));
      assert.equal(next.audits, 1, JSON.stringify(next));
      await service.live.fleet!.sync();
      const after = await stats(app);
      assert.equal(after.live.fleet.link, "connected");
      assert.equal(after.live.questions.topic.audited, 1);
    } finally {
      await service.live.fleet!.stop();
    }
  });
});

/** A memory store that refuses every policy change, as a failing script does. */
class PolicyRefusingStore extends MemoryStore {
  calls = 0;
  override setPolicy(
    _bundle: string,
    _epoch: string,
    _question: string,
    _version: number,
    _policy: LivePolicy,
  ): Promise<boolean> {
    this.calls++;
    return Promise.reject(new StoreRejected("ERR policy script failed"));
  }
}

Deno.test("a store that refuses policy changes is not asked again at once, and the replica applies the stricter policy itself", async () => {
  await withAuditKeys(async (keys) => {
    const store = new PolicyRefusingStore();
    const logs: string[] = [];
    const service = await startService(keys, 0.5, 3, store, logs);
    try {
      const app = appFor(service);
      const random = rng(5);
      const topics = Object.keys(TOPIC_WORDS);
      // The model disagrees with every answer: the evidence refutes.
      for (let i = 0; i < 240; i++) {
        const topic = topics[Math.floor(random() * topics.length)]!;
        const words = TOPIC_WORDS[topic]!;
        const text = Array.from(
          { length: 4 },
          () => words[Math.floor(random() * words.length)],
        ).join(" ");
        const reply = await post(app, "/v1/decide", {
          state: text,
          questions: { topic: {} },
        });
        const a = reply.answers.topic;
        if (a.certified && a.audit === undefined) continue;
        await post(app, "/v1/feedback", {
          question: "topic",
          state: text,
          answer: a.choice === "billing" ? "shipping" : "billing",
          ...(a.audit === undefined ? {} : { audit: a.audit }),
        });
      }
      await service.live.fleet!.sync();
      const s = await stats(app);
      assert.ok(store.calls > 0, "a policy change was asked");
      // One ask per sync at most, not a loop asking again at once.
      assert.ok(store.calls <= 240 * 2 + 50, `${store.calls} asks`);
      assert.equal(s.live.fleet.link, "connected");
      const reason = s.live.questions.topic.reason;
      assert.ok(reason === "withdrawn" || reason === "live_stricter", reason);
      assert.ok(logs.some((l) => l.includes("refused a policy change")));
    } finally {
      await service.live.fleet!.stop();
    }
  });
});
