/**
 * Training at scale: how time and memory grow with traces and options, and
 * how many traces a question needs (the learning curve).
 *
 * 1. Builds trace files of 10k, 100k and 1M lines from BANKING77 texts
 *    (word-level perturbations, a second yes/no question; see
 *    `scale_data.ts`) in a temporary folder, trains each in a child process
 *    and prints time, peak memory, lines per second, time per phase and the
 *    certified share on BANKING77 `test.csv`; then times `eval` of the
 *    largest file.
 * 2. Trains the same number of lines with 77, 150 and 500 options.
 * 3. Trains on 10% to 100% of BANKING77 `train.csv` and writes the certified
 *    share on `test.csv` to `docs/learning-curve.svg`.
 * 4. Trains the middle size with `--workers 1` and with the default, side by
 *    side, and checks the bundles are the same bytes.
 *
 * Usage: deno task bench:train [--sizes 10000,100000,1000000]
 *   [--option-lines 100000] [--curve-seeds 1] [--similarity S] [--quick]
 *   [--semantic] (also trains each size with both tiers, through the
 *   command, from an empty embedding cache)
 *   [--skip sizes,options,curve,workers]
 *
 * The variants of one BANKING77 text are near-duplicates: left to a random
 * split they would sit on both sides of it and make the calibration split
 * look like the training data (certifying nearly everything, and then
 * disagreeing far more than alpha on `test.csv`). So the child gives every
 * trace a group, its source text, and training splits by group (as a log
 * with a user or session per trace would be split); `--split random` uses
 * the trainer's near-duplicate search instead, with `--similarity`. Training
 * runs in a child process (this script with `--child`) so that its peak
 * memory can be read from /proc.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { encodeBundle } from "../src/bundle/codec.ts";
import { loadBundle, writeBundleAtomically } from "../src/bundle/files.ts";
import { evaluate } from "../src/eval/evaluate.ts";
import { readTraces } from "../src/traces/mod.ts";
import { train } from "../src/train/trainer.ts";
import { DEFAULT_TRAIN_OPTIONS } from "../src/train/options.ts";
import { trainedContents } from "../src/train/contents.ts";
import { shuffle } from "../src/train/split.ts";
import { seededRandom } from "../src/engine/random.ts";
import { tracesAt } from "./small_subsets.ts";
import { banking77Rows, writeScaleTraces } from "./scale_data.ts";
import { type CurvePoint, learningCurveSvg } from "./learning_curve_svg.ts";
import { percent } from "../src/format.ts";

const DATA = new URL("../../shared/data/banking77/", import.meta.url).pathname;
const SELF = new URL(import.meta.url).pathname;
const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** What the child reports about one training run. */
interface ChildReport {
  readSeconds: number;
  /** Seconds per phase, from the trainer's progress lines. */
  phases: Record<string, number>;
  trainSeconds: number;
  /** Resident memory after reading the traces, MB. */
  rssAfterReadMb: number;
}

if (Deno.args[0] === "--child") {
  await child(Deno.args.slice(1));
  Deno.exit(0);
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    sizes: { type: "string", default: "10000,100000,1000000" },
    "option-lines": { type: "string", default: "100000" },
    "curve-seeds": { type: "string", default: "1" },
    similarity: { type: "string" },
    split: { type: "string", default: "group" },
    skip: { type: "string", default: "" },
    quick: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    semantic: { type: "boolean", default: false },
  },
});
const skip = new Set(values.skip.split(",").filter((s) => s !== ""));
const sizes = (values.quick ? "10000,100000" : values.sizes).split(",").map(
  Number,
);
const optionLines = values.quick ? 20_000 : Number(values["option-lines"]);
const curveSeeds = Number(values["curve-seeds"]);
const similarity = values.similarity ??
  String(DEFAULT_TRAIN_OPTIONS.similarity);
const cores = navigator.hardwareConcurrency;
if (values.split !== "group" && values.split !== "random") {
  throw new RangeError(`--split must be group or random: got ${values.split}`);
}
const splitMode = values.split;

try {
  await Deno.stat(`${DATA}train.csv`);
} catch {
  console.log(
    `skipped: no data at ${DATA} (the benchmark reads ../shared/data)`,
  );
  Deno.exit(0);
}

const work = await Deno.makeTempDir({ prefix: "dtable-bench-train-" });
const rows = banking77Rows(await Deno.readTextFile(`${DATA}train.csv`));
const test = await readTraces([`${DATA}test.csv`]);
const s1 = (x: number) => x.toFixed(1);
console.log(
  `machine: ${cores} cores; split ${splitMode}${
    splitMode === "random" ? ` (similarity ${similarity})` : " (by source text)"
  }; data in ${work}${values.keep ? " (kept)" : ""}`,
);

