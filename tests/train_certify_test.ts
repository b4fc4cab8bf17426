import assert from "node:assert/strict";
import {
  candidateGrid,
  fallbackTest,
  passStart,
  planCertification,
} from "../src/guarantee/certify.ts";
import { measure, Meter } from "../src/train/meter.ts";
import {
  binomialTail,
  clopperPearson,
  minimumCertifiable,
} from "../src/guarantee/distributions.ts";
import { rng } from "./_fixtures.ts";

/** `P(Binomial(n, p) <= k)` summed term by term in log space. */
function exactTail(k: number, n: number, p: number): number {
  let logTerm = n * Math.log(1 - p); // i = 0
  let sum = Math.exp(logTerm);
  for (let i = 1; i <= k; i++) {
    logTerm += Math.log((n - i + 1) / i) + Math.log(p / (1 - p));
    sum += Math.exp(logTerm);
  }
  return Math.min(1, sum);
}

Deno.test("binomialTail() matches the exact binomial sum", () => {
  for (const n of [1, 5, 59, 60, 200, 1000, 3000]) {
    for (
      const k of [
        0,
        1,
        2,
        5,
        10,
        Math.floor(n * 0.03),
        Math.floor(n * 0.05),
        Math.floor(n * 0.1),
      ]
    ) {
      if (k > n) continue;
      for (const p of [0.01, 0.05, 0.1]) {
        const got = binomialTail(k, n, p);
        const want = exactTail(k, n, p);
        assert.ok(
          Math.abs(got - want) <= 1e-9 + 1e-6 * want,
          `n=${n} k=${k} p=${p}: ${got} vs ${want}`,
        );
      }
    }
  }
  assert.equal(binomialTail(-1, 10, 0.05), 0);
  assert.equal(binomialTail(10, 10, 0.05), 1);
});

Deno.test("minimumCertifiable() is the fewest error-free answers that pass the test", () => {
  assert.equal(minimumCertifiable(0.05, 0.05), 59);
  assert.ok(binomialTail(0, 59, 0.05) <= 0.05);
  assert.ok(binomialTail(0, 58, 0.05) > 0.05);
  assert.equal(minimumCertifiable(0.1, 0.01), 44);
});

Deno.test("clopperPearson() matches known intervals", () => {
  const close = (a: number | null, b: number) =>
    assert.ok(a !== null && Math.abs(a - b) < 5e-4, `${a} vs ${b}`);
  // k = 0 and k = n have closed forms.
  let ci = clopperPearson(0, 10);
  assert.equal(ci.lower, 0);
  close(ci.upper, 1 - Math.pow(0.025, 1 / 10)); // 0.3085
  ci = clopperPearson(10, 10);
  close(ci.lower, Math.pow(0.025, 1 / 10)); // 0.6915
  assert.equal(ci.upper, 1);
  // Published values (e.g. R's binom.test).
  ci = clopperPearson(5, 10);
  close(ci.lower, 0.1871);
  close(ci.upper, 0.8129);
  ci = clopperPearson(3, 100);
  close(ci.lower, 0.00619);
  close(ci.upper, 0.08518);
  ci = clopperPearson(1, 59);
  close(ci.lower, 0.000429);
  close(ci.upper, 0.09085);
  assert.deepEqual(clopperPearson(0, 0), { lower: null, upper: null });
});

Deno.test("measure() reports coverage and disagreement, null when nothing is certified", () => {
  const m = measure(
    Uint8Array.from([1, 1, 1, 0, 0]),
    Uint8Array.from([0, 1, 0, 1, 0]),
  );
  assert.equal(m.n, 5);
  assert.equal(m.certified, 3);
  assert.equal(m.coverage, 3 / 5);
  assert.equal(m.disagreements, 1);
  assert.equal(m.disagreement, 1 / 3);
  assert.equal(m.accuracy, 3 / 5);
  assert.equal(m.disagreement_upper, clopperPearson(1, 3).upper);
  const none = measure(Uint8Array.from([0, 0]), Uint8Array.from([0, 1]));
  assert.equal(none.disagreement, null);
  assert.equal(none.disagreement_upper, null);
  assert.equal(none.coverage, 0);
  assert.equal(new Meter().result().coverage, null, "nothing measured");
});

