import assert from "node:assert/strict";
import { encodeBundle } from "../src/bundle/codec.ts";
import { train } from "../src/train/trainer.ts";
import { trainedContents } from "../src/train/contents.ts";
import { rng, smallTrainOptions, syntheticTraceSet } from "./_fixtures.ts";
import {
  NEAREST_MAX,
  nearestSample,
  NOVELTY_P,
} from "../src/train/semantic.ts";
import { semanticSample } from "../src/train/semantic_sample.ts";

const traces = syntheticTraceSet({ count: 2000, seed: 9, noise: 0.02 });

/** Embeddings that carry each trace's first answer, with noise: a useful second tier. */
function informative(dim = 32): Float32Array[] {
  const random = rng(4);
  const q = traces.questions[0]!;
  return traces.texts.map((_, i) => {
    const e = Float32Array.from({ length: dim }, () => random() - 0.5);
    const label = q.labels[i]!;
    if (label >= 0) e[label % dim]! += 1;
    return e;
  });
}

Deno.test("train() with --semantic off, or without embeddings, gives the same table and bundle as before", async () => {
  const plain = train(traces, smallTrainOptions());
  const off = train(
    traces,
    smallTrainOptions({ semantic: "off" }),
    informative(),
  );
  assert.ok(off.table.questions.every((q) => q.semantic === undefined));
  assert.ok(off.report.questions.every((q) => q.semantic === undefined));
  const a = await encodeBundle(trainedContents(plain));
  const b = await encodeBundle(trainedContents(off));
  for (const [name, bytes] of a) {
    assert.deepEqual(b.get(name), bytes, name);
  }
});

Deno.test("train() with --semantic on adds a second tier certified with the table as one rule", () => {
  const plain = train(traces, smallTrainOptions());
  const r = train(traces, smallTrainOptions({ semantic: "on" }), informative());
  const q = r.table.questions[0]!;
  const p = plain.table.questions[0]!;
  assert.ok(q.semantic !== undefined);
  // The table part and its own calibration are unchanged.
  assert.deepEqual(q.calibration, p.calibration);
  assert.deepEqual(Array.from(q.weights), Array.from(p.weights));
  const s = r.report.questions[0]!.semantic!;
  assert.equal(s.used, true);
  assert.equal(s.calibration!.threshold, q.semantic.calibration.threshold);
  assert.equal(
    q.semantic.novelty.scores.length,
    r.report.questions[0]!.answers.calibration,
  );
  assert.throws(
    () =>
      train(
        traces,
        smallTrainOptions({ semantic: "on" }),
        informative().slice(1),
      ),
    /one embedding per trace \(2000\): got 1999/,
  );
});

Deno.test("train() with every guard test stores the fit texts and the calibration spreads, and withholds at most the guard's share of calibration", () => {
  const r = train(
    traces,
    smallTrainOptions({
      semantic: "on",
      semanticGuard: { mahalanobis: true, nearest: true, spread: true },
    }),
    informative(),
  );
  const q = r.table.questions[0]!;
  const report = r.report.questions[0]!;
  const n = report.answers.calibration;
  const g = q.semantic!.novelty;
  assert.equal(g.p, NOVELTY_P);
  assert.equal(g.scores.length, n);
  assert.equal(g.nearest!.scores.length, n);
  assert.equal(g.spreads!.length, n);
  assert.equal(
    g.nearest!.scales.length,
    report.answers.train,
  );
  // Three tests at p / 3 each, leave one out: at most p of calibration together.
  assert.ok(report.semantic!.calibration!.novelty_withheld <= NOVELTY_P * n);
  assert.ok(report.semantic!.calibration!.novelty_withheld > 0);
  // Without the option, the guard is the default's: no stored texts.
  const plain = train(
    traces,
    smallTrainOptions({ semantic: "on" }),
    informative(),
  );
  assert.equal(plain.table.questions[0]!.semantic!.novelty.nearest, undefined);
});

Deno.test("nearestSample() keeps every index up to NEAREST_MAX, else a seeded sample of that many in order", () => {
  const few = [3, 1, 2];
  assert.deepEqual(nearestSample(few, 1), few);
  const many = Array.from({ length: NEAREST_MAX + 500 }, (_, i) => i);
  const a = nearestSample(many, 1);
  assert.equal(a.length, NEAREST_MAX);
  assert.deepEqual(a, [...a].sort((x, y) => x - y));
  assert.deepEqual(nearestSample(many, 1), a);
  assert.notDeepEqual(nearestSample(many, 2), a);
});

Deno.test("semanticSample() keeps every trace up to the most, else a seeded uniform sample of that many", () => {
  assert.deepEqual(semanticSample(5, 10, 1), [0, 1, 2, 3, 4]);
  const n = 100_000;
  const max = 5000;
  const a = semanticSample(n, max, 7);
  assert.equal(a.length, max);
  assert.equal(new Set(a).size, max);
  assert.ok(a.every((x, i) => i === 0 || x > a[i - 1]!));
  assert.ok(a[0]! >= 0 && a[max - 1]! < n);
  assert.deepEqual(semanticSample(n, max, 7), a);
  assert.notDeepEqual(semanticSample(n, max, 8), a);
  // Uniform: each tenth of the traces holds about a tenth of the sample
  // (binomial, sd about 21: within 100 is beyond 4.5 sd).
  for (let d = 0; d < 10; d++) {
    const inside = a.filter((x) => Math.floor((10 * x) / n) === d).length;
    assert.ok(Math.abs(inside - max / 10) < 100, `tenth ${d}: ${inside}`);
  }
});

Deno.test("train() with embeddings for a sample fits, certifies and measures the second tier on the sample; the table on all", () => {
  const full = informative();
  const picked = new Set(semanticSample(traces.texts.length, 1200, 3));
  const sparse = full.map((e, i) => picked.has(i) ? e : undefined);
  const lines: string[] = [];
  const r = train(
    traces,
    smallTrainOptions({ semantic: "on", progress: (l) => lines.push(l) }),
    sparse,
  );
  const plain = train(traces, smallTrainOptions());
  const q = r.table.questions[0]!;
  assert.ok(q.semantic !== undefined);
  // The table part is trained and calibrated on every trace.
  assert.deepEqual(
    Array.from(q.weights),
    Array.from(plain.table.questions[0]!.weights),
  );
  assert.deepEqual(q.calibration, plain.table.questions[0]!.calibration);
  const report = r.report.questions[0]!;
  const s = report.semantic!;
  assert.ok(s.sample !== undefined);
  assert.ok(s.sample.used < s.sample.of);
  assert.ok(Math.abs(s.sample.used - 1200 * 0.95) < 60, `${s.sample.used}`);
  // Calibrated on the sampled calibration answers only: the guard's
  // reference holds one score per such answer.
  const calibrationSampled = q.semantic.novelty.scores.length;
  assert.ok(calibrationSampled < report.answers.calibration);
  assert.ok(
    Math.abs(calibrationSampled - report.answers.calibration * 0.6) <
      0.15 * report.answers.calibration,
    `${calibrationSampled} of ${report.answers.calibration}`,
  );
  assert.ok(
    lines.some((l) => /second tier on a sample of \d+ of \d+ traces/.test(l)),
  );
  // The same sample gives the same bundle.
  const again = train(traces, smallTrainOptions({ semantic: "on" }), sparse);
  assert.equal(
    again.table.questions[0]!.semantic!.calibration.threshold,
    q.semantic.calibration.threshold,
  );
});
