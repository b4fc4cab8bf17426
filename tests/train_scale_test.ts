/**
 * Training at scale: the compact corpus, candidate options, early stopping,
 * workers (same bytes for any number), progress lines and the learning-curve
 * chart.
 */

import assert from "node:assert/strict";
import {
  DEFAULT_FEATURIZER,
  textWords,
  wordBucketsOf,
} from "../src/engine/features.ts";
import type { Table } from "../src/engine/table.ts";
import {
  buildCorpus,
  shared,
  tableRows,
  trainingLayout,
} from "../src/train/corpus.ts";
import { fitQuestions } from "../src/train/fit.ts";
import type { FitJob } from "../src/train/fit_job.ts";
import { startRunner } from "../src/train/pool.ts";
import { logitsOf, trainSoftmax } from "../src/train/softmax_sgd.ts";
import {
  DEFAULT_KIND_SCALES,
  storedWeights,
} from "../src/train/kind_scales.ts";
import { train } from "../src/train/trainer.ts";
import { parseJsonlTraces, type TraceSet } from "../src/traces/mod.ts";
import { learningCurveSvg } from "../scripts/learning_curve_svg.ts";
import {
  bundleFiles,
  pick,
  randInt,
  rng,
  smallTrainOptions,
  syntheticTraceSet,
  throwsWith,
} from "./_fixtures.ts";
import { scoreText } from "../src/engine/score.ts";

const settings = { ...DEFAULT_FEATURIZER, buckets_log2: 18 };

/** Traces of a choice among `options` topics, each with its own words. */
function manyOptionTraces(
  count: number,
  options: number,
  seed: number,
): TraceSet {
  const random = rng(seed);
  const fillers = ["please", "my", "the", "help", "with", "is", "now", "why"];
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const topic = randInt(random, options);
    const words = [`w${topic}a`, `w${topic}b`, `w${topic}c`, `w${topic}d`]
      .filter(() => random() < 0.6);
    // A word of a neighbouring topic now and then: confusable options.
    if (random() < 0.4) words.push(`w${(topic + 1) % options}a`);
    for (let j = 0; j < 3; j++) words.push(pick(random, fillers));
    const label = random() < 0.03 ? randInt(random, options) : topic;
    lines.push(
      JSON.stringify({
        text: words.join(" "),
        answers: { topic: `t${label}` },
      }),
    );
  }
  return parseJsonlTraces("many.jsonl", lines.join("\n"));
}

Deno.test("buildCorpus featurises each distinct text once, with the engine's buckets", () => {
  const texts = ["My card is lost", "my card is lost", "My card is lost", ""];
  const c = buildCorpus(texts, settings);
  assert.deepEqual(c.texts, 3);
  assert.deepEqual(Array.from(c.textOf), [0, 1, 0, 2]);
  for (let t = 0; t < 2; t++) {
    const f = textWords(texts[t]!, settings);
    const words = Array.from(
      c.words.subarray(c.wordStart[t], c.wordStart[t + 1]),
    );
    assert.deepEqual(words.length, f.words.length);
    words.forEach((w, x) => {
      assert.deepEqual(
        Array.from(c.buckets.subarray(c.bucketStart[w], c.bucketStart[w + 1])),
        [...wordBucketsOf(f.words[x]!, settings)],
      );
    });
    assert.deepEqual(
      Array.from(c.bigrams.subarray(c.bigramStart[t], c.bigramStart[t + 1])),
      [...f.bigramBuckets],
    );
  }
  // Words are shared: "card" has one id in both texts.
  assert.deepEqual(c.words[1], c.words[c.wordStart[1]! + 1]);
  assert.deepEqual(c.wordStart[3]! - c.wordStart[2]!, 0);
});

