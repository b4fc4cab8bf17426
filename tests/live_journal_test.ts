/**
 * The live journal: what a fleet replica could not deliver to its store
 * when it stopped, kept on disk and replayed at the next start. In
 * process over the in-memory store: audits acknowledged while the store is
 * unreachable, a batch whose reply was lost, and a replica that never
 * reached the store, each counted exactly once after the replay; and the
 * file format (written whole, a torn tail and a damaged line named and
 * skipped). `fleet_journal_redis_test.ts` does it with real processes.
 */

import assert from "node:assert/strict";
import type { Hono } from "hono";
import { appFor } from "../src/http/app.ts";
import { Service } from "../src/http/service.ts";
import type { Table } from "../src/engine/table.ts";
import type { AuditKeyFile } from "../src/live/audit_key.ts";
import { FleetLive, StoreReplyLost } from "../src/live/fleet.ts";
import {
  journalAudits,
  journalBeside,
  type JournalEntry,
  journalLine,
  parseJournal,
  readJournal,
  writeJournal,
} from "../src/live/journal.ts";
import {
  type LiveStore,
  MemoryStore,
  type SyncReply,
  type SyncRequest,
} from "../src/live/store.ts";
import { rng, smallTable, tempDir, TOPIC_WORDS } from "./_fixtures.ts";
import { withAuditKeys } from "./_audit_ids.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const BUNDLE = "cd".repeat(32);

function table(): Table {
  const t = smallTable().table;
  return { ...t, info: { ...t.info, bundle_id: BUNDLE } };
}

/** A memory store whose replies can be lost after it applied the sync (`lose`). */
class LossyStore extends MemoryStore {
  lose = false;
  override async sync(request: SyncRequest): Promise<SyncReply> {
    const reply = await super.sync(request);
    if (this.lose && request.batches.length > 0) {
      throw new StoreReplyLost("reply lost (test)");
    }
    return reply;
  }
}

interface Replica {
  service: Service;
  app: Hono;
  fleet: FleetLive;
  logs: string[];
}

async function replica(
  store: LiveStore,
  keys: AuditKeyFile,
  name: string,
  seed: number,
  journal: JournalEntry[] = [],
): Promise<Replica> {
  const logs: string[] = [];
  const service = new Service({
    table: table(),
    bundlePath: "b",
    live: {
      auditRate: 0.5,
      auditSeed: seed,
      auditKeys: keys,
      fleet: { store, replica: name, syncMs: 20, log: (m) => logs.push(m) },
    },
  });
  const fleet = service.live.fleet!;
  fleet.addJournal(journal);
  await fleet.start();
  return { service, app: appFor(service), fleet, logs };
}

