/**
 * One name per reason: an answer flagged `drift` (the flag the interface
 * fixes) is counted under the rule that withheld it, in `/v1/stats` and
 * `/metrics`, as `eval` names it, so the dashboard never calls the live
 * audits' withdrawal "the drift guard".
 */

import assert from "node:assert/strict";
import { createApp } from "../src/http/app.ts";
import { withdrawCertification } from "../src/engine/mod.ts";
import type { Table } from "../src/engine/table.ts";
import { smallTable, stateOf } from "./_fixtures.ts";

Deno.test("answers flagged drift are counted per rule in /v1/stats and /metrics", async () => {
  const table: Table = { ...smallTable().table };
  const state = stateOf(table);
  const app = createApp({ table, state, bundlePath: "b" });
  withdrawCertification(table, state, "topic");
  for (let i = 0; i < 3; i++) {
    const res = await app.request("/v1/decide", {
      method: "POST",
      body: JSON.stringify({
        state: "my invoice was overcharged",
        questions: { topic: {} },
      }),
    });
    const answer = (await res.json()).answers.topic;
    assert.equal(answer.flag, "drift");
  }
  const stats = await (await app.request("/v1/stats")).json();
  assert.deepEqual(stats.drift_rules, { live_audit: 3 });
  assert.equal(stats.deferral_reasons.drift, 3);
  const metrics = await (await app.request("/metrics")).text();
  assert.match(
    metrics,
    /^dtable_drift_rule_answers_total\{rule="live_audit"\} 3$/m,
  );
});
