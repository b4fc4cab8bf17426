import assert from "node:assert/strict";
import {
  conformalPValue,
  DEFAULT_DRIFT,
  DriftMonitor,
  driftScore,
  peekGuard,
  smoothedPValue,
} from "../src/engine/drift.ts";
import type { DriftSettings, QuestionTable } from "../src/engine/table.ts";
import { rng, throwsWith } from "./_fixtures.ts";

/** The part of a question the monitor reads: its name and sorted calibration scores. */
function question(name: string, scores: number[]): QuestionTable {
  return {
    name,
    drift: {
      scores: Float32Array.from(scores).sort(),
      novelty: new Float32Array(0),
    },
  } as unknown as QuestionTable;
}

/** Normal traffic: a skewed continuous score, as drift scores are (most texts familiar and confident). */
const normal = (random: () => number) => random() ** 2;
/** Shifted traffic: the same scale, higher scores. */
const shifted = (random: () => number) => Math.sqrt(random());

const SETTINGS: DriftSettings = { ...DEFAULT_DRIFT };

/** Share of runs in which in-distribution traffic raised an alarm. */
function falseAlarmShare(
  runs: number,
  calibration: number,
  requests: number,
  seed: number,
): number {
  let alarmed = 0;
  for (let run = 0; run < runs; run++) {
    const random = rng(seed + run * 7919);
    const q = question(
      "q",
      Array.from({ length: calibration }, () => normal(random)),
    );
    const monitor = new DriftMonitor(SETTINGS, run + 1);
    for (let i = 0; i < requests; i++) monitor.observe(q, normal(random));
    if (monitor.state("q").alarms > 0) alarmed++;
  }
  return alarmed / runs;
}

Deno.test("DriftMonitor raises a false alarm on exchangeable traffic in at most about delta of runs", () => {
  const runs = 300;
  const delta = SETTINGS.delta;
  const allowed = delta + 3 * Math.sqrt((delta * (1 - delta)) / runs);
  // A calibration split the size a BANKING77-like question has.
  const share = falseAlarmShare(runs, 1000, 2000, 1);
  console.log(
    `drift, 1000 calibration scores, ${runs} runs of 2000 requests: false alarms in ${
      (share * 100).toFixed(1)
    }% ` +
      `(allowed ${(allowed * 100).toFixed(1)}%)`,
  );
  assert.ok(share <= allowed, `false alarm share ${share}`);
});

Deno.test({
  name:
    "DriftMonitor keeps its false-alarm bound with a small calibration split",
  fn() {
    const runs = 300;
    const delta = SETTINGS.delta;
    const allowed = delta + 3 * Math.sqrt((delta * (1 - delta)) / runs);
    // 59 calibration scores: the smallest split that can certify at the default alpha and delta.
    for (const n of [59, 100, 200]) {
      const share = falseAlarmShare(runs, n, 2000, 2 + n);
      assert.ok(
        share <= allowed,
        `false alarm share ${share} with ${n} calibration scores`,
      );
    }
  },
});

Deno.test("DriftMonitor raises the alarm on foreign traffic within a few hundred requests, even with a small calibration split", () => {
  const delays: number[] = [];
  for (const n of [59, 100, 1000]) {
    for (let run = 0; run < 20; run++) {
      const random = rng(n * 100 + run);
      const q = question("q", Array.from({ length: n }, () => normal(random)));
      const monitor = new DriftMonitor(SETTINGS, run + 1);
      for (let i = 0; i < 200; i++) monitor.observe(q, normal(random));
      if (monitor.state("q").alarms > 0) continue;
      // Foreign texts: every score above every calibration score.
      let raised = Infinity;
      for (let i = 1; i <= 1000 && raised === Infinity; i++) {
        if (!monitor.observe(q, 1 + random())) raised = i;
      }
      delays.push(raised);
      assert.ok(
        raised <= 300,
        `${n} calibration scores: alarm after ${raised} foreign requests`,
      );
    }
  }
  console.log(
    `drift, foreign traffic: alarm after at most ${
      Math.max(...delays)
    } requests (59 to 1000 calibration scores)`,
  );
});

