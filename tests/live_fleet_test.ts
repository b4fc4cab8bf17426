/**
 * A fleet's shared live certificate in process: three services over one
 * in-memory store (`MemoryStore`, the semantics of the Redis store), a
 * client sending decisions round-robin and each audit to another replica.
 * Every audit counted once, one threshold everywhere, a replica restarted
 * losing nothing, the store unreachable (the fleet's threshold kept, only
 * stricter moves, counts sent when it is back) and lost; and a simulation
 * that the pooled e-process keeps its guarantees with feedback arriving
 * from several replicas in interleaved order.
 */

import assert from "node:assert/strict";
import type { Hono } from "hono";
import { appFor } from "../src/http/app.ts";
import { Service } from "../src/http/service.ts";
import type { QuestionTable, Table } from "../src/engine/table.ts";
import { AuditKeyFile } from "../src/live/audit_key.ts";
import { LiveController } from "../src/live/controller.ts";
import { FleetLive } from "../src/live/fleet.ts";
import { calibrationBands } from "../src/guarantee/feedback_check.ts";
import { liveGrid } from "../src/guarantee/live_evidence.ts";
import { MemoryStore } from "../src/live/store.ts";
import { rng, smallTable, stateOf, TOPIC_WORDS } from "./_fixtures.ts";
import { withAuditKeys } from "./_audit_ids.ts";
import {
  ALPHA,
  BUNDLE_THRESHOLD,
  GRID,
  type SimResult,
  world,
} from "./_live_sim.ts";

const BUNDLE = "ab".repeat(32);

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** A table of its own with a fixed bundle id (as if loaded from one bundle). */
function replicaTable(
  calibrate?: (q: QuestionTable) => QuestionTable,
): Table {
  const t = smallTable().table;
  const questions = calibrate === undefined
    ? t.questions
    : t.questions.map(calibrate);
  return {
    ...t,
    questions,
    byName: new Map(questions.map((q) => [q.name, q])),
    info: { ...t.info, bundle_id: BUNDLE },
  };
}

interface Replica {
  service: Service;
  app: Hono;
  stop(): Promise<void>;
}

async function replica(
  store: MemoryStore,
  keys: AuditKeyFile,
  name: string,
  seed: number,
  logs: string[] = [],
  table = replicaTable(),
): Promise<Replica> {
  const service = new Service({
    table,
    bundlePath: "b",
    live: {
      auditRate: 0.5,
      auditSeed: seed,
      auditKeys: keys,
      fleet: { store, replica: name, syncMs: 20, log: (m) => logs.push(m) },
    },
  });
  await service.live.fleet!.start();
  return {
    service,
    app: appFor(service),
    stop: () => service.live.fleet!.stop(),
  };
}

