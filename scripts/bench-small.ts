/**
 * Small trace sets: what a new user starts with. Trains on random subsets of
 * 300, 800, 3,000 and 10,000 traces (seeds 1-10) of BANKING77 (a 77-option
 * choice, judged on `test.csv`) and of NLU++ banking's `card` question (a
 * yes/no question, folds 0-15 sampled, judged on folds 16-19; NLU++ banking
 * holds about 1,650 texts in those folds, so its largest size is all of
 * them), and prints per size how many seeds left the question uncalibrated,
 * and the certified share and disagreement on the held-out texts; for the
 * uncalibrated runs, the training time with the learning-curve advice
 * against the same training without it (side by side, as a ratio).
 *
 * With `--semantic`, it then trains BANKING77's 3,000-trace subsets of
 * seeds 1-3 with the second tier on (embeddings through `--embed-cache
 * FILE`) and prints the table alone beside both tiers on `test.csv`.
 *
 * Usage: deno task bench:small [--seeds N] [--semantic] [--embed-cache FILE]
 *
 * @module
 */

import { parseArgs } from "node:util";
import {
  DATA,
  EMBED_CACHE_OPTION,
  exitWithoutData,
  readBanking77Train,
} from "./bench_data.ts";
import { evaluate } from "../src/eval/evaluate.ts";
import { readTraces } from "../src/traces/mod.ts";
import type { TraceSet } from "../src/traces/types.ts";
import { percent as pct } from "../src/format.ts";
import { train } from "../src/train/trainer.ts";
import { DEFAULT_TRAIN_OPTIONS } from "../src/train/options.ts";
import { smallSubset } from "./small_subsets.ts";
import { embedTexts, twoTierFigures } from "./semantic_eval.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seeds: { type: "string", default: "10" },
    semantic: { type: "boolean", default: false },
    "embed-cache": EMBED_CACHE_OPTION,
  },
});
const seeds = Number(values.seeds);
await exitWithoutData();

/** NLU++ banking folds as one yes/no question. */
async function nlu(folds: number[], intent: string): Promise<TraceSet> {
  const texts: string[] = [];
  const labels: number[] = [];
  for (const f of folds) {
    for (
      const r of JSON.parse(
        await Deno.readTextFile(`${DATA}nlupp/banking/fold${f}.json`),
      )
    ) {
      texts.push(r.text);
      labels.push((r.intents ?? []).includes(intent) ? 0 : 1);
    }
  }
  return {
    texts,
    questions: [{
      name: intent,
      kind: "yes_no",
      options: ["true", "false"],
      labels: Int32Array.from(labels),
    }],
    times: null,
    groups: null,
    groupNames: [],
  };
}

const sets = [
  {
    name: "BANKING77 (77 options)",
    train: await readBanking77Train(),
    test: await readTraces([`${DATA}banking77/test.csv`]),
  },
  {
    name: "NLU++ banking 'card' (yes/no)",
    train: await nlu([...Array(16).keys()], "card"),
    test: await nlu([16, 17, 18, 19], "card"),
  },
];

console.log(
  `== Small trace sets: seeds 1-${seeds} per size, alpha 0.05, delta 0.05`,
);
for (const set of sets) {
  console.log(set.name);
  for (const size of [300, 800, 3000, 10000]) {
    const n = Math.min(size, set.train.texts.length);
    const coverages: number[] = [];
    const rates: number[] = [];
    let uncalibrated = 0;
    let refused = 0;
    let withCurve = 0;
    let withoutCurve = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      let r;
      const subset = smallSubset(set.train, n, seed);
      const started = performance.now();
      try {
        r = train(subset, { ...DEFAULT_TRAIN_OPTIONS, seed });
      } catch {
        refused++;
        continue;
      }
      const took = performance.now() - started;
      const q = r.report.questions[0]!;
      if (q.calibration.status === "uncalibrated") {
        uncalibrated++;
        withCurve += took;
        const again = performance.now();
        train(subset, { ...DEFAULT_TRAIN_OPTIONS, seed, learningCurve: false });
        withoutCurve += performance.now() - again;
      }
      const f = Object.values(evaluate(r.table, set.test, false).questions)[0]!;
      coverages.push(f.coverage ?? 0);
      if (f.disagreement !== null) rates.push(f.disagreement);
    }
    const mean = (xs: number[]) =>
      xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      `  ${String(n).padStart(6)} traces: ` +
        (refused === seeds
          ? `refused in every seed (too few answers per option)`
          : `uncalibrated in ${uncalibrated}/${
            seeds - refused
          } seeds; certified ${pct(mean(coverages))} on average (range ${
            pct(Math.min(...coverages))
          }-${pct(Math.max(...coverages))}), disagreement ${
            pct(mean(rates))
          } (worst ${rates.length === 0 ? "n/a" : pct(Math.max(...rates))})${
            uncalibrated === 0
              ? ""
              : `; uncalibrated runs trained in ${
                (withCurve / 1000 / uncalibrated).toFixed(1)
              } s with the learning curve, ${
                (withoutCurve / 1000 / uncalibrated).toFixed(1)
              } s without (${(withCurve / withoutCurve).toFixed(2)}x)`
          }`),
    );
    if (n < size) break;
  }
}

if (values.semantic) {
  const set = sets[0]!;
  const cache = values["embed-cache"];
  const testE = await embedTexts(set.test.texts, cache);
  console.log(
    `${set.name}, 3,000 traces, seeds 1-3: the table alone against both tiers (--semantic on)`,
  );
  const alone: number[] = [];
  const both: number[] = [];
  for (let seed = 1; seed <= 3; seed++) {
    const traces = smallSubset(set.train, 3000, seed);
    const r = train(
      traces,
      { ...DEFAULT_TRAIN_OPTIONS, seed, semantic: "on" },
      await embedTexts(traces.texts, cache),
    );
    const a = twoTierFigures(r.table, set.test, null);
    const b = twoTierFigures(r.table, set.test, testE);
    alone.push(a.certified);
    both.push(b.certified);
    console.log(
      `  seed ${seed}: table alone ${pct(a.certified)} certified at ${
        pct(a.disagreement)
      }; both tiers ${pct(b.certified)} at ${pct(b.disagreement)} (${
        pct(b.bySemantic)
      } by the second tier)`,
    );
  }
  const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
  console.log(
    `  mean: table alone ${pct(mean(alone))}, both tiers ${pct(mean(both))}`,
  );
}
