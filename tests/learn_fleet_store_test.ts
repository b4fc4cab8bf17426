/**
 * The fleet learning's store, its contract checked on the in-memory store
 * and on Redis alike: a chunk is pooled once however often it is sent, one
 * holder at a time has the lease and each new holder a higher fence, a
 * bundle or a status written under a lease that is not held (expired,
 * another's, an old fence) is refused, the newest `keep` bundles are kept
 * and a rollback makes one of them the bundle in force again, announced.
 * Then the outbox and the pool reader: labels acknowledged while the store
 * is down are pooled when it answers, a killed run's outbox is shipped by
 * the next once, and a folder killed between its append and its record
 * holds each chunk once.
 */

import assert from "node:assert/strict";
import { type LearnStore, MemoryLearnStore } from "../src/live/learn_store.ts";
import { RedisLearnStore } from "../src/live/redis_learn_store.ts";
import {
  BundleFollower,
  FleetLearning,
  type LearnerHooks,
  LEASE_TTL_MS,
  Outbox,
  packBundle,
  parseOutbox,
  PoolReader,
} from "../src/learn/fleet/mod.ts";
import { loadBundle } from "../src/bundle/mod.ts";
import type { Table } from "../src/engine/mod.ts";
import type { Learner } from "../src/learn/mod.ts";
import { bundleIdOf } from "../src/live/mod.ts";
import { chooseKept } from "../src/cli/fleet_versions.ts";
import { writeTestBundle } from "./_http_helpers.ts";
import { tempDir } from "./_fixtures.ts";
import { missingRedis, withRedis } from "./_fleet.ts";

const noRedis = missingRedis("learn_fleet_store_test");