/** A plan with all of `delta` on the first candidate of `grid`: the scan stops at its first failure. */
function allOnFirst(grid: readonly number[], delta: number) {
  return { grid: [...grid], levels: grid.map((_, i) => i === 0 ? delta : 0) };
}

Deno.test("candidateGrid() starts where enough answers would be certified for a pass", () => {
  const random = rng(8);
  const reference = Float64Array.from(
    { length: 1000 },
    () => 0.5 + 0.5 * random(),
  );
  const calibrationSize = 800;
  const start = (1.5 * minimumCertifiable(0.05, 0.05)) / calibrationSize;
  const grid = candidateGrid(reference, start);
  // The first candidate certifies about `start` of the reference texts, not the single most confident one.
  const certifiedAtFirst = reference.filter((c) => c >= grid[0]!).length /
    reference.length;
  assert.ok(
    Math.abs(certifiedAtFirst - start) < 0.01,
    `first candidate certifies ${certifiedAtFirst}, start ${start}`,
  );
  for (let i = 1; i < grid.length; i++) {
    assert.ok(grid[i]! < grid[i - 1]!, "strictly decreasing");
  }
  assert.equal(grid[grid.length - 1], 0, "ends by certifying everything");
  // With error-free calibration answers the very first candidate passes.
  const conf = Float64Array.from(
    { length: calibrationSize },
    () => 0.5 + 0.5 * random(),
  );
  const choice = fallbackTest(
    conf,
    new Uint8Array(calibrationSize),
    allOnFirst(grid, 0.05),
    0.05,
  );
  assert.equal(choice.threshold, 0);
  assert.equal(choice.tested, grid.length);
});

/** A world where confidence is uniform on [0.5, 1] and answers are wrong with probability `p(c)`. */
interface World {
  name: string;
  /** Error probability at confidence c. */
  error(c: number): number;
  /** True selective risk E[p(c) | c >= t]. */
  risk(t: number): number;
  /** Share certified at threshold t. */
  coverage(t: number): number;
}

const uniformCoverage = (t: number) => Math.min(1, Math.max(0, (1 - t) / 0.5));

/** Error falls with confidence: p(c) = 0.3 ((1 - c) / 0.5)^1.5; risk 0.12 u^1.5 with u the coverage. */
const decreasing: World = {
  name: "decreasing error",
  error: (c) => 0.3 * Math.pow((1 - c) / 0.5, 1.5),
  risk: (t) => 0.12 * Math.pow(uniformCoverage(t), 1.5),
  coverage: uniformCoverage,
};

/** Error just above alpha at every confidence: any certified answer set violates the target. */
const flat: World = {
  name: "flat error just above alpha",
  error: () => 0.053,
  risk: () => 0.053,
  coverage: uniformCoverage,
};

