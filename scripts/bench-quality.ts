/**
 * Quality benchmark on real public data (`../shared/data`, never copied
 * into the project): BANKING77 as a 77-option choice, NLU++ banking as 48
 * yes/no questions, the radius against a real insertion attack, and the
 * drift guard on in-domain replays and foreign (NLU++ hotels) texts.
 *
 * Usage: deno task bench [--quick]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { DATA, exitWithoutData, readBanking77Train } from "./bench_data.ts";
import { honestBenchmark } from "./bench_honest.ts";
import { scopeBenchmark } from "./bench_scope.ts";
import { main } from "../main.ts";
import { loadBundle } from "../src/bundle/files.ts";
import { assess } from "../src/engine/answer.ts";
import { type PreparedText, prepareText } from "../src/engine/prepare.ts";
import { DriftMonitor, QUIET_GUARD } from "../src/engine/drift.ts";
import { TableState } from "../src/engine/state.ts";
import type { Table } from "../src/engine/table.ts";
import { evaluate } from "../src/eval/evaluate.ts";
import { readTraces } from "../src/traces/mod.ts";
import { shuffle } from "../src/train/split.ts";
import { seededRandom } from "../src/engine/random.ts";
import { argmax, scoreEntries } from "../src/engine/score.ts";
import { percent } from "../src/format.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { quick: { type: "boolean", default: false } },
});

await exitWithoutData();

const work = await Deno.makeTempDir({ prefix: "dtable-bench-" });

/** Peak resident memory of a child process, from /proc (VmHWM), in MB. */
async function trainMeasured(
  traces: string,
  out: string,
  extra: string[] = [],
): Promise<{ seconds: number; peakMb: number }> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      new URL("../main.ts", import.meta.url).pathname,
      "train",
      "--traces",
      traces,
      "--out",
      out,
      "--allow-uncalibrated",
      "--quiet",
      ...extra,
    ],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  let peakKb = 0;
  const timer = setInterval(async () => {
    try {
      // Through `cat`: Deno grants /proc only with --allow-all.
      const out = await new Deno.Command("cat", {
        args: [`/proc/${child.pid}/status`],
        stdout: "piped",
        stderr: "null",
      }).output();
      const status = new TextDecoder().decode(out.stdout);
      const m = status.match(/VmHWM:\s+(\d+)/);
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch { /* finished */ }
  }, 50);
  const { code } = await child.status;
  clearInterval(timer);
  if (code !== 0) throw new Error(`training ${traces} failed (exit ${code})`);
  return {
    seconds: (performance.now() - started) / 1000,
    peakMb: peakKb / 1024,
  };
}

// ---------------------------------------------------------------- BANKING77
console.log(
  "== BANKING77: train on train.csv, evaluate on test.csv (alpha 0.05, delta 0.05)",
);
const b77 = `${work}/banking77`;
const b77Train = await trainMeasured(`${DATA}banking77/train.csv`, b77);
const table = await loadBundle(b77);
const state = new TableState(table);
const test = await readTraces([`${DATA}banking77/test.csv`]);
let t0 = performance.now();
const figures = evaluate(table, test, false).questions["category"]!;
const evalSeconds = (performance.now() - t0) / 1000;
console.log(
  `certified ${
    percent(figures.coverage)
  } (${figures.certified}/${figures.n}), disagreement ${
    percent(figures.disagreement)
  } ` +
    `(95% CI up to ${percent(figures.disagreement_upper)}), accuracy ${
      percent(figures.accuracy)
    }`,
);
console.log(
  `training ${
    b77Train.seconds.toFixed(1)
  } s (process, including start-up), peak memory ${
    b77Train.peakMb.toFixed(0)
  } MB; ` +
    `eval of ${figures.n} texts ${evalSeconds.toFixed(2)} s`,
);

