/**
 * What the benchmarks that read the public data share: where it is
 * (`../shared/data` beside the repository), leaving quietly when it is
 * absent, and the `--embed-cache` option of those that embed texts.
 *
 * @module
 */

import { readTraces, type TraceSet } from "../src/traces/mod.ts";

/** The public data folder (`../shared/data/`, with the trailing slash). */
export const DATA = new URL("../../shared/data/", import.meta.url).pathname;

/**
 * Ends the benchmark (exit code 0, with a printed reason) when the public
 * data is absent (no BANKING77 training file); returns when it is there.
 */
export async function exitWithoutData(): Promise<void> {
  try {
    await Deno.stat(`${DATA}banking77/train.csv`);
  } catch {
    console.log(
      `skipped: no data at ${DATA} (the benchmark reads ../shared/data)`,
    );
    Deno.exit(0);
  }
}

/** BANKING77's training traces. */
export function readBanking77Train(): Promise<TraceSet> {
  return readTraces([`${DATA}banking77/train.csv`]);
}

/**
 * The `--embed-cache FILE` option for `parseArgs`: where embeddings are
 * kept between runs, `dtable-bench-embeddings.bin` in `$TMPDIR` (or
 * `/tmp`) by default.
 */
export const EMBED_CACHE_OPTION = {
  type: "string",
  default: `${Deno.env.get("TMPDIR") ?? "/tmp"}/dtable-bench-embeddings.bin`,
} as const;
