/**
 * An id binds what it stands for: feedback under another text than the
 * one it was given for is no label (refused with a reason of its own,
 * counted, never logged nor counted in a certificate), and nothing a
 * client can read tells whether an uncertified answer was picked to
 * calibrate.
 */

import assert from "node:assert/strict";
import { AuditTokens, hmacSigner } from "../src/live/audit_token.ts";
import { createApp } from "../src/http/app.ts";
import { DriftMonitor } from "../src/engine/drift.ts";
import type { Table } from "../src/engine/table.ts";
import type { RefusedLine } from "../src/serve/mod.ts";
import { smallTable, stateOf } from "./_fixtures.ts";

const KEY = new TextEncoder().encode("a shared secret of the fleet");
const CLAIM = {
  slot: 2,
  answer: 1,
  confidence: 0.4,
  issuedAt: 1.7e12,
  bundle: "0123456789abcdef",
  pool: "01020304",
  kind: "uncertified" as const,
  eligible: true,
  rate: 0.5,
  question: 77,
};

function decode(id: string): Uint8Array {
  return Uint8Array.fromBase64(id, { alphabet: "base64url" });
}

Deno.test("an id's seal matches its text read as the table reads it, and no other text", () => {
  const tokens = new AuditTokens(hmacSigner([KEY]));
  const id = tokens.issue(CLAIM, "My card  was STOLEN ");
  for (
    const same of [
      "my card was stolen",
      "MY CARD WAS STOLEN",
      " my\tcard was stolen",
    ]
  ) {
    assert.equal(tokens.verify(id, same)?.seal, "match", same);
  }
  for (const other of ["my card was stolen!", "my card was found", ""]) {
    assert.equal(tokens.verify(id, other)?.seal, "mismatch", other);
  }
  assert.equal(tokens.verify(id)?.seal, "unsealed", "no text given");
  // The seal is keyed: another key's seal of the same text differs, so
  // nobody without the key can test a guess of the text.
  const other = new AuditTokens(
    hmacSigner([new TextEncoder().encode("x".repeat(32))]),
  );
  const theirs = decode(other.issue(CLAIM, "my card was stolen"));
  assert.notDeepEqual(decode(id).subarray(54, 62), theirs.subarray(54, 62));
  // A rotated key still reads the seals it made.
  const rotated = new AuditTokens(
    hmacSigner([new TextEncoder().encode("y".repeat(32)), KEY]),
  );
  assert.equal(rotated.verify(id, "my card was stolen")?.seal, "match");
  assert.equal(rotated.verify(id, "my card")?.seal, "mismatch");
});

Deno.test("a picked uncertified answer's id looks like any other: only the key reads its pick", () => {
  const tokens = new AuditTokens(hmacSigner([KEY]));
  const picked: Uint8Array[] = [];
  const unpicked: Uint8Array[] = [];
  for (let i = 0; i < 400; i++) {
    const id = tokens.issue(CLAIM, "one text");
    const kind = tokens.verify(id, "one text")!.kind;
    assert.equal(kind, tokens.draw < CLAIM.rate ? "sample" : "uncertified");
    (kind === "sample" ? picked : unpicked).push(decode(id));
  }
  // About half picked at rate 0.5 (binomial: 400 draws, 5 sd either side).
  assert.ok(picked.length > 150 && picked.length < 250, `${picked.length}`);
  // Every payload byte but the counter's (37-40) is the same whether
  // picked or not: the kind byte says "uncertified" for both.
  const payload = (
    b: Uint8Array,
  ) => [...b.subarray(0, 37), ...b.subarray(41, 62)];
  const first = payload(picked[0]!);
  for (const b of [...picked, ...unpicked]) assert.deepEqual(payload(b), first);
  assert.equal(first[41 - 4], 2 + 4, "kind: uncertified, eligible");
  // The draw comes from digest bytes the id never shows: the shown tag's
  // bytes do not predict it (their first byte is as often odd either way).
  const odd = (xs: Uint8Array[]) =>
    xs.filter((b) => b[62]! % 2 === 1).length / xs.length;
  assert.ok(Math.abs(odd(picked) - odd(unpicked)) < 0.2);
});

