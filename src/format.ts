/**
 * How the program writes a number for people and bytes for ids, each in
 * one place: a share as a percent with one decimal, bytes as lowercase
 * hex. Pure.
 *
 * @module
 */

/**
 * `x` (a share, 0 to 1) as a percent with one decimal (`0.0512` ->
 * `"5.1%"`); `none` when `x` is null or undefined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { percent } from "./format.ts";
 * assert.equal(percent(0.0512), "5.1%");
 * assert.equal(percent(null, "none"), "none");
 * ```
 */
export function percent(
  x: number | null | undefined,
  none: string = "n/a",
): string {
  return x === null || x === undefined ? none : `${(x * 100).toFixed(1)}%`;
}

/**
 * `bytes` as lowercase hex, two digits a byte.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hex } from "./format.ts";
 * assert.equal(hex(new Uint8Array([0, 15, 255])), "000fff");
 * ```
 */
export function hex(bytes: Uint8Array): string {
  return bytes.toHex();
}
