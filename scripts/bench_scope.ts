/**
 * The quality benchmark's part on the traffic a first bundle meets and its
 * traces do not show (run by `bench-quality.ts`), on the proxies of
 * `proxies.ts`:
 *
 * 1. Traffic written apart from the traces: certified share and
 *    disagreement on fresh texts, against what the split's own test said,
 *    with the out-of-scope rule off and at each level.
 * 2. Requests for none of the options: each candidate score of a
 *    single-text rule (the confidence, the spread the rule uses, the
 *    energy format 2 used, the largest logit, the nearest training trace
 *    by TF-IDF cosine, the share of known features), as the share of
 *    out-of-scope texts it keeps at a fixed in-scope cost, and what the
 *    certified in-scope answers then look like.
 * 3. The level of the rule: what each level costs and buys on every data
 *    set (BANKING77 seeds 1-3, NLU++ yes/no questions, held-out options,
 *    the rewritten log).
 * 4. Bursty time logs: accuracy, median top probability and certified share
 *    when options arrive in blocks.
 *
 * @module
 */

import { assess } from "../src/engine/answer.ts";
import { prepareText } from "../src/engine/prepare.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import {
  energyOf,
  SCOPE_SCORES,
  type ScopeScore,
  spreadOf,
} from "../src/engine/scope.ts";
import type { Table } from "../src/engine/table.ts";
import { TableState } from "../src/engine/state.ts";
import { disagrees } from "../src/engine/verdict.ts";
import { evaluate } from "../src/eval/evaluate.ts";
import type { TraceSet } from "../src/traces/mod.ts";
import { percent as pct } from "../src/format.ts";
import { textVectors } from "../src/train/similar.ts";
import { train } from "../src/train/trainer.ts";
import {
  DEFAULT_TRAIN_OPTIONS,
  type TrainOptions,
} from "../src/train/options.ts";
import { type TrainResult } from "../src/train/contents.ts";
import {
  type Arrival,
  drawOptions,
  intentsOf,
  keepOptions,
  nluHotels,
  nluWithoutOption,
  nluYesNo,
  type PublicData,
  readPublicData,
  rewritten,
  timedLog,
  topUpOptions,
} from "./proxies.ts";
import { argmax, scoreText, softmax } from "../src/engine/score.ts";

/** Where the data is and how much to run. */
export interface ScopeBenchOptions {
  data: string;
  quick: boolean;
  /** Which parts to run (all by default): `apart`, `scores`, `levels`, `bursty`. */
  parts?: string[];
}

/** Trains quietly with `extra` options and the rule at `scopeP` (the default when absent). */
function trainAt(
  traces: TraceSet,
  extra: Partial<TrainOptions> = {},
  scopeP?: number,
): TrainResult {
  // Progress and warnings stay quiet: the figures say what matters here.
  const settings = DEFAULT_TRAIN_OPTIONS.settings;
  return train(traces, {
    ...DEFAULT_TRAIN_OPTIONS,
    ...extra,
    settings: {
      ...settings,
      drift: {
        ...settings.drift,
        scope_p: scopeP ?? settings.drift.scope_p,
      },
    },
  });
}

/** Certified share and disagreement of a one-question table on labelled texts. */
function judge(table: Table, t: TraceSet): string {
  const f = evaluate(table, t, false).questions[t.questions[0]!.name]!;
  return `${pct(f.coverage)} at ${pct(f.disagreement)}`;
}

/** Share of `texts` a table certifies for its first question. */
function certifiedShare(table: Table, texts: readonly string[]): number {
  const q = table.questions[0]!.name;
  const state = new TableState(table);
  let n = 0;
  for (const t of texts) {
    if (
      assess(table, state, prepareText(table, state, t), q, {}, QUIET_GUARD)
        .answer.certified
    ) {
      n++;
    }
  }
  return texts.length === 0 ? 0 : n / texts.length;
}

/** Runs every part; prints as it goes. */
export async function scopeBenchmark(o: ScopeBenchOptions): Promise<void> {
  // Reading is the only awaited step; the rest runs to its end.
  const d = await readPublicData(o.data);
  const parts = o.parts ?? ["apart", "scores", "levels", "bursty"];
  if (parts.includes("apart")) writtenApart(d, o.quick);
  if (parts.includes("scores")) candidateScores(d, o.quick);
  if (parts.includes("levels") && !o.quick) levels(d);
  if (parts.includes("bursty")) burstyLogs(d);
}

