/**
 * What a learning fleet's pooled log says per replica: labels by the
 * replica that took them, picks and answered picks by the replica that
 * made the decision (tied by the ledger's issuer, even when the label
 * arrives before that replica's ledger line), and the traffic per stretch
 * summed over replicas once the stretch is complete.
 */

import assert from "node:assert/strict";
import { ReplicaCounts } from "../src/learn/fleet/mod.ts";
import { ledgerLine } from "../src/traces/mod.ts";

const label = (issuer: string, source: string, id = "x") =>
  JSON.stringify({
    text: "t",
    answers: { q: "a" },
    time: "2026-12-07T00:00:00.000Z",
    feedback: { source, id, issuer, bundle: "b" },
  });

const ledger = (
  issuer: string,
  from: number,
  decisions: number,
  picked: number,
) =>
  ledgerLine({
    issuer,
    question: "q",
    bundle: "b",
    from,
    to: from + 5000,
    rate: 0.1,
    certifiable: true,
    decisions,
    certified: decisions - 2,
    picked,
    pickedCertified: 1,
  }).trimEnd();

Deno.test("per replica: labels where taken, picks and answered picks where decided, stretches summed once complete", () => {
  const c = new ReplicaCounts();
  // r2 takes a label answering a pick of r1's before r1's ledger line.
  const l1 = c.line("r2", label("aaaaaaaa", "sample"));
  assert.deepEqual(l1, { answers: [["q", "a"]], backed: true });
  assert.equal(c.line("r1", ledger("aaaaaaaa", 0, 10, 2)), null);
  assert.equal(c.line("r2", ledger("bbbbbbbb", 0, 20, 3)), null);
  c.line("r1", label("bbbbbbbb", "audit"));
  // A label without an id is no decision of the service's.
  const l2 = c.line(
    "r1",
    JSON.stringify({
      text: "u",
      answers: { q: "b" },
      time: "2026-12-07T00:00:00.000Z",
    }),
  );
  assert.deepEqual(l2, { answers: [["q", "b"]], backed: false });
  assert.equal(c.line("r1", '{"pick":{}}'), null);
  assert.deepEqual(c.perReplica(), {
    r1: { labels: 2, decisions: 10, picked: 2, picks_answered: 1 },
    r2: { labels: 1, decisions: 20, picked: 3, picks_answered: 1 },
  });
  // The stretch from 0 is complete once the pool reached 15 s past its end.
  assert.deepEqual(c.takeStretches(), []);
  c.line("r1", ledger("aaaaaaaa", 20_000, 1, 0));
  const done = c.takeStretches();
  assert.equal(done.length, 1);
  assert.deepEqual(done[0], {
    from: 0,
    to: 5000,
    decisions: 30,
    certified: 26,
    calls: 6,
  });
  assert.equal(c.series().length, 1);
});
