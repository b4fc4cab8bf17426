/**
 * The process's open file descriptors and their limit, read from
 * `/proc/self/fd` and `/proc/self/limits` (Linux). Deno lets a program read
 * those only under `--allow-all`, so under the locked-down permissions the
 * figures are unknown (null) and `/metrics` leaves them out; the first
 * refusal is remembered and the files are not tried again.
 *
 * @module
 */

/** Open descriptors and the soft limit on them; null where unknown. */
export interface Descriptors {
  open: number | null;
  max: number | null;
}

const UNKNOWN: Descriptors = { open: null, max: null };

/** Reads the process's descriptors, or says they cannot be read here. */
export class DescriptorProbe {
  #readable = true;

  /** The figures now (see the module doc); never throws. */
  read(): Descriptors {
    if (!this.#readable) return UNKNOWN;
    try {
      let open = 0;
      for (const _ of Deno.readDirSync("/proc/self/fd")) open++;
      return {
        open,
        max: softLimit(Deno.readTextFileSync("/proc/self/limits")),
      };
    } catch {
      // No /proc (not Linux), or no permission: not asked again.
      this.#readable = false;
      return UNKNOWN;
    }
  }
}

/**
 * The soft limit on open files in the text of `/proc/self/limits`; null
 * when unlimited or not found.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { softLimit } from "./descriptors.ts";
 * assert.equal(softLimit("Max open files            65536                65536                files"), 65536);
 * ```
 */
export function softLimit(limits: string): number | null {
  const m = /^Max open files\s+(\d+)/m.exec(limits);
  return m === null ? null : Number(m[1]);
}