try {
  if (!skip.has("sizes")) await scaleBySize();
  if (!skip.has("options") && optionLines > 0) await scaleByOptions();
  if (!skip.has("workers")) await workersSideBySide();
  if (!skip.has("curve")) await learningCurve();
  if (values.semantic) {
    for (const n of sizes) await secondTierAtScale(n);
  }
} finally {
  if (!values.keep) await Deno.remove(work, { recursive: true });
}

async function scaleBySize(): Promise<void> {
  console.log(
    "\n== Growth with traces (77 options + yes/no about_card; certified share on BANKING77 test.csv)",
  );
  console.log(
    "lines     | time s | lines/s | peak MB | after read MB | split s | featurise s | fit s | calibrate+measure s | certified | disagreement",
  );
  let last = "";
  let lastBundle = "";
  for (const n of sizes) {
    const file = `${work}/scale-${n}.jsonl`;
    const { sources } = await writeScaleTraces(file, rows, {
      lines: n,
      seed: 1,
      intents: 77,
      markers: 1,
      yesNo: true,
    });
    const out = `${work}/bundle-${n}`;
    const run = await trainChild(file, out, cores, sources);
    const f = evaluate(await loadBundle(out), test, false).questions.category!;
    const p = run.report.phases;
    console.log(
      `${String(n).padEnd(9)} | ${s1(run.seconds).padStart(6)} | ${
        Math.round(n / run.seconds).toString().padStart(7)
      } | ${run.peakMb.toFixed(0).padStart(7)} | ${
        run.report.rssAfterReadMb.toFixed(0).padStart(13)
      } | ${s1(p.split ?? 0).padStart(7)} | ${
        s1(p.featurise ?? 0).padStart(11)
      } | ${s1(p.fit ?? 0).padStart(5)} | ${
        s1(p.calibrate ?? 0).padStart(19)
      } | ${percent(f.coverage).padStart(9)} | ${percent(f.disagreement)}`,
    );
    last = file;
    lastBundle = out;
  }
  if (last !== "") {
    const started = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        MAIN,
        "eval",
        "--bundle",
        lastBundle,
        "--traces",
        last,
      ],
      stdout: "null",
      stderr: "inherit",
    }).output();
    console.log(
      `eval of ${last.split("/").at(-1)}: ${
        s1((performance.now() - started) / 1000)
      } s (exit ${out.code})`,
    );
  }
}

async function scaleByOptions(): Promise<void> {
  console.log(
    `\n== Growth with options (${optionLines} lines, one choice question; same texts, intents × channel markers)`,
  );
  const shapes = [
    { intents: 77, markers: 1 },
    { intents: 75, markers: 2 },
    { intents: 50, markers: 10 },
  ];
  let base = 0;
  for (const shape of shapes) {
    const file = `${work}/options-${shape.intents * shape.markers}.jsonl`;
    const { options: k, sources } = await writeScaleTraces(file, rows, {
      lines: optionLines,
      seed: 2,
      ...shape,
      yesNo: false,
    });
    const run = await trainChild(
      file,
      `${work}/options-bundle-${k}`,
      cores,
      sources,
    );
    const fit = run.report.phases.fit ?? run.seconds;
    if (base === 0) base = fit;
    console.log(
      `${k} options: ${s1(run.seconds)} s in all, fit ${s1(fit)} s (${
        (fit / base).toFixed(2)
      }x the 77-option fit), calibrate+measure ${
        s1(run.report.phases.calibrate ?? 0)
      } s, peak ${run.peakMb.toFixed(0)} MB`,
    );
  }
}

async function workersSideBySide(): Promise<void> {
  const n = sizes.find((s) => s >= 100_000) ?? sizes[0]!;
  console.log(
    `\n== Workers side by side (${n} lines, 77 options + yes/no)`,
  );
  const file = `${work}/scale-${n}.jsonl`;
  const { sources } = await writeScaleTraces(file, rows, {
    lines: n,
    seed: 1,
    intents: 77,
    markers: 1,
    yesNo: true,
  });
  const one = await trainChild(file, `${work}/w1`, 1, sources);
  const many = await trainChild(file, `${work}/w${cores}`, cores, sources);
  const same = await sameFiles(`${work}/w1`, `${work}/w${cores}`);
  console.log(
    `--workers 1: fit+calibrate ${
      s1(one.report.phases.fit ?? 0)
    } s; --workers ${cores}: ${s1(many.report.phases.fit ?? 0)} s (${
      ((one.report.phases.fit ?? 0) / (many.report.phases.fit ?? 1)).toFixed(2)
    }x faster); bundles ${same ? "byte-identical" : "DIFFER"}`,
  );
}