Deno.test("DriftMonitor raises the alarm within a few hundred shifted requests, then clears it", async (t) => {
  const runs = 100;
  const window = SETTINGS.rearm_window;
  const raisedAfter: number[] = [];
  const clearedAfter: number[] = [];
  for (let run = 0; run < runs; run++) {
    const random = rng(500 + run);
    const q = question("q", Array.from({ length: 1000 }, () => normal(random)));
    const monitor = new DriftMonitor(SETTINGS, run + 1);
    for (let i = 0; i < 300; i++) monitor.observe(q, normal(random));
    if (monitor.state("q").alarms > 0) continue; // a false alarm: not this test's subject
    let raised = 0;
    for (let i = 1; i <= 1000 && raised === 0; i++) {
      if (!monitor.observe(q, shifted(random))) raised = i;
    }
    raisedAfter.push(raised === 0 ? Infinity : raised);
    if (raised === 0) continue;
    const at = monitor.state("q");
    assert.equal(at.status, "alarmed");
    assert.equal(at.alarmed_at, 300 + raised);
    assert.ok(at.evidence >= at.alarm_level);
    let cleared = 0;
    for (let i = 1; i <= 10 * window && cleared === 0; i++) {
      if (monitor.observe(q, normal(random))) cleared = i;
    }
    clearedAfter.push(cleared === 0 ? Infinity : cleared);
    if (cleared > 0) {
      const s = monitor.state("q");
      assert.equal(s.status, "quiet");
      assert.equal(s.alarmed_at, null);
      assert.equal(s.clears, 1);
      assert.equal(s.alarms, 1);
      assert.equal(s.evidence, 1, "the test starts afresh");
    }
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const r = sorted(raisedAfter);
  const c = sorted(clearedAfter);
  const quantile = (xs: number[], q: number) =>
    xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
  console.log(
    `drift, shift to higher scores: alarm after median ${
      quantile(r, 0.5)
    }, 95th percentile ${quantile(r, 0.95)}, ` +
      `max ${r[r.length - 1]} requests; back to normal, cleared after median ${
        quantile(c, 0.5)
      }, ` +
      `95th percentile ${quantile(c, 0.95)}, max ${
        c[c.length - 1]
      } requests (window ${window})`,
  );
  await t.step(
    "the shift raises the alarm within 300 requests in every run",
    () => {
      assert.ok(
        r.length >= runs * 0.9,
        `${r.length} runs without a false alarm`,
      );
      assert.ok(r[r.length - 1]! <= 300, `slowest alarm ${r[r.length - 1]}`);
    },
  );
  await t.step(
    "normal traffic clears it within about the re-arm window",
    () => {
      assert.ok(c[0]! >= window, "not before a full window of normal traffic");
      assert.ok(quantile(c, 0.5) <= window + 20, `median ${quantile(c, 0.5)}`);
      assert.ok(
        quantile(c, 0.95) <= 2 * window,
        `95th percentile ${quantile(c, 0.95)}`,
      );
      assert.ok(c[c.length - 1]! <= 4 * window, `slowest ${c[c.length - 1]}`);
    },
  );
});

Deno.test({
  name: "DriftMonitor keeps the alarm raised while the shift lasts",
  fn() {
    for (let run = 0; run < 20; run++) {
      const random = rng(500 + run);
      const q = question(
        "q",
        Array.from({ length: 1000 }, () => normal(random)),
      );
      const monitor = new DriftMonitor(SETTINGS, run + 1);
      let raised = false;
      for (let i = 0; i < 1000 && !raised; i++) {
        raised = !monitor.observe(q, shifted(random));
      }
      assert.ok(raised);
      for (let i = 0; i < 3 * SETTINGS.rearm_window; i++) {
        assert.equal(
          monitor.observe(q, shifted(random)),
          false,
          `run ${run}: cleared after ${i + 1} shifted requests`,
        );
      }
    }
  },
});

Deno.test("DriftMonitor.state() starts quiet and counts per question", () => {
  const random = rng(3);
  const a = question("a", Array.from({ length: 500 }, () => normal(random)));
  const b = question("b", Array.from({ length: 500 }, () => normal(random)));
  const monitor = new DriftMonitor(SETTINGS);
  assert.deepEqual(monitor.state("a"), {
    status: "quiet",
    observed: 0,
    alarmed_at: null,
    evidence: 1,
    alarm_level: 2 / SETTINGS.delta,
    alarms: 0,
    clears: 0,
  });
  for (let i = 0; i < 400 && monitor.isQuiet("a"); i++) {
    monitor.observe(a, 0.999);
  }
  assert.equal(monitor.state("a").status, "alarmed");
  assert.equal(monitor.isQuiet("a"), false);
  // Another question is unaffected.
  assert.equal(monitor.observe(b, normal(random)), true);
  assert.equal(monitor.state("b").observed, 1);
  // A peek judges without recording.
  const before = monitor.state("a").observed;
  assert.equal(peekGuard(monitor).observe(a, 0.1), false);
  assert.equal(peekGuard(monitor).observe(b, 0.999), true);
  assert.equal(monitor.state("a").observed, before);
  // A question without calibration scores is never judged.
  assert.equal(monitor.observe(question("c", []), 1), true);
});

Deno.test("DriftMonitor refuses settings outside their range", () => {
  throwsWith(
    () => new DriftMonitor({ ...SETTINGS, delta: 0 }),
    RangeError,
    /delta must be in \(0, 1\): got 0/,
  );
  throwsWith(
    () => new DriftMonitor({ ...SETTINGS, delta: 1 }),
    RangeError,
    /delta/,
  );
  throwsWith(
    () => new DriftMonitor({ ...SETTINGS, rearm_window: 0 }),
    RangeError,
    /window must be a positive integer: got 0/,
  );
  throwsWith(
    () => new DriftMonitor({ ...SETTINGS, rearm_window: 2.5 }),
    RangeError,
    /window/,
  );
});

Deno.test("conformalPValue() and smoothedPValue() rank a score among the calibration scores", () => {
  const scores = Float32Array.from([0.1, 0.2, 0.3]);
  assert.equal(conformalPValue(scores, 0.05), 1);
  assert.equal(conformalPValue(scores, 0.25), 2 / 4);
  assert.equal(
    conformalPValue(scores, 0.3),
    2 / 4,
    "ties count as at least as extreme",
  );
  assert.equal(conformalPValue(scores, 0.9), 1 / 4);
  assert.equal(smoothedPValue(scores, 0.9, 0.5), 0.5 / 4);
  assert.equal(smoothedPValue(scores, 0.05, 0.999), (3 + 0.999) / 4);
  // Under exchangeability the smoothed p-value is uniform: its mean is about 1/2 and its 5% quantile about 0.05.
  const random = rng(12);
  const cal = Float32Array.from({ length: 2000 }, () => normal(random)).sort();
  const ps = Array.from(
    { length: 20000 },
    () => smoothedPValue(cal, normal(random), random()),
  ).sort((a, b) => a - b);
  const mean = ps.reduce((s, p) => s + p, 0) / ps.length;
  assert.ok(Math.abs(mean - 0.5) < 0.02, `mean ${mean}`);
  assert.ok(Math.abs(ps[1000]! - 0.05) < 0.015, `5% quantile ${ps[1000]}`);
});

Deno.test("driftScore() grows with novelty and with doubt", () => {
  assert.equal(driftScore(0, 1), 0);
  assert.equal(driftScore(1, 0), 1);
  assert.ok(driftScore(0.5, 0.9) > driftScore(0.1, 0.9));
  assert.ok(driftScore(0.1, 0.5) > driftScore(0.1, 0.9));
});

Deno.test("one sentence sent again and again trips the guard only when it is less like the calibration texts than most of them (the README's sentence), at several calibration sizes", () => {
  // The online test bets on small p-values: it watches for traffic with
  // higher drift scores than the calibration texts, not for repeats. A
  // repeated sentence whose score sits above nearly every calibration
  // text's is such traffic and trips it fast; a repeated ordinary sentence
  // (its score below three in four calibration texts') never does.
  const requestsToAlarm = (n: number, above: number, max: number) => {
    const scores = Array.from({ length: n }, (_, i) => (i + 0.5) / n);
    const q = question("q", scores);
    for (const seed of [1, 2, 3]) {
      const guard = new DriftMonitor(SETTINGS, seed);
      for (let i = 1; i <= max; i++) {
        if (!guard.observe(q, above)) return i;
      }
    }
    return null;
  };
  for (const n of [200, 600, 2000]) {
    // Above 99% of the calibration texts: within 60 requests.
    const fast = requestsToAlarm(n, 0.995, 60);
    assert.ok(fast !== null && fast <= 60, `n ${n}: ${fast}`);
    // An ordinary sentence, above half of them (or three in four): never
    // in 1,000 requests.
    assert.equal(requestsToAlarm(n, 0.5, 1000), null, `n ${n}, median`);
    assert.equal(requestsToAlarm(n, 0.7, 1000), null, `n ${n}, 70%`);
  }
  // Between, it depends on the calibration size (the DKW slack shrinks with
  // it): above 90% of 600 calibration texts trips in 60 requests or so,
  // above 85% of 200 takes hundreds.
  assert.ok((requestsToAlarm(600, 0.9, 1000) ?? Infinity) <= 80);
  assert.ok((requestsToAlarm(200, 0.85, 1000) ?? Infinity) > 100);
});