// ------------------------------------------------------- 1. written apart
function writtenApart(d: PublicData, quick: boolean): void {
  console.log("\n== Traffic written apart from the traces");
  console.log(
    "Rewritten BANKING77 (each train.csv text three times, rewritten; test.csv is the traffic written apart):",
  );
  const log = rewritten(d.bankTrain);
  const runs: [string, Partial<TrainOptions>, number][] = [
    ["rule off", {}, 0],
    ["rule at 0.05 (default)", {}, 0.05],
    ["rule at 0.1", {}, 0.1],
  ];
  if (!quick) {
    runs.push(["rule at 0.05, --similarity 0.7", { similarity: 0.7 }, 0.05]);
  }
  for (const [label, extra, p] of runs) {
    const r = trainAt(log, extra, p);
    const own = r.report.questions[0]!.test;
    console.log(
      `  ${label.padEnd(32)} own test split said ${
        pct(own.disagreement)
      }; test.csv: certified ${judge(r.table, d.bankTest)}`,
    );
  }

  console.log(
    "NLU++ general intents, trained on banking texts, judged on hotel texts (yes/no; the rule applies to choices of three or more):",
  );
  const general = intentsOf(d, "general");
  const r = trainAt(nluYesNo(d.nlu.banking, general), {});
  const hotels = nluYesNo(d.nlu.hotels, general);
  const figures = evaluate(r.table, hotels, false).questions;
  let cert = 0;
  let wrong = 0;
  const over: string[] = [];
  for (const [name, f] of Object.entries(figures)) {
    cert += f.certified;
    wrong += f.disagreements;
    if (f.disagreement !== null && f.disagreement > 0.05) {
      over.push(`${name} ${pct(f.disagreement)} of ${f.certified}`);
    }
  }
  console.log(
    `  pooled disagreement ${pct(wrong / Math.max(1, cert))} over ${
      Object.keys(figures).length
    } questions; above alpha: ${over.join(", ") || "none"}`,
  );
}

// ------------------------------------------------------ 2. candidate scores
/** The candidate scores of a single-text rule; higher means more in scope. */
const SCORES = [
  "confidence",
  "spread",
  "energy",
  "largest logit",
  "nearest trace",
  "known features",
] as const;
type Score = (typeof SCORES)[number];

/** The reference answers of a one-question trace set, as option names. */
function expectedOptions(t: TraceSet): string[] {
  const q = t.questions[0]!;
  return Array.from(q.labels, (l) => q.options[l]!);
}

/**
 * Every candidate score of each text, with its confidence and whether it
 * disagrees with `expected` (every answer does when there is none: a
 * request for none of the options).
 */
function scoreTexts(
  table: Table,
  texts: readonly string[],
  nearest: number[],
  expected: readonly string[] | null,
): { scores: Record<Score, number>; confidence: number; wrong: boolean }[] {
  const q = table.questions[0]!;
  const state = new TableState(table);
  return texts.map((text, i) => {
    const prepared = prepareText(table, state, text);
    const a = assess(
      table,
      state,
      prepared,
      q.name,
      {},
      QUIET_GUARD,
    );
    const logits = scoreText(table, q, prepared.features);
    let largest = -Infinity;
    for (const l of logits) largest = Math.max(largest, l);
    const p = softmax(logits, q.temperature);
    const best = argmax(p);
    return {
      scores: {
        "confidence": a.fullConfidence,
        "spread": spreadOf(logits, q.temperature, p, best),
        "energy": energyOf(logits, q.temperature),
        "largest logit": largest,
        "nearest trace": nearest[i]!,
        "known features": 1 - a.novelty,
      },
      confidence: a.fullConfidence,
      wrong: expected === null || disagrees(a.answer, expected[i]!),
    };
  });
}

/** Per query, the largest TF-IDF cosine with a text of `corpus`. */
function nearestCosines(
  corpus: readonly string[],
  queries: readonly string[],
): number[] {
  const v = textVectors([...corpus, ...queries]);
  const n = corpus.length;
  const postings = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    for (let j = v.offsets[i]!; j < v.offsets[i + 1]!; j++) {
      let list = postings.get(v.terms[j]!);
      if (list === undefined) postings.set(v.terms[j]!, list = []);
      list.push(i, j);
    }
  }
  const dot = new Float64Array(n);
  return queries.map((_, q) => {
    dot.fill(0);
    let best = 0;
    const i = n + q;
    for (let j = v.offsets[i]!; j < v.offsets[i + 1]!; j++) {
      const list = postings.get(v.terms[j]!);
      if (list === undefined) continue;
      for (let x = 0; x < list.length; x += 2) {
        const t = list[x]!;
        dot[t]! += v.weights[j]! * v.weights[list[x + 1]!]!;
        if (dot[t]! > best) best = dot[t]!;
      }
    }
    return best;
  });
}

