/**
 * How well `train`'s advice for an uncalibrated question predicts the log a
 * pass needs. Per seed, one random order of BANKING77's `train.csv`; its
 * first 500, 1,000, ... traces (nested subsets) are trained in turn, up to
 * the first size that calibrates (the "truth", to the nearest step). Each
 * uncalibrated size's advice gives a range of traces in all; the script
 * prints them side by side with the truth and counts how often the truth
 * falls inside the range, below it (the advice asked for too many) or above
 * it (too few).
 *
 * Usage: deno task bench:advice [--seeds N] [--step N] [--max N]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { exitWithoutData, readBanking77Train } from "./bench_data.ts";
import type { TraceSet } from "../src/traces/types.ts";
import { train } from "../src/train/trainer.ts";
import { DEFAULT_TRAIN_OPTIONS } from "../src/train/options.ts";
import { shuffle } from "../src/train/split.ts";
import { seededRandom } from "../src/engine/random.ts";
import { tracesAt } from "./small_subsets.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seeds: { type: "string", default: "3" },
    step: { type: "string", default: "500" },
    max: { type: "string", default: "6000" },
  },
});
const seeds = Number(values.seeds);
const step = Number(values.step);
const max = Number(values.max);
await exitWithoutData();
const all = await readBanking77Train();

/** The first `n` traces of `order` applied to `all`. */
function firstOf(order: number[], n: number): TraceSet {
  return tracesAt(all, order.slice(0, n));
}

/** The advice's range of traces in all, or null. */
function rangeOf(advice: string): { low: number; high: number } | null {
  const m =
    /in all \(80% range ((?:over )?[\d,]+)(?:-| to )((?:over )?[\d,]+)\)/
      .exec(advice);
  if (m === null) return null;
  const n = (s: string) =>
    s.startsWith("over ") ? Infinity : Number(s.replaceAll(",", ""));
  return { low: n(m[1]!), high: n(m[2]!) };
}

console.log(
  `== Advice against the truth: BANKING77 nested subsets, step ${step}, seeds 1-${seeds}`,
);
let inside = 0;
let tooMany = 0;
let tooFew = 0;
let curveSeconds = 0;
let plainSeconds = 0;
for (let seed = 1; seed <= seeds; seed++) {
  const order = shuffle(all.texts.map((_, i) => i), seededRandom(seed * 31));
  const asked: { size: number; low: number; high: number }[] = [];
  let truth: number | null = null;
  for (let size = step; size <= max; size += step) {
    const set = firstOf(order, size);
    let started = performance.now();
    let r;
    try {
      r = train(set, { ...DEFAULT_TRAIN_OPTIONS, seed, workers: 1 });
    } catch {
      continue; // refused: too few answers per option
    }
    const q = r.report.questions[0]!;
    if (q.calibration.status === "calibrated") {
      truth = size;
      break;
    }
    curveSeconds += (performance.now() - started) / 1000;
    started = performance.now();
    train(set, {
      ...DEFAULT_TRAIN_OPTIONS,
      seed,
      workers: 1,
      learningCurve: false,
    });
    plainSeconds += (performance.now() - started) / 1000;
    const range = rangeOf(q.calibration.advice ?? "");
    if (range !== null) asked.push({ size, ...range });
  }
  const fmt = (n: number) =>
    Number.isFinite(n) ? n.toLocaleString("en-US") : "over";
  console.log(
    `seed ${seed}: first calibrated at ${
      truth === null ? `more than ${max}` : truth
    } traces; advice (traces in all): ${
      asked.map((a) => `${a.size}: ${fmt(a.low)}-${fmt(a.high)}`).join(", ")
    }`,
  );
  if (truth === null) continue;
  for (const a of asked) {
    // The truth is known to the step: between truth - step and truth.
    if (a.high < truth - step) tooFew++;
    else if (a.low > truth) tooMany++;
    else inside++;
  }
}
console.log(
  `truth inside the range ${inside} times, the range below it (too few asked) ${tooFew}, above it (too many asked) ${tooMany}`,
);
console.log(
  `uncalibrated runs: ${curveSeconds.toFixed(1)} s with the learning curve, ${
    plainSeconds.toFixed(1)
  } s without (${(curveSeconds / plainSeconds).toFixed(2)}x)`,
);
