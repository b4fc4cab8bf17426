/**
 * Pending audits in bounded memory: ids answered once, expiry after the
 * TTL, the oldest dropped first when full; and the seeded sampler.
 */

import assert from "node:assert/strict";
import { AuditSampler, PendingAudits } from "../src/live/audits.ts";
import { LiveCertificate } from "../src/guarantee/live_certificate.ts";
import { smallTable } from "./_fixtures.ts";

const table = smallTable().table;
const certificate = new LiveCertificate([0.9, 0.8], 0.8, {
  alpha: 0.05,
  delta: 0.05,
  auditRate: 0.5,
});
const audit = {
  table,
  certificate,
  question: "topic",
  answer: "billing",
  confidence: 0.93,
};

Deno.test("an audit id is answered once, for its own question only", () => {
  const pending = new PendingAudits({ prefix: "p-" });
  const id = pending.add(audit);
  assert.equal(pending.take(id, "urgent"), "other_question");
  const found = pending.take(id, "topic");
  assert.ok(typeof found === "object");
  assert.equal(found.confidence, 0.93);
  assert.equal(pending.take(id, "topic"), "answered");
  assert.equal(pending.take("p-zz", "topic"), "unknown");
  assert.equal(pending.take("nope", "topic"), "unknown");
  assert.equal(pending.size, 0);
});

Deno.test("audits expire after the TTL and the oldest goes first when full", () => {
  let now = 0;
  const pending = new PendingAudits({
    capacity: 3,
    ttlMs: 1000,
    now: () => now,
  });
  const ids = [pending.add(audit), pending.add(audit), pending.add(audit)];
  const fourth = pending.add(audit);
  assert.equal(pending.size, 3);
  assert.equal(pending.dropped, 1);
  assert.equal(pending.take(ids[0]!, "topic"), "expired");
  now = 1500;
  assert.equal(pending.take(ids[1]!, "topic"), "expired");
  pending.add(audit); // drops the expired ones still kept
  assert.equal(pending.size, 1);
  assert.equal(pending.take(fourth, "topic"), "expired");
  assert.equal(pending.dropped, 4);
});

Deno.test("a repeated id is told from an expired one while it is among the last answered", () => {
  const pending = new PendingAudits({ capacity: 2 });
  const ids = [pending.add(audit), pending.add(audit)];
  for (const id of ids) {
    assert.ok(typeof pending.take(id, "topic") === "object");
  }
  assert.equal(pending.take(ids[0]!, "topic"), "answered");
  // Memory of answered ids is bounded by the capacity: older ones read as expired.
  const third = pending.add(audit);
  assert.ok(typeof pending.take(third, "topic") === "object");
  assert.equal(pending.take(ids[0]!, "topic"), "expired");
  assert.equal(pending.take(ids[1]!, "topic"), "answered");
  assert.equal(pending.take(third, "topic"), "answered");
});

Deno.test("the sampler picks with its rate, the same picks for the same seed", () => {
  const draws = (seed: number) => {
    const s = new AuditSampler(0.1, seed);
    return Array.from({ length: 5000 }, () => s.pick());
  };
  const a = draws(9);
  assert.deepEqual(draws(9), a);
  const share = a.filter(Boolean).length / a.length;
  assert.ok(share > 0.08 && share < 0.12, `share ${share}`);
  assert.equal(new AuditSampler(0, 1).pick(), false);
  assert.throws(() => new AuditSampler(1.5, 1), RangeError);
});
