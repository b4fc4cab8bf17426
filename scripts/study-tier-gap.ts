/**
 * Where the two tiers' coverage goes, on BANKING77 judged on `test.csv`:
 * 3,000-trace draws (seeds 1-3), or all of `train.csv` with `--all`. For
 * each trained bundle it prints the share the rule certifies at its
 * certified threshold `L` (as served), and, for comparison only (read on
 * the test texts, never used for a choice), the largest share any single
 * threshold would certify at each of several disagreement levels: with the
 * rule as served, the novelty guard off, the second tier also asked where
 * the table's out-of-scope rule withholds, both tiers with neither that
 * rule nor the novelty guard (as the anchor answers), the table answering only at a
 * fixed stricter bar (0.95, 0.99) and the second tier below it, the table
 * alone, and the second tier asked for every text. Beside them, what the
 * binomial test lets pass on a calibration part of the size the split
 * made: the disagreement a rule can show there and still be certified.
 *
 * With `--anchor` (needs `python3` with scikit-learn), the same ceilings
 * for the anchor's model (`../shared/anchors/lr_anchor.py`: TF-IDF
 * logistic regression with the encoder's numbers appended, asked for every
 * text) on the same draws, and what its own Learn-then-Test certifies on
 * `test.csv` (`--python` names the interpreter, `python3` by default).
 *
 * Usage: deno run --allow-read --allow-write --allow-env --allow-run
 *   scripts/study-tier-gap.ts [--all] [--anchor] [--python PATH]
 *   [--embed-cache FILE]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { assess } from "../src/engine/answer.ts";
import { QUIET_GUARD } from "../src/engine/drift.ts";
import { semanticAssess } from "../src/engine/semantic.ts";
import { setThresholdInForce, TableState } from "../src/engine/state.ts";
import { largestPassing } from "../src/guarantee/distributions.ts";
import { percent as pct } from "../src/format.ts";
import { train } from "../src/train/trainer.ts";
import { DEFAULT_TRAIN_OPTIONS } from "../src/train/options.ts";
import type { TraceSet } from "../src/traces/types.ts";
import { DATA, EMBED_CACHE_OPTION, exitWithoutData } from "./bench_data.ts";
import { readPublicData } from "./proxies.ts";
import { embedTexts } from "./semantic_eval.ts";
import { smallSubset } from "./small_subsets.ts";
import { fullProbabilities, prepareText } from "../src/engine/prepare.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    all: { type: "boolean", default: false },
    anchor: { type: "boolean", default: false },
    python: { type: "string", default: "python3" },
    "embed-cache": EMBED_CACHE_OPTION,
  },
});
await exitWithoutData();
const cache = values["embed-cache"];
const d = await readPublicData(DATA);
const testE = await embedTexts(d.bankTest.texts, cache);

/** The disagreement levels the ceilings are read at. */
const LEVELS = [0.02, 0.025, 0.03, 0.035, 0.04, 0.05];

interface Row {
  tableConf: number; // -1: withheld by another rule than the confidence
  scoped: boolean; // withheld by the out-of-scope or word-novelty rule (flag drift)
  scopedConf: number; // the table's confidence where those rules withhold, else -1
  tableRight: boolean;
  tierConf: number;
  tierRight: boolean;
  novel: boolean;
}

/**
 * Largest share certified at one threshold `L` with at most `level`
 * disagreeing; the table answers where its confidence reaches
 * `max(L, tableBar)`, the second tier below it where `tierFor` allows.
 */
function ceiling(
  rows: Row[],
  tierFor: (r: Row) => boolean,
  level: number,
  tableBar = 0,
): number {
  let top = 0;
  for (let L = 0.2; L < 1; L += 0.0025) {
    let n = 0, wrong = 0;
    for (const r of rows) {
      if (r.tableConf >= Math.max(L, tableBar)) {
        n++;
        if (!r.tableRight) wrong++;
      } else if (tierFor(r) && r.tierConf >= L) {
        n++;
        if (!r.tierRight) wrong++;
      }
    }
    if (n > 0 && wrong <= level * n) top = Math.max(top, n / rows.length);
  }
  return top;
}

/** One line of a ceilings table: a name, then a share per level. */
function line(name: string, shares: readonly number[]): string {
  return `  ${name.padEnd(52)} ${
    shares.map((s) => pct(s).padStart(7)).join("")
  }`;
}

const header = line("at most this disagreeing on test.csv:", LEVELS);

