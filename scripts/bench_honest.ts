/**
 * The quality benchmark's part on honest calibration (run by
 * `bench-quality.ts`): certified share and disagreement with each split
 * mode and the leakage check, on the public data in `../shared/data`
 * (out-of-scope texts and written-apart traffic: `bench_scope.ts`).
 *
 * - BANKING77 (`train.csv` -> `test.csv`): random split with equal texts
 *   only, and with near-duplicate clusters (the default).
 * - NLU++ banking (folds 0-15 -> 16-19, 48 yes/no questions): the same two,
 *   plus the folds as groups and the fold order as time.
 * - Paraphrase families built from BANKING77: each train text with 0-3
 *   variants (a word replaced, dropped or added), `test.csv` as the fresh
 *   traffic; the case a random split gets wrong.
 *
 * @module
 */

import { evaluate } from "../src/eval/evaluate.ts";
import type { TraceSet } from "../src/traces/types.ts";
import { percent as pct } from "../src/format.ts";
import {
  intentsOf,
  nluYesNo,
  paraphraseFamilies,
  type PublicData,
  readPublicData,
} from "./proxies.ts";
import { train } from "../src/train/trainer.ts";
import {
  DEFAULT_TRAIN_OPTIONS,
  type TrainOptions,
} from "../src/train/options.ts";
import { type TrainResult } from "../src/train/contents.ts";

/** Where the data is and how much to run. */
export interface HonestBenchOptions {
  data: string;
  work: string;
  quick: boolean;
}

/** Trains quietly with `extra` options. */
function trainWith(
  traces: TraceSet,
  extra: Partial<TrainOptions>,
): TrainResult {
  return train(traces, { ...DEFAULT_TRAIN_OPTIONS, ...extra });
}

/** The mean leakage optimism and the questions warned about, over a report. */
function leakageSummary(r: TrainResult): string {
  const qs = r.report.questions;
  const warned = qs.filter((q) => q.leakage.warning !== null).length;
  const twins = qs.reduce((n, q) => n + q.leakage.with_twin.answers, 0);
  const all = qs.reduce(
    (n, q) => n + q.leakage.with_twin.answers + q.leakage.without_twin.answers,
    0,
  );
  const gaps = qs.map((q) => q.leakage.gap).filter((g) =>
    g !== null
  ) as number[];
  const meanGap = gaps.length === 0
    ? null
    : gaps.reduce((a, b) => a + b, 0) / gaps.length;
  return `leakage check: ${
    pct(twins / Math.max(1, all))
  } of calibration answers have a near-twin, ` +
    `accuracy gap ${
      meanGap === null ? "n/a" : `${(meanGap * 100).toFixed(1)} points`
    }` +
    (qs.length > 1
      ? ` (mean over questions), warning on ${warned}/${qs.length}`
      : warned > 0
      ? ", WARNING"
      : "");
}

/** Runs every part; prints as it goes. */
export async function honestBenchmark(o: HonestBenchOptions): Promise<void> {
  const d = await readPublicData(o.data);
  const { bankTrain, bankTest } = d;

  console.log("\n== Splits that follow where traces come from");
  console.log("BANKING77 (train.csv -> test.csv), seed 1:");
  for (
    const [label, extra] of [
      ["random, equal texts only", { split: "random", similarity: 1 }],
      ["random, clusters (default)", {}],
    ] as const
  ) {
    const r = trainWith(bankTrain, extra);
    const f = evaluate(r.table, bankTest, false).questions.category!;
    console.log(
      `  ${label.padEnd(28)} certified ${pct(f.coverage)} at ${
        pct(f.disagreement)
      } disagreement (95% CI up to ${pct(f.disagreement_upper)}); ${
        leakageSummary(r)
      }`,
    );
  }

  console.log("NLU++ banking (folds 0-15 -> 16-19), 48 yes/no questions:");
  const nlu = nluTraces(d);
  for (
    const [label, set, extra] of [
      ["random, equal texts only", nlu.train, {
        split: "random",
        similarity: 1,
      }],
      ["random, clusters (default)", nlu.train, {}],
      ["group (a fold is a group)", nlu.grouped, { split: "group" }],
      ["time (folds in order)", nlu.timed, { split: "time" }],
    ] as const
  ) {
    const r = trainWith(set, extra);
    const figures = Object.values(evaluate(r.table, nlu.test, false).questions);
    const coverages = figures.map((f) => f.coverage ?? 0).sort((a, b) => a - b);
    const cert = figures.reduce((n, f) => n + f.certified, 0);
    const wrong = figures.reduce((n, f) => n + f.disagreements, 0);
    console.log(
      `  ${label.padEnd(28)} median question certifies ${
        pct(coverages[coverages.length >> 1])
      }, pooled disagreement ${pct(wrong / Math.max(1, cert))}; ${
        leakageSummary(r)
      }`,
    );
  }

  if (!o.quick) {
    console.log(
      "Paraphrase families from BANKING77 (each train text with 0-3 edited variants; test.csv is fresh traffic):",
    );
    const families = paraphraseFamilies(bankTrain);
    for (
      const [label, extra] of [
        ["random, equal texts only", { split: "random", similarity: 1 }],
        ["random, clusters (default)", {}],
      ] as const
    ) {
      const r = trainWith(families, extra);
      const q = r.report.questions[0]!;
      const f = evaluate(r.table, bankTest, false).questions.category!;
      console.log(
        `  ${label.padEnd(28)} own test split says ${
          pct(q.test.disagreement)
        }; ` +
          `fresh traffic: certified ${pct(f.coverage)} at ${
            pct(f.disagreement)
          } disagreement; ${leakageSummary(r)}`,
      );
    }
  }
}

/** NLU++ banking as 48 yes/no questions (folds 0-15 to train); folds as groups and as times. */
function nluTraces(d: PublicData) {
  const intents = intentsOf(d, "banking", "general");
  const rows = d.nlu.banking;
  const set = (folds: (f: number) => boolean, hint?: "group" | "time") => {
    const chosen = rows.filter((r) => folds(r.fold));
    return {
      ...nluYesNo(chosen, intents),
      times: hint === "time"
        ? Float64Array.from(chosen, (r) => 1.7e9 + r.fold * 86_400)
        : null,
      groups: hint === "group" ? Int32Array.from(chosen, (r) => r.fold) : null,
      groupNames: hint === "group" ? [...Array(20).keys()].map(String) : [],
    } satisfies TraceSet;
  };
  return {
    train: set((f) => f < 16),
    grouped: set((f) => f < 16, "group"),
    timed: set((f) => f < 16, "time"),
    test: set((f) => f >= 16),
  };
}