/** Share of `values` at or above the `cost` quantile of `reference`. */
function keptAbove(
  reference: number[],
  values: number[],
  cost: number,
): number {
  const sorted = [...reference].sort((a, b) => a - b);
  const cut = sorted[Math.floor(cost * sorted.length)]!;
  return values.filter((x) => x >= cut).length / Math.max(1, values.length);
}

function candidateScores(d: PublicData, quick: boolean): void {
  console.log("\n== Requests for none of the options: candidate scores");
  console.log(
    "Each score as a single-text rule at a fixed in-scope cost (the lowest-scoring 5% or 10% of in-scope test texts withheld), with the table's threshold (calibrated with the rule off): " +
      "out-of-scope texts certified; in-scope texts certified and their disagreement. 'kept' is the score alone, without the threshold.",
  );
  const proxies: {
    name: string;
    train: TraceSet;
    inScope: TraceSet;
    outs: [string, string[]][];
  }[] = [];
  const full = d.bankTrain;
  proxies.push({
    name: "BANKING77, whole",
    train: full,
    inScope: d.bankTest,
    outs: [
      ["NLU++ banking texts with no BANKING77 option", nluWithoutOption(d)],
      ["NLU++ hotel requests", nluHotels(d)],
    ],
  });
  const topUp = topUpOptions(d.categories);
  const withoutTopUp = new Set(d.categories.filter((c) => !topUp.has(c)));
  proxies.push({
    name: `BANKING77 without its ${topUp.size} top-up options`,
    train: keepOptions(full, withoutTopUp).kept,
    inScope: keepOptions(d.bankTest, withoutTopUp).kept,
    outs: [[
      "their test.csv texts",
      keepOptions(d.bankTest, withoutTopUp).others,
    ]],
  });
  for (const seed of quick ? [1] : [1, 2, 3]) {
    const held = drawOptions(d.categories, 15, seed);
    const keep = new Set(d.categories.filter((c) => !held.has(c)));
    proxies.push({
      name: `BANKING77 without 15 random options (draw ${seed})`,
      train: keepOptions(full, keep).kept,
      inScope: keepOptions(d.bankTest, keep).kept,
      outs: [["their test.csv texts", keepOptions(d.bankTest, keep).others]],
    });
  }
  for (const p of proxies) {
    const r = trainAt(p.train, {}, 0);
    const t = r.table.questions[0]!.calibration.threshold ?? Infinity;
    const inTexts = p.inScope.texts;
    const inScored = scoreTexts(
      r.table,
      inTexts,
      nearestCosines(p.train.texts, inTexts),
      expectedOptions(p.inScope),
    );
    console.log(`${p.name} (threshold ${t.toFixed(3)}):`);
    for (const [outName, outTexts] of p.outs) {
      const outScored = scoreTexts(
        r.table,
        outTexts,
        nearestCosines(p.train.texts, outTexts),
        null,
      );
      console.log(`  ${outName} (${outTexts.length}):`);
      for (const score of SCORES) {
        const ref = inScored.map((x) => x.scores[score]);
        const parts: string[] = [];
        for (const cost of [0.05, 0.1]) {
          const sorted = [...ref].sort((a, b) => a - b);
          const cut = sorted[Math.floor(cost * sorted.length)]!;
          const passes = (x: (typeof inScored)[number]) =>
            x.confidence >= t && x.scores[score] >= cut;
          const inCert = inScored.filter(passes);
          const outCert = outScored.filter(passes).length / outScored.length;
          const wrong = inCert.filter((x) => x.wrong).length;
          parts.push(
            `cost ${cost * 100}%: out ${pct(outCert)} certified, in ${
              pct(inCert.length / inScored.length)
            } at ${pct(wrong / Math.max(1, inCert.length))}, kept ${
              pct(keptAbove(ref, outScored.map((x) => x.scores[score]), cost))
            }`,
          );
        }
        console.log(`    ${score.padEnd(15)} ${parts.join("; ")}`);
      }
    }
  }
}

