/**
 * One label per decision: every uncertified answer carries a signed
 * decision id (`feedback_id`), and feedback on it counts once however
 * often it is sent (the attack of sending one answer 50 times); feedback
 * without an id counts only for an answer served lately, once.
 */

import assert from "node:assert/strict";
import { createApp } from "../src/http/app.ts";
import { DriftMonitor } from "../src/engine/drift.ts";
import type { Table } from "../src/engine/table.ts";
import type { AppDeps } from "../src/http/service.ts";
import { AuditTokens, hmacSigner } from "../src/live/audit_token.ts";
import { smallTable, stateOf } from "./_fixtures.ts";

type Json = Record<string, unknown>;

/** A word of four topics: the table is not sure, so it does not certify. */
const TEXT = "invoice parcel password refund";

function app(extra: Partial<AppDeps> = {}) {
  const table: Table = { ...smallTable().table };
  return createApp({
    table,
    state: stateOf(table),
    bundlePath: "test/bundle",
    monitor: new DriftMonitor({ ...table.settings.drift, delta: 1e-12 }),
    live: { auditRate: 0.05, auditSeed: 1 },
    ...extra,
  });
}

async function post(a: ReturnType<typeof app>, path: string, body: unknown) {
  const res = await a.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() as Json };
}

async function vagueAnswer(a: ReturnType<typeof app>): Promise<Json> {
  const { json } = await post(a, "/v1/decide", {
    state: TEXT,
    questions: { topic: {} },
  });
  const answer = (json.answers as Record<string, Json>).topic!;
  assert.equal(answer.flag, "low_confidence");
  return answer;
}

Deno.test("an uncertified answer's feedback_id counts once, however often it is sent", async () => {
  const a = app();
  const answer = await vagueAnswer(a);
  assert.equal(answer.certified, false);
  assert.equal("audit" in answer, false);
  const id = answer.feedback_id as string;
  assert.match(id, /^[A-Za-z0-9_-]{104}$/);
  const item = {
    question: "topic",
    state: TEXT,
    answer: "billing",
    feedback_id: id,
  };
  const first = await post(a, "/v1/feedback", item);
  assert.equal(first.status, 200);
  assert.equal(first.json.feedback, 1);
  // 49 copies more: each an id answered already, none counted.
  const copies = await post(a, "/v1/feedback", new Array(49).fill(item));
  assert.equal(copies.json.feedback, 0);
  assert.equal(copies.json.traces_only, 49);
  assert.deepEqual(
    [...new Set((copies.json.missed_audits as Json[]).map((m) => m.reason))],
    ["answered"],
  );
  // The same answer without its id does not count it again either.
  const bare = await post(a, "/v1/feedback", {
    question: "topic",
    state: TEXT,
    answer: "billing",
  });
  assert.equal(bare.json.feedback, 0);
  const stats = await (await a.request("/v1/stats")).json();
  assert.equal(stats.live.questions.topic.feedback, 1);
});

Deno.test("feedback without an id counts once, for an answer served lately", async () => {
  const a = app();
  await vagueAnswer(a);
  const item = { question: "topic", state: TEXT, answer: "shipping" };
  const replies = [];
  for (let i = 0; i < 50; i++) {
    replies.push((await post(a, "/v1/feedback", item)).json.feedback);
  }
  assert.deepEqual(replies, [1, ...new Array(49).fill(0)]);
  // Then its id, sent late, is a repeat.
  const answer = await vagueAnswer(a);
  await post(a, "/v1/feedback", item);
  const late = await post(a, "/v1/feedback", {
    ...item,
    feedback_id: answer.feedback_id,
  });
  assert.equal(late.json.feedback, 0);
});

Deno.test("a feedback item carries one id: audit and feedback_id together are a 400", async () => {
  const a = app();
  const answer = await vagueAnswer(a);
  const both = await post(a, "/v1/feedback", {
    question: "topic",
    state: TEXT,
    answer: "billing",
    audit: "x",
    feedback_id: answer.feedback_id,
  });
  assert.equal(both.status, 400);
  assert.match(
    both.json.error as string,
    /"audit" and "feedback_id" are both given/,
  );
  // The audit field takes a feedback_id too, as a proxy that echoes whatever id an answer carries sends it.
  const echoed = await post(a, "/v1/feedback", {
    question: "topic",
    state: TEXT,
    answer: "billing",
    audit: answer.feedback_id,
  });
  assert.equal(echoed.json.feedback, 1);
});

Deno.test("a decision id another process signed, or for another question, does not count", async () => {
  const a = app();
  const answer = await vagueAnswer(a);
  const other = await post(a, "/v1/feedback", {
    question: "urgent",
    state: TEXT,
    answer: true,
    feedback_id: answer.feedback_id,
  });
  assert.deepEqual(
    (other.json.missed_audits as Json[]).map((m) => m.reason),
    ["other_question"],
  );
  const foreign = new AuditTokens(
    hmacSigner([new TextEncoder().encode("a key of another process")]),
  ).issue({
    slot: 0,
    answer: 0,
    confidence: 0.5,
    issuedAt: Date.now(),
    bundle: "0000000000000000",
    pool: "00000000",
    kind: "uncertified",
    rate: 0.05,
  });
  const forged = await post(a, "/v1/feedback", {
    question: "topic",
    state: TEXT,
    answer: "billing",
    feedback_id: foreign,
  });
  assert.equal(forged.json.feedback, 0);
  assert.deepEqual(
    (forged.json.missed_audits as Json[]).map((m) => m.reason),
    ["unknown"],
  );
});