Deno.test("the training layout scores a text as the engine scores it with the stored weights", () => {
  const texts = [
    "where is my new card",
    "card not working abroad",
    "top up failed twice",
  ];
  const c = buildCorpus(texts, settings);
  const rows = tableRows(c, () => true, settings);
  const layout = trainingLayout(c, rows.rowOf, settings.ngram_average_min);
  const k = 3;
  const random = rng(3);
  const weights = Float32Array.from(
    { length: rows.rowBuckets.length * k },
    () => random() - 0.5,
  );
  const bias = Float32Array.from([0.1, -0.2, 0.3]);
  const table: Table = {
    featurizer: settings,
    settings: {} as Table["settings"],
    rowOf: rows.rowOf,
    rowCount: rows.rowBuckets.length,
    questions: [],
    byName: new Map(),
    info: {},
  };
  const stored = {
    options: ["a", "b", "c"],
    weights: storedWeights(weights, k, rows.rowKinds, DEFAULT_KIND_SCALES),
    bias,
  };
  for (let i = 0; i < texts.length; i++) {
    const ours = logitsOf({ weights, bias }, k, layout, i, new Float64Array(k));
    const f = textWords(texts[i]!, settings);
    const engine = scoreText(table, stored, {
      ...f,
      wordBuckets: f.words.map((w) => wordBucketsOf(w, settings)),
      empty: f.words.length === 0,
    });
    for (let j = 0; j < k; j++) {
      assert(
        Math.abs(ours[j]! - engine[j]!) < 1e-4,
        `text ${i} option ${j}: ${ours[j]} vs ${engine[j]}`,
      );
    }
  }
});

Deno.test("bundles are the same bytes with 1 and 2 workers (candidate options in use)", async () => {
  const traces = manyOptionTraces(2400, 24, 5);
  const options = smallTrainOptions({ maxEpochs: 4 });
  const one = await bundleFiles(train(traces, { ...options, workers: 1 }));
  const two = await bundleFiles(train(traces, { ...options, workers: 2 }));
  assert.deepEqual([...one.keys()], [...two.keys()]);
  for (const [name, bytes] of one) assert.deepEqual(two.get(name), bytes, name);
});

Deno.test("candidate options: steps skip unlikely options, and accuracy holds", () => {
  const traces = manyOptionTraces(3000, 40, 8);
  const q = traces.questions[0]!;
  const c = buildCorpus(traces.texts, settings);
  const rows = tableRows(c, (i) => i < 2400, settings);
  const layout = trainingLayout(c, rows.rowOf, settings.ngram_average_min);
  const train = Array.from({ length: 2400 }, (_, i) => i);
  const fit = (candidates: number) =>
    trainSoftmax(layout, q.labels, train, 40, rows.rowBuckets.length, {
      epochs: 6,
      l2: 1e-4,
      learningRate: 0.15,
      seed: 1,
      wordDropout: 0.2,
      minGradient: 0.02,
      candidates,
    });
  const accuracy = (m: ReturnType<typeof fit>) => {
    let right = 0;
    const out = new Float64Array(40);
    for (let i = 2400; i < 3000; i++) {
      logitsOf(m, 40, layout, i, out);
      let best = 0;
      for (let j = 1; j < 40; j++) if (out[j]! > out[best]!) best = j;
      if (best === q.labels[i]) right++;
    }
    return right / 600;
  };
  const all = fit(0);
  const some = fit(8);
  assert.notDeepEqual(all.weights, some.weights);
  // Far fewer weights touched: options outside a text's candidates keep 0.
  const touched = (m: ReturnType<typeof fit>) =>
    m.weights.reduce((n, w) => n + (w !== 0 ? 1 : 0), 0);
  assert(touched(some) < touched(all), `${touched(some)} vs ${touched(all)}`);
  assert(
    accuracy(some) >= accuracy(all) - 0.02,
    `candidates ${accuracy(some)} vs all options ${accuracy(all)}`,
  );
});

Deno.test("validation fits stop once log-loss stops improving", () => {
  const traces = syntheticTraceSet({ count: 1500, seed: 4, noise: 0.35 });
  const q = traces.questions.find((x) => x.name === "topic")!;
  const c = buildCorpus(traces.texts, settings);
  const rows = tableRows(c, () => true, settings);
  const layout = trainingLayout(c, rows.rowOf, settings.ngram_average_min);
  const indices = Array.from({ length: 1500 }, (_, i) => i);
  const fitOnce = (patience: number) =>
    fitQuestions(
      { layout, rows: rows.rowBuckets.length, rowKinds: rows.rowKinds },
      [{
        name: "topic",
        labels: q.labels,
        fit: indices.slice(0, 1200),
        validation: indices.slice(1200),
        options: q.options.length,
      }],
      { ...smallTrainOptions(), maxEpochs: 40, patience, ensemble: 1 },
    )[0]!;
  const early = fitOnce(1);
  assert(early.epochs < 40, `stopped after ${early.epochs} epochs`);
  assert(early.epochs >= 1);
});