/** Runs the store contract on `store`; `wait(ms)` lets a lease run out. */
async function contract(
  store: LearnStore,
  wait: (ms: number) => Promise<void>,
): Promise<void> {
  let heard = 0;
  await store.subscribe(() => heard++);
  // Pooled once per chunk number and source.
  assert.equal(
    await store.append("s1", "r1", [
      { seq: 1, kind: "log", text: "a\n" },
      { seq: 2, kind: "log", text: "b\n" },
    ]),
    2,
  );
  assert.equal(
    await store.append("s1", "r1", [
      { seq: 2, kind: "log", text: "b again\n" },
      { seq: 3, kind: "history", text: "{}\n" },
    ]),
    3,
  );
  assert.equal(
    await store.append("s2", "r2", [{ seq: 1, kind: "log", text: "c\n" }]),
    1,
  );
  assert.equal(await store.shipped("s1"), 3);
  assert.equal(await store.shipped("nobody"), 0);
  const all = await store.read("0-0", 100);
  assert.deepEqual(all.chunks.map((c) => [c.source, c.seq, c.kind, c.text]), [
    ["s1", 1, "log", "a\n"],
    ["s1", 2, "log", "b\n"],
    ["s1", 3, "history", "{}\n"],
    ["s2", 1, "log", "c\n"],
  ]);
  assert.equal(all.first, all.chunks[0]!.id);
  const after = await store.read(all.chunks[1]!.id, 1);
  assert.deepEqual(after.chunks.map((c) => c.seq), [3]);

  // One holder at a time; renewals keep the fence, a new holder gets a higher one.
  const a = await store.lease("A", 300);
  assert.equal(a.held, true);
  const b = await store.lease("B", 300);
  assert.deepEqual([b.held, b.holder, b.fence], [false, "A", a.fence]);
  assert.deepEqual(await store.lease("A", 300), {
    held: true,
    holder: "A",
    fence: a.fence,
  });
  const bundle = { id: "b1", sha256: "00", bytes: 2, replica: "r1" };
  const p1 = await store.publish("A", a.fence, bundle, "one", 2);
  assert.ok(p1 !== null);
  assert.equal(p1.fence, a.fence);
  assert.equal(
    await store.publish("B", a.fence, { ...bundle, id: "b2" }, "x", 2),
    null,
  );
  assert.equal(
    await store.publish("A", a.fence + 1, { ...bundle, id: "b2" }, "x", 2),
    null,
  );
  assert.equal(await store.putStatus("B", a.fence, "{}"), false);
  assert.equal(await store.putStatus("A", a.fence, '{"n":1}'), true);
  assert.equal(await store.status(), '{"n":1}');
  // A expires (not renewed): B takes it under a higher fence, and A's
  // writes are refused from then on.
  await wait(450);
  const b2 = await store.lease("B", 5000);
  assert.equal(b2.held, true);
  assert.ok(b2.fence > a.fence);
  assert.equal(
    await store.publish("A", a.fence, { ...bundle, id: "late" }, "x", 2),
    null,
  );
  assert.equal(await store.putStatus("A", a.fence, "{}"), false);
  assert.equal((await store.current())?.id, "b1");
  // The newest `keep` are kept; a rollback is a new version, announced.
  const p2 = await store.publish(
    "B",
    b2.fence,
    { ...bundle, id: "b2" },
    "two",
    2,
  );
  const p3 = await store.publish(
    "B",
    b2.fence,
    { ...bundle, id: "b3" },
    "three",
    2,
  );
  assert.ok(p2 !== null && p3 !== null && p3.version > p2.version);
  assert.deepEqual((await store.versions()).map((v) => v.id), ["b3", "b2"]);
  assert.equal(await store.blob("b1"), null);
  assert.equal(await store.blob("b2"), "two");
  assert.equal(await store.rollback("b1"), null);
  const back = await store.rollback("b2");
  assert.ok(
    back !== null && back.rollback === true && back.version > p3.version,
  );
  assert.equal((await store.current())?.id, "b2");
  const until = Date.now() + 2000;
  while (heard < 3 && Date.now() < until) await wait(20);
  assert.ok(heard >= 3, `announced ${heard} of 3 changes`);
  // Released: another takes it at once.
  await store.release("B", b2.fence);
  assert.equal((await store.lease("C", 1000)).held, true);
  // The first key proposed is the fleet's.
  assert.equal(await store.sharedKey("first key"), "first key");
  assert.equal(await store.sharedKey("second key"), "first key");
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

Deno.test("the in-memory learning store keeps the contract: chunks once, one lease holder, fenced writes, kept versions", async () => {
  await contract(new MemoryLearnStore(), sleep);
});

Deno.test({
  name: "the Redis learning store keeps the same contract",
  ignore: noRedis !== null,
  fn: () =>
    withRedis(async (redis) => {
      const store = new RedisLearnStore(redis.url);
      try {
        const until = Date.now() + 5000;
        for (;;) {
          try {
            await store.shipped("x");
            break;
          } catch (e) {
            if (Date.now() > until) throw e;
            await sleep(50);
          }
        }
        await contract(store, sleep);
      } finally {
        await store.close();
      }
    }),
});

Deno.test("the outbox acknowledges from disk while the store is down, and pools every chunk once when it answers", async () => {
  await using dir = await tempDir();
  const store = new MemoryLearnStore();
  store.down = true;
  // Were an acknowledgement to wait for the store, it would wait this long.
  const box = await Outbox.open({
    dir: dir.path,
    replica: "r1",
    store,
    log: () => {},
    shipWaitMs: 600_000,
  });
  // More than one shipment's worth: every one acknowledged from disk.
  for (let i = 0; i < 1200; i++) await box.append("log", `line ${i}\n`);
  assert.equal(box.waiting, 1200);
  store.down = false;
  const until = Date.now() + 5000;
  while (box.waiting > 0 && Date.now() < until) await sleep(50);
  assert.equal(box.waiting, 0);
  const pooled = await store.read("0-0", 2000);
  assert.deepEqual(
    pooled.chunks.map((c) => c.text),
    Array.from({ length: 1200 }, (_, i) => `line ${i}\n`),
  );
  await box.close();
  // Everything shipped: no file is left to replay.
  assert.deepEqual([...Deno.readDirSync(`${dir.path}/outbox`)], []);
});

Deno.test("a killed run's outbox is shipped by the next start, each chunk once, even when part of it was pooled already", async () => {
  await using dir = await tempDir();
  const store = new MemoryLearnStore();
  const first = await Outbox.open({
    dir: dir.path,
    replica: "r1",
    store,
    log: () => {},
  });
  await first.append("log", "a\n");
  await first.append("log", "b\n");
  store.down = true;
  await first.append("log", "c\n");
  await first.append("history", '{"retrain":1}\n');
  // Killed: never closed. A torn last line, as a kill mid-write leaves.
  const file = `${dir.path}/outbox/${first.source}.jsonl`;
  await Deno.writeTextFile(file, '{"seq":5,"ki', { append: true });
  assert.equal(parseOutbox(await Deno.readTextFile(file)).length, 4);
  store.down = false;
  const lines: string[] = [];
  const second = await Outbox.open({
    dir: dir.path,
    replica: "r1",
    store,
    log: (l) => lines.push(l),
  });
  assert.match(lines.join("\n"), /holds 4 chunk\(s\) of 1 earlier run/);
  const until = Date.now() + 5000;
  while (second.waiting > 0 && Date.now() < until) await sleep(50);
  const pooled = (await store.read("0-0", 100)).chunks;
  assert.deepEqual(pooled.map((c) => c.text), [
    "a\n",
    "b\n",
    "c\n",
    '{"retrain":1}\n',
  ]);
  assert.deepEqual(pooled.map((c) => c.kind), ["log", "log", "log", "history"]);
  await second.close();
  const left = [...Deno.readDirSync(`${dir.path}/outbox`)].map((e) => e.name);
  assert.deepEqual(
    left,
    [],
    `the earlier file is removed once pooled: ${left}`,
  );
});

Deno.test("the pool reader puts each chunk in the folder once, across a kill between its append and its record", async () => {
  await using dir = await tempDir();
  const store = new MemoryLearnStore();
  await store.append("s", "r1", [
    {
      seq: 1,
      kind: "log",
      text:
        '{"text":"a","answers":{"q":"x"},"time":"2026-12-07T00:00:00.000Z"}\n',
    },
    { seq: 2, kind: "history", text: '{"labels":1}\n' },
  ]);
  const seen: number[] = [];
  const reader = await PoolReader.open({
    dir: dir.path,
    store,
    onChunks: (c) => seen.push(c.length),
    log: () => {},
  });
  await reader.catchUp();
  await reader.close();
  assert.deepEqual(seen, [2]);
  const log = `${dir.path}/feedback.jsonl`;
  const history = `${dir.path}/retrains.jsonl`;
  const logBefore = await Deno.readTextFile(log);
  // A kill after the next batch was appended, before it was recorded.
  await Deno.writeTextFile(
    log,
    '{"text":"b","answers":{"q":"y"},"time":"2026-12-07T00:00:01.000Z"}\n',
    { append: true },
  );
  await Deno.writeTextFile(history, '{"labels":2}\n', { append: true });
  await store.append("s", "r1", [
    {
      seq: 3,
      kind: "log",
      text:
        '{"text":"b","answers":{"q":"y"},"time":"2026-12-07T00:00:01.000Z"}\n',
    },
    { seq: 4, kind: "history", text: '{"labels":2}\n' },
  ]);
  const again = await PoolReader.open({ dir: dir.path, store, log: () => {} });
  // Cut back to what was recorded, then read again: once each.
  assert.equal(await Deno.readTextFile(log), logBefore);
  await again.catchUp();
  await again.close();
  const text = await Deno.readTextFile(log);
  assert.equal(
    text.split("\n").filter((l) => l.includes('"text":"b"')).length,
    1,
  );
  assert.equal(
    text.split("\n").filter((l) => l.includes('"text":"a"')).length,
    1,
  );
  assert.deepEqual(
    (await Deno.readTextFile(history)).trim().split("\n"),
    ['{"labels":1}', '{"labels":2}'],
  );
});

Deno.test("every replica serves the fleet's bundle: swapped in when published, refused when its blob does not match, swapped back on a rollback", async () => {
  await using dir = await tempDir();
  const a = await writeTestBundle(`${dir.path}/a`, { min_radius: 1 });
  const b = await writeTestBundle(`${dir.path}/b`, { min_radius: 2 });
  const packedA = await packBundle(a);
  const packedB = await packBundle(b);
  assert.notEqual(packedA.id, packedB.id);
  const store = new MemoryLearnStore();
  const lease = await store.lease("L", 60_000);
  const publish = (p: typeof packedA, blob = p.blob) =>
    store.publish(
      "L",
      lease.fence,
      {
        id: p.id,
        sha256: p.sha256,
        bytes: blob.length,
        replica: "r1",
      },
      blob,
      3,
    );
  const replicaDir = `${dir.path}/replica`;
  await Deno.mkdir(replicaDir);
  let served = "none";
  const lines: string[] = [];
  const follower = new BundleFollower({
    dir: replicaDir,
    store,
    keep: 3,
    servedId: () => served,
    reload: async () => {
      served = bundleIdOf(await loadBundle(`${replicaDir}/bundle`));
    },
    log: (l) => lines.push(l),
  });
  await publish(packedA);
  await follower.kick();
  assert.equal(served, packedA.id);
  // A blob altered on its way: refused, the bundle in force stays.
  const tampered = packedB.blob.replace(/"weights.bin":"./, '"weights.bin":"A');
  await publish(packedB, tampered);
  await follower.kick();
  assert.equal(served, packedA.id);
  assert.match(
    lines.join("\n"),
    /refused: the fleet's bundle does not match its checksum/,
  );
  await publish(packedB);
  await follower.kick();
  assert.equal(served, packedB.id);
  // A rollback for the whole fleet: the kept bundle comes back.
  assert.ok((await store.rollback(packedA.id)) !== null);
  await follower.kick();
  assert.equal(served, packedA.id);
  assert.equal(follower.swaps, 3);
  assert.match(lines.at(-1)!, /rolled back to/);
});

Deno.test("a fleet rollback without --to picks the newest kept bundle before the one in force", () => {
  const kept = ["c", "b", "a"].map((id, i) => ({
    id: id.repeat(64),
    version: 3 - i,
    sha256: "",
    bytes: 0,
    fence: 1,
    replica: "r1",
    published: "",
  }));
  assert.equal(chooseKept(kept, kept[0]!, undefined).id, kept[1]!.id);
  assert.equal(chooseKept(kept, kept[1]!, undefined).id, kept[2]!.id);
  assert.equal(chooseKept(kept, kept[0]!, "aaa").id, kept[2]!.id);
  assert.throws(
    () => chooseKept(kept, kept[2]!, undefined),
    /no kept bundle older/,
  );
  assert.throws(() => chooseKept(kept, kept[0]!, "zz"), /no kept bundle "zz"/);
});

/** A replica's fleet learning on `store` in `dir`, its learner a stand-in that keeps its hooks. */
async function fleetReplica(
  dir: string,
  store: MemoryLearnStore,
  name: string,
  served: Table,
  optionsAdded: (question: string, added: boolean) => void = () => {},
) {
  await Deno.mkdir(dir, { recursive: true });
  const outbox = await Outbox.open({
    dir,
    replica: name,
    store,
    log: () => {},
  });
  const late = {} as { learning: FleetLearning };
  const pool = await PoolReader.open({
    dir,
    store,
    onChunks: (c) => late.learning.onChunks(c),
    log: () => {},
  });
  const made: LearnerHooks[] = [];
  const lines: string[] = [];
  const learning = late.learning = new FleetLearning({
    dir,
    replica: name,
    store,
    outbox,
    pool,
    keep: 3,
    served: () => served,
    reload: () => Promise.resolve(),
    optionsAdded,
    log: (l) => lines.push(l),
    makeLearner: (hooks) => {
      made.push(hooks);
      return {
        observe() {},
        addStretch() {},
        close() {},
        calibrateAfter: () => ({}),
        stats: () => ({ labels: hooks.resume.labels, held: [] }),
        retrainNow: () => Promise.resolve(),
      } as unknown as Learner;
    },
  });
  return {
    learning,
    made,
    lines,
    async stop() {
      await learning.close();
      await pool.close();
      await outbox.close(0);
    },
  };
}

Deno.test("a learner whose lease ran out while the store was away publishes nothing: its bundle is refused, the next learner's stands", async () => {
  await using dir = await tempDir();
  const store = new MemoryLearnStore();
  const bundle = await writeTestBundle(`${dir.path}/a/bundle`, {
    min_radius: 1,
  });
  const served = await loadBundle(bundle);
  await writeTestBundle(`${dir.path}/b/bundle`, { min_radius: 1 });
  const a = await fleetReplica(`${dir.path}/a`, store, "a", served);
  const b = await fleetReplica(`${dir.path}/b`, store, "b", served);
  try {
    await a.learning.start();
    await b.learning.start();
    const until = Date.now() + 5000;
    while (!a.learning.learning && Date.now() < until) await sleep(50);
    assert.equal(a.learning.learning, true);
    assert.equal(b.learning.learning, false);
    // Cut off: a stops learning once its lease could have run out.
    store.down = true;
    const cut = Date.now();
    while (a.learning.learning && Date.now() - cut < 10_000) await sleep(100);
    assert.equal(a.learning.learning, false);
    // Within a lease and a renewal tick (a loaded machine may add a little).
    assert.ok(Date.now() - cut <= LEASE_TTL_MS + 3000);
    assert.match(a.lines.join("\n"), /stops learning: its lease ran out/);
    store.down = false;
    // b (or a again, under a new fence) takes it.
    const back = Date.now();
    while (
      !a.learning.learning && !b.learning.learning && Date.now() - back < 5000
    ) {
      await sleep(50);
    }
    assert.ok(a.learning.learning || b.learning.learning);
    // a's first learner finishes a retrain now: its bundle is refused.
    assert.equal(await a.made[0]!.swapIn(), false);
    assert.equal(await store.current(), null);
    assert.match(a.lines.join("\n"), /the new bundle is not served/);
    // The learner holding the lease now publishes.
    const now = a.learning.learning ? a : b;
    assert.equal(await now.made.at(-1)!.swapIn(), true);
    assert.equal((await store.current())?.id, bundleIdOf(served));
  } finally {
    await a.stop();
    await b.stop();
  }
});

Deno.test("a replica that does not learn holds what the learner holds, on every bundle it swaps in", async () => {
  await using dir = await tempDir();
  const store = new MemoryLearnStore();
  const lease = await store.lease("x", 60_000);
  await store.putStatus(
    "x",
    lease.fence,
    JSON.stringify({
      replica: "x",
      fence: lease.fence,
      at: Date.now(),
      calibrate_after: { topic: 1 },
      stats: { labels: 10, held: ["topic"] },
    }),
  );
  const served = await loadBundle(
    await writeTestBundle(`${dir.path}/a/bundle`, { min_radius: 1 }),
  );
  const marks: string[] = [];
  const a = await fleetReplica(
    `${dir.path}/a`,
    store,
    "a",
    served,
    (q, added) => marks.push(`${q} ${added}`),
  );
  try {
    await a.learning.start();
    const until = Date.now() + 5000;
    while (marks.length === 0 && Date.now() < until) await sleep(50);
    assert.deepEqual(marks, ["topic true"]);
    assert.equal(a.learning.stats().fleet?.learner, "x");
    assert.equal(a.learning.stats().labels, 10);
    // The learner's calibration start is kept for a takeover.
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(`${dir.path}/a/changes.json`)),
      { topic: 1 },
    );
    // A new bundle from the learner: the hold goes on the new table too.
    const packed = await packBundle(
      await writeTestBundle(`${dir.path}/b`, { min_radius: 2 }),
    );
    await store.publish(
      "x",
      lease.fence,
      {
        id: packed.id,
        sha256: packed.sha256,
        bytes: packed.blob.length,
        replica: "x",
      },
      packed.blob,
      3,
    );
    const swapped = Date.now();
    while (marks.length < 2 && Date.now() - swapped < 5000) await sleep(50);
    assert.deepEqual(marks, ["topic true", "topic true"]);
  } finally {
    await a.stop();
  }
});

Deno.test("a batch the pool reader could write only half of is cut back, and once read again is in the folder once", async () => {
  await using dir = await tempDir();
  const store = new MemoryLearnStore();
  const line =
    '{"text":"a","answers":{"q":"x"},"time":"2026-12-07T00:00:00.000Z"}\n';
  await store.append("s", "r1", [
    { seq: 1, kind: "log", text: line },
    { seq: 2, kind: "history", text: '{"labels":1}\n' },
  ]);
  const reader = await PoolReader.open({ dir: dir.path, store, log: () => {} });
  // The history cannot be written: the log's half of the batch is undone.
  await Deno.mkdir(`${dir.path}/retrains.jsonl`);
  await assert.rejects(() => reader.step());
  assert.equal(await Deno.readTextFile(`${dir.path}/feedback.jsonl`), "");
  await Deno.remove(`${dir.path}/retrains.jsonl`);
  await reader.catchUp();
  await reader.close();
  assert.equal(await Deno.readTextFile(`${dir.path}/feedback.jsonl`), line);
  assert.equal(
    await Deno.readTextFile(`${dir.path}/retrains.jsonl`),
    '{"labels":1}\n',
  );
});
