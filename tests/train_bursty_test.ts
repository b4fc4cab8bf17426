/**
 * Logs whose options arrive in bursts: a time split calibrates on the
 * newest traces, and an option only the newest traces hold would never be
 * learned. These tests build such logs (each option's traces fall in one
 * month of five, so the last month's options exist nowhere else) and check
 * that the starved options are fed from their oldest held-out traces, that
 * the temperature is judged only on options the fit part has, that thin
 * options are named, and that the table keeps its accuracy.
 */

import assert from "node:assert/strict";
import { assess } from "../src/engine/answer.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import {
  CALIBRATION,
  FIT,
  isTrain,
  splitTraces,
  starvedOptions,
  TEST,
} from "../src/train/split.ts";
import { DEFAULT_FEATURIZER } from "../src/engine/features.ts";
import { buildCorpus, tableRows, trainingLayout } from "../src/train/corpus.ts";
import { fitQuestions } from "../src/train/fit.ts";
import { train } from "../src/train/trainer.ts";
import { type TrainResult } from "../src/train/contents.ts";
import type { TraceSet } from "../src/traces/mod.ts";
import {
  FILLER_WORDS,
  pick,
  randInt,
  rng,
  shuffled,
  smallTrainOptions,
  stateOf,
} from "./_fixtures.ts";

const OPTIONS = 15;
const MONTH = 30 * 86_400;
/** Words of each option: four of its own and two it shares with the next option. */
const WORDS = Array.from({ length: OPTIONS }, (_, o) => [
  ...Array.from({ length: 4 }, (_, j) => `opt${o}word${j}`),
  `shared${o}a`,
  `shared${o}b`,
  `shared${(o + OPTIONS - 1) % OPTIONS}a`,
  `shared${(o + OPTIONS - 1) % OPTIONS}b`,
]);

/** A message of option `o`: one or two of its words among fillers. */
function message(random: () => number, o: number): string {
  const words = Array.from(
    { length: 1 + randInt(random, 2) },
    () => pick(random, WORDS[o]!),
  );
  for (let j = 2 + randInt(random, 4); j > 0; j--) {
    words.push(pick(random, FILLER_WORDS));
  }
  return shuffled(random, words).join(" ");
}

/**
 * `n` traces of one choice question over five months. `bursty`: option `o`
 * is asked only in month `o % 5` (so three options are asked only in the
 * newest month); otherwise every option throughout.
 */
function log(n: number, seed: number, bursty: boolean): TraceSet {
  const random = rng(seed);
  const texts: string[] = [];
  const labels: number[] = [];
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const o = randInt(random, OPTIONS);
    texts.push(message(random, o));
    // The reference model is wrong now and then, within the option's month.
    labels.push(random() < 0.02 ? (o + 5 * randInt(random, 3)) % OPTIONS : o);
    const month = bursty ? o % 5 : randInt(random, 5);
    times.push(1.7e9 + (month + random()) * MONTH);
  }
  return {
    texts,
    questions: [{
      name: "intent",
      kind: "choice",
      options: WORDS.map((_, o) => `option${o}`),
      labels: Int32Array.from(labels),
    }],
    times: Float64Array.from(times),
    groups: null,
    groupNames: [],
  };
}

/** Share of fresh messages (every option alike) the table answers as asked. */
function accuracy(r: TrainResult): number {
  const random = rng(99);
  let right = 0;
  const n = 1500;
  for (let i = 0; i < n; i++) {
    const o = randInt(random, OPTIONS);
    const a = assess(
      r.table,
      stateOf(r.table),
      prepareText(r.table, stateOf(r.table), message(random, o)),
      "intent",
      {},
      QUIET_GUARD,
    ).answer;
    if (a.kind === "choice" && a.choice === `option${o}`) right++;
  }
  return right / n;
}

const FEATURIZER = { ...DEFAULT_FEATURIZER, buckets_log2: 18 };

const SPLIT = {
  mode: "time" as const,
  calibration: 0.2,
  test: 0.05,
  validation: 0.15,
  seed: 1,
  similarity: 0.8,
};

Deno.test("starvedOptions() pins the oldest traces of an option only the newest traces hold, up to its fair share", () => {
  const traces = log(3000, 1, true);
  const first = splitTraces(traces, SPLIT);
  const q = traces.questions[0]!;
  const newest = [4, 9, 14]; // asked only in the last month
  for (const o of newest) {
    const trained = q.labels.filter((l, i) =>
      l === o && isTrain(first.parts[i]!)
    )
      .length;
    assert.equal(trained, 0, `option ${o} starts with no training answer`);
  }
  const { fed, pinned } = starvedOptions(first, [q], traces.times!, 0.75);
  assert.deepEqual(fed.map((f) => f.option).sort(), [
    "option14",
    "option4",
    "option9",
  ]);
  const split = splitTraces(traces, { ...SPLIT, pinned });
  // Calibration and test keep their sizes.
  for (const part of [CALIBRATION, TEST]) {
    assert.equal(split.traces[part], first.traces[part]);
    assert.equal(
      split.traces[part],
      split.parts.filter((p) => p === part).length,
    );
  }
  for (const f of fed) {
    const o = Number(f.option.slice("option".length));
    const mine = [...q.labels.keys()].filter((i) => q.labels[i] === o);
    assert.equal(f.traces, mine.length);
    assert.equal(f.pinned, Math.ceil(0.75 * mine.length), "its fair share");
    // Its oldest traces train; its newest stay held out, out of time.
    const trains = mine.filter((i) => split.parts[i] === FIT);
    const held = mine.filter((i) => !isTrain(split.parts[i]!));
    assert.equal(trains.length, f.pinned);
    assert.ok(held.length > 0);
    assert.ok(
      Math.max(...trains.map((i) => traces.times![i]!)) <=
        Math.min(...held.map((i) => traces.times![i]!)),
    );
  }
});

