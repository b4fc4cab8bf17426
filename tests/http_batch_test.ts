/**
 * `POST /v1/decide/batch`: a batch of N bodies answers as N `/v1/decide`
 * requests (the same replies, the same statistics, metrics, drift guard
 * and audits); its limits (items, 1 MiB, token) and its errors (a bad
 * item is a 400 naming its index, and nothing of the batch is counted).
 */

import assert from "node:assert/strict";
import { createApp } from "../src/http/app.ts";
import { MAX_BATCH_ITEMS } from "../src/wire/batch.ts";
import { MAX_BODY_BYTES } from "../src/wire/fields.ts";
import { DriftMonitor, type Table } from "../src/engine/mod.ts";
import { fixedToken } from "../src/http/token.ts";
import type { AppDeps } from "../src/http/service.ts";
import {
  FILLER_WORDS,
  rng,
  smallTable,
  stateOf,
  TOPIC_WORDS,
} from "./_fixtures.ts";

type Json = Record<string, unknown>;

/** A table of its own (the live certificate may move its thresholds). */
function freshTable(): Table {
  return { ...smallTable().table };
}

function app(extra: Partial<AppDeps> = {}) {
  const table = extra.table ?? freshTable();
  return createApp({
    table,
    state: stateOf(table),
    bundlePath: "test/bundle",
    // A touchy drift guard, so that the order of decisions matters.
    monitor: new DriftMonitor({ ...table.settings.drift, delta: 1e-3 }),
    ...extra,
  });
}

async function post(
  a: ReturnType<typeof createApp>,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: Json }> {
  const res = await a.request(path, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Json };
}

async function stats(a: ReturnType<typeof createApp>): Promise<Json> {
  return await (await a.request("/v1/stats")).json() as Json;
}

/** A reply's text with its latency fields zeroed. */
function noLatency(text: string): string {
  return text.replace(/"latency_us":[0-9.e+-]+/g, '"latency_us":0');
}

/** `n` decide bodies of every kind: topics, gibberish, narrowed, top, unknown questions. */
function bodies(n: number, seed: number): Json[] {
  const random = rng(seed);
  const topics = Object.values(TOPIC_WORDS);
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 1 + Math.floor(random() * 6) }, () => {
      const pool = random() < 0.7
        ? topics[Math.floor(random() * topics.length)]!
        : FILLER_WORDS;
      return pool[Math.floor(random() * pool.length)]!;
    });
    const body: Json = { state: words.join(" ") };
    if (i % 3 === 1) body.questions = { topic: null, mood: null };
    if (i % 4 === 2) {
      body.questions = { topic: { criteria: ["refund", "billing"] } };
    }
    if (i % 5 === 3) body.top = 2;
    if (i % 7 === 4) body.exposed = true;
    return body;
  });
}

Deno.test("a batch of N bodies answers as N /v1/decide requests, in order, and counts as N decisions", async () => {
  for (const n of [1, 7, 60]) {
    const items = bodies(n, n);
    const single = app();
    const singles: string[] = [];
    for (const body of items) {
      const r = await post(single, "/v1/decide", body);
      assert.equal(r.status, 200);
      singles.push(noLatency(r.text));
    }
    const batched = app();
    const r = await post(batched, "/v1/decide/batch", { items });
    assert.equal(r.status, 200, r.text);
    const replies = r.json.items as Json[];
    assert.equal(replies.length, n);
    replies.forEach((reply, i) => {
      assert.equal(noLatency(JSON.stringify(reply)), singles[i], `item ${i}`);
      assert.ok((reply.latency_us as number) >= 0);
    });
    assert.ok((r.json.latency_us as number) >= 0);
    const s1 = await stats(single);
    const s2 = await stats(batched);
    const counts = (s: Json) => {
      const { errors: _, ...rest } = s.counts as Json;
      return rest;
    };
    assert.deepEqual(counts(s2), counts(s1));
    assert.equal((s2.counts as Json).requests, n);
    assert.deepEqual(s2.per_question, s1.per_question);
    assert.deepEqual(s2.deferral_reasons, s1.deferral_reasons);
    assert.deepEqual(s2.drift, s1.drift, "the drift guard saw each item");
    assert.equal((s2.latency_us as Json).count, n);
    const recent = s2.recent as Json[];
    assert.ok(recent.length > 0);
    assert.ok(recent.every((d) => d.route === "/v1/decide/batch"));
  }
});

Deno.test("the array alone is a batch too, and an empty batch answers nothing and counts nothing", async () => {
  const a = app();
  const items = bodies(3, 1);
  const wrapped = await post(a, "/v1/decide/batch", { items });
  const bare = await post(a, "/v1/decide/batch", items);
  assert.equal(bare.status, 200);
  assert.equal(
    noLatency(JSON.stringify(bare.json.items)),
    noLatency(JSON.stringify(wrapped.json.items)),
  );
  const b = app();
  for (const empty of [[], { items: [] }]) {
    const r = await post(b, "/v1/decide/batch", empty);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.items, []);
  }
  assert.equal(((await stats(b)).counts as Json).requests, 0);
});