Deno.test("fallbackTest() hands a rejected candidate's level on, and one failure does not end the scan", () => {
  // 1,000 answers by falling confidence; 3 disagreements among the top 60
  // (too many for 60 answers to pass), then clean down to 700, then poor.
  const n = 1000;
  const confidences = Float64Array.from({ length: n }, (_, i) => 1 - i / n);
  const wrong = new Uint8Array(n);
  for (const i of [5, 20, 50]) wrong[i] = 1;
  for (let i = 700; i < n; i += 3) wrong[i] = 1;
  const grid = Array.from({ length: 20 }, (_, j) => 1 - (60 + 50 * j) / n);
  // All of delta on the first candidate: it fails and nothing is certified.
  assert.equal(
    fallbackTest(confidences, wrong, allOnFirst(grid, 0.05), 0.05).threshold,
    null,
  );
  // Half of delta on it and half on the candidate at 310 answers: the scan
  // goes on there, and the passes carry the level to the lenient end.
  const levels = grid.map((_, j) => j === 0 || j === 5 ? 0.025 : 0);
  const c = fallbackTest(confidences, wrong, { grid, levels }, 0.05);
  assert.ok(c.threshold !== null);
  // Tested: the first anchor, then the second and each candidate after it up
  // to the first failure (811 answers, 40 disagreements); past a failure a
  // candidate without a level of its own is not tested.
  assert.equal(c.tested, 1 + 11);
  assert.equal(c.certified, 761);
  assert.ok(binomialTail(c.disagreements, c.certified, 0.05) <= 0.05);
  // The failed first anchor cost only its own level: the second alone finds
  // the same threshold.
  const alone = fallbackTest(confidences, wrong, {
    grid,
    levels: grid.map((_, j) => j === 5 ? 0.025 : 0),
  }, 0.05);
  assert.equal(alone.certified, c.certified);
});

Deno.test("passStart() starts where the validation answers predict the best chance of a pass", () => {
  const n = 1000;
  const confidences = Float64Array.from({ length: n }, (_, i) => 1 - i / n);
  // Clean down to 600, then every third answer wrong.
  const correct = Uint8Array.from(
    { length: n },
    (_, i) => i >= 600 && i % 3 === 0 ? 0 : 1,
  );
  const clean = passStart(confidences, correct, n, 0.05, 0.05)!;
  assert.ok(
    clean.coverage > 0.2 && clean.coverage <= 0.62,
    `start ${clean.coverage}`,
  );
  assert.ok(clean.chance > 0.9, `chance ${clean.chance}`);
  // With disagreements among the very top, a start of 59 answers is hopeless:
  // the start moves to where a few disagreements are allowed.
  const noisyTop = Uint8Array.from(correct);
  noisyTop[3] = noisyTop[30] = 0;
  const moved = passStart(confidences, noisyTop, n, 0.05, 0.05)!;
  assert.ok(moved.coverage * n >= 124, `start ${moved.coverage * n} answers`);
  // Too few calibration answers for any pass: no start.
  assert.equal(passStart(confidences, correct, 50, 0.05, 0.05), null);
  assert.equal(
    passStart(new Float64Array(0), new Uint8Array(0), 100, 0.05, 0.05),
    null,
  );
});

Deno.test("planCertification() puts most of delta on the start and the rest on a hedge", () => {
  const n = 800;
  const confidences = Float64Array.from({ length: n }, (_, i) => 1 - i / n);
  const correct = Uint8Array.from(
    { length: n },
    (_, i) => i > 500 && i % 4 === 0 ? 0 : 1,
  );
  const plan = planCertification({ confidences, correct }, 600, 0.05, 0.05);
  const used = plan.levels.map((l, i) => [i, l] as const).filter(([, l]) =>
    l > 0
  );
  assert.equal(used.length, 2);
  assert.ok(Math.abs(plan.levels.reduce((a, b) => a + b, 0) - 0.05) < 1e-12);
  assert.deepEqual(used.map(([, l]) => Number(l.toFixed(6))).sort(), [
    0.005,
    0.045,
  ]);
  assert.ok(
    plan.hedge < plan.start,
    "a lenient start is hedged by a stricter anchor",
  );
  assert.deepEqual(plan.grid, [...plan.grid].sort((a, b) => b - a));
  assert.equal(plan.grid[plan.grid.length - 1], 0);
  // Nothing to predict from: everything on certifying all answers.
  const blind = planCertification(
    { confidences: new Float64Array(0), correct: new Uint8Array(0) },
    600,
    0.05,
    0.05,
  );
  assert.deepEqual(blind.grid, [0]);
  assert.deepEqual(blind.levels, [0.05]);
});

/**
 * The whole procedure as training runs it: validation answers (about half
 * as many as calibration answers, from a slightly weaker model) plan the
 * test, calibration answers decide it.
 */