async function post(app: Hono, path: string, body: unknown): Promise<Json> {
  const res = await app.request(path, {
    method: "POST",
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, path);
  return await res.json();
}

async function stats(app: Hono): Promise<Json> {
  return await (await app.request("/v1/stats")).json();
}

/** Texts of the small table's topics, with their topic. */
function texts(n: number, seed: number): [string, string][] {
  const random = rng(seed);
  const topics = Object.keys(TOPIC_WORDS);
  return Array.from({ length: n }, () => {
    const topic = topics[Math.floor(random() * topics.length)]!;
    const words = TOPIC_WORDS[topic]!;
    const text = Array.from(
      { length: 4 },
      () => words[Math.floor(random() * words.length)],
    ).join(" ");
    return [text, topic];
  });
}

/**
 * Decisions round-robin over `replicas`, every audit and every uncertified
 * answer reported to the next replica, answering `model(topic)`. Returns
 * the audit ids and what the feedback replies said.
 */
async function stream(
  replicas: readonly Replica[],
  n: number,
  model: (topic: string) => string,
  seed = 1,
): Promise<
  { ids: string[]; texts: string[]; counted: number; missed: Json[] }
> {
  const ids: string[] = [];
  const said: string[] = [];
  let counted = 0;
  const missed: Json[] = [];
  let i = 0;
  for (const [text, topic] of texts(n, seed)) {
    const at = replicas[i % replicas.length]!;
    const next = replicas[(i + 1) % replicas.length]!;
    i++;
    const reply = await post(at.app, "/v1/decide", {
      state: text,
      questions: { topic: {} },
    });
    const a = reply.answers.topic;
    if (a.certified && a.audit === undefined) continue;
    const item: Json = { question: "topic", state: text, answer: model(topic) };
    if (a.audit !== undefined) {
      item.audit = a.audit;
      ids.push(a.audit);
      said.push(text);
    }
    const fb = await post(next.app, "/v1/feedback", item);
    counted += fb.audits;
    missed.push(...fb.missed_audits);
  }
  return { ids, texts: said, counted, missed };
}

/** `withAuditKeys`, with a fresh memory store. */
function withFleet(
  test: (
    store: MemoryStore,
    keys: AuditKeyFile,
    dir: string,
  ) => Promise<void>,
): Promise<void> {
  return withAuditKeys((keys, dir) => test(new MemoryStore(), keys, dir));
}

Deno.test("a fleet counts every audit once, whichever replica it reaches, and shares one threshold", async () => {
  await withFleet(async (store, keys) => {
    const rs = await Promise.all(
      [1, 2, 3].map((i) => replica(store, keys, `r${i}`, i)),
    );
    const { ids, texts: said, counted, missed } = await stream(
      rs,
      60,
      (topic) => topic,
    );
    assert.ok(ids.length >= 10, `${ids.length} audits`);
    assert.deepEqual(missed, []);
    assert.equal(counted, ids.length);
    // A replay at a third replica is known across the fleet.
    const replay = await post(rs[2]!.app, "/v1/feedback", {
      question: "topic",
      state: said[0],
      answer: "billing",
      audit: ids[0],
    });
    assert.deepEqual(replay.missed_audits, [{
      audit: ids[0],
      reason: "answered",
    }]);
    await Promise.all(rs.map((r) => r.service.live.fleet!.sync()));
    const all = await Promise.all(rs.map((r) => stats(r.app)));
    for (const s of all) {
      assert.equal(s.live.questions.topic.audited, ids.length);
      assert.equal(s.live.fleet.link, "connected");
      assert.equal(s.live.fleet.epoch, all[0]!.live.fleet.epoch);
    }
    assert.deepEqual(all.map((s) => s.live.fleet.replica), ["r1", "r2", "r3"]);
    await Promise.all(rs.map((r) => r.stop()));
  });
});

Deno.test("a refutation by the fleet's pooled audits moves every replica's threshold", async () => {
  await withFleet(async (store, keys) => {
    const rs = await Promise.all(
      [1, 2, 3].map((i) => replica(store, keys, `r${i}`, i)),
    );
    // The model disagrees with every answer: refuted, then withdrawn.
    await stream(
      rs,
      240,
      (topic) => topic === "billing" ? "shipping" : "billing",
    );
    await Promise.all(rs.map((r) => r.service.live.fleet!.sync()));
    const all = await Promise.all(rs.map((r) => stats(r.app)));
    const reasons = all.map((s) => s.live.questions.topic.reason);
    assert.ok(
      reasons[0] === "withdrawn" || reasons[0] === "live_stricter",
      reasons[0],
    );
    assert.deepEqual(reasons, [reasons[0], reasons[0], reasons[0]]);
    const thresholds = all.map((s) => s.live.questions.topic.threshold);
    assert.deepEqual(thresholds, [thresholds[0], thresholds[0], thresholds[0]]);
    await Promise.all(rs.map((r) => r.stop()));
  });
});

Deno.test("a replica restarted mid-stream finds every counted audit in the store", async () => {
  await withFleet(async (store, keys) => {
    const rs = await Promise.all(
      [1, 2, 3].map((i) => replica(store, keys, `r${i}`, i)),
    );
    const first = await stream(rs, 40, (t) => t, 1);
    await rs[1]!.stop();
    rs[1] = await replica(store, keys, "r2", 12);
    const second = await stream(rs, 40, (t) => t, 2);
    assert.deepEqual([...first.missed, ...second.missed], []);
    await Promise.all(rs.map((r) => r.service.live.fleet!.sync()));
    const s = await stats(rs[1]!.app);
    assert.equal(
      s.live.questions.topic.audited,
      first.ids.length + second.ids.length,
    );
    await Promise.all(rs.map((r) => r.stop()));
  });
});

Deno.test("the store unreachable: the fleet's threshold stays, only stricter moves, counts are sent when it answers", async () => {
  await withFleet(async (store, keys) => {
    const logs: string[] = [];
    const rs = await Promise.all(
      [1, 2].map((i) => replica(store, keys, `r${i}`, i, logs)),
    );
    await stream(rs, 20, (t) => t);
    const before = (await stats(rs[0]!.app)).live.questions.topic;
    assert.equal(before.reason, "bundle");
    store.down = true;
    // Audits all disagreeing, all reported to r2: r2 refutes locally, r1 keeps the fleet's threshold.
    const wrong = (t: string) => t === "billing" ? "shipping" : "billing";
    let ids = 0;
    for (const [text, topic] of texts(200, 5)) {
      const reply = await post(rs[0]!.app, "/v1/decide", {
        state: text,
        questions: { topic: {} },
      });
      const a = reply.answers.topic;
      if (a.audit === undefined) continue;
      ids++;
      const fb = await post(rs[1]!.app, "/v1/feedback", {
        question: "topic",
        state: text,
        answer: wrong(topic),
        audit: a.audit,
      });
      assert.equal(fb.audits, 1, "counted here while the store is away");
    }
    await rs[1]!.service.live.fleet!.sync();
    const away = await Promise.all(rs.map((r) => stats(r.app)));
    assert.equal(away[1]!.live.fleet.link, "unreachable");
    assert.ok(away[1]!.live.fleet.waiting_audits >= ids);
    assert.notEqual(away[1]!.live.questions.topic.reason, "bundle");
    assert.equal(away[0]!.live.questions.topic.reason, "bundle");
    assert.ok(logs.some((l) => /unreachable .*moving only stricter/.test(l)));
    // A replica that never reached the store withholds certification.
    const late = await replica(store, keys, "r3", 3);
    const withheld = await post(late.app, "/v1/decide", {
      state: texts(1, 9)[0]![0],
      questions: { topic: {} },
    });
    assert.equal(withheld.answers.topic.certified, false);
    assert.equal(withheld.answers.topic.flag, "drift");
    store.down = false;
    await Promise.all(
      [...rs, late].map((r) => r.service.live.fleet!.sync()),
    );
    await Promise.all(
      [...rs, late].map((r) => r.service.live.fleet!.sync()),
    );
    const back = await Promise.all([...rs, late].map((r) => stats(r.app)));
    assert.ok(logs.some((l) => /answers again/.test(l)));
    for (const s of back) {
      assert.equal(s.live.fleet.link, "connected");
      assert.equal(s.live.fleet.waiting_audits, 0);
      assert.equal(
        s.live.questions.topic.reason,
        back[1]!.live.questions.topic.reason,
      );
      assert.ok(s.live.questions.topic.audited >= ids);
    }
    assert.notEqual(back[0]!.live.questions.topic.reason, "bundle");
    await Promise.all([...rs, late].map((r) => r.stop()));
  });
});

Deno.test("a store that lost its data starts the live certificate afresh, and ids of before are not counted", async () => {
  await withFleet(async (store, keys) => {
    const logs: string[] = [];
    const r = await replica(store, keys, "r1", 1, logs);
    let id: string | undefined;
    let idText = "";
    for (const [text] of texts(40, 3)) {
      const reply = await post(r.app, "/v1/decide", {
        state: text,
        questions: { topic: {} },
      });
      if (id === undefined && reply.answers.topic.audit !== undefined) {
        id = reply.answers.topic.audit;
        idText = text;
      }
    }
    assert.equal(typeof id, "string");
    const epoch = (await stats(r.app)).live.fleet.epoch;
    store.clear();
    await r.service.live.fleet!.sync();
    await r.service.live.fleet!.sync();
    assert.ok(logs.some((l) => /lost the evidence/.test(l)), logs.join("\n"));
    const now = await stats(r.app);
    assert.notEqual(now.live.fleet.epoch, epoch);
    const fb = await post(r.app, "/v1/feedback", {
      question: "topic",
      state: idText,
      answer: "billing",
      audit: id,
    });
    assert.deepEqual(fb.missed_audits, [{ audit: id, reason: "not_shared" }]);
    await r.stop();
  });
});

// --- Simulation: the pooled e-process with interleaved feedback ---------

/**
 * Three replicas over one store: decisions round-robin, each audit counted
 * by a random other replica after a random delay (so audits and counts of
 * decisions reach the store out of order), feedback on uncertified answers
 * at the next replica, replicas syncing in random order.
 */
async function simulate(
  rateAtBundle: number,
  n: number,
  seed: number,
): Promise<SimResult> {
  const random = rng(seed);
  const w = world(rateAtBundle);
  const store = new MemoryStore();
  const rate = 0.05;
  // The bundle's calibration bands, from 3,000 answers of the same world.
  const confidences = Array.from({ length: 3000 }, () => 0.5 + 0.5 * random());
  const bands = calibrationBands(
    confidences,
    confidences.map((c) => random() < w.error(c) ? 1 : 0),
    liveGrid(GRID, BUNDLE_THRESHOLD),
  );
  const calibrate = (q: QuestionTable): QuestionTable =>
    q.name !== "topic" ? q : {
      ...q,
      calibration: {
        ...q.calibration,
        status: "calibrated",
        threshold: BUNDLE_THRESHOLD,
        alpha: ALPHA,
        delta: 0.05,
        candidates: GRID,
        bands,
      },
    };
  const replicas = [0, 1, 2].map(() => {
    const table = replicaTable(calibrate);
    const live = new LiveController({ auditRate: rate, auditSeed: 1 });
    return { table, live };
  });
  // Fleets built directly (no audit keys needed: audits are staged by hand).
  const fleets = replicas.map((r, i) => {
    const fleet = new FleetLive({
      store,
      replica: `r${i}`,
      syncMs: 1e9,
      log: () => {},
    });
    fleet.serve(r.table, stateOf(r.table), r.live.certificates(r.table), rate);
    return fleet;
  });
  for (const f of fleets) await f.sync();
  const slot = replicas[0]!.table.questions.findIndex((q) =>
    q.name === "topic"
  );
  const pendingAudits: { due: number; c: number; wrong: boolean }[] = [];
  const waits: Promise<unknown>[] = [];
  let everAbove = false;
  let loosenedAbove = false;
  let refuted = false;
  let tag = 0;
  for (let i = 0; i < n; i++) {
    const r = i % 3;
    const { table, live } = replicas[r]!;
    const d = fleets[r]!.decision(slot)!;
    const c = 0.5 + 0.5 * random();
    const wrong = random() < w.error(c);
    const ok = d.threshold !== null && c >= d.threshold;
    const audited = ok && random() < rate;
    live.certificates(table)[slot]!.recordDecision(c, ok, audited);
    if (audited) {
      pendingAudits.push({ due: i + Math.floor(random() * 300), c, wrong });
    }
    if (!ok) {
      const other = replicas[(r + 1) % 3]!;
      other.live.certificates(other.table)[slot]!.recordFeedback(c, wrong);
    }
    // Audits due now reach a random replica.
    for (let j = pendingAudits.length - 1; j >= 0; j--) {
      const a = pendingAudits[j]!;
      if (a.due > i) continue;
      pendingAudits.splice(j, 1);
      const f = fleets[Math.floor(random() * 3)]!;
      waits.push(
        f.submit([f.stage(slot, a.c, a.wrong, `t${tag++}`, 600_000)]),
      );
    }
    if (i % 50 === 49) {
      await fleets[Math.floor(random() * 3)]!.sync();
      for (const f of fleets) {
        const now = f.decision(slot)!;
        const risk = now.threshold === null ? 0 : w.risk(now.threshold);
        if (risk > ALPHA) everAbove = true;
        if (now.reason === "live_lower" && risk > ALPHA) loosenedAbove = true;
        if (now.reason === "live_stricter" || now.reason === "withdrawn") {
          refuted = true;
        }
      }
    }
  }
  await Promise.all(waits);
  for (const f of fleets) await f.sync();
  for (const f of fleets) await f.sync();
  const final = fleets.map((f) => f.decision(slot)!.threshold);
  return {
    everAbove,
    loosenedAbove,
    refuted,
    finalThresholds: final,
    finalRisk: final[0] === null || final[0] === undefined
      ? 0
      : w.risk(final[0]),
  };
}

Deno.test("the pooled e-process never refutes a sound bundle nor loosens above alpha, with audits reaching replicas out of order", async () => {
  for (let seed = 1; seed <= 4; seed++) {
    const r = await simulate(0.6 * ALPHA, 30_000, seed);
    assert.equal(r.refuted, false, `seed ${seed}: a sound bundle refuted`);
    assert.equal(r.everAbove, false, `seed ${seed}`);
    assert.equal(r.loosenedAbove, false, `seed ${seed}`);
    assert.equal(new Set(r.finalThresholds).size, 1, `seed ${seed}`);
  }
});

Deno.test("the pooled e-process corrects a bundle at 1.6 alpha and every replica ends on one threshold within alpha", async () => {
  for (let seed = 1; seed <= 3; seed++) {
    const r = await simulate(1.6 * ALPHA, 30_000, 10 + seed);
    assert.equal(r.refuted, true, `seed ${seed}`);
    assert.equal(r.loosenedAbove, false, `seed ${seed}`);
    assert.equal(new Set(r.finalThresholds).size, 1, `seed ${seed}`);
    assert.ok(r.finalRisk <= ALPHA, `seed ${seed}: final risk ${r.finalRisk}`);
  }
});

Deno.test("a feedback_id sent to every replica counts once across the fleet", async () => {
  await withFleet(async (store, keys) => {
    const rs = await Promise.all(
      [1, 2, 3].map((i) => replica(store, keys, `r${i}`, i)),
    );
    // A text of several topics: the table does not certify it.
    const text = "invoice parcel password refund";
    const decided = await post(rs[0]!.app, "/v1/decide", {
      state: text,
      questions: { topic: {} },
    });
    const answer = decided.answers.topic;
    assert.equal(answer.certified, false);
    const item = {
      question: "topic",
      state: text,
      answer: "billing",
      feedback_id: answer.feedback_id,
    };
    const replies = [];
    for (const r of rs) replies.push(await post(r.app, "/v1/feedback", item));
    assert.deepEqual(replies.map((r) => r.feedback), [1, 0, 0]);
    for (const r of replies.slice(1)) {
      assert.deepEqual(r.missed_audits, [{
        audit: answer.feedback_id,
        reason: "answered",
      }]);
    }
    await Promise.all(rs.map((r) => r.service.live.fleet!.sync()));
    const all = await Promise.all(rs.map((r) => stats(r.app)));
    for (const s of all) assert.equal(s.live.questions.topic.feedback, 1);
    await Promise.all(rs.map((r) => r.stop()));
  });
});