/** The anchor's ceilings and certified figures on one draw, or why not. */
async function anchor(traces: TraceSet): Promise<string[]> {
  const script = `${DATA}../anchors/lr_anchor.py`;
  const dir = await Deno.makeTempDir({ prefix: "dtable-anchor-" });
  try {
    const write = async (name: string, set: TraceSet) => {
      const q = set.questions[0]!;
      const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
      const rows = set.texts.map((t, i) =>
        `${quote(t)},${quote(q.options[q.labels[i]!]!)}`
      );
      await Deno.writeTextFile(
        `${dir}/${name}.csv`,
        ["text,answer", ...rows].join("\n") + "\n",
      );
      const e = await embedTexts(set.texts, cache);
      await Deno.writeTextFile(
        `${dir}/${name}.jsonl`,
        e.map((v) => JSON.stringify(Array.from(v))).join("\n") + "\n",
      );
    };
    await write("train", traces);
    await write("test", d.bankTest);
    const run = async (alpha: number) => {
      const out = await new Deno.Command(values.python, {
        args: [
          script,
          `${dir}/train.csv`,
          `${dir}/test.csv`,
          "--emb",
          `${dir}/train.jsonl`,
          `${dir}/test.jsonl`,
          "--alpha",
          String(alpha),
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout);
      if (!out.success) {
        throw new Error(new TextDecoder().decode(out.stderr).trim());
      }
      return text;
    };
    const outs = await Promise.all(LEVELS.map(run));
    const shares = outs.map((o) =>
      Number(/best possible coverage at [\d.]+: ([\d.]+)/.exec(o)?.[1] ?? NaN)
    );
    const at5 = outs[LEVELS.indexOf(0.05)]!;
    const certified = /certified ([\d.]+) at ([\d.]+) disagreement/.exec(at5);
    return [
      line("anchor: TF-IDF + encoder LR, every text", shares),
      `  anchor's own Learn-then-Test at 5%: ${
        certified === null
          ? "nothing certified"
          : `${pct(Number(certified[1]))} of test.csv certified at ${
            pct(Number(certified[2]))
          } disagreement`
      }`,
    ];
  } catch (e) {
    return [`  anchor not run: ${(e as Error).message.split("\n").at(-1)}`];
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const seeds = values.all ? [1] : [1, 2, 3];
for (const seed of seeds) {
  const traces = values.all
    ? d.bankTrain
    : smallSubset(d.bankTrain, 3000, seed);
  const e = await embedTexts(traces.texts, cache);
  const r = train(traces, {
    ...DEFAULT_TRAIN_OPTIONS,
    seed,
    semantic: "on",
    workers: 2,
  }, e);
  const table = r.table;
  const name = table.questions[0]!.name;
  const q = table.byName.get(name)!;
  const tier = q.semantic!;
  const state = new TableState(table);
  setThresholdInForce(table, state, name, 0);
  const labels = d.bankTest.questions[0]!;
  const rows: Row[] = d.bankTest.texts.map((text, i) => {
    const truth = labels.options[labels.labels[i]!]!;
    const prepared = prepareText(table, state, text);
    const a = assess(table, state, prepared, name, {}, QUIET_GUARD).answer;
    const s = semanticAssess(
      tier,
      testE[i]!,
      undefined,
      fullProbabilities(table, state, prepared, q),
    );
    return {
      tableConf: a.certified ? a.confidence : -1,
      scoped: !a.certified && a.flag === "drift",
      scopedConf: !a.certified && a.flag === "drift" ? a.confidence : -1,
      tableRight: a.kind === "choice" && a.choice === truth,
      tierConf: s.confidence,
      tierRight: q.options[s.best] === truth,
      novel: s.novel,
    };
  });
  const L = tier.calibration.threshold!;
  let served = 0, servedWrong = 0;
  for (const x of rows) {
    if (x.tableConf >= L) {
      served++;
      if (!x.tableRight) servedWrong++;
    } else if (x.tableConf >= 0 && !x.novel && x.tierConf >= L) {
      served++;
      if (!x.tierRight) servedWrong++;
    }
  }
  const at = (f: (level: number) => number) => LEVELS.map(f);
  const asServed = (x: Row) => x.tableConf >= 0 && !x.novel;
  const calibration = r.report.split.parts.calibration.traces;
  console.log(
    `${values.all ? "all of train.csv" : "3,000 traces"}, seed ${seed}: L ${
      L.toFixed(3)
    } certifies ${pct(served / rows.length)} of test.csv at ${
      pct(servedWrong / Math.max(1, served))
    }`,
  );
  console.log(header);
  for (
    const [label, shares] of [
      ["rule as served", at((l) => ceiling(rows, asServed, l))],
      [
        "novelty guard off",
        at((l) => ceiling(rows, (x) => x.tableConf >= 0, l)),
      ],
      [
        "second tier also where out of scope",
        at((l) =>
          ceiling(rows, (x) => (x.tableConf >= 0 || x.scoped) && !x.novel, l)
        ),
      ],
      [
        "neither out-of-scope rule nor guard (as the anchor)",
        at((l) =>
          ceiling(
            rows.map((x) => ({
              ...x,
              tableConf: x.scoped ? x.scopedConf : x.tableConf,
            })),
            (x) => x.tableConf >= 0 || x.scoped,
            l,
          )
        ),
      ],
      [
        "table only at 0.95 or more",
        at((l) => ceiling(rows, asServed, l, 0.95)),
      ],
      [
        "table only at 0.99 or more",
        at((l) => ceiling(rows, asServed, l, 0.99)),
      ],
      ["table alone", at((l) => ceiling(rows, () => false, l))],
      [
        "second tier for every text",
        at((l) =>
          ceiling(rows.map((x) => ({ ...x, tableConf: -1 })), () => true, l)
        ),
      ],
    ] as const
  ) console.log(line(label, shares));
  if (values.anchor) {
    for (const l of await anchor(traces)) console.log(l);
  }
  const passes = [0.6, 0.7, 0.8, 0.9].map((share) => {
    const n = Math.round(share * calibration);
    const k = largestPassing(n, 0.05, 0.05);
    return `${k} of ${n} (${pct(k / n)})`;
  });
  console.log(
    `  the binomial test at alpha = delta = 0.05 on ${calibration} calibration answers passes at most ${
      passes.join(", ")
    } disagreeing (fewer still with near-duplicates counted by unit)`,
  );
}