async function learningCurve(): Promise<void> {
  console.log(
    `\n== Learning curve: BANKING77 train.csv subsets, certified share on test.csv (mean of ${curveSeeds} seed${
      curveSeeds === 1 ? "" : "s"
    })`,
  );
  const all = await readTraces([`${DATA}train.csv`]);
  const points: CurvePoint[] = [];
  for (let share = 10; share <= 100; share += 10) {
    let certified = 0;
    let disagreement = 0;
    let used = 0;
    for (let seed = 1; seed <= curveSeeds; seed++) {
      const order = shuffle(
        Array.from(all.texts, (_, i) => i),
        seededRandom(1000 + seed),
      );
      const picked = order.slice(0, Math.round(all.texts.length * share / 100))
        .sort((a, b) => a - b);
      used = picked.length;
      const subset = tracesAt(all, picked);
      try {
        const r = train(subset, {
          ...DEFAULT_TRAIN_OPTIONS,
          seed,
          workers: cores,
        });
        const f = evaluate(r.table, test, false).questions.category!;
        certified += f.coverage ?? 0;
        disagreement += f.disagreement ?? 0;
      } catch (e) {
        console.log(`${share}%: not trained (${(e as Error).message})`);
      }
    }
    const point = {
      traces: used,
      certified: certified / curveSeeds,
      disagreement: disagreement / curveSeeds,
    };
    points.push(point);
    console.log(
      `${String(share).padStart(3)}% (${used} traces): certified ${
        percent(point.certified)
      }, disagreement ${percent(point.disagreement)}`,
    );
  }
  const svg = learningCurveSvg(
    "BANKING77 (77 options): certified share against traces",
    points,
  );
  const path = new URL("../docs/learning-curve.svg", import.meta.url).pathname;
  await Deno.writeTextFile(path, svg);
  console.log(`wrote ${path}`);
}

/**
 * A file of `n` lines trained by the command itself as a user runs it
 * (the default `--semantic auto`, which embeds here: the table leaves much
 * of "category" to low confidence; an empty embedding cache, the default
 * `--embed-max`): wall time, peak resident memory, what it says of the
 * sample, and the machine's load before and after.
 */
async function secondTierAtScale(n: number): Promise<void> {
  console.log(
    `\n== The second tier at ${n} traces (train's default, --semantic auto, from an empty embedding cache; machine load ${await loadAverage()})`,
  );
  const file = `${work}/scale-${n}-groups.jsonl`;
  await writeScaleTraces(file, rows, {
    lines: n,
    seed: 1,
    intents: 77,
    markers: 1,
    yesNo: true,
    groups: true,
  });
  const started = performance.now();
  const proc = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../main.ts", import.meta.url).pathname,
      "train",
      "--traces",
      file,
      "--out",
      `${work}/bundle-${n}-semantic`,
      // The default command: --semantic auto.
      "--embed-cache",
      `${work}/embeddings-${n}.bin`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Read while it runs: its progress would otherwise fill the pipe.
  const output = proc.output();
  const peakMb = await peakWhileRunning(proc.pid, output);
  const result = await output;
  const seconds = (performance.now() - started) / 1000;
  const said = new TextDecoder().decode(result.stderr) +
    new TextDecoder().decode(result.stdout);
  if (result.code !== 0) {
    console.log(`failed (exit ${result.code}): ${said.slice(-500)}`);
    return;
  }
  const sample = said.match(/second tier on a sample of [^\n]*/)?.[0] ??
    "(no sample: every trace embedded)";
  const embedded = said.match(/embedded \d+ texts in [^\n]*/)?.[0] ?? "";
  const auto = said.match(/second tier \(--semantic auto\): [^\n]*/)?.[0] ??
    "";
  if (auto !== "") console.log(auto);
  console.log(
    `${n} traces: ${
      s1(seconds)
    } s wall (targets: 90 s at 10,000 traces, 300 s at 1,000,000; load after ${await loadAverage()}), peak ${
      peakMb.toFixed(0)
    } MB; ${embedded}; ${sample}`,
  );
}

