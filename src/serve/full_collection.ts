/**
 * A full garbage collection on demand, for the moment after a reload. The
 * table a reload replaced keeps its weights outside the JavaScript heap
 * (megabytes per table: docs/benchmarks.md), and V8 collects such memory only once its
 * allowance for memory outside the heap runs out, which lets up to four
 * dead tables stay resident. Collecting once after a reload gives that
 * memory back at once.
 *
 * V8's `gc` is reached as Node programs reach it: `--expose-gc` is turned
 * on at run time and the function taken from a new context. It needs no
 * permission; `serve` calls it only after a reload, never on a request.
 *
 * @module
 */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let gc: (() => void) | null = null;

/** Runs a full collection of the whole heap now (tens of ms on a serving heap). */
export function collectGarbage(): void {
  if (gc === null) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
}