async function post(app: Hono, path: string, body: unknown): Promise<Json> {
  const res = await app.request(path, {
    method: "POST",
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, path);
  return await res.json();
}

async function audited(r: Replica): Promise<number> {
  await r.fleet.sync();
  const s = await (await r.app.request("/v1/stats")).json();
  return s.live.questions.topic.audited;
}

function texts(n: number, seed: number): [string, string][] {
  const random = rng(seed);
  const topics = Object.keys(TOPIC_WORDS);
  return Array.from({ length: n }, () => {
    const topic = topics[Math.floor(random() * topics.length)]!;
    const words = TOPIC_WORDS[topic]!;
    return [
      Array.from(
        { length: 4 },
        () => words[Math.floor(random() * words.length)],
      ).join(" "),
      topic,
    ];
  });
}

/**
 * Decisions at `at`, each audit's feedback (the model agreeing) sent to
 * `to`; returns the ids `to` acknowledged as counted, and the feedback
 * items (for replays).
 */
async function audits(
  at: Replica,
  to: Replica,
  n: number,
  seed: number,
): Promise<{ ids: string[]; items: Json[] }> {
  const ids: string[] = [];
  const items: Json[] = [];
  for (const [text, topic] of texts(n, seed)) {
    const reply = await post(at.app, "/v1/decide", {
      state: text,
      questions: { topic: {} },
    });
    const a = reply.answers.topic;
    if (a.audit === undefined) continue;
    const item = {
      question: "topic",
      state: text,
      answer: topic,
      audit: a.audit,
    };
    const fb = await post(to.app, "/v1/feedback", item);
    assert.deepEqual(fb.missed_audits, []);
    assert.equal(fb.audits, 1);
    ids.push(a.audit);
    items.push(item);
  }
  return { ids, items };
}

Deno.test("audits acknowledged while the store is down, kept by a stop and replayed at the next start, are counted exactly once (a replay at another replica too)", async () => {
  await withAuditKeys(async (keys) => {
    const store = new MemoryStore();
    const r1 = await replica(store, keys, "r1", 1);
    let r2 = await replica(store, keys, "r2", 2);
    const before = await audits(r1, r2, 40, 1);
    assert.ok(before.ids.length >= 5);
    store.down = true;
    const during = await audits(r1, r2, 60, 2);
    assert.ok(during.ids.length >= 10, `${during.ids.length}`);
    // One id answered again at r1 (a proxy's retry): acknowledged there too.
    const replay = await post(r1.app, "/v1/feedback", during.items[0]);
    assert.equal(replay.audits, 1);
    const waiting = r2.fleet.status().waitingAudits;
    assert.equal(waiting, during.ids.length);
    // The stop: the store does not answer within the bound.
    await r2.fleet.stop(100);
    const left = r2.fleet.takeUndelivered();
    assert.equal(journalAudits(left), during.ids.length);
    assert.equal(left.length, 1);
    assert.equal(left[0]!.epoch, r1.fleet.epoch);
    assert.deepEqual(r2.fleet.takeUndelivered(), [], "taken once");
    // Through a file, as serve does.
    await using dir = await tempDir();
    const path = `${dir.path}/journal.jsonl`;
    await writeJournal(path, left);
    const read = await readJournal(path);
    assert.deepEqual(read.skipped, []);
    assert.deepEqual(read.entries, JSON.parse(JSON.stringify(left)));
    // The next start, while the store is still down: it waits.
    r2 = await replica(store, keys, "r2", 12, read.entries);
    assert.equal(r2.fleet.status().journalAudits, during.ids.length);
    store.down = false;
    await r1.fleet.sync();
    await r2.fleet.sync();
    assert.equal(r2.fleet.status().journalAudits, 0);
    assert.ok(
      r2.logs.some((l) =>
        new RegExp(
          `replayed 1 batch\\(es\\) of r2 .*: ${
            during.ids.length - 1
          } audit\\(s\\) counted, 1 counted before`,
        )
          .test(l)
      ),
      r2.logs.join("\n"),
    );
    const all = before.ids.length + during.ids.length;
    assert.equal(await audited(r1), all);
    assert.equal(await audited(r2), all);
    // Replayed again (a journal not rewritten after a kill): nothing twice.
    r2.fleet.addJournal(read.entries);
    await r2.fleet.sync();
    assert.equal(await audited(r2), all);
    await r1.fleet.stop();
    await r2.fleet.stop();
  });
});

Deno.test("a batch whose reply was lost is journaled under its id: replayed, it counts once", async () => {
  await withAuditKeys(async (keys) => {
    const store = new LossyStore();
    const r1 = await replica(store, keys, "r1", 1);
    const r2 = await replica(store, keys, "r2", 2);
    const before = await audits(r1, r2, 30, 3);
    store.lose = true;
    const during = await audits(r1, r2, 40, 4);
    assert.ok(during.ids.length >= 5);
    assert.ok(r2.fleet.status().waitingBatches >= 1);
    await r2.fleet.stop(100);
    const left = r2.fleet.takeUndelivered();
    assert.equal(journalAudits(left), during.ids.length);
    store.lose = false;
    // The store applied those batches already: the replay counts nothing more.
    const r3 = await replica(store, keys, "r2", 22, left);
    await r3.fleet.sync();
    assert.equal(
      await audited(r3),
      before.ids.length + during.ids.length,
    );
    await r1.fleet.stop();
    await r3.fleet.stop();
  });
});

Deno.test("a replica that never reached the store misses ids it cannot place, and journals its decision counts; the replay finds the pool and generation", async () => {
  await withAuditKeys(async (keys) => {
    const store = new MemoryStore();
    const r1 = await replica(store, keys, "r1", 1);
    const r2 = await replica(store, keys, "r2", 2);
    await audits(r1, r2, 20, 5);
    const id = (await post(r1.app, "/v1/decide", {
      state: texts(1, 6)[0]![0],
      questions: { topic: {} },
    })).answers.topic.audit;
    store.down = true;
    const r3 = await replica(store, keys, "r3", 3);
    assert.equal(r3.fleet.epoch, "");
    if (id !== undefined) {
      // Not acknowledged: it cannot know the pool the id names.
      const fb = await post(r3.app, "/v1/feedback", {
        question: "topic",
        state: texts(1, 6)[0]![0],
        answer: "billing",
        audit: id,
      });
      assert.equal(fb.audits, 0);
      assert.equal(fb.missed_audits[0].reason, "not_shared");
    }
    for (const [text] of texts(25, 7)) {
      const a = (await post(r3.app, "/v1/decide", {
        state: text,
        questions: { topic: {} },
      })).answers.topic;
      assert.equal(a.certified, false); // withheld until the store is read
    }
    await r3.fleet.stop(100);
    const left = r3.fleet.takeUndelivered();
    assert.equal(left[0]!.epoch, "");
    assert.ok(left[0]!.generations.every((g) => g === -1));
    assert.equal(journalAudits(left), 0);
    const stored = async () =>
      (await store.sync({
        bundle: left[0]!.bundle,
        epoch: "",
        proposal: "",
        questions: ["topic"],
        generations: [-1],
        batches: [],
      })).records[0]!.uncertified ?? 0;
    store.down = false;
    const before = await stored();
    const r4 = await replica(store, keys, "r3", 33, left);
    await r4.fleet.sync();
    assert.equal(await stored(), before + 25);
    assert.ok(r4.logs.some((l) => /live journal: replayed/.test(l)));
    for (const r of [r1, r2, r4]) await r.fleet.stop();
  });
});

Deno.test("the journal file: written whole, a torn tail and a damaged line named and skipped, removed once empty", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/j.jsonl`;
  const entry = (n: number): JournalEntry => ({
    bundle: BUNDLE,
    epoch: "0a0b0c0d",
    questions: ["topic"],
    generations: [0],
    batches: [{
      id: `batch${n}`,
      adds: [[["a3", n]]],
      audits: [{
        id: `tag${n}`,
        ttlMs: 60_000,
        question: 0,
        fields: [["l3", 1]],
      }],
    }],
    replica: "r1",
    written: "2026-11-30T12:00:00.000Z",
  });
  await writeJournal(path, [entry(1), entry(2)]);
  const text = await Deno.readTextFile(path);
  assert.ok(text.endsWith("\n"));
  assert.equal((await readJournal(path)).entries.length, 2);
  await assert.rejects(Deno.stat(`${path}.tmp`), Deno.errors.NotFound);
  // A torn tail: the first line of a third entry cut short.
  const third = await journalLine(entry(3));
  const torn = await parseJournal(text + third.slice(0, 40));
  assert.equal(torn.entries.length, 2);
  assert.match(torn.skipped[0]!, /last line is torn \(40 bytes/);
  // A damaged byte inside a line: its sum no longer checks.
  const damaged = text.replace('"a3",1', '"a3",7');
  const read = await parseJournal(damaged);
  assert.deepEqual(read.entries.map((e) => e.batches[0]!.id), ["batch2"]);
  assert.match(read.skipped[0]!, /line 1 does not check/);
  // A line that is JSON with a matching sum but not an entry's shape.
  const notEntry = await parseJournal('{"x":1}\n');
  assert.equal(notEntry.entries.length, 0);
  assert.equal(notEntry.skipped.length, 1);
  await writeJournal(path, []);
  await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
  await writeJournal(path, []); // no journal: nothing to remove
  assert.equal(
    journalBeside("/var/log/feedback-r1.jsonl"),
    "/var/log/feedback-r1.live-journal.jsonl",
  );
  assert.equal(journalBeside("fb.log"), "fb.log.live-journal.jsonl");
});