/** The machine's load averages (1, 5, 15 minutes), as /proc/loadavg says them. */
async function loadAverage(): Promise<string> {
  try {
    const cat = await new Deno.Command("cat", {
      args: ["/proc/loadavg"],
      stdout: "piped",
      stderr: "null",
    }).output();
    return new TextDecoder().decode(cat.stdout).split(" ").slice(0, 3).join(
      " ",
    );
  } catch {
    return "unknown";
  }
}

/** The largest VmHWM of process `pid` until `done` (through `cat`: Deno grants /proc only with --allow-all). */
async function peakWhileRunning(
  pid: number,
  done: Promise<unknown>,
): Promise<number> {
  let peakKb = 0;
  let running = true;
  done.finally(() => running = false);
  while (running) {
    try {
      const cat = await new Deno.Command("cat", {
        args: [`/proc/${pid}/status`],
        stdout: "piped",
        stderr: "null",
      }).output();
      const m = new TextDecoder().decode(cat.stdout).match(/VmHWM:\s+(\d+)/);
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch { /* finished */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  return peakKb / 1024;
}

/** Trains in a child process; wall time and peak resident memory (VmHWM). */
async function trainChild(
  traces: string,
  out: string,
  workers: number,
  sources: number,
): Promise<{ seconds: number; peakMb: number; report: ChildReport }> {
  const started = performance.now();
  const proc = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      SELF,
      "--child",
      traces,
      out,
      String(workers),
      similarity,
      splitMode === "group" ? String(sources) : "0",
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let peakKb = 0;
  const timer = setInterval(async () => {
    try {
      // Through `cat`: Deno grants /proc only with --allow-all.
      const cat = await new Deno.Command("cat", {
        args: [`/proc/${proc.pid}/status`],
        stdout: "piped",
        stderr: "null",
      }).output();
      const status = new TextDecoder().decode(cat.stdout);
      const m = status.match(/VmHWM:\s+(\d+)/);
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch { /* finished */ }
  }, 100);
  const result = await proc.output();
  clearInterval(timer);
  if (result.code !== 0) {
    throw new Error(`training ${traces} failed (exit ${result.code})`);
  }
  const lines = new TextDecoder().decode(result.stdout).trim().split("\n");
  return {
    seconds: (performance.now() - started) / 1000,
    peakMb: peakKb / 1024,
    report: JSON.parse(lines.at(-1)!),
  };
}

/** The child: read, train and write a bundle as `train` does; report phases on stdout. */
async function child(args: string[]): Promise<void> {
  const [traces, out, workers, sim, sources] = args;
  const t0 = performance.now();
  const set = await readTraces([traces!]);
  // Line i is a variant of source text i % sources (see `scale_data.ts`):
  // its group. The split reads `groups` when every trace has one.
  const bySource = Number(sources);
  if (bySource > 0) {
    Object.assign(set, {
      groups: Int32Array.from(set.texts, (_, i) => i % bySource),
      groupNames: Array.from({ length: bySource }, (_, g) => `source ${g}`),
    });
  }
  const readSeconds = (performance.now() - t0) / 1000;
  const rssAfterReadMb = Deno.memoryUsage().rss / 2 ** 20;
  const marks: [string, number][] = [];
  const started = performance.now();
  const result = train(set, {
    ...DEFAULT_TRAIN_OPTIONS,
    workers: Number(workers),
    similarity: Number(sim),
    progress: (line) => {
      marks.push([line, performance.now()]);
      console.error(
        `  [${
          ((performance.now() - started) / 1000).toFixed(1).padStart(6)
        }s] ${line}`,
      );
    },
  });
  const ended = performance.now();
  const at = (prefix: string) =>
    marks.find(([line]) => line.startsWith(prefix))?.[1] ?? started;
  const phases = {
    split: (at("split:") - at("splitting")) / 1000,
    featurise: (at("training ") - at("featurising")) / 1000,
    fit: (at("fitted;") - at("training ")) / 1000,
    calibrate: (ended - at("fitted;")) / 1000,
  };
  await writeBundleAtomically(
    out!,
    await encodeBundle(trainedContents(result)),
  );
  const report: ChildReport = {
    readSeconds,
    phases,
    trainSeconds: (ended - started) / 1000,
    rssAfterReadMb,
  };
  console.log(JSON.stringify(report));
}

async function sameFiles(a: string, b: string): Promise<boolean> {
  for await (const entry of Deno.readDir(a)) {
    const x = await Deno.readFile(`${a}/${entry.name}`);
    const y = await Deno.readFile(`${b}/${entry.name}`);
    if (x.length !== y.length || x.some((v, i) => v !== y[i])) return false;
  }
  return true;
}
