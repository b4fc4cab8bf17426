/**
 * Trying the service by hand, as the README tells a newcomer to: the same
 * sentence, a number changed, sent again and again. At `/v1/playground` it
 * neither feeds the drift guard nor picks audits for the live certificate;
 * at `/v1/decide` it trips the drift guard by design (a stream of one
 * sentence is not traffic like the calibration texts), and unrelated
 * requests then come back uncertified (`drift`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { createApp } from "../src/http/app.ts";
import { DriftMonitor } from "../src/engine/mod.ts";
import { smallTable } from "./_fixtures.ts";

const table = smallTable().table;

/** The sentence a newcomer repeats, with request `i`'s number in it. */
const sentence = (i: number) => `my invoice ${1000 + i} was overcharged`;

async function post(
  a: ReturnType<typeof createApp>,
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const res = await a.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  return await res.json();
}

Deno.test("/v1/playground, asked one sentence 300 times, feeds neither the drift guard nor the live certificate", async () => {
  const monitor = new DriftMonitor(table.settings.drift);
  // Every certified decision would be picked for audit.
  const a = createApp({
    table,
    bundlePath: "test/bundle",
    monitor,
    live: { auditRate: 1, auditSeed: 1 },
  });
  for (let i = 0; i < 300; i++) {
    const r = await post(a, "/v1/playground", {
      question: "topic",
      text: sentence(i),
    });
    assert.match(
      r.reason as string,
      /Drift guard: quiet \(evidence 1\.0 of \d+, after 0 requests\)/,
      `request ${i + 1}`,
    );
  }
  // Certified in the playground, still no audit picked.
  for (let i = 0; i < 50; i++) {
    const r = await post(a, "/v1/playground", {
      question: "topic",
      text: "my invoice was overcharged",
    });
    assert.equal(r.certified, true);
  }
  const drift = monitor.state("topic");
  assert.equal(drift.observed, 0);
  assert.equal(drift.status, "quiet");
  const stats = await (await a.request("/v1/stats")).json();
  assert.equal(stats.counts.playground, 350);
  assert.equal(stats.live.pending_audits, 0);
  // A real request right after is judged as if nobody had played.
  const decided = await post(a, "/v1/decide", {
    state: "my invoice was overcharged",
  });
  const topic = (decided.answers as Record<string, Record<string, unknown>>)
    .topic!;
  assert.equal(topic.certified, true);
  assert.equal(typeof topic.audit, "string", "a decision is picked for audit");
});

Deno.test("/v1/decide, asked one sentence again and again, trips the drift guard by design", async () => {
  const monitor = new DriftMonitor(table.settings.drift);
  const a = createApp({ table, bundlePath: "test/bundle", monitor });
  let tripped: number | null = null;
  for (let i = 0; i < 400 && tripped === null; i++) {
    await post(a, "/v1/decide", { state: sentence(i) });
    if (monitor.state("topic").status === "alarmed") tripped = i + 1;
  }
  assert.ok(tripped !== null, "400 repeats of one sentence raised no alarm");
  console.log(`alarm raised at request ${tripped}`);
  // An unrelated request that the quiet guard certifies is now withheld.
  const other = await post(a, "/v1/decide", {
    state: "my invoice was overcharged",
  });
  const topic = (other.answers as Record<string, Record<string, unknown>>)
    .topic!;
  assert.equal(topic.certified, false);
  assert.equal(topic.flag, "drift");
});
