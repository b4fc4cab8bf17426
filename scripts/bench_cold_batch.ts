/**
 * The batch curve `bench:cold` sets the learner beside: for each window of
 * the stream, a bundle trained in one batch on the stream's first N texts
 * with every label (N = the window's start, the same seed and settings),
 * measured on the window's own texts as the learner was (its certified
 * share and the disagreement among them). A learner that kept pace with
 * its evidence would certify about as much as this curve, a little later.
 *
 * The batch figures depend only on the stream, the seed and the training
 * code, not on the learner, so they are kept in a cache file (`--batch-cache`)
 * between runs; `--fresh-batch` trains them again.
 *
 * @module
 */

import { loadBundle } from "../src/bundle/mod.ts";
import { evaluate } from "../src/eval/mod.ts";
import { parseJsonlTraces, type TraceSet } from "../src/traces/mod.ts";
import { trainBundle, writeTrainedBundle } from "../src/train/mod.ts";
import { embedTraces } from "../src/train/embed.ts";

/** One text of the stream and the model's answer to it. */
export interface StreamItem {
  text: string;
  label: string;
}

/** What one bundle certified of a window's texts. */
export interface WindowShare {
  /** Texts of the window, certified ones, and certified ones that disagree. */
  n: number;
  certified: number;
  wrong: number;
}

/** Fewer labels than this train no batch bundle (nothing can be certified). */
const FEWEST = 300;

/** Traces of `items`, one question `category`. */
function tracesOf(items: readonly StreamItem[]): TraceSet {
  return parseJsonlTraces(
    "stream.jsonl",
    items.map((x) =>
      JSON.stringify({ text: x.text, answers: { category: x.label } })
    ).join("\n"),
  );
}

/**
 * What a bundle trained in one batch on `train` certifies of `window`
 * (both tiers, with the window's embeddings, when it has a second tier).
 */
async function batchShare(
  train: readonly StreamItem[],
  window: readonly StreamItem[],
  semantic: string,
  seed: number,
  embedCache: string | undefined,
): Promise<WindowShare> {
  const none = { n: window.length, certified: 0, wrong: 0 };
  if (train.length < FEWEST) return none;
  const trained = await trainBundle({
    training: { semantic: semantic as "auto" | "off", seed, workers: 2 },
    embedCache,
    allowUncalibrated: true,
  }, tracesOf(train));
  const dir = await Deno.makeTempDir({ prefix: "dtable-batch-curve-" });
  try {
    await writeTrainedBundle(`${dir}/bundle`, trained, 1);
    const table = await loadBundle(`${dir}/bundle`);
    const tiered = table.questions.some((q) => q.semantic !== undefined);
    const embeddings = tiered
      ? await embedTraces(window.map((x) => x.text), embedCache, 2)
      : undefined;
    const f = evaluate(table, tracesOf(window), false, undefined, embeddings)
      .questions.category;
    return f === undefined ? none : {
      n: window.length,
      certified: f.certified,
      wrong: f.disagreements,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * The batch curve over windows ending at `ends` (each window starts where
 * the one before ended): per window, what a batch bundle on the texts
 * before it certifies of it. Cached in `cachePath` by `key` and window.
 */
export async function batchCurve(
  items: readonly StreamItem[],
  ends: readonly number[],
  options: {
    semantic: string;
    seed: number;
    key: string;
    cachePath: string;
    fresh: boolean;
    embedCache: string | undefined;
    note: (line: string) => void;
  },
): Promise<WindowShare[]> {
  let cache: Record<string, WindowShare> = {};
  if (!options.fresh) {
    try {
      cache = JSON.parse(await Deno.readTextFile(options.cachePath));
    } catch { /* none yet */ }
  }
  const out: WindowShare[] = [];
  let start = 0;
  for (const end of ends) {
    const id = `${options.key} ${options.semantic} ${start}-${end}`;
    let share = cache[id];
    if (share === undefined) {
      const began = performance.now();
      share = await batchShare(
        items.slice(0, start),
        items.slice(start, end),
        options.semantic,
        options.seed,
        options.embedCache,
      );
      options.note(
        `batch curve: ${options.semantic} on the first ${start} texts, window to ${end}: ${share.certified} of ${share.n} certified (${
          ((performance.now() - began) / 1000).toFixed(0)
        } s)`,
      );
      cache[id] = share;
      await Deno.writeTextFile(options.cachePath, JSON.stringify(cache));
    }
    out.push(share);
    start = end;
  }
  return out;
}

/**
 * The first window end at which a curve's certified share reaches each of
 * `levels` (null: never), from per-window shares.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { firstReaching } from "./bench_cold_batch.ts";
 * assert.deepEqual(
 *   firstReaching([1000, 2000, 3000], [0.1, 0.6, 0.7], [0.5, 0.65]),
 *   [2000, 3000],
 * );
 * ```
 */
export function firstReaching(
  ends: readonly number[],
  shares: readonly number[],
  levels: readonly number[],
): (number | null)[] {
  return levels.map((level) => {
    const at = shares.findIndex((s) => s >= level);
    return at < 0 ? null : ends[at]!;
  });
}
