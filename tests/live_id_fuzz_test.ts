/**
 * Signed ids with every field at its limits, signed with the fleet's key
 * (as a broken replica, or an attacker holding the key, would make them),
 * sent through every door that reads an id: `/v1/feedback` on a lone
 * service with a feedback log, and on a fleet's replica. No answer is a
 * 500, and the log gets a line only for an id whose numbers a certificate
 * can use.
 */

import assert from "node:assert/strict";
import type { Hono } from "hono";
import { appFor } from "../src/http/app.ts";
import { Service } from "../src/http/service.ts";
import type { Table } from "../src/engine/table.ts";
import { MemoryStore } from "../src/live/store.ts";
import { rng, smallTable } from "./_fixtures.ts";
import { resign, TEST_AUDIT_KEY, withAuditKeys } from "./_audit_ids.ts";

/** Sure of one topic: certified, so audited at rate 1. */
const CLEAR = "my invoice was overcharged";
/** A word of four topics: uncertified, so it carries a decision id. */
const VAGUE = "invoice parcel password refund";

const U16 = [0, 1, 2, 0x7ffe, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff];
const F64 = [
  NaN,
  Infinity,
  -Infinity,
  -0,
  0,
  5e-324,
  1,
  1 + Number.EPSILON,
  -1,
  0.5,
  1e308,
  -1e308,
  8.64e15,
  8.64e15 + 1,
  Date.now(),
];
const U32 = [0, 1, 0x7fffffff, 0x80000000, 0xffffffff];
const KINDS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 0x7f, 0x80, 0xff];

/** Each way one field of an id's payload is set at a limit (`mutate` of `resign`). */
function mutations(): ((p: Uint8Array, v: DataView) => void)[] {
  const out: ((p: Uint8Array, v: DataView) => void)[] = [];
  for (const x of U16) {
    out.push((_, v) => v.setUint16(1, x, true));
    out.push((_, v) => v.setUint16(3, x, true));
  }
  for (const x of F64) {
    for (const at of [5, 13, 42]) out.push((_, v) => v.setFloat64(at, x, true));
  }
  for (const x of U32) {
    out.push((_, v) => v.setUint32(50, x, true));
    out.push((_, v) => v.setUint32(29, x, true)); // the pool
    out.push((_, v) => v.setUint32(21, x, true)); // the bundle's first bytes
  }
  for (const x of KINDS) out.push((_, v) => v.setUint8(41, x));
  out.push((p) => p.fill(0xff, 54, 62)); // another text's seal
  out.push((p) => p.fill(0, 54, 62));
  // Fields at their limits together.
  const random = rng(43);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  for (let i = 0; i < 200; i++) {
    const slot = pick(U16), answer = pick(U16);
    const confidence = pick(F64), at = pick(F64), rate = pick(F64);
    const kind = pick(KINDS), question = pick(U32);
    out.push((_, v) => {
      v.setUint16(1, slot, true);
      v.setUint16(3, answer, true);
      v.setFloat64(5, confidence, true);
      v.setFloat64(13, at, true);
      v.setUint8(41, kind);
      v.setFloat64(42, rate, true);
      if (random() < 0.5) v.setUint32(50, question, true);
    });
  }
  return out;
}

/** A table with a fixed bundle id (as if loaded from one bundle). */
function fixedTable(): Table {
  const t = smallTable().table;
  return { ...t, info: { ...t.info, bundle_id: "ab".repeat(32) } };
}

async function call(app: Hono, path: string, body: unknown) {
  const res = await app.request(path, {
    method: "POST",
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assert.notEqual(res.status, 500, `${path}: ${text}`);
  return { status: res.status, json: JSON.parse(text) };
}

/** Ids the service gave for a certified and an uncertified answer, with their texts. */
async function givenIds(app: Hono): Promise<[string, string][]> {
  const ids: [string, string][] = [];
  for (const text of [CLEAR, VAGUE]) {
    const { json } = await call(app, "/v1/decide", {
      state: text,
      questions: { topic: {} },
    });
    const a = json.answers.topic;
    ids.push([a.audit ?? a.feedback_id, text]);
  }
  assert.equal(ids.filter(([id]) => typeof id === "string").length, 2);
  return ids;
}

/** Sends every fuzzed id of `given` to `/v1/feedback` (in batches) and `/v1/playground`; returns the items counted. */
async function fuzz(app: Hono, given: [string, string][]): Promise<number> {
  let counted = 0;
  for (const [id, text] of given) {
    const items = mutations().map((mutate, i) => ({
      question: i % 7 === 0 ? "urgent" : "topic",
      state: text,
      answer: i % 7 === 0 ? true : "billing",
      feedback_id: resign(id, TEST_AUDIT_KEY, mutate),
    }));
    for (let at = 0; at < items.length; at += 100) {
      const { status, json } = await call(
        app,
        "/v1/feedback",
        items.slice(at, at + 100),
      );
      assert.equal(status, 200, JSON.stringify(json));
      counted += json.audits + json.feedback;
    }
    // An id is no text either: it is read as one, never as anything else.
    const { status, json } = await call(app, "/v1/playground", {
      text: items[0]!.feedback_id,
      question: "topic",
    });
    assert.equal(status, 200, JSON.stringify(json));
  }
  return counted;
}

Deno.test("signed ids with every field at its limits answer no 500 on a lone service with a feedback log", async () => {
  await withAuditKeys(async (keys) => {
    const lines: string[] = [];
    const refused: unknown[] = [];
    const service = new Service({
      table: fixedTable(),
      bundlePath: "b",
      live: { auditRate: 1, auditSeed: 3, auditKeys: keys },
      feedbackLog: (text) => {
        lines.push(...text.split("\n").filter((l) => l !== ""));
        return Promise.resolve();
      },
      refusedLog: (items) => {
        refused.push(...items);
        return Promise.resolve();
      },
      log: () => {},
    });
    const app = appFor(service);
    const counted = await fuzz(app, await givenIds(app));
    assert.ok(refused.length > 0, "unusable ids went to the side file");
    // Every line the log got is JSON a trace reader reads.
    for (const l of lines) JSON.parse(l);
    assert.ok(counted <= lines.length);
    service.close();
  });
});

Deno.test("signed ids with every field at its limits answer no 500 on a fleet's replica", async () => {
  await withAuditKeys(async (keys) => {
    const service = new Service({
      table: fixedTable(),
      bundlePath: "b",
      live: {
        auditRate: 1,
        auditSeed: 4,
        auditKeys: keys,
        fleet: {
          store: new MemoryStore(),
          replica: "r1",
          syncMs: 20,
          log: () => {},
        },
      },
      log: () => {},
    });
    await service.live.fleet!.start();
    const app = appFor(service);
    await fuzz(app, await givenIds(app));
    await service.live.fleet!.sync();
    const stats = await (await app.request("/v1/stats")).json();
    assert.equal(typeof stats.live.questions.topic.audited, "number");
    await service.live.fleet!.stop();
    service.close();
  });
});
