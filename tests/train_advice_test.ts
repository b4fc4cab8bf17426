/**
 * Advice for an uncalibrated question: it reports what the test's main
 * candidate saw, how many more traces a pass would take at that rate, and
 * whether the question was borderline, without ever inviting a retry of
 * seeds (which would void the bound).
 */
import assert from "node:assert/strict";
import {
  type CalibrationTargets,
  type ScoredAnswers,
  uncalibratedAdvice,
} from "../src/train/calibrate.ts";
import { type CertificationPlan, fallbackTest } from "../src/train/certify.ts";

const TARGETS: CalibrationTargets = {
  alpha: 0.05,
  delta: 0.05,
  calibrationShare: 0.2,
  scopeP: 0,
};

/** `n` answers, most confident first, with `wrong(rank)` saying which disagree. */
function scored(n: number, wrong: (rank: number) => boolean): ScoredAnswers {
  return {
    confidences: Float64Array.from({ length: n }, (_, i) => 1 - i / n),
    wrong: Uint8Array.from({ length: n }, (_, i) => wrong(i) ? 1 : 0),
    novelty: new Float32Array(n),
    driftScores: new Float32Array(n),
    scopeScores: new Float32Array(n),
  };
}

/** A plan with `main` of delta on the top `at` answers and the rest on the top `hedge`. */
function plan(n: number, at: number, hedge: number): CertificationPlan {
  const grid = [1 - (at - 1) / n, 1 - (hedge - 1) / n, 0].sort((a, b) => b - a);
  const levels = grid.map((g) =>
    g === 1 - (at - 1) / n ? 0.045 : g === 1 - (hedge - 1) / n ? 0.005 : 0
  );
  return { grid, levels, start: at / n, hedge: hedge / n, startChance: 0.5 };
}

const NO_VALIDATION = {
  confidences: new Float64Array(0),
  correct: new Uint8Array(0),
  accuracy: null,
};

Deno.test("advice on a borderline question names the main candidate, a size that would pass, and no retry", () => {
  // 600 answers: the top 117 never disagree, 8 of the next 162 do, then 30%.
  const wrongRanks = new Set([130, 150, 170, 190, 210, 230, 250, 270]);
  const answers = scored(
    600,
    (r) => r >= 279 ? r % 10 < 3 : wrongRanks.has(r),
  );
  const p = plan(600, 279, 420);
  // The test itself fails: 8 of 279 is above what 0.045 allows, 420 is far worse.
  assert.equal(
    fallbackTest(answers.confidences, answers.wrong, p, 0.05).threshold,
    null,
  );
  const advice = uncalibratedAdvice(answers, NO_VALIDATION, TARGETS, p);
  assert.match(advice, /main candidate .* disagree 8 of 279 \(2\.9%\)/);
  const grow = Number(advice.match(/about ([\d.]+) times as many traces/)![1]);
  assert.ok(grow > 1 && grow < 3, advice);
  assert.match(
    advice,
    /borderline case: its \d+ most confident answers \(0 disagreements\) would have passed/,
  );
  assert.match(
    advice,
    /retrying other seeds until one passes would void the bound/,
  );
  assert.doesNotMatch(advice, /may pass/);
});

Deno.test("advice never promises a pass at the same size from a rate of zero", () => {
  // The main candidate covers 40 answers without a disagreement: too few to
  // pass at 0.045; the projection counts one disagreement, so it asks for more.
  const answers = scored(300, (r) => r >= 40 && r % 25 === 0);
  const p = plan(300, 40, 80);
  const advice = uncalibratedAdvice(answers, NO_VALIDATION, TARGETS, p);
  assert.match(
    advice,
    /disagree 0 of 40 \(0\.0%\); at one disagreement in as many a pass needs about/,
  );
  const grow = Number(advice.match(/about ([\d.]+) times as many traces/)![1]);
  assert.ok(grow >= 1.1, advice);
  assert.doesNotMatch(advice, /borderline/);
});

Deno.test("advice when even the most confident answers disagree too often says more traces would not help", () => {
  const answers = scored(400, (r) => r % 10 === 0);
  const advice = uncalibratedAdvice(
    answers,
    NO_VALIDATION,
    TARGETS,
    plan(400, 200, 300),
  );
  assert.match(
    advice,
    /at least alpha \(0\.05\): more traces of the same kind would not help/,
  );
});

Deno.test("advice counts answers of one unit together, as the test does", () => {
  const answers = {
    ...scored(600, (r) => r >= 279 ? r % 10 < 3 : r % 35 === 34),
    // Pairs of near-duplicates: every unit holds two answers.
    units: Int32Array.from({ length: 600 }, (_, i) => i >> 1),
  };
  const advice = uncalibratedAdvice(
    answers,
    NO_VALIDATION,
    TARGETS,
    plan(600, 279, 420),
  );
  assert.match(advice, /counted as about 140 independent ones/);
});

Deno.test("advice names the out-of-scope rule when it leaves too few answers to pass", () => {
  // 60 answers, enough in all, but two withheld by the rule (spread far out).
  const answers = scored(60, () => false);
  answers.scopeScores = Float32Array.from(
    { length: 60 },
    (_, i) => i < 2 ? -50 : i,
  );
  const advice = uncalibratedAdvice(
    answers,
    NO_VALIDATION,
    { ...TARGETS, scopeP: 0.05 },
    plan(60, 30, 60),
  );
  assert.match(
    advice,
    /^only 5[78] of its 60 calibration answers can be certified \(the out-of-scope rule withholds the rest\) and a pass needs at least 59/,
  );
});
