/**
 * A simulation of a fleet pooling both tiers' live certificates of one
 * question: three replicas over one in-memory store, every decision
 * answered by the table or by the second tier (each a stream of its own,
 * with its own disagreement rate), audits counted by a random replica
 * after a random delay, feedback on uncertified answers at the next
 * replica. The assumption, as for the table alone (docs/live.md): the
 * audited answers are a random sample of each tier's certified ones, and
 * the reference model's disagreements are independent given the
 * confidence. Checked at several stream lengths: a sound tier is never
 * refuted nor loosened above alpha whatever the other tier does; a tier
 * at 1.6 alpha is corrected to within alpha on every replica, the same
 * threshold everywhere. Both tiers start from the two-tier rule's threshold.
 */

import assert from "node:assert/strict";
import { calibrationBands } from "../src/guarantee/feedback_check.ts";
import { liveGrid } from "../src/guarantee/live_evidence.ts";
import { TableState } from "../src/engine/state.ts";
import type { Calibration, Table } from "../src/engine/table.ts";
import { LiveController } from "../src/live/controller.ts";
import { FleetLive, type StagedAudit } from "../src/live/fleet.ts";
import { MemoryStore } from "../src/live/store.ts";
import { rng } from "./_fixtures.ts";
import { twoTierResult } from "./_two_tier.ts";
import {
  ALPHA,
  BUNDLE_THRESHOLD,
  GRID,
  type SimResult,
  type World,
  world,
} from "./_live_sim.ts";

const RATE = 0.05;

/** The two-tier table, `topic`'s two-tier rule calibrated at the grid with bands from `random`'s world `w`. */
function tieredTable(w: World, random: () => number): Table {
  const t = twoTierResult().table;
  const confidences = Array.from({ length: 3000 }, () => 0.5 + 0.5 * random());
  const calibration: Calibration = {
    status: "calibrated",
    threshold: BUNDLE_THRESHOLD,
    alpha: ALPHA,
    delta: 0.05,
    reason: null,
    candidates: GRID,
    bands: calibrationBands(
      confidences,
      confidences.map((c) => random() < w.error(c) ? 1 : 0),
      liveGrid(GRID, BUNDLE_THRESHOLD),
    ),
  };
  const questions = t.questions.map((q) =>
    q.name !== "topic" ? q : { ...q, semantic: { ...q.semantic!, calibration } }
  );
  return {
    ...t,
    questions,
    byName: new Map(questions.map((q) => [q.name, q])),
    info: { ...t.info, bundle_id: "ef".repeat(32) },
  };
}

