/**
 * The larger-than-memory guard: while traces are read, compare what the set
 * being built holds (and the heap as a whole) with what the process may use,
 * and stop with advice well before V8 gives up.
 *
 * @module
 */

import { getHeapStatistics } from "node:v8";
import type { HeapUse } from "./types.ts";

/**
 * V8's heap limit counts the young generation (96 MiB on 64-bit builds:
 * `--max-old-space-size=64` gives a limit of 160 MiB), which long-lived data
 * never fills; the old generation gets the rest.
 */
const YOUNG_GENERATION = 96 * 1024 * 1024;

/** The share of the old generation the traces being read may hold: training needs the rest. */
export const TRACE_SHARE = 0.5;

/** The share of the old generation in use at which reading stops whatever the traces hold. */
export const HEAP_SHARE = 0.9;

/** V8's own figures. */
export function v8Heap(): HeapUse {
  const s = getHeapStatistics();
  return { used: s.used_heap_size, limit: s.heap_size_limit };
}

const MB = 1024 * 1024;

/** Watches memory while traces are read. */
export class MemoryGuard {
  readonly #heap: () => HeapUse;

  /** `heap` tells the heap's use and limit (V8's by default). */
  constructor(heap: () => HeapUse = v8Heap) {
    this.#heap = heap;
  }

  /**
   * Why reading must stop, or undefined: `held` is the estimated bytes the
   * traces read so far hold, `distinct` their number of distinct texts.
   */
  check(held: number, distinct: number): string | undefined {
    const { used, limit } = this.#heap();
    const old = Math.max(limit - YOUNG_GENERATION, limit / 4);
    const advice =
      `split the traces into smaller files, or give the process more memory: deno run --v8-flags=--max-old-space-size=${
        Math.ceil((2 * old) / MB)
      } (MB) ...`;
    if (held > TRACE_SHARE * old) {
      return `the ${distinct} distinct texts read so far take about ${
        Math.round(held / MB)
      } MB, more than ${TRACE_SHARE * 100}% of the ${
        Math.round(old / MB)
      } MB this process may use (training needs the rest); ${advice}`;
    }
    if (used > HEAP_SHARE * old) {
      return `the heap holds ${Math.round(used / MB)} MB of the ${
        Math.round(old / MB)
      } MB this process may use (${distinct} distinct texts read); ${advice}`;
    }
    return undefined;
  }
}