Deno.test("large train splits keep the validation fits' weights, and epochs follow the visit budget", () => {
  const traces = syntheticTraceSet({ count: 1500, seed: 6 });
  const q = traces.questions.find((x) => x.name === "topic")!;
  const c = buildCorpus(traces.texts, settings);
  const rows = tableRows(c, () => true, settings);
  const layout = trainingLayout(c, rows.rowOf, settings.ngram_average_min);
  const indices = Array.from({ length: 1500 }, (_, i) => i);
  const run = (refitBelow: number) => {
    const lines: string[] = [];
    const model = fitQuestions(
      { layout, rows: rows.rowBuckets.length, rowKinds: rows.rowKinds },
      [{
        name: "topic",
        labels: q.labels,
        fit: indices.slice(0, 1200),
        validation: indices.slice(1200),
        options: q.options.length,
      }],
      // 2,500 visits of 1,200 examples: at most 3 epochs.
      { ...smallTrainOptions(), maxEpochs: 10, visitBudget: 2500, refitBelow },
      (line) => lines.push(line),
    )[0]!;
    return { model, lines };
  };
  const kept = run(0);
  const refitted = run(1_000_000);
  assert(kept.model.epochs <= 3, `epochs ${kept.model.epochs}`);
  assert(
    !kept.lines.some((l) => l.includes("final fit")),
    kept.lines.join("\n"),
  );
  assert(refitted.lines.some((l) => l.includes("final fit")));
  assert.notDeepEqual(kept.model.weights, refitted.model.weights);
});

Deno.test("training progress names the epoch, examples per second and time left", () => {
  const lines: string[] = [];
  train(syntheticTraceSet({ count: 1200, seed: 2 }), {
    ...smallTrainOptions({ maxEpochs: 3 }),
    progress: (line) => lines.push(line),
  });
  const fitting = lines.filter((l) => l.startsWith("fitting:"));
  assert(fitting.length >= 6, lines.join("\n"));
  for (const line of fitting) {
    assert(/ended after epoch \d+/.test(line), line);
    assert(/[\d,]+ examples\/s, at most \S+ left$/.test(line), line);
  }
});

Deno.test("a failing job on a worker stops the pool with its message", () => {
  const c = buildCorpus(["a b"], settings);
  const rows = tableRows(c, () => true, settings);
  const layout = trainingLayout(c, rows.rowOf, settings.ngram_average_min);
  const runner = startRunner({ layout, rows: 1, questions: [] }, 2);
  const job: FitJob = {
    kind: "final",
    question: 3,
    epochs: 1,
    patience: 0,
    sgd: {
      epochs: 1,
      l2: 0,
      learningRate: 0.1,
      seed: 1,
      wordDropout: 0,
      minGradient: 0,
      candidates: 0,
    },
    done: shared(Int32Array, 1),
    progress: shared(Float64Array, 2),
  };
  runner.submit(job, () => {});
  throwsWith(() => runner.drain(), Error, /worker failed: No question 3/);
});

Deno.test("learningCurveSvg draws one dot per point, in order of traces", () => {
  const svg = learningCurveSvg("curve & test", [
    { traces: 5000, certified: 0.8, disagreement: 0.04 },
    { traces: 1000, certified: 0.3, disagreement: 0.02 },
  ]);
  assert(svg.startsWith("<svg"));
  assert(svg.includes("curve &amp; test"));
  assert.deepEqual(svg.match(/<circle /g)?.length, 2);
  assert(svg.indexOf("1000 traces") < svg.indexOf("5000 traces"));
  throwsWith(() => learningCurveSvg("x", []), RangeError, /at least one point/);
});