Deno.test("metrics count each batch item as a decision request under the batch route", async () => {
  const a = app();
  await post(a, "/v1/decide/batch", { items: bodies(5, 2) });
  await post(a, "/v1/decide", { state: "my invoice" });
  const text = await (await a.request("/metrics")).text();
  assert.match(
    text,
    /^dtable_decision_requests_total\{route="\/v1\/decide\/batch"\} 5$/m,
  );
  assert.match(
    text,
    /^dtable_decision_requests_total\{route="\/v1\/decide"\} 1$/m,
  );
  assert.match(
    text,
    /^dtable_http_responses_total\{route="\/v1\/decide\/batch",code="200"\} 1$/m,
  );
});

Deno.test("every certified answer of every item is a candidate for audit, as in single requests", async () => {
  const table = freshTable();
  const a = app({
    table,
    monitor: new DriftMonitor({ ...table.settings.drift, delta: 1e-12 }),
    live: { auditRate: 1, auditSeed: 1 },
  });
  const text = "my invoice was overcharged";
  const r = await post(a, "/v1/decide/batch", {
    items: [text, text, text].map((state) => ({
      state,
      questions: { topic: null, coin: null },
    })),
  });
  const ids: unknown[] = [];
  for (const item of r.json.items as Json[]) {
    const { topic, coin } = item.answers as Record<string, Json>;
    assert.equal(topic!.certified, true);
    ids.push(topic!.audit);
    assert.equal(coin!.certified, false);
    assert.equal("audit" in coin!, false);
  }
  assert.ok(ids.every((id) => typeof id === "string"));
  assert.equal(new Set(ids).size, 3, "one audit per item");
});

Deno.test("a bad item is a 400 naming its index, and nothing of the batch is answered or counted", async (t) => {
  const a = app();
  const good = { state: "my invoice" };
  const cases: [string, unknown, RegExp][] = [
    [
      "a missing state",
      { items: [good, good, {}] },
      /^In "items\[2\]": "state" is missing/,
    ],
    [
      "an unknown field",
      [good, { stat: "x" }],
      /^In "items\[1\]": Unknown field "stat"; did you mean "state"\?/,
    ],
    [
      "a bad top",
      { items: [{ ...good, top: 0 }] },
      /^In "items\[0\]": "top" must be a whole number/,
    ],
    [
      "an item that is not an object",
      { items: [good, "text"] },
      /^In "items\[1\]": The body must be a JSON object, got a string/,
    ],
    [
      "items that are not an array",
      { items: good },
      /^"items" must be an array, got an object/,
    ],
    ["no items", { state: "x" }, /^Unknown field "state"/],
    [
      "a slip of the field name",
      { item: [good] },
      /^Unknown field "item"; did you mean "items"\?/,
    ],
    ["missing items", {}, /^"items" is missing/],
    [
      "a body that is not JSON",
      "{items:",
      /^The request body is not valid JSON/,
    ],
    [
      "too many items",
      { items: Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => good) },
      new RegExp(
        `^"items" has ${
          MAX_BATCH_ITEMS + 1
        } entries; a request may give at most ${MAX_BATCH_ITEMS}`,
      ),
    ],
  ];
  for (const [what, body, message] of cases) {
    await t.step(what, async () => {
      const r = await post(a, "/v1/decide/batch", body);
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(Object.keys(r.json), ["error"]);
      assert.match(r.json.error as string, message);
    });
  }
  const s = await stats(a);
  assert.equal((s.counts as Json).requests, 0);
  assert.equal((s.counts as Json).answers, 0);
  // The largest batch allowed is answered.
  const full = await post(a, "/v1/decide/batch", {
    items: Array.from({ length: MAX_BATCH_ITEMS }, () => good),
  });
  assert.equal(full.status, 200);
  assert.equal((full.json.items as Json[]).length, MAX_BATCH_ITEMS);
});

Deno.test("a batch over 1 MiB is a 413, and the batch route needs the token", async () => {
  const a = app();
  const big = JSON.stringify({
    items: [{ state: "x".repeat(MAX_BODY_BYTES) }],
  });
  const r = await a.request("/v1/decide/batch", { method: "POST", body: big });
  assert.equal(r.status, 413);
  await r.body?.cancel();
  const guarded = app({ token: fixedToken("s3cret", "test") });
  const refused = await post(guarded, "/v1/decide/batch", [{ state: "x" }]);
  assert.equal(refused.status, 401);
  const allowed = await post(guarded, "/v1/decide/batch", [{ state: "x" }], {
    authorization: "Bearer s3cret",
  });
  assert.equal(allowed.status, 200);
});