// ------------------------------------------------------------- 3. levels
function levels(d: PublicData): void {
  console.log("\n== The level of the out-of-scope rule (--drift-scope-p)");
  const general = intentsOf(d, "banking", "general");
  const nluTrain = nluYesNo(d.nlu.banking.filter((r) => r.fold < 16), general);
  const nluTest = nluYesNo(d.nlu.banking.filter((r) => r.fold >= 16), general);
  const heldDraws = [1, 2].map((seed) => {
    const held = drawOptions(d.categories, 15, seed);
    const keep = new Set(d.categories.filter((c) => !held.has(c)));
    return {
      train: keepOptions(d.bankTrain, keep).kept,
      inScope: keepOptions(d.bankTest, keep).kept,
      out: keepOptions(d.bankTest, keep).others,
    };
  });
  const log = rewritten(d.bankTrain);
  // 25 options: a more accurate table, whose uncertified answers are few.
  const accurate = [11, 12].map((seed) => {
    const keep = drawOptions(d.categories, 25, seed);
    return {
      train: keepOptions(d.bankTrain, keep).kept,
      test: keepOptions(d.bankTest, keep).kept,
    };
  });
  const rows: [ScopeScore, number][] = [["spread", 0]];
  for (const score of SCOPE_SCORES) {
    for (const p of [0.02, 0.05, 0.1]) rows.push([score, p]);
  }
  for (const [scopeScore, p] of rows) {
    const parts: string[] = [];
    const bank = [1, 2, 3].map((seed) =>
      trainAt(d.bankTrain, { seed, scopeScore }, p)
    );
    parts.push(
      `BANKING77 seeds 1-3 ${
        bank.map((r) => judge(r.table, d.bankTest)).join(", ")
      }`,
    );
    const nlu = trainAt(nluTrain, { scopeScore }, p);
    const shares = Object.values(evaluate(nlu.table, nluTest, false).questions)
      .map((f) => f.coverage ?? 0).sort((a, b) => a - b);
    parts.push(`NLU++ median question ${pct(shares[shares.length >> 1])}`);
    const held = heldDraws.map((h, i) => {
      const r = trainAt(h.train, { seed: i + 1, scopeScore }, p);
      return `in ${judge(r.table, h.inScope)}, out ${
        pct(certifiedShare(r.table, h.out))
      }`;
    });
    parts.push(`15 options held out: ${held.join("; ")}`);
    parts.push(
      `25 options: ${
        accurate.map((a) =>
          judge(trainAt(a.train, { scopeScore }, p).table, a.test)
        ).join(", ")
      }`,
    );
    parts.push(
      `rewritten log: test.csv ${
        judge(trainAt(log, { scopeScore }, p).table, d.bankTest)
      }`,
    );
    const label = p === 0 ? "off" : `${scopeScore} ${p}`;
    console.log(`  ${label.padEnd(11)} ${parts.join(" | ")}`);
  }
}

// ------------------------------------------------------------ 4. bursty
function burstyLogs(d: PublicData): void {
  console.log(
    "\n== Time logs whose options arrive in bursts (BANKING77 train.csv over five months; test.csv)",
  );
  const arrivals: [Arrival, string][] = [
    ["interleaved", "options interleaved"],
    ["blocks", "a fifth of the options arrive each month, then stay"],
    ["months", "each option asked in one month only"],
  ];
  for (const [arrival, words] of arrivals) {
    const r = trainAt(timedLog(d.bankTrain, arrival), {});
    const q = r.table.questions[0]!;
    const top: number[] = [];
    let right = 0;
    const expected = expectedOptions(d.bankTest);
    const state = new TableState(r.table);
    d.bankTest.texts.forEach((text, i) => {
      const a = assess(
        r.table,
        state,
        prepareText(r.table, state, text),
        q.name,
        {},
        QUIET_GUARD,
      );
      top.push(a.fullConfidence);
      if (!disagrees(a.answer, expected[i]!)) right++;
    });
    top.sort((a, b) => a - b);
    console.log(
      `  ${words.padEnd(52)} accuracy ${
        pct(right / top.length)
      }, median top probability ${pct(top[top.length >> 1])}, certified ${
        judge(r.table, d.bankTest)
      }; temperature ${
        q.temperature.toFixed(2)
      }, ${r.report.split.fed_options.length} options fed from their oldest traces`,
    );
  }
}