/** `n` decisions per tier, the table's at `tableRate`, the second tier's at `semanticRate` (disagreement at the bundle's threshold). */
async function simulate(
  tableRate: number,
  semanticRate: number,
  n: number,
  seed: number,
): Promise<{ table: SimResult; semantic: SimResult }> {
  const random = rng(seed);
  const worlds = [world(tableRate), world(semanticRate)] as const;
  const store = new MemoryStore();
  const replicas = [0, 1, 2].map((i) => {
    // Both tiers start from the two-tier rule's calibration (a question
    // served with its second tier); bands from the second tier's world.
    const table = tieredTable(worlds[1], rng(seed * 7));
    const state = new TableState(table);
    const live = new LiveController({ auditRate: RATE, auditSeed: i + 1 });
    live.serve(table, state, true);
    const fleet = new FleetLive({
      store,
      replica: `r${i}`,
      syncMs: 1e9,
      log: () => {},
    });
    const counters = [
      live.certificates(table),
      live.semanticCertificates(table),
    ] as const;
    fleet.serve(table, state, counters[0], RATE, counters[1]);
    return { table, live, fleet, counters };
  });
  for (const r of replicas) await r.fleet.sync();
  const slot = replicas[0]!.table.questions.findIndex((q) =>
    q.name === "topic"
  );
  // Both tiers start from the two-tier rule's threshold, not the table's own.
  const own = replicas[0]!.table.questions[slot]!.calibration.threshold;
  assert.notEqual(own, BUNDLE_THRESHOLD);
  for (const r of replicas) {
    assert.equal(r.fleet.decision(slot)!.threshold, BUNDLE_THRESHOLD);
    assert.equal(r.fleet.decision(slot, true)!.threshold, BUNDLE_THRESHOLD);
  }
  const pending: { due: number; c: number; wrong: boolean; tier: number }[] =
    [];
  const waits: Promise<unknown>[] = [];
  const results: SimResult[] = [0, 1].map(() => ({
    everAbove: false,
    loosenedAbove: false,
    refuted: false,
    finalThresholds: [],
    finalRisk: 0,
  }));
  let tag = 0;
  for (let i = 0; i < 2 * n; i++) {
    const tier = i % 2;
    const r = replicas[Math.floor(i / 2) % 3]!;
    const w = worlds[tier]!;
    const d = r.fleet.decision(slot, tier === 1)!;
    const c = 0.5 + 0.5 * random();
    const wrong = random() < w.error(c);
    const ok = d.threshold !== null && c >= d.threshold;
    const audited = ok && random() < RATE;
    r.counters[tier]![slot]!.recordDecision(c, ok, audited);
    if (audited) {
      pending.push({ due: i + Math.floor(random() * 600), c, wrong, tier });
    }
    if (!ok) {
      const other = replicas[(Math.floor(i / 2) + 1) % 3]!;
      other.counters[tier]![slot]!.recordFeedback(c, wrong);
    }
    for (let j = pending.length - 1; j >= 0; j--) {
      const a = pending[j]!;
      if (a.due > i) continue;
      pending.splice(j, 1);
      const f = replicas[Math.floor(random() * 3)]!.fleet;
      const staged: StagedAudit = f.stage(
        slot,
        a.c,
        a.wrong,
        `t${tag++}`,
        600_000,
        a.tier === 1,
      );
      waits.push(f.submit([staged]));
    }
    if (i % 100 === 99) {
      await replicas[Math.floor(random() * 3)]!.fleet.sync();
      for (const r of replicas) {
        for (const t of [0, 1]) {
          const now = r.fleet.decision(slot, t === 1)!;
          const risk = now.threshold === null
            ? 0
            : worlds[t]!.risk(now.threshold);
          const out = results[t]!;
          if (risk > ALPHA) out.everAbove = true;
          if (now.reason === "live_lower" && risk > ALPHA) {
            out.loosenedAbove = true;
          }
          if (now.reason === "live_stricter" || now.reason === "withdrawn") {
            out.refuted = true;
          }
        }
      }
    }
  }
  await Promise.all(waits);
  for (const r of replicas) await r.fleet.sync();
  for (const r of replicas) await r.fleet.sync();
  for (const t of [0, 1]) {
    const final = replicas.map((r) =>
      r.fleet.decision(slot, t === 1)!.threshold
    );
    const out = results[t]!;
    out.finalThresholds = final;
    out.finalRisk = final[0] == null ? 0 : worlds[t]!.risk(final[0]);
  }
  return { table: results[0]!, semantic: results[1]! };
}

for (const n of [30_000, 60_000]) {
  Deno.test(`a second tier at 1.6 alpha is corrected on every replica (${n} decisions per tier), the sound table never refuted`, async () => {
    for (let seed = 1; seed <= 2; seed++) {
      const r = await simulate(0.6 * ALPHA, 1.6 * ALPHA, n, 20 + seed);
      const s = r.semantic;
      assert.equal(s.refuted, true, `seed ${seed}: the second tier`);
      assert.equal(s.loosenedAbove, false, `seed ${seed}`);
      assert.equal(new Set(s.finalThresholds).size, 1, `seed ${seed}`);
      assert.ok(s.finalRisk <= ALPHA, `seed ${seed}: risk ${s.finalRisk}`);
      assert.equal(r.table.refuted, false, `seed ${seed}: the table`);
      assert.equal(r.table.everAbove, false, `seed ${seed}`);
    }
  });

  Deno.test(`a sound second tier is never refuted nor loosened above alpha (${n} decisions per tier) while the table at 1.6 alpha is corrected`, async () => {
    for (let seed = 1; seed <= 2; seed++) {
      const r = await simulate(1.6 * ALPHA, 0.6 * ALPHA, n, 40 + seed);
      const s = r.semantic;
      assert.equal(s.refuted, false, `seed ${seed}: the second tier`);
      assert.equal(s.everAbove, false, `seed ${seed}`);
      assert.equal(s.loosenedAbove, false, `seed ${seed}`);
      assert.equal(new Set(s.finalThresholds).size, 1, `seed ${seed}`);
      assert.equal(r.table.refuted, true, `seed ${seed}: the table`);
      assert.ok(r.table.finalRisk <= ALPHA, `seed ${seed}`);
    }
  });
}