// What the model's ranking allows at all: the largest share of test answers
// whose empirical disagreement stays within alpha when the threshold is
// picked on the test answers themselves (no guarantee; a ceiling for
// any valid procedure using this model's confidence).
{
  const qa = test.questions.find((x) => x.name === "category")!;
  const question = table.byName.get("category")!;
  const ranked: { confidence: number; wrong: boolean }[] = [];
  for (let i = 0; i < test.texts.length; i++) {
    const label = qa.labels[i]!;
    if (label < 0) continue;
    const a = assess(
      table,
      state,
      prepareText(table, state, test.texts[i]!),
      question.name,
      {},
      QUIET_GUARD,
    );
    ranked.push({
      confidence: a.fullConfidence,
      wrong: a.answer.choice !== qa.options[label],
    });
  }
  ranked.sort((x, y) => y.confidence - x.confidence);
  const ceiling = (alpha: number) => {
    let wrong = 0;
    let best = 0;
    ranked.forEach((r, i) => {
      if (r.wrong) wrong++;
      if (wrong <= alpha * (i + 1)) best = i + 1;
    });
    return best / ranked.length;
  };
  console.log(
    `ceiling of this model's confidence ranking (threshold picked on the test answers themselves): ` +
      `${percent(ceiling(0.05))} at <= 5% disagreement, ${
        percent(ceiling(0.04))
      } at <= 4%`,
  );
}

// The threshold depends on which traces land in calibration, so one seed can
// be a point or two off its neighbours: seeds 2-5 (1 is the run above) give
// the spread.
if (!values.quick) {
  const coverages = [figures.coverage!];
  const rates = [figures.disagreement!];
  for (const seed of [2, 3, 4, 5]) {
    const dir = `${work}/banking77-seed${seed}`;
    await trainMeasured(`${DATA}banking77/train.csv`, dir, [
      "--seed",
      String(seed),
    ]);
    const f = evaluate(await loadBundle(dir), test, false).questions.category!;
    coverages.push(f.coverage!);
    rates.push(f.disagreement!);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `seeds 1-5: certified ${
      coverages.map((x) => percent(x)).join(", ")
    } (mean ${percent(mean(coverages))}); disagreement ${
      rates.map((x) => percent(x)).join(", ")
    } (mean ${percent(mean(rates))})`,
  );
}

