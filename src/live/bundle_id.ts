/**
 * A served table's bundle id: the checksum its bundle's manifest carries
 * (64 hex digits), the same on every replica that loaded the same bundle,
 * so `/v1/health` and `/v1/stats` show whether a rolling reload has reached
 * every replica, and a fleet's store keeps each bundle's evidence apart. A
 * table built in memory (never written as a bundle) gets a random id of the
 * same shape, its own.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { hex } from "../format.ts";

const made = new WeakMap<Table, string>();

/** The bundle id of `table` (see the module doc). */
export function bundleIdOf(table: Table): string {
  const id = table.info.bundle_id;
  if (typeof id === "string" && /^[0-9a-f]{64}$/.test(id)) return id;
  let own = made.get(table);
  if (own === undefined) {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    own = hex(bytes);
    made.set(table, own);
  }
  return own;
}

/** Hex digits of a bundle id shown to people (`versions`, `eval`, `serve`, the dashboard); `/v1/health` shows all 64. */
export const SHOWN_ID_DIGITS = 12;

/**
 * A bundle id as people see it: its first `SHOWN_ID_DIGITS` hex digits,
 * the beginning of the id `/v1/health` and `/v1/stats` show whole.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shownBundleId } from "./bundle_id.ts";
 * assert.equal(shownBundleId("3f2a9c1b4e7d".padEnd(64, "0")), "3f2a9c1b4e7d");
 * ```
 */
export function shownBundleId(id: string): string {
  return id.slice(0, SHOWN_ID_DIGITS);
}
