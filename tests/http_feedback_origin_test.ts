/**
 * `/v1/feedback` cannot poison the next training: an answer naming an
 * option the bundle lacks is refused and listed, never logged or counted
 * (unless new options are accepted), and every logged line says where it
 * came from and the bundle it answered.
 */

import assert from "node:assert/strict";
import { createApp } from "../src/http/app.ts";
import { bundleIdOf } from "../src/live/bundle_id.ts";
import { auditLogName } from "../src/live/_log_name.ts";
import type { Table } from "../src/engine/table.ts";
import type { AppDeps } from "../src/http/service.ts";
import { parseJsonlTraces } from "../src/traces/mod.ts";
import { smallTable } from "./_fixtures.ts";

type Json = Record<string, unknown>;

const CLEAR = "my invoice was overcharged";
const VAGUE = "invoice parcel password refund";

function setup(extra: Partial<AppDeps> = {}) {
  const table: Table = { ...smallTable().table };
  const logged: string[] = [];
  const app = createApp({
    table,
    bundlePath: "t/bundle",
    live: { auditRate: 1, auditSeed: 1 },
    feedbackLog: (lines) => {
      logged.push(lines);
      return Promise.resolve();
    },
    ...extra,
  });
  const post = async (path: string, body: unknown) => {
    const res = await app.request(path, {
      method: "POST",
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() as Json };
  };
  return { table, logged, post, app };
}

Deno.test("feedback naming an option the bundle lacks is refused, listed and not logged", async () => {
  const { logged, post, app } = setup();
  const { status, json } = await post("/v1/feedback", [
    { question: "topic", state: CLEAR, answer: "billing" },
    { question: "topic", state: CLEAR, answer: "billings" },
  ]);
  assert.equal(status, 200);
  assert.equal(json.received, 2);
  assert.equal(json.traces_only, 1);
  const refused = json.refused as Json[];
  assert.equal(refused.length, 1);
  assert.equal(refused[0]!.index, 1);
  assert.equal(refused[0]!.reason, "unknown_option");
  assert.equal(refused[0]!.answer, "billings");
  assert.equal(refused[0]!.did_you_mean, "billing");
  assert.ok((refused[0]!.known as string[]).includes("shipping"));
  const lines = logged.join("");
  assert.equal(lines.split("\n").filter((l) => l !== "").length, 1);
  assert.doesNotMatch(lines, /billings/);
  const stats = await (await app.request("/v1/stats")).json();
  assert.equal(stats.counts.feedback_refused, 1);
  const metrics = await (await app.request("/metrics")).text();
  assert.match(metrics, /^dtable_feedback_refused_total 1$/m);
});

Deno.test("a request of refused items only logs nothing", async () => {
  const { logged, post } = setup();
  const { json } = await post("/v1/feedback", {
    question: "topic",
    state: CLEAR,
    answer: "frauds",
  });
  assert.equal((json.refused as Json[]).length, 1);
  assert.equal(logged.length, 0);
});

Deno.test("with new options accepted, the new option is logged", async () => {
  const { logged, post } = setup({ acceptNewOptions: true });
  const { json } = await post("/v1/feedback", {
    question: "topic",
    state: CLEAR,
    answer: "frauds",
  });
  assert.deepEqual(json.refused, []);
  assert.match(logged.join(""), /"topic":"frauds"/);
});

Deno.test("every logged line says where it came from and the bundle it answered", async () => {
  const { table, logged, post } = setup();
  const decided = await post("/v1/decide", {
    state: CLEAR,
    questions: { topic: {} },
  });
  const answers = decided.json.answers as Record<string, Json>;
  const audit = answers.topic!.audit as string;
  assert.ok(audit, "a certified answer picked for audit");
  await post("/v1/feedback", [
    { question: "topic", state: CLEAR, answer: "billing", audit },
    { question: "topic", state: VAGUE, answer: "shipping" },
    { question: "topic", state: CLEAR, answer: "billing" },
  ]);
  const lines = logged.join("").trim().split("\n").map((l) => JSON.parse(l));
  const bundle = bundleIdOf(table);
  // An audit's line says which decision it answers: when, by which
  // process and bundle (as the id and the ledger name them).
  const { decided_at, issuer, ...audited } = lines[0].feedback;
  assert.ok(!Number.isNaN(Date.parse(decided_at)), decided_at);
  assert.match(issuer, /^[0-9a-f]{8}$/);
  assert.deepEqual(audited, {
    source: "audit",
    sampling_probability: 1,
    audit: auditLogName(audit),
    bundle: bundle.slice(0, 16),
  });
  assert.deepEqual(lines.slice(1).map((l) => l.feedback), [
    { source: "uncertified", bundle },
    { source: "trace", bundle },
  ]);
  // The log reads back as traces marked as feedback.
  const set = parseJsonlTraces("log.jsonl", logged.join(""));
  assert.deepEqual([...set.feedback!], [1, 1, 1]);
});
