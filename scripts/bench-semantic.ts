/**
 * The second tier against the table alone, on `../shared/data`: certified
 * share and disagreement on held-out texts for BANKING77 (3,000 traces
 * drawn from train.csv, seeds 1-3, and all of train.csv, seed 1, judged on
 * test.csv), NLU++ banking's general intents as yes/no questions (folds
 * 0-15, judged on 16-19), and requests for none of the options (15
 * BANKING77 options held out from training, draws 1-2; NLU++ hotel
 * requests sent to a BANKING77 table): how many get certified with and
 * without the second tier. Texts are embedded once into a cache file.
 *
 * `--guard` names the novelty guard's tests, comma-separated among
 * `mahalanobis`, `nearest` and `spread` (`none`: no guard); absent, the
 * default (`DEFAULT_GUARD`).
 *
 * The library runs use `train`'s default, `--semantic auto` (it keeps the
 * second tier per question where it certifies more on validation); the
 * 3,000-trace draws are also trained by the command itself as a user types
 * it, with no flag, and judged on test.csv.
 *
 * Usage: deno task bench:semantic [--embed-cache FILE] [--quick] [--guard TESTS]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { DATA, EMBED_CACHE_OPTION, exitWithoutData } from "./bench_data.ts";
import type { TraceSet } from "../src/traces/types.ts";
import { percent as pct } from "../src/format.ts";
import { train } from "../src/train/trainer.ts";
import { DEFAULT_TRAIN_OPTIONS } from "../src/train/options.ts";
import { type TrainResult } from "../src/train/contents.ts";
import {
  drawOptions,
  intentsOf,
  keepOptions,
  nluYesNo,
  readPublicData,
} from "./proxies.ts";
import {
  certifiedShare,
  embedTexts,
  type TwoTierFigures,
  twoTierFigures,
} from "./semantic_eval.ts";
import { smallSubset } from "./small_subsets.ts";
import { loadBundle } from "../src/bundle/files.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
import type { GuardTests } from "../src/train/semantic.ts";

/** The guard's tests from `--guard`; exits with a line for a name it does not know. */
function guardTests(v: string): GuardTests {
  const names = v === "none" ? [] : v.split(",");
  const known = ["mahalanobis", "nearest", "spread"];
  const bad = names.find((n) => !known.includes(n));
  if (bad !== undefined) {
    console.error(`--guard takes ${known.join(", ")} or none: got "${bad}"`);
    Deno.exit(2);
  }
  return {
    mahalanobis: names.includes("mahalanobis"),
    nearest: names.includes("nearest"),
    spread: names.includes("spread"),
  };
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    "embed-cache": EMBED_CACHE_OPTION,
    quick: { type: "boolean", default: false },
    guard: { type: "string" },
  },
});
const guard = values.guard === undefined ? undefined : guardTests(values.guard);
await exitWithoutData();
const cache = values["embed-cache"];
const d = await readPublicData(DATA);
const embed = (t: TraceSet | readonly string[]) =>
  embedTexts(Array.isArray(t) ? t : (t as TraceSet).texts, cache);

/** Trains with the second tier as `train` does by default (`auto`), quietly, timed. */
async function trainBoth(
  traces: TraceSet,
  seed = 1,
): Promise<[TrainResult, number]> {
  const embeddings = await embed(traces);
  const started = performance.now();
  const r = train(traces, {
    ...DEFAULT_TRAIN_OPTIONS,
    seed,
    semantic: "auto",
    workers: 2,
    ...(guard === undefined ? {} : { semanticGuard: guard }),
  }, embeddings);
  return [r, (performance.now() - started) / 1000];
}

const line = (f: TwoTierFigures) =>
  `${pct(f.certified)} certified at ${pct(f.disagreement)}` +
  (f.bySemantic > 0 ? ` (${pct(f.bySemantic)} by the second tier)` : "");
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

console.log(
  "== The second tier: the table alone against both tiers (alpha 0.05, delta 0.05)",
);
const testE = await embed(d.bankTest);

console.log("BANKING77, 3,000 traces drawn from train.csv, judged on test.csv");
const small: { table: TwoTierFigures; both: TwoTierFigures }[] = [];
for (const seed of values.quick ? [1] : [1, 2, 3]) {
  const [r, seconds] = await trainBoth(
    smallSubset(d.bankTrain, 3000, seed),
    seed,
  );
  const table = twoTierFigures(r.table, d.bankTest, null);
  const both = twoTierFigures(r.table, d.bankTest, testE);
  small.push({ table, both });
  const s = r.report.questions[0]!.semantic!;
  console.log(
    `  seed ${seed}: table alone ${line(table)}; both tiers ${line(both)} ` +
      `(second tier: table weight ${s.table_weight}, validation accuracy ${
        pct(s.validation_accuracy)
      }; trained in ${seconds.toFixed(1)} s)`,
  );
}
console.log(
  `  mean: table alone ${
    pct(mean(small.map((s) => s.table.certified)))
  }, both tiers ${pct(mean(small.map((s) => s.both.certified)))}`,
);

