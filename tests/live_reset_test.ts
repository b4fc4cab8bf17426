/**
 * Resets of the live evidence and latched feedback alarms in a fleet's
 * store (the in-memory store, with the semantics of Redis's scripts): a
 * reset bumps the question's generation and forgets its record, counts of
 * an older generation are not applied, a policy never loses an alarm, and
 * every replica starts afresh; a lone controller resets its own.
 */

import assert from "node:assert/strict";
import type { Table } from "../src/engine/table.ts";
import { LiveController } from "../src/live/controller.ts";
import { FleetLive } from "../src/live/fleet.ts";
import { MemoryStore } from "../src/live/store.ts";
import { smallTable, stateOf } from "./_fixtures.ts";

const BUNDLE = "b".repeat(64);

function table(): Table {
  const t = smallTable().table;
  return { ...t, info: { ...t.info, bundle_id: BUNDLE } };
}

Deno.test("the store applies counts and audits only in the question's current generation, and a reset forgets its record", async () => {
  const store = new MemoryStore();
  const sync = (generations: number[], adds: [string, number][][]) =>
    store.sync({
      bundle: BUNDLE,
      epoch: "e1",
      proposal: "e1",
      questions: ["topic", "urgent"],
      generations,
      batches: [{
        id: crypto.randomUUID(),
        adds,
        audits: [{
          id: crypto.randomUUID(),
          ttlMs: 60_000,
          question: 0,
          fields: [["audited", 1]],
        }],
      }],
    });
  let reply = await sync([0, 0], [[["a0", 5]], [["a0", 2]]]);
  assert.deepEqual(reply.generations, [0, 0]);
  assert.equal(reply.records[0]!.a0, 5);
  assert.equal(reply.records[0]!.audited, 1);
  assert.equal(
    await store.setPolicy(BUNDLE, "e1", "topic", 0, {
      floor: 3,
      inForce: 1,
      alarms: 2,
    }, 0),
    true,
  );
  // An alarm latches: a policy without it is refused.
  assert.equal(
    await store.setPolicy(BUNDLE, "e1", "topic", 1, {
      floor: 3,
      inForce: 1,
      alarms: 0,
    }, 0),
    false,
  );
  await store.reset(BUNDLE, ["topic"]);
  // A replica still counting in generation 0: nothing of topic applied.
  reply = await sync([0, 0], [[["a0", 7]], [["a0", 1]]]);
  assert.deepEqual(reply.generations, [1, 0]);
  assert.deepEqual(reply.records[0], {});
  assert.deepEqual(reply.audits, [["not_shared"]]);
  assert.equal(reply.records[1]!.a0, 3);
  // Nor a policy of the old generation.
  assert.equal(
    await store.setPolicy(BUNDLE, "e1", "topic", 0, {
      floor: 3,
      inForce: 1,
    }, 0),
    false,
  );
  reply = await sync([1, 0], [[["a0", 4]], []]);
  assert.equal(reply.records[0]!.a0, 4);
});

Deno.test("a reset at one replica starts every replica afresh: the stricter threshold and the alarm go, restarts keep the reset", async () => {
  const store = new MemoryStore();
  const t = table();
  const slot = t.questions.findIndex((q) => q.name === "topic");
  const resets: string[][] = [];
  const replicas = [0, 1].map((i) => {
    // The controller only counts here (its fleet is built by hand).
    const live = new LiveController({ auditRate: 0.5, auditSeed: i + 1 });
    live.serve(t, stateOf(t));
    const fleet = new FleetLive({
      store,
      replica: `r${i}`,
      syncMs: 1e9,
      log: () => {},
      onReset: (_, names) => {
        resets.push(names);
        live.resetLocal(t, names, "store");
      },
    });
    fleet.serve(t, stateOf(t), live.certificates(t), 0.5);
    return { live, fleet };
  });
  for (const r of replicas) await r.fleet.sync();
  // A liar: every audit of a confident answer comes back wrong.
  for (let i = 0; i < 40; i++) {
    const f = replicas[i % 2]!.fleet;
    replicas[i % 2]!.live.certificates(t)[slot]!.recordDecision(
      0.999,
      true,
      true,
    );
    await f.submit([f.stage(slot, 0.999, true, `lie${i}`, 600_000)]);
  }
  for (const r of replicas) await r.fleet.sync();
  for (const r of replicas) {
    const d = r.fleet.decision(slot)!;
    assert.notEqual(d.reason, "bundle");
    const s = r.fleet.states(t).get("topic")!;
    assert.equal(s.feedbackCheck!.disagreesTooMuch, true);
  }
  /** A replica started now (audit seed `seed`), once it has read the store. */
  const startLate = async (replica: string, seed: number) => {
    const fleet = new FleetLive({
      store,
      replica,
      syncMs: 1e9,
      log: () => {},
    });
    const live = new LiveController({ auditRate: 0.5, auditSeed: seed });
    fleet.serve(t, stateOf(t), live.certificates(t), 0.5);
    await fleet.sync();
    return fleet;
  };
  // A replica that starts now reads the same from the store.
  const late = await startLate("r2", 9);
  assert.notEqual(late.decision(slot)!.reason, "bundle");

  await replicas[0]!.fleet.reset("topic");
  for (const r of replicas) await r.fleet.sync();
  await late.sync();
  for (const f of [...replicas.map((r) => r.fleet), late]) {
    assert.equal(f.decision(slot)!.reason, "bundle");
    const s = f.states(t).get("topic")!;
    assert.equal(s.audited, 0);
    assert.equal(s.feedbackCheck!.disagreesTooMuch, false);
  }
  assert.deepEqual(resets, [["topic"], ["topic"]]);
  assert.equal(replicas[1]!.live.resets.total, 1);
  assert.equal(replicas[1]!.live.resets.last[0]!.source, "store");
  // A replica started after the reset counts in the new generation.
  const after = await startLate("r3", 10);
  assert.equal(after.decision(slot)!.reason, "bundle");
});

Deno.test("a lone controller resets one question or all, and refuses a question the table lacks", async () => {
  const t = table();
  const live = new LiveController({ auditRate: 0.5, auditSeed: 1 });
  live.serve(t, stateOf(t));
  const slot = t.questions.findIndex((q) => q.name === "topic");
  const certificate = live.certificates(t)[slot]!;
  for (let i = 0; i < 10; i++) {
    certificate.recordDecision(0.999, true, true);
    certificate.recordAudit(0.999, true);
  }
  live.apply(t, "topic");
  assert.notEqual(live.states(t).get("topic")!.reason, "bundle");
  assert.deepEqual(await live.reset(t, "topic"), ["topic"]);
  const s = live.states(t).get("topic")!;
  assert.equal(s.reason, "bundle");
  assert.equal(s.audited, 0);
  assert.equal(live.resets.last[0]!.question, "topic");
  assert.equal(live.resets.last[0]!.source, "local");
  assert.deepEqual(
    await live.reset(t, null),
    t.questions.map((q) => q.name),
  );
  assert.equal(live.resets.last[1]!.question, null);
  await assert.rejects(
    () => live.reset(t, "topik"),
    /Unknown question "topik"/,
  );
});
