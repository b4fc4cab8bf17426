/**
 * The second tier's live certificate in a fleet, in process: controllers
 * over one in-memory store (`MemoryStore`, the semantics of the Redis
 * store), serving a format-4 table. A second-tier audit given by one
 * replica and answered at another is counted once fleet-wide, in the
 * second tier's record alone; lying second-tier audits move the second
 * tier's threshold stricter on every replica (and raise its feedback
 * alarm) while the table's stays; a replica started later reads it; a
 * reset clears both tiers; a replica serving the bundle without its second
 * tier pools apart (ids between the two are `not_shared`).
 */

import assert from "node:assert/strict";
import { assess } from "../src/engine/answer.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import { TableState } from "../src/engine/state.ts";
import type { Table } from "../src/engine/table.ts";
import type { AnsweringTier } from "../src/engine/two_tier.ts";
import type { Assessment } from "../src/engine/verdict.ts";
import { AuditKeyFile } from "../src/live/audit_key.ts";
import { LiveController } from "../src/live/controller.ts";
import { countFleetFeedback } from "../src/live/fleet_feedback.ts";
import { semanticRecordName } from "../src/live/fleet_tracks.ts";
import { MemoryStore } from "../src/live/store.ts";
import { withAuditKeys } from "./_audit_ids.ts";
import { tierTexts, twoTierResult } from "./_two_tier.ts";

const BUNDLE = "cd".repeat(32);

/** The format-4 table with a fixed bundle id (as if loaded from one bundle). */
function tieredTable(bundle = BUNDLE): Table {
  const t = twoTierResult().table;
  return { ...t, info: { ...t.info, bundle_id: bundle } };
}

interface Replica {
  live: LiveController;
  table: Table;
  state: TableState;
}

function replica(
  store: MemoryStore,
  keys: AuditKeyFile,
  name: string,
  seed: number,
  tiered = true,
  bundle = BUNDLE,
): Replica {
  const table = tieredTable(bundle);
  const state = new TableState(table);
  const live = new LiveController({
    auditRate: 0.5,
    auditSeed: seed,
    auditKeys: keys,
    fleet: { store, replica: name, syncMs: 1e9, log: () => {} },
  });
  live.serve(table, state, tiered);
  return { live, table, state };
}

/** The table's answer of `topic` to `text` at replica `r`. */
function topicAnswer(r: Replica, text: string): Assessment {
  return assess(
    r.table,
    r.state,
    prepareText(r.table, r.state, text),
    "topic",
    {},
    QUIET_GUARD,
  );
}

/** A certified answer of `topic` to `text`, as the second tier would give it. */
function certifiedAnswer(r: Replica, text: string): Assessment {
  const a = topicAnswer(r, text);
  assert.equal(a.answer.certified, true, text);
  return a;
}

/** Decisions at `r` answered by `tier` until one is picked for audit: its id and answer. */
function auditedDecision(
  r: Replica,
  text: string,
  tier: AnsweringTier,
): { id: string; choice: string } {
  const a = certifiedAnswer(r, text);
  for (let i = 0; i < 200; i++) {
    const ids = r.live.recordDecisions(r.table, [a], text, [tier]);
    const id = ids?.[0];
    if (id !== undefined) return { id, choice: a.answer.choice as string };
  }
  throw new Error("no answer was picked for audit in 200 decisions");
}

/** `withAuditKeys`, with a fresh memory store. */
function withKeys(
  test: (store: MemoryStore, keys: AuditKeyFile) => Promise<void>,
): Promise<void> {
  return withAuditKeys((keys) => test(new MemoryStore(), keys));
}

async function syncAll(rs: readonly Replica[]): Promise<void> {
  for (const r of rs) await r.live.fleet!.sync();
  for (const r of rs) await r.live.fleet!.sync();
}

/** One feedback item on `topic` (`text` answered `answer`, its audit id `audit`) counted at replica `r`. */
function feedbackAt(
  r: Replica,
  text: string,
  answer: string,
  audit: string | undefined,
) {
  return countFleetFeedback(r.live, r.table, QUIET_GUARD, [{
    question: "topic",
    text,
    answer,
    audit,
  }]);
}

const other = (choice: string, t: Table) =>
  t.byName.get("topic")!.options.find((o) => o !== choice)!;