Deno.test("starvedOptions() pins nothing when the options are spread over the log", () => {
  const traces = log(3000, 2, false);
  const split = splitTraces(traces, SPLIT);
  const { fed, pinned } = starvedOptions(
    split,
    traces.questions,
    traces.times!,
    0.75,
  );
  assert.deepEqual(fed, []);
  assert.ok(!pinned.includes(1));
});

Deno.test("train() on a bursty time log learns every option, keeps its temperature and its accuracy", () => {
  const warnings: string[] = [];
  const bursty = train(
    log(3000, 3, true),
    smallTrainOptions({ warn: (w) => warnings.push(w) }),
  );
  const steady = train(log(3000, 3, false), smallTrainOptions());
  const fed = bursty.report.split.fed_options;
  // The newest month's options first; then those of the months their
  // pinned traces pushed into calibration.
  assert.deepEqual(fed.slice(0, 3).map((f) => f.option).sort(), [
    "option14",
    "option4",
    "option9",
  ]);
  assert.ok(
    warnings.some((w) =>
      new RegExp(
        `^time split: ${fed.length} options are held almost only by the newest traces`,
      ).test(w)
    ),
    warnings.join("\n"),
  );
  const t = bursty.table.questions[0]!.temperature;
  const steadyT = steady.table.questions[0]!.temperature;
  console.log(
    `bursty log: temperature ${t.toFixed(2)} (steady ${
      steadyT.toFixed(2)
    }), accuracy ${(100 * accuracy(bursty)).toFixed(1)}% (steady ${
      (100 * accuracy(steady)).toFixed(1)
    }%), certified ${
      bursty.report.questions[0]!.test.coverage
    }; ${fed.length} options fed`,
  );
  assert.ok(t < 2 * steadyT, `temperature ${t} against ${steadyT}`);
  assert.ok(accuracy(bursty) >= accuracy(steady) - 0.03);
  assert.equal(bursty.table.questions[0]!.calibration.status, "calibrated");
});

Deno.test("fitQuestions() judges the temperature only on validation answers of options the fit part has", () => {
  // Options 10-14 appear only in the validation part: unlearnable, their
  // answers would flatten every confidence if they judged the temperature.
  const traces = log(3000, 4, false);
  const q = traces.questions[0]!;
  const corpus = buildCorpus(traces.texts, FEATURIZER);
  const rows = tableRows(corpus, () => true, FEATURIZER);
  const layout = trainingLayout(
    corpus,
    rows.rowOf,
    FEATURIZER.ngram_average_min,
  );
  const all = [...q.labels.keys()];
  const validation = all.filter((i) => i % 5 === 0);
  const fitOnly = all.filter((i) => i % 5 !== 0);
  const fit = (skipNew: boolean) =>
    fitQuestions(
      { layout, rows: rows.rowBuckets.length, rowKinds: rows.rowKinds },
      [{
        name: "intent",
        labels: q.labels,
        fit: skipNew ? fitOnly.filter((i) => q.labels[i]! < 10) : fitOnly,
        validation,
        options: OPTIONS,
      }],
      { ...smallTrainOptions(), ensemble: 1 },
    )[0]!;
  const starved = fit(true);
  const whole = fit(false);
  console.log(
    `temperature with 5 options absent from fit: ${
      starved.temperature.toFixed(2)
    }, with every option: ${whole.temperature.toFixed(2)}`,
  );
  assert.ok(
    starved.temperature < 1.5 * whole.temperature,
    `${starved.temperature} against ${whole.temperature}`,
  );
  // Validation figures still cover every validation answer.
  assert.equal(starved.validation.confidences.length, validation.length);
});

Deno.test("train() names the options with fewer than 10 training answers", () => {
  const traces = log(3000, 5, false);
  // Keep only 8 answers of option 3: fewer than 10 can train.
  const q = traces.questions[0]!;
  let seen = 0;
  const keep = [...q.labels.keys()].filter((i) =>
    q.labels[i] !== 3 || seen++ < 8
  );
  const thin: TraceSet = {
    ...traces,
    texts: keep.map((i) => traces.texts[i]!),
    questions: [{
      ...q,
      labels: Int32Array.from(keep, (i) => q.labels[i]!),
    }],
    times: Float64Array.from(keep, (i) => traces.times![i]!),
  };
  const warnings: string[] = [];
  const r = train(
    thin,
    smallTrainOptions({ split: "random", warn: (w) => warnings.push(w) }),
  );
  const report = r.report.questions[0]!.thin_options;
  assert.deepEqual(report.map((t) => t.option), ["option3"]);
  assert.ok(report[0]!.answers < 10);
  assert.ok(
    warnings.some((w) =>
      /question "intent": 1 option has fewer than 10 training answers, so the table will seldom choose it: option3 \(\d\)/
        .test(w)
    ),
    warnings.join("\n"),
  );
});
