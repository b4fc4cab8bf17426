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
import {
  type CertificationPlan,
  fallbackTest,
} from "../src/guarantee/certify.ts";
import {
  type CurvePoint,
  estimateGrowth,
} from "../src/train/curve_estimate.ts";
import { train } from "../src/train/trainer.ts";
import {
  DEFAULT_TRAIN_OPTIONS,
  type TrainOptions,
} from "../src/train/options.ts";
import { adviceInBrief } from "../src/train/mod.ts";
import { parseJsonlTraces, readTraces } from "../src/traces/mod.ts";
import type { TraceSet } from "../src/traces/types.ts";
import { rng, shuffled, smallTrainOptions } from "./_fixtures.ts";
import { curveTraces } from "./_curve_traces.ts";
import { existsSync } from "node:fs";
import { smallSubset } from "../scripts/small_subsets.ts";

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

Deno.test("advice on a borderline question names the main candidate and no retry, and leaves the count of traces to the learning curve", () => {
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
  assert.match(
    advice,
    /main candidate .* disagree 8 of 279 \(2\.9%\), too many for the test at that size/,
  );
  assert.doesNotMatch(advice, /times as many traces|more traces/);
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

Deno.test("advice when even the most confident answers disagree too often says so, and leaves the verdict on the labels to the curve", () => {
  const answers = scored(400, (r) => r % 10 === 0);
  const advice = uncalibratedAdvice(
    answers,
    NO_VALIDATION,
    TARGETS,
    plan(400, 200, 300),
  );
  assert.match(
    advice,
    /^even its \d+ most confident calibration answers disagree with the model 10\.\d% of the time, at least alpha \(0\.05\)/,
  );
  assert.doesNotMatch(advice, /would not help/);
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

/** A curve point: `n` answers, most confident first, disagreeing where `wrong(rank)`. */
function point(
  trainAnswers: number,
  n: number,
  wrong: (rank: number) => boolean,
): CurvePoint {
  const s = scored(n, wrong);
  return { trainAnswers, confidences: s.confidences, wrong: s.wrong };
}

/** Every `every`-th answer disagrees, from rank `from` on (none before). */
const every = (n: number, from = 0) => (r: number) =>
  r >= from && (r - from) % n === n - 1;

Deno.test("estimateGrowth() reads a falling curve as a finite growth inside its range", () => {
  // 300 answers; the most confident half disagrees 1 in 6, 1 in 12, 1 in 24.
  const e = estimateGrowth([
    point(200, 300, (r) => r < 150 ? every(6)(r) : every(2)(r)),
    point(400, 300, (r) => r < 150 ? every(12)(r) : every(2)(r)),
    point(800, 300, (r) => r < 150 ? every(24)(r) : every(2)(r)),
  ], { alpha: 0.05, delta: 0.05 });
  assert.ok(e.growth !== null && e.growth > 1 && e.growth < 8, `${e.growth}`);
  assert.ok(e.low !== null && e.low <= e.growth!, `${e.low}`);
  assert.ok(e.high === null || e.high >= e.growth!, `${e.high}`);
  assert.equal(e.flat, false);
});

Deno.test("estimateGrowth() calls a curve flat above alpha whatever the size, and no pass in reach", () => {
  // 1 in 8 disagrees at every size, the most confident as much as the rest.
  const e = estimateGrowth([
    point(500, 400, every(8)),
    point(1000, 400, every(8, 3)),
    point(2000, 400, every(8, 5)),
  ], { alpha: 0.05, delta: 0.05 });
  assert.equal(e.flat, true);
  assert.equal(e.growth, null);
});

Deno.test("estimateGrowth() does not call a steeply falling curve flat, however far above alpha", () => {
  const e = estimateGrowth([
    point(150, 120, every(2)),
    point(300, 120, every(3)),
    point(450, 120, every(5)),
  ], { alpha: 0.05, delta: 0.05 });
  assert.equal(e.flat, false);
});

Deno.test("estimateGrowth() does not call flat the curve of a table that has not learned the question at a few answers an option, falling or not", () => {
  // The trial's curve at 300 traces of 64 options: 60 calibration answers,
  // the most confident disagreeing 68% at 48 training answers, then 63%,
  // 58% and 54% at 225: within two standard errors, but falling, at 3.5
  // training answers an option.
  const n = 60;
  const rates = [0.684, 0.633, 0.583, 0.544];
  const curve = [48, 107, 166, 225].map((size, j) =>
    point(size, n, (r) => r < Math.round(rates[j]! * n))
  );
  const e = estimateGrowth(curve, { alpha: 0.05, delta: 0.05, options: 64 });
  assert.equal(e.flat, false);
  // A curve that does not move at all, but at 93% disagreement among 64
  // options (a blind guess: 98%): the table has not learned yet.
  const still = [48, 107, 166, 225].map((size) =>
    point(size, n, (r) => r % 15 !== 0)
  );
  assert.equal(
    estimateGrowth(still, { alpha: 0.05, delta: 0.05, options: 64 }).flat,
    false,
  );
  // The same stillness at 12% disagreement, a learned table: flat; and at
  // chance with 30 answers an option or more (a coin toss): flat too.
  const learned = [48, 107, 166, 225].map((size) => point(size, 400, every(8)));
  assert.equal(
    estimateGrowth(learned, { alpha: 0.05, delta: 0.05, options: 64 }).flat,
    true,
  );
  const coin = [480, 960, 1440, 1920].map((size) =>
    point(size, 400, (r) => r % 2 === 0)
  );
  assert.equal(
    estimateGrowth(coin, { alpha: 0.05, delta: 0.05, options: 2 }).flat,
    true,
  );
});

Deno.test("train's advice at 300 traces of clean labels, its curve falling, asks for more traces, never cleaner labels", () => {
  // 64 options, 300 traces: under five answers an option.
  const traces = parseJsonlTraces(
    "clean.jsonl",
    curveTraces({ count: 300, seed: 1, options: 64, words: 6, noise: 0 }),
  );
  const r = train(traces, smallTrainOptions({ workers: 1 }));
  const advice = r.report.questions[0]!.calibration.advice!;
  assert.match(advice, /learning curve/);
  assert.doesNotMatch(advice, /not falling|would not help|cleaner labels/);
  assert.notEqual(
    adviceInBrief(advice)?.split(", or ")[0],
    "cleaner labels (more of the same traces would not help)",
  );
});

Deno.test({
  name:
    "a calibrated question certifying under 60% is told, from its learning curve, how many traces would certify 60%, with a range",
  ignore: !existsSync(
    new URL("../../shared/data/banking77/train.csv", import.meta.url),
  ),
  fn: async () => {
    const all = await readTraces([
      new URL("../../shared/data/banking77/train.csv", import.meta.url)
        .pathname,
    ]);
    // A draw of 3,000 BANKING77 traces that certifies about a third.
    const warned: string[] = [];
    const r = train(smallSubset(all, 3000, 3), {
      ...DEFAULT_TRAIN_OPTIONS,
      seed: 3,
      workers: 2,
      warn: (line) => warned.push(line),
    });
    const c = r.report.questions[0]!.calibration;
    assert.equal(c.status, "calibrated");
    const m =
      /^certifies (\d+\.\d)% of its calibration answers; learning curve .*certifying 60% of them needs about ([\d,]+) traces answering it in all \(80% range ([\d,]+)-([\d,]+)\), about ([\d,]+) more/
        .exec(c.advice ?? "");
    assert.ok(m !== null, c.advice ?? "no advice");
    assert.ok(Number(m[1]) < 60);
    const num = (x: string) => Number(x.replaceAll(",", ""));
    const [point, low, high] = [num(m[2]!), num(m[3]!), num(m[4]!)];
    assert.ok(low <= point && point <= high && low > 3000, m[0]);
    assert.ok(
      warned.some((w) => w.startsWith('question "category" certifies')),
      warned.join("\n"),
    );
  },
});

Deno.test("estimateGrowth() asks for more when the calibration answers come in clusters", () => {
  const curve = [
    point(400, 600, (r) => r < 300 ? every(15)(r) : every(2)(r)),
    point(800, 600, (r) => r < 300 ? every(25)(r) : every(2)(r)),
    point(1600, 600, (r) => r < 300 ? every(40)(r) : every(2)(r)),
  ];
  const alone = estimateGrowth(curve, { alpha: 0.05, delta: 0.05 });
  const paired = estimateGrowth(curve, {
    alpha: 0.05,
    delta: 0.05,
    units: Int32Array.from({ length: 600 }, (_, i) => i >> 1),
  });
  assert.ok(alone.growth !== null, "independent answers pass in reach");
  assert.ok(
    paired.growth === null || paired.growth > alone.growth!,
    `${paired.growth} vs ${alone.growth}`,
  );
});

/** The learning curve's "more traces" range in an advice, as numbers (Infinity for "over"). */
function moreRange(advice: string): { low: number; high: number } | null {
  const m = /about [\d,]+ more \(([\d,]+)(?:-| to )(over )?([\d,]+)\)/.exec(
    advice,
  );
  if (m !== null) {
    return {
      low: Number(m[1]!.replaceAll(",", "")),
      high: m[2] === undefined ? Number(m[3]!.replaceAll(",", "")) : Infinity,
    };
  }
  const over = /\(over ([\d,]+) more\)/.exec(advice);
  return over === null
    ? null
    : { low: Number(over[1]!.replaceAll(",", "")), high: Infinity };
}

/**
 * Trains nested subsets (the first `size` traces of `traces`) and checks
 * that a larger one never asks for more traces than a smaller one did,
 * beyond the stated ranges: the low end of the larger set's "more" is at
 * most the high end of the smaller set's. Returns the advice per size.
 */
function nestedAdvice(
  traces: TraceSet,
  sizes: readonly number[],
  options: TrainOptions,
): Map<number, string | null> {
  const advice = new Map<number, string | null>();
  for (const size of sizes) {
    const r = train(smallSubsetOf(traces, size), options);
    const q = r.report.questions[0]!;
    advice.set(size, q.calibration.advice);
    console.log(
      `${size} traces: ${q.calibration.status}${
        q.calibration.advice === null
          ? ""
          : `: ${adviceInBrief(q.calibration.advice)}`
      }`,
    );
  }
  const ranges = sizes.map((s) => {
    const a = advice.get(s);
    return a === null || a === undefined ? null : moreRange(a);
  });
  for (let i = 0; i < sizes.length; i++) {
    for (let j = i + 1; j < sizes.length; j++) {
      const small = ranges[i];
      const large = ranges[j];
      if (small === null || small === undefined) continue;
      if (large === null || large === undefined) continue;
      assert.ok(
        large.low <= small.high,
        `${sizes[j]} traces ask for at least ${large.low} more, ${
          sizes[i]
        } asked for at most ${small.high}`,
      );
    }
  }
  return advice;
}

/** The first `size` traces of `traces` (a nested subset of any larger one). */
function smallSubsetOf(traces: TraceSet, size: number): TraceSet {
  return {
    texts: traces.texts.slice(0, size),
    questions: traces.questions.map((q) => ({
      ...q,
      labels: q.labels.slice(0, size),
    })),
    times: null,
    groups: null,
    groupNames: [],
  };
}

Deno.test("train's advice from the learning curve is consistent across nested subsets of constructed traces, and the log it asks for passes", async (t) => {
  const traces = parseJsonlTraces(
    "curve.jsonl",
    curveTraces({ count: 3600, seed: 3, options: 60, words: 40, noise: 0.02 }),
  );
  const options = smallTrainOptions({ workers: 1 });
  const advice = nestedAdvice(traces, [600, 900, 1200], options);
  await t.step("the advice names a range of traces, not cleaner labels", () => {
    for (const [size, a] of advice) {
      assert.ok(a !== null, `${size} traces should be uncalibrated`);
      assert.ok(moreRange(a) !== null, a);
      assert.doesNotMatch(a, /would not help/);
    }
  });
  await t.step("the log the advice asks for calibrates", () => {
    const high = moreRange(advice.get(1200)!)!.high;
    assert.ok(Number.isFinite(high) && 1200 + high <= 3600, `${high}`);
    const r = train(smallSubsetOf(traces, 1200 + high), options);
    assert.equal(r.report.questions[0]!.calibration.status, "calibrated");
  });
});

Deno.test("train's advice says cleaner labels only when the labels are noisy", () => {
  // The same kind of question, every eighth answer a random option: even
  // the most confident answers disagree about 12% of the time at any size.
  const noisy = parseJsonlTraces(
    "noisy.jsonl",
    curveTraces({ count: 2400, seed: 4, options: 20, words: 10, noise: 0.13 }),
  );
  const r = train(noisy, smallTrainOptions({ workers: 1 }));
  const advice = r.report.questions[0]!.calibration.advice!;
  assert.match(
    advice,
    /at least alpha \(0\.05\) at every size and not falling: more traces of the same kind would not help; cleaner labels would/,
  );
  assert.equal(
    adviceInBrief(advice)?.split(", or ")[0],
    "cleaner labels (more of the same traces would not help)",
  );
});

const BANKING =
  new URL("../../shared/data/banking77/train.csv", import.meta.url)
    .pathname;
const hasBanking = (() => {
  try {
    Deno.statSync(BANKING);
    return true;
  } catch {
    return false;
  }
})();
if (!hasBanking) {
  console.log(`train_advice_test: BANKING77 test skipped, no ${BANKING}`);
}

Deno.test({
  name: "train's advice is consistent across nested subsets of BANKING77",
  ignore: !hasBanking,
  fn: async () => {
    const all = await readTraces([BANKING]);
    // One random order; the subsets are its first 500, 1,000, 1,500 and 3,000 traces.
    const order = shuffled(rng(5), all.texts.map((_, i) => i));
    const inOrder: TraceSet = {
      texts: order.map((i) => all.texts[i]!),
      questions: all.questions.map((q) => ({
        ...q,
        labels: Int32Array.from(order, (i) => q.labels[i]!),
      })),
      times: null,
      groups: null,
      groupNames: [],
    };
    const advice = nestedAdvice(
      inOrder,
      [500, 1000, 1500, 3000],
      { ...DEFAULT_TRAIN_OPTIONS, workers: 1 },
    );
    for (const [size, a] of advice) {
      if (a !== null) {
        assert.doesNotMatch(a, /would not help/, `${size}: ${a}`);
      }
    }
  },
});

Deno.test("train's learning-curve advice is the same for any number of workers", () => {
  const traces = parseJsonlTraces(
    "curve.jsonl",
    curveTraces({ count: 700, seed: 5, options: 60, words: 40, noise: 0.02 }),
  );
  const advice = [1, 2].map((workers) =>
    train(traces, smallTrainOptions({ workers })).report.questions[0]!
      .calibration.advice
  );
  assert.match(advice[0]!, /learning curve/);
  assert.equal(advice[1], advice[0]);
});