Deno.test("a second-tier audit given by one replica is counted once fleet-wide, at any replica, in the second tier's record alone", async () => {
  await withKeys(async (store, keys) => {
    const [a, b] = [replica(store, keys, "a", 1), replica(store, keys, "b", 2)];
    await syncAll([a, b]);
    const { certified } = tierTexts();
    const { id, choice } = auditedDecision(a, certified, "semantic");
    const item = {
      question: "topic",
      text: certified,
      answer: choice,
      audit: id,
    };
    const atB = await countFleetFeedback(b.live, b.table, QUIET_GUARD, [item]);
    assert.equal(atB.audits, 1, JSON.stringify(atB.missedAudits));
    const atA = await countFleetFeedback(a.live, a.table, QUIET_GUARD, [item]);
    assert.equal(atA.audits, 0);
    assert.deepEqual(atA.missedAudits.map((m) => m.reason), ["answered"]);
    await syncAll([a, b]);
    for (const r of [a, b]) {
      const semantic = r.live.semanticStates(r.table).get("topic")!;
      assert.equal(semantic.audited, 1);
      assert.equal(r.live.states(r.table).get("topic")!.audited, 0);
    }
    // A table answer's audit goes to the table's record.
    const t = auditedDecision(b, certified, "table");
    const back = await countFleetFeedback(a.live, a.table, QUIET_GUARD, [{
      ...item,
      answer: t.choice,
      audit: t.id,
    }]);
    assert.equal(back.audits, 1);
    await syncAll([a, b]);
    for (const r of [a, b]) {
      assert.equal(r.live.states(r.table).get("topic")!.audited, 1);
      assert.equal(r.live.semanticStates(r.table).get("topic")!.audited, 1);
    }
  });
});

Deno.test("lying second-tier audits move the second tier's threshold stricter on every replica, the table's stays; a later replica reads it, a new bundle starts clean; a reset clears both tiers", async () => {
  await withKeys(async (store, keys) => {
    const rs = [replica(store, keys, "a", 1), replica(store, keys, "b", 2)];
    await syncAll(rs);
    const slot = rs[0]!.table.questions.findIndex((q) => q.name === "topic");
    const L = rs[0]!.table.questions[slot]!.semantic!.calibration.threshold;
    // Before any evidence, the fleet's second tier runs at L.
    for (const r of rs) {
      assert.equal(r.live.semanticThreshold(r.table, slot, -1), L);
    }
    const { certified } = tierTexts();
    let counted = 0;
    for (let i = 0; i < 40; i++) {
      const at = rs[i % 2]!;
      const to = rs[(i + 1) % 2]!;
      const { id, choice } = auditedDecision(at, certified, "semantic");
      const reply = await feedbackAt(
        to,
        certified,
        other(choice, to.table),
        id,
      );
      counted += reply.audits;
    }
    assert.equal(counted, 40);
    await syncAll(rs);
    for (const r of rs) {
      const d = r.live.fleet!.decision(slot, true)!;
      assert.notEqual(d.reason, "bundle");
      const inForce = r.live.semanticThreshold(r.table, slot, L);
      assert.ok(inForce === null || inForce > L!, `${inForce} vs ${L}`);
      const s = r.live.semanticStates(r.table).get("topic")!;
      assert.equal(s.audited, 40);
      assert.equal(s.feedbackCheck!.disagreesTooMuch, true);
      // The table's certificate has seen none of it.
      assert.equal(r.live.fleet!.decision(slot)!.reason, "bundle");
      const table = r.live.states(r.table).get("topic")!;
      assert.equal(table.audited, 0);
      assert.equal(table.feedbackCheck!.disagreesTooMuch, false);
    }
    // A replica started now (a restart) reads the same from the store.
    const late = replica(store, keys, "c", 3);
    await syncAll([late]);
    assert.notEqual(late.live.fleet!.decision(slot, true)!.reason, "bundle");
    assert.equal(
      late.live.semanticStates(late.table).get("topic")!.audited,
      40,
    );
    // A new bundle starts clean.
    const next = replica(store, keys, "n", 5, true, "ce".repeat(32));
    await syncAll([next]);
    assert.equal(next.live.fleet!.decision(slot, true)!.reason, "bundle");
    assert.equal(next.live.semanticStates(next.table).get("topic")!.audited, 0);

    const all = [...rs, late];
    assert.deepEqual(await rs[0]!.live.reset(rs[0]!.table, "topic"), [
      "topic",
    ]);
    await syncAll(all);
    for (const r of all) {
      assert.equal(r.live.fleet!.decision(slot, true)!.reason, "bundle");
      assert.equal(r.live.semanticThreshold(r.table, slot, -1), L);
      const s = r.live.semanticStates(r.table).get("topic")!;
      assert.equal(s.audited, 0);
      assert.equal(s.feedbackCheck!.disagreesTooMuch, false);
      assert.equal(r.live.states(r.table).get("topic")!.audited, 0);
    }
    // A restart after the reset counts in the new generation.
    const after = replica(store, keys, "d", 4);
    await syncAll([after]);
    assert.equal(after.live.fleet!.decision(slot, true)!.reason, "bundle");
  });
});