{
  // The command as a user types it: `train --traces FILE --out DIR`, no
  // other flag (its embedding cache only saves time: the same numbers).
  console.log(
    "BANKING77, 3,000 traces, the default command (train --traces FILE --out DIR: --semantic auto, --seed 1), judged on test.csv",
  );
  const work = await Deno.makeTempDir({ prefix: "dtable-bench-semantic-" });
  const rows: number[] = [];
  try {
    for (const seed of values.quick ? [1] : [1, 2, 3]) {
      const set = smallSubset(d.bankTrain, 3000, seed);
      const q = set.questions[0]!;
      const file = `${work}/traces-${seed}.jsonl`;
      await Deno.writeTextFile(
        file,
        set.texts.map((text, i) =>
          JSON.stringify({
            text,
            answers: { [q.name]: q.options[q.labels[i]!] },
          })
        ).join("\n") + "\n",
      );
      const started = performance.now();
      const run = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          MAIN,
          "train",
          "--traces",
          file,
          "--out",
          `${work}/bundle-${seed}`,
          "--embed-cache",
          cache,
          "--quiet",
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const seconds = (performance.now() - started) / 1000;
      if (run.code !== 0) {
        console.log(
          `  seed ${seed}: train exited ${run.code}: ${
            new TextDecoder().decode(run.stdout).trim().split("\n").at(-1)
          }`,
        );
        rows.push(0);
        continue;
      }
      const table = await loadBundle(`${work}/bundle-${seed}`);
      const f = twoTierFigures(table, d.bankTest, testE);
      rows.push(f.certified);
      console.log(
        `  seed ${seed}: ${line(f)} (second tier ${
          table.questions[0]!.semantic === undefined ? "left out" : "kept"
        }; the command took ${seconds.toFixed(1)} s with the cache)`,
      );
    }
  } finally {
    await Deno.remove(work, { recursive: true });
  }
  console.log(
    `  mean ${pct(mean(rows))} (target: at least 63%, each at <= 5%)`,
  );
}

if (!values.quick) {
  const [r, seconds] = await trainBoth(d.bankTrain, 1);
  console.log(
    `BANKING77, all of train.csv (seed 1): table alone ${
      line(twoTierFigures(r.table, d.bankTest, null))
    }; both tiers ${
      line(twoTierFigures(r.table, d.bankTest, testE))
    } (trained in ${seconds.toFixed(1)} s)`,
  );
}

{
  const general = intentsOf(d, "banking", "general");
  const nluTrain = nluYesNo(d.nlu.banking.filter((r) => r.fold < 16), general);
  const nluTest = nluYesNo(d.nlu.banking.filter((r) => r.fold >= 16), general);
  const [r] = await trainBoth(nluTrain, 1);
  const e = await embed(nluTest);
  const rows = nluTest.questions.map((q) => ({
    table: twoTierFigures(r.table, nluTest, null, q.name),
    both: twoTierFigures(r.table, nluTest, e, q.name),
    kept: r.report.questions.find((x) => x.name === q.name)?.semantic?.used ??
      false,
  }));
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  const worst = (xs: (number | null)[]) => Math.max(...xs.map((x) => x ?? 0));
  const kept = rows.filter((x) => x.kept).length;
  const helped =
    rows.filter((x) => x.both.certified > x.table.certified).length;
  console.log(
    `NLU++ banking, ${rows.length} general intents as yes/no questions (auto, the default): second tier kept on ${kept}, the table alone on ${
      rows.length - kept
    }; on test the second tier certifies more on ${helped} of them (${
      rows.filter((x) => x.kept && x.both.certified > x.table.certified).length
    } of those kept), the same or less on ${rows.length - helped}`,
  );
  console.log(
    `  certified median ${
      pct(median(rows.map((x) => x.table.certified)))
    } (mean ${
      pct(mean(rows.map((x) => x.table.certified)))
    }, worst disagreement ${
      pct(worst(rows.map((x) => x.table.disagreement)))
    }) alone; ${pct(median(rows.map((x) => x.both.certified)))} (mean ${
      pct(mean(rows.map((x) => x.both.certified)))
    }, worst disagreement ${
      pct(worst(rows.map((x) => x.both.disagreement)))
    }) with both tiers`,
  );
}

console.log("Requests for none of the options");
const hotels = d.nlu.hotels.map((r) => r.text);
const hotelsE = await embed(hotels);
for (const seed of values.quick ? [1] : [1, 2]) {
  const held = drawOptions(d.categories, 15, seed);
  const keep = new Set(d.categories.filter((c) => !held.has(c)));
  const trainSet = keepOptions(d.bankTrain, keep).kept;
  const inScope = keepOptions(d.bankTest, keep).kept;
  const out = keepOptions(d.bankTest, keep).others;
  const [r] = await trainBoth(trainSet, seed);
  const name = r.table.questions[0]!.name;
  const inE = await embed(inScope);
  const outE = await embed(out);
  console.log(
    `  15 options held out (draw ${seed}): in scope ${
      line(twoTierFigures(r.table, inScope, null))
    } alone, ${
      line(twoTierFigures(r.table, inScope, inE))
    } with both; held-out options' texts certified ${
      pct(certifiedShare(r.table, name, out, null))
    } alone, ${
      pct(certifiedShare(r.table, name, out, outE))
    } with both; NLU++ hotel requests certified ${
      pct(certifiedShare(r.table, name, hotels, null))
    } alone, ${pct(certifiedShare(r.table, name, hotels, hotelsE))} with both`,
  );
}
