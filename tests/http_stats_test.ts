import assert from "node:assert/strict";
import { DriftMonitor, TableState } from "../src/engine/mod.ts";
import { DECISION_ROUTES, ROUTE_LABELS } from "../src/http/routes.ts";
import { ServiceStats } from "../src/metrics/service_stats.ts";
import { smallTable } from "./_fixtures.ts";

const table = smallTable().table;

Deno.test("ServiceStats reports recent latency over the last 10 to 20 seconds, and the total since start", () => {
  let clock = 1_000_000;
  const stats = new ServiceStats({
    routes: { decisions: DECISION_ROUTES, labels: ROUTE_LABELS },
    table,
    state: new TableState(table),
    bundlePath: "b",
    monitor: new DriftMonitor(table.settings.drift),
    now: () => clock,
  });
  const decide = (us: number) =>
    stats.recordDecision("/v1/decide", "t", [], us);
  for (let i = 0; i < 100; i++) decide(1000);
  assert.equal(stats.snapshot().latency_us_recent.p50, 1000);
  clock += 12_000; // a new window; the slow one is still within 20 s
  for (let i = 0; i < 300; i++) decide(10);
  let s = stats.snapshot();
  assert.equal(s.latency_us_recent.count, 400);
  assert.ok(s.latency_us_recent.p50! <= 11);
  clock += 10_000; // the slow window is now older than 20 s
  for (let i = 0; i < 5; i++) decide(10);
  s = stats.snapshot();
  assert.equal(s.latency_us_recent.count, 305);
  assert.equal(s.latency_us_recent.max, 10);
  assert.equal(s.latency_us.count, 405);
  assert.equal(s.latency_us.max, 1000);
  clock += 25_000; // quiet for longer than both windows
  s = stats.snapshot();
  assert.equal(s.latency_us_recent.count, 0);
  assert.equal(s.latency_us_recent.p50, null);
});