Deno.test("a reset clears the table's evidence and the second tier's together; an id given before it is not_shared", async () => {
  await withKeys(async (store, keys) => {
    const [a, b] = [replica(store, keys, "a", 1), replica(store, keys, "b", 2)];
    await syncAll([a, b]);
    const { certified } = tierTexts();
    const t1 = auditedDecision(a, certified, "table");
    const s1 = auditedDecision(a, certified, "semantic");
    const s2 = auditedDecision(a, certified, "semantic");
    const item = (x: { id: string; choice: string }) => ({
      question: "topic",
      text: certified,
      answer: x.choice,
      audit: x.id,
    });
    const reply = await countFleetFeedback(b.live, b.table, QUIET_GUARD, [
      item(t1),
      item(s1),
    ]);
    assert.equal(reply.audits, 2);
    await syncAll([a, b]);
    assert.equal(a.live.semanticStates(a.table).get("topic")!.audited, 1);
    assert.equal(a.live.states(a.table).get("topic")!.audited, 1);
    await new Promise((r) => setTimeout(r, 5));
    await b.live.reset(b.table, null);
    await syncAll([a, b]);
    for (const r of [a, b]) {
      assert.equal(r.live.semanticStates(r.table).get("topic")!.audited, 0);
      assert.equal(r.live.states(r.table).get("topic")!.audited, 0);
    }
    const late = await countFleetFeedback(a.live, a.table, QUIET_GUARD, [
      item(s2),
    ]);
    assert.deepEqual(late.missedAudits.map((m) => m.reason), ["not_shared"]);
  });
});

Deno.test("a replica serving the bundle without its second tier pools apart: ids of either tier given with it are not_shared, and the evidence stays apart", async () => {
  await withKeys(async (store, keys) => {
    const a = replica(store, keys, "a", 1);
    const b = replica(store, keys, "b", 2, false);
    await syncAll([a, b]);
    assert.equal(b.live.semanticStates(b.table).size, 0);
    const { certified } = tierTexts();
    const s = auditedDecision(a, certified, "semantic");
    const reply = await feedbackAt(b, certified, s.choice, s.id);
    assert.deepEqual(reply.missedAudits.map((m) => m.reason), ["not_shared"]);
    const t = auditedDecision(a, certified, "table");
    const table = await feedbackAt(b, certified, t.choice, t.id);
    assert.deepEqual(table.missedAudits.map((m) => m.reason), ["not_shared"]);
    // A replica serving it the same way counts it.
    const c = replica(store, keys, "c", 3, false);
    await syncAll([c]);
    const back = await feedbackAt(
      c,
      certified,
      t.choice,
      auditedDecision(b, certified, "table").id,
    );
    assert.equal(back.audits, 1, JSON.stringify(back.missedAudits));
    await syncAll([a, b, c]);
    assert.equal(a.live.states(a.table).get("topic")!.audited, 0);
    assert.equal(b.live.states(b.table).get("topic")!.audited, 1);
    assert.notEqual(a.live.pool, b.live.pool);
  });
});

Deno.test("the second tier's record is named after its question, apart from every question of the table", () => {
  assert.equal(
    semanticRecordName("topic", new Set(["topic"])),
    "topic#semantic",
  );
  assert.equal(
    semanticRecordName("topic", new Set(["topic", "topic#semantic"])),
    "#topic#semantic",
  );
});

Deno.test("the store unreachable: a replica moves its second tier only stricter on what it counted, and the fleet catches up once the store answers", async () => {
  await withKeys(async (store, keys) => {
    const [a, b] = [replica(store, keys, "a", 1), replica(store, keys, "b", 2)];
    await syncAll([a, b]);
    const slot = a.table.questions.findIndex((q) => q.name === "topic");
    const { certified } = tierTexts();
    store.down = true;
    let counted = 0;
    for (let i = 0; i < 40; i++) {
      const { id, choice } = auditedDecision(b, certified, "semantic");
      const reply = await feedbackAt(b, certified, other(choice, b.table), id);
      counted += reply.audits;
    }
    assert.equal(counted, 40);
    assert.equal(b.live.fleet!.link, "unreachable");
    assert.notEqual(b.live.fleet!.decision(slot, true)!.reason, "bundle");
    assert.equal(b.live.fleet!.decision(slot)!.reason, "bundle");
    assert.equal(a.live.fleet!.decision(slot, true)!.reason, "bundle");
    store.down = false;
    await syncAll([b, a]);
    for (const r of [a, b]) {
      assert.notEqual(r.live.fleet!.decision(slot, true)!.reason, "bundle");
      assert.equal(r.live.semanticStates(r.table).get("topic")!.audited, 40);
      assert.equal(r.live.fleet!.decision(slot)!.reason, "bundle");
    }
  });
});

Deno.test("feedback without an id on an uncertified second-tier answer is pooled in the second tier's record", async () => {
  await withKeys(async (store, keys) => {
    const [a, b] = [replica(store, keys, "a", 1), replica(store, keys, "b", 2)];
    await syncAll([a, b]);
    const { low } = tierTexts();
    const answer = topicAnswer(a, low);
    // Uncertified at the table's threshold: the second tier's case.
    assert.equal(answer.answer.certified, false);
    a.live.recordDecisions(a.table, [answer], low, ["semantic"]);
    const reply = await feedbackAt(
      a,
      low,
      answer.answer.choice as string,
      undefined,
    );
    assert.equal(reply.feedback, 1);
    await syncAll([a, b]);
    for (const r of [a, b]) {
      assert.equal(r.live.semanticStates(r.table).get("topic")!.feedback, 1);
      assert.equal(r.live.states(r.table).get("topic")!.feedback, 0);
    }
  });
});
