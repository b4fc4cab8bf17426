/**
 * Trace input benchmark: reading speed and memory of streamed trace files,
 * measured side by side in one run, each reading in a fresh process.
 *
 * Writes into a temporary folder a JSON Lines log of `--lines` traces (default
 * 1,000,000) drawn from `--distinct` texts (default 20,000; BANKING77 texts when
 * `../shared/data` has them, made-up ones otherwise), the same log gzipped and
 * as CSV, and a log of a tenth as many lines over the same texts. Then prints,
 * per file: lines per second, peak resident memory, and the heap still in use
 * after a full garbage collection next to the reader's own estimate
 * (`TraceSetBuilder.heldBytes`, which the memory guard watches). Reading the
 * whole file as one string first (what `parseTraceText` needs) is measured
 * too, for comparison (its heap held includes the file's text, which the
 * runtime keeps alive after `Deno.readTextFile`).
 *
 * ```sh
 * deno task bench:traces            # 1,000,000 lines
 * deno task bench:traces --lines 200000 --distinct 5000
 * ```
 *
 * @module
 */

import { parseArgs } from "node:util";
import {
  parseTraceText,
  readTraces,
  TraceSetBuilder,
} from "../src/traces/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    lines: { type: "string", default: "1000000" },
    distinct: { type: "string", default: "20000" },
    child: { type: "string" },
    whole: { type: "boolean", default: false },
  },
});

const MB = 1024 * 1024;

/** The file read as one string, then parsed (in a frame of its own, so the string dies with it). */
async function readWhole(file: string) {
  return parseTraceText(file, await Deno.readTextFile(file));
}

/** In a child: read the file, collect garbage, report figures as JSON. */
async function child(file: string, whole: boolean): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --v8-flags=--expose-gc");
  gc();
  const { getHeapStatistics } = await import("node:v8");
  const before = getHeapStatistics().used_heap_size;
  const started = performance.now();
  const set = whole ? await readWhole(file) : await readTraces([file]);
  const seconds = (performance.now() - started) / 1000;
  gc();
  const after = getHeapStatistics().used_heap_size;
  // The reader's estimate of the same set, rebuilt from it.
  const b = new TraceSetBuilder();
  b.beginFile(file);
  const q = set.questions[0]!;
  set.texts.forEach((t, i) => {
    b.addTrace(t, NaN, undefined);
    if (q.labels[i]! >= 0) b.answer(i, q.name, q.options[q.labels[i]!]!);
  });
  b.endFile();
  const status = await Deno.readTextFile("/proc/self/status");
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)![1]) * 1024;
  console.log(JSON.stringify({
    traces: set.texts.length,
    seconds,
    heapHeld: after - before,
    estimate: b.heldBytes,
    peakRss: hwm,
  }));
}

if (values.child !== undefined) {
  await child(values.child, values.whole);
  Deno.exit(0);
}

const lines = Number(values.lines);
const distinct = Number(values.distinct);

async function sourceTexts(): Promise<string[]> {
  const b77 = new URL("../../shared/data/banking77/train.csv", import.meta.url)
    .pathname;
  try {
    const texts = [...new Set((await readTraces([b77])).texts)];
    console.log(`texts: BANKING77 train.csv (${texts.length} distinct)`);
    return texts;
  } catch {
    console.log("texts: made up (../shared/data is absent)");
    return Array.from(
      { length: 10000 },
      (_, i) => `made up support message number ${i} about a card`,
    );
  }
}

const base = await sourceTexts();
const pool = Array.from(
  { length: distinct },
  (_, i) => i < base.length ? base[i]! : `${base[i % base.length]} (${i})`,
);
const work = await Deno.makeTempDir({ prefix: "dtable-bench-traces-" });
const encoder = new TextEncoder();

/** Writes `n` traces drawn from the pool (seeded), as JSON Lines and CSV. */
async function writeLog(n: number, name: string): Promise<string> {
  const jsonl = await Deno.open(`${work}/${name}.jsonl`, {
    write: true,
    create: true,
  });
  const csv = await Deno.open(`${work}/${name}.csv`, {
    write: true,
    create: true,
  });
  await csv.write(encoder.encode("text,topic\n"));
  // mulberry32, seeded: the same log on every run.
  let seed = 1;
  const random = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = 0; i < n;) {
    const a: string[] = [], c: string[] = [];
    for (let j = 0; j < 10000 && i < n; j++, i++) {
      const text = pool[Math.floor(random() * pool.length)]!;
      const topic = `t${Math.floor(random() * 20)}`;
      a.push(JSON.stringify({ text, answers: { topic } }));
      c.push(`"${text.replaceAll('"', '""')}",${topic}`);
    }
    await jsonl.write(encoder.encode(a.join("\n") + "\n"));
    await csv.write(encoder.encode(c.join("\n") + "\n"));
  }
  jsonl.close();
  csv.close();
  const gz = await Deno.open(`${work}/${name}.jsonl.gz`, {
    write: true,
    create: true,
  });
  await (await Deno.open(`${work}/${name}.jsonl`)).readable
    .pipeThrough(new CompressionStream("gzip"))
    .pipeTo(gz.writable);
  return `${work}/${name}`;
}

interface Figures {
  traces: number;
  seconds: number;
  heapHeld: number;
  estimate: number;
  peakRss: number;
}

async function measure(file: string, whole = false): Promise<Figures> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL(import.meta.url).pathname,
      "--child",
      file,
      ...(whole ? ["--whole"] : []),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (out.code !== 0) throw new Error(`reading ${file} failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

try {
  console.log(
    `writing ${lines.toLocaleString("en-US")} and ${
      (lines / 10).toLocaleString("en-US")
    } traces over ${
      distinct.toLocaleString("en-US")
    } distinct texts to ${work}`,
  );
  const big = await writeLog(lines, "big");
  const small = await writeLog(Math.round(lines / 10), "small");
  const rows: [string, string, boolean][] = [
    ["JSON Lines", `${big}.jsonl`, false],
    ["JSON Lines, gzip", `${big}.jsonl.gz`, false],
    ["CSV", `${big}.csv`, false],
    ["JSON Lines, a tenth of the lines", `${small}.jsonl`, false],
    ["JSON Lines read whole (parseTraceText)", `${big}.jsonl`, true],
  ];
  const results: Figures[] = [];
  for (const [label, file, whole] of rows) {
    const size = (await Deno.stat(file)).size;
    const f = await measure(file, whole);
    results.push(f);
    console.log(
      `${label.padEnd(40)} ${(size / MB).toFixed(1).padStart(6)} MB file: ${
        Math.round(f.traces / f.seconds).toLocaleString("en-US").padStart(9)
      } lines/s, peak RSS ${
        (f.peakRss / MB).toFixed(0).padStart(4)
      } MB, heap held ${
        (f.heapHeld / MB).toFixed(1).padStart(5)
      } MB (estimate ${(f.estimate / MB).toFixed(1)} MB)`,
    );
  }
  const [jsonl, , , tenth, whole] = results;
  console.log(
    `heap held, 10x the lines over the same texts: ${
      (jsonl!.heapHeld / tenth!.heapHeld).toFixed(2)
    }x (file bytes: 10x)`,
  );
  console.log(
    `peak RSS, streamed / read whole: ${
      (jsonl!.peakRss / whole!.peakRss).toFixed(2)
    }`,
  );
  console.log(
    `estimate / heap held (streamed JSON Lines): ${
      (jsonl!.estimate / jsonl!.heapHeld).toFixed(2)
    }`,
  );
} finally {
  if (!Deno.env.get("KEEP")) await Deno.remove(work, { recursive: true });
}