Deno.test("a format 2 decision id, whose kind byte told its pick, no longer verifies; a format 2 audit still does", () => {
  const signer = hmacSigner([KEY]);
  const tokens = new AuditTokens(signer);
  const v2 = (kindByte: number) => {
    const payload = new Uint8Array(54);
    const view = new DataView(payload.buffer);
    view.setUint8(0, 2);
    view.setFloat64(5, 0.5, true);
    view.setFloat64(13, 1.7e12, true);
    view.setUint8(41, kindByte);
    view.setFloat64(42, 0.1, true);
    const out = new Uint8Array(70);
    out.set(payload);
    out.set(signer.sign(payload), 54);
    return out.toBase64({ alphabet: "base64url", omitPadding: true });
  };
  assert.equal(tokens.verify(v2(1 + 4), "t"), null, "a format 2 sample");
  assert.equal(
    tokens.verify(v2(2 + 4), "t"),
    null,
    "a format 2 unpicked answer",
  );
  const audit = tokens.verify(v2(0 + 4), "t");
  assert.equal(audit?.kind, "audit");
  assert.equal(audit?.seal, "unsealed");
});

/** A word of four topics: the table is not sure, so it does not certify. */
const VAGUE = "invoice parcel password refund";

function app(refused: RefusedLine[], logged: string[]) {
  const table: Table = { ...smallTable().table };
  return createApp({
    table,
    state: stateOf(table),
    bundlePath: "test/bundle",
    monitor: new DriftMonitor({ ...table.settings.drift, delta: 1e-12 }),
    live: { auditRate: 0.05, auditSeed: 1 },
    feedbackLog: (lines) => {
      logged.push(lines);
      return Promise.resolve();
    },
    refusedLog: (items) => {
      refused.push(...items);
      return Promise.resolve();
    },
  });
}

async function post(a: ReturnType<typeof app>, path: string, body: unknown) {
  const res = await a.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  // deno-lint-ignore no-explicit-any
  return await res.json() as any;
}

Deno.test("feedback on a decision id under another text is refused as text_mismatch: counted, never logged, and the id still counts with its own text", async () => {
  const refused: RefusedLine[] = [];
  const logged: string[] = [];
  const a = app(refused, logged);
  const decided = await post(a, "/v1/decide", {
    state: VAGUE,
    questions: { topic: {} },
  });
  const id = decided.answers.topic.feedback_id as string;
  const swapped = await post(a, "/v1/feedback", {
    question: "topic",
    state: "refund please",
    answer: "refund",
    feedback_id: id,
  });
  assert.deepEqual(swapped.missed_audits, [{
    audit: id,
    reason: "text_mismatch",
  }]);
  assert.equal(swapped.received, 1);
  assert.equal(swapped.kept, 0);
  assert.equal(swapped.not_labels, 1);
  assert.equal(swapped.feedback + swapped.traces_only + swapped.audits, 0);
  assert.equal(logged.length, 0, "nothing of it reached the feedback log");
  assert.deepEqual(refused.map((r) => [r.reason, r.text]), [[
    "text_mismatch",
    "refund please",
  ]]);
  const forged = await post(a, "/v1/feedback", {
    question: "topic",
    state: VAGUE,
    answer: "refund",
    feedback_id: id.slice(0, -3) + (id.endsWith("AAA") ? "BBB" : "AAA"),
  });
  assert.equal(forged.missed_audits[0].reason, "unknown");
  assert.equal(logged.length, 0);
  const stats = await (await a.request("/v1/stats")).json();
  assert.deepEqual(stats.counts.feedback_not_labels, {
    text_mismatch: 1,
    unknown: 1,
  });
  let live = stats.live.questions.topic;
  assert.equal(live.feedback, 0, "no certificate counted either");
  // The right text still counts, once.
  const right = await post(a, "/v1/feedback", {
    question: "topic",
    state: VAGUE,
    answer: "refund",
    feedback_id: id,
  });
  assert.equal(right.feedback, 1);
  assert.equal(right.kept, 1, "its label is kept for the next training");
  assert.equal(logged.length, 1);
  live = (await (await a.request("/v1/stats")).json()).live.questions.topic;
  assert.equal(live.feedback, 1);
  const metrics = await (await a.request("/metrics")).text();
  assert.match(
    metrics,
    /dtable_feedback_not_labels_total\{reason="text_mismatch"\} 1/,
  );
});