// ---------------------------------------------------------------- radius vs attack
console.log(
  "\n== Radius against a greedy insertion attack (BANKING77 test texts)",
);
const q = table.questions[0]!;
const vocabulary = [
  ...new Set(
    test.texts.concat(
      (await readBanking77Train()).texts,
    ).join(" ").toLowerCase().split(/[^a-z']+/),
  ),
]
  .filter((w) => w.length > 1);
/** Raw scores of `text` for the attacked question, word vectors cached. */
function scoresOf(text: string): Float64Array {
  const p = prepareText(table, state, text);
  return scoreEntries(table, state, q, p.features, p.entries);
}

/** Fewest words the greedy attack needs to flip the answer, up to `limit`; null if it fails. */
function attack(text: string, limit: number): number | null {
  let words = text.split(/\s+/);
  const original = argmax(scoresOf(text));
  for (let step = 1; step <= limit; step++) {
    const logits = scoresOf(words.join(" "));
    // Target: the runner-up now.
    let runner = -1;
    for (let j = 0; j < logits.length; j++) {
      if (j !== original && (runner < 0 || logits[j]! > logits[runner]!)) {
        runner = j;
      }
    }
    // Candidate words: the vocabulary words that help the runner-up most, alone.
    const scored = vocabulary.map((w) => {
      const l = scoresOf(w);
      return { w, gain: l[runner]! - l[original]! };
    }).sort((a, b) => b.gain - a.gain).slice(0, 25);
    let best: { words: string[]; margin: number } | null = null;
    for (const { w } of scored) {
      for (const at of [0, Math.floor(words.length / 2), words.length]) {
        const trial = [...words.slice(0, at), w, ...words.slice(at)];
        const l = scoresOf(trial.join(" "));
        const winner = argmax(l);
        if (winner !== original) return step;
        const margin = l[original]! - l[runner]!;
        if (best === null || margin < best.margin) {
          best = { words: trial, margin };
        }
      }
    }
    words = best!.words;
  }
  return null;
}
const sample = shuffle(test.texts.map((_, i) => i), seededRandom(3)).slice(
  0,
  values.quick ? 20 : 60,
);
let sound = 0;
let exact = 0;
const gaps: number[] = [];
const radii: number[] = [];
for (const i of sample) {
  const text = test.texts[i]!;
  const r = assess(
    table,
    state,
    prepareText(table, state, text),
    q.name,
    {},
    QUIET_GUARD,
  ).answer
    .radius;
  if (r === null) continue;
  radii.push(r);
  const needed = attack(text, r + 6);
  if (needed === null || needed >= r) sound++;
  if (needed === r) exact++;
  if (needed !== null) gaps.push(needed - r);
}
radii.sort((a, b) => a - b);
gaps.sort((a, b) => a - b);
console.log(
  `${sample.length} texts: radius median ${
    radii[radii.length >> 1]
  }, attack never beat the radius in ${sound}/${radii.length}, ` +
    `matched it exactly in ${exact}; attack minus radius median ${
      gaps[gaps.length >> 1] ?? "n/a"
    } (over ${gaps.length} flipped within radius+6)`,
);

// ---------------------------------------------------------------- drift guard
console.log("\n== Drift guard (BANKING77 table)");
const hotels: string[] = [];
for (let f = 0; f < 20; f++) {
  for (
    const r of JSON.parse(
      await Deno.readTextFile(`${DATA}nlupp/hotels/fold${f}.json`),
    )
  ) hotels.push(r.text);
}
function certifiedShare(t: Table, texts: string[]): number {
  const s = new TableState(t);
  let c = 0;
  for (const x of texts) {
    if (
      assess(t, s, prepareText(t, s, x), q.name, {}, QUIET_GUARD).answer
        .certified
    ) c++;
  }
  return c / texts.length;
}
const saved = { ...table.settings.drift };
table.settings.drift = { ...saved, single_p: 0, max_novelty: 1 };
const inNoGuard = certifiedShare(table, test.texts);
const foreignNoGuard = certifiedShare(table, hotels);
table.settings.drift = saved;
const inGuard = certifiedShare(table, test.texts);
const foreignGuard = certifiedShare(table, hotels);
console.log(
  `single texts: NLU++ hotels certified ${
    percent(foreignGuard)
  } (without the single-text rule ${percent(foreignNoGuard)}); ` +
    `BANKING77 test certified ${percent(inGuard)} (without ${
      percent(inNoGuard)
    }, a loss of ${((inNoGuard - inGuard) * 100).toFixed(2)} points)`,
);
const bank: PreparedText[] = test.texts.map((x) =>
  prepareText(table, state, x)
);
const foreign: PreparedText[] = hotels.map((x) => prepareText(table, state, x));
const runs = values.quick ? 20 : 100;
let falseAlarms = 0;
const detect: number[] = [];
const rearm: number[] = [];
t0 = performance.now();
for (let r = 0; r < runs; r++) {
  const random = seededRandom(1000 + r);
  const monitor = new DriftMonitor(table.settings.drift, r + 1);
  const order = shuffle(bank.map((_, i) => i), random).slice(0, 3000);
  let alarmed = false;
  for (const i of order) {
    assess(table, state, bank[i]!, q.name, {}, monitor);
    if (!monitor.isQuiet(q.name)) alarmed = true;
  }
  if (alarmed) falseAlarms++;
  if (r < 20) {
    const f = shuffle(foreign.map((_, i) => i), random);
    let at = -1;
    for (let j = 0; j < f.length; j++) {
      assess(table, state, foreign[f[j]!]!, q.name, {}, monitor);
      if (!monitor.isQuiet(q.name)) {
        at = j + 1;
        break;
      }
    }
    detect.push(at);
    const back = shuffle(bank.map((_, i) => i), random);
    let clear = -1;
    for (let j = 0; j < back.length; j++) {
      assess(table, state, bank[back[j]!]!, q.name, {}, monitor);
      if (monitor.isQuiet(q.name)) {
        clear = j + 1;
        break;
      }
    }
    rearm.push(clear);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(
  `online: false alarms in ${falseAlarms}/${runs} shuffled replays of 3,000 BANKING77 test requests (delta_drift ${table.settings.drift.delta}); ` +
    `shift to hotels detected after median ${median(detect)} requests (max ${
      Math.max(...detect)
    }); ` +
    `re-armed after median ${median(rearm)} requests back on BANKING77 (max ${
      Math.max(...rearm)
    })`,
);
// Guard cost per request: assess with and without the online monitor.
const timing = (guard: typeof QUIET_GUARD) => {
  const start = performance.now();
  for (let rep = 0; rep < 3; rep++) {
    for (const p of bank) assess(table, state, p, q.name, {}, guard);
  }
  return ((performance.now() - start) * 1000) / (3 * bank.length);
};
timing(QUIET_GUARD);
const plain = timing(QUIET_GUARD);
const guarded = timing(new DriftMonitor(table.settings.drift));
console.log(
  `assess() per request: ${plain.toFixed(2)} µs without the online guard, ${
    guarded.toFixed(2)
  } µs with it`,
);

// ---------------------------------------------------------------- NLU++ banking
console.log(
  "\n== NLU++ banking: 48 yes/no questions (folds 0-15 train, 16-19 eval)",
);
const ontology = JSON.parse(
  await Deno.readTextFile(`${DATA}nlupp/ontology.json`),
).intents as Record<string, { description: string; domain: string[] }>;
const intents = Object.entries(ontology).filter(([, v]) =>
  v.domain.includes("banking") || v.domain.includes("general")
).map(([k]) => k);
async function foldsToJsonl(folds: number[], file: string) {
  const lines: string[] = [];
  for (const f of folds) {
    for (
      const r of JSON.parse(
        await Deno.readTextFile(`${DATA}nlupp/banking/fold${f}.json`),
      )
    ) {
      const answers = Object.fromEntries(
        intents.map((i) => [i, (r.intents ?? []).includes(i)]),
      );
      lines.push(JSON.stringify({ text: r.text, answers }));
    }
  }
  await Deno.writeTextFile(file, lines.join("\n") + "\n");
}
await foldsToJsonl([...Array(16).keys()], `${work}/nlupp-train.jsonl`);
await foldsToJsonl([16, 17, 18, 19], `${work}/nlupp-eval.jsonl`);
const nluTrain = await trainMeasured(
  `${work}/nlupp-train.jsonl`,
  `${work}/nlupp`,
);
const nlu = await loadBundle(`${work}/nlupp`);
const nluFigures = evaluate(
  nlu,
  await readTraces([`${work}/nlupp-eval.jsonl`]),
  false,
).questions;
const shares = Object.entries(nluFigures).map(([name, f]) => ({ name, ...f }))
  .sort((a, b) => (a.coverage ?? 0) - (b.coverage ?? 0));
for (const s of shares) {
  console.log(
    `  ${s.name.padEnd(36)} "${ontology[s.name]!.description}" certified ${
      percent(s.coverage)
    }, disagreement ${percent(s.disagreement)}, accuracy ${
      percent(s.accuracy)
    }`,
  );
}
const med = shares[shares.length >> 1]!;
const pooledCert = shares.reduce((n, s) => n + s.certified, 0);
const pooledWrong = shares.reduce((n, s) => n + s.disagreements, 0);
console.log(
  `median question certifies ${percent(med.coverage)}; pooled disagreement ${
    percent(pooledWrong / pooledCert)
  }; ` +
    `training ${nluTrain.seconds.toFixed(1)} s, peak ${
      nluTrain.peakMb.toFixed(0)
    } MB`,
);
await honestBenchmark({ data: DATA, work, quick: values.quick });
await scopeBenchmark({ data: DATA, quick: values.quick });
await Deno.remove(work, { recursive: true });
void main;