function simulatePlan(
  world: World,
  runs: number,
  n: number,
  alpha: number,
  delta: number,
  seed: number,
) {
  const random = rng(seed);
  let violations = 0;
  let calibrated = 0;
  const draw = (count: number, shift: number) => {
    const conf = new Float64Array(count);
    const wrong = new Uint8Array(count);
    for (let i = 0; i < count; i++) {
      conf[i] = 0.5 + 0.5 * random();
      wrong[i] = random() < world.error(Math.min(1, conf[i]! + shift)) ? 1 : 0;
    }
    return { conf, wrong };
  };
  for (let run = 0; run < runs; run++) {
    const v = draw(Math.ceil(n * 0.56), -0.02);
    const plan = planCertification(
      { confidences: v.conf, correct: v.wrong.map((w) => 1 - w) },
      n,
      alpha,
      delta,
    );
    const c = draw(n, 0);
    const choice = fallbackTest(c.conf, c.wrong, plan, alpha);
    if (choice.threshold === null) continue;
    calibrated++;
    if (world.risk(choice.threshold) > alpha) violations++;
  }
  return { rate: violations / runs, calibrated };
}

Deno.test("the planned fallback test keeps its promise at every calibration size", async (t) => {
  const alpha = 0.05;
  const delta = 0.05;
  // 60 calibration answers are what 300 traces give at the default shares.
  for (const n of [60, 160, 600, 2000]) {
    await t.step(`${n} calibration answers`, () => {
      const runs = n >= 2000 ? 300 : 600;
      const slack = delta + 3 * Math.sqrt((delta * (1 - delta)) / runs);
      for (const world of [flat, decreasing]) {
        const r = simulatePlan(
          world,
          runs,
          n,
          alpha,
          delta,
          7 * n + world.name.length,
        );
        console.log(
          `planned fallback, n=${n}, ${world.name}: risk above alpha in ${
            (r.rate * 100).toFixed(1)
          }% of ${runs} runs (allowed ${
            (slack * 100).toFixed(1)
          }%), calibrated in ${r.calibrated}`,
        );
        assert.ok(r.rate <= slack, `${world.name}: violation rate ${r.rate}`);
        // Not vacuous: where the data allow it, most runs certify.
        if (world === decreasing && n >= 600) {
          const share = n === 600 ? 0.5 : 0.9;
          assert.ok(
            r.calibrated >= runs * share,
            `calibrated in ${r.calibrated}`,
          );
        }
      }
    });
  }
});

Deno.test("fallbackTest() counts answers of one unit by their effective number", () => {
  // 400 answers, 8 disagreements: passes as 400 independent answers.
  const n = 400;
  const confidences = Float64Array.from(
    { length: n },
    (_, i) => 1 - i / (2 * n),
  );
  const wrong = Uint8Array.from({ length: n }, (_, i) => i % 50 === 7 ? 1 : 0);
  const plan = { grid: [0], levels: [0.05] };
  const alone = Int32Array.from({ length: n }, (_, i) => i);
  assert.ok(fallbackTest(confidences, wrong, plan, 0.05).threshold !== null);
  assert.deepEqual(
    fallbackTest(confidences, wrong, plan, 0.05, alone),
    fallbackTest(confidences, wrong, plan, 0.05),
    "every answer its own unit: the plain test",
  );
  // The same answers as 40 units of 10 (effective size 40): no longer enough.
  const tens = Int32Array.from({ length: n }, (_, i) => Math.floor(i / 10));
  assert.equal(
    fallbackTest(confidences, wrong, plan, 0.05, tens).threshold,
    null,
  );
  // Copies of a correct answer in one unit add no evidence.
  const few = Float64Array.from({ length: 60 }, () => 0.9);
  const none = new Uint8Array(60);
  const oneUnit = new Int32Array(60);
  assert.ok(fallbackTest(few, none, plan, 0.05).threshold !== null);
  assert.equal(fallbackTest(few, none, plan, 0.05, oneUnit).threshold, null);
});
