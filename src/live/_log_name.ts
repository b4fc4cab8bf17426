/**
 * The name of a decision id in a feedback log.
 *
 * @module
 */

import { createHash } from "node:crypto";

/**
 * The name of decision (or audit) id `id` in a feedback log: the first 16
 * hex digits of its SHA-256. The same id gets the same name on every
 * replica, so `train` keeps one line per decision across a fleet's logs
 * (each replica logs an id it has not counted itself, a replay sent to it
 * included); the id itself, which counts the decision, is not written.
 *
 * @example
 * ```ts
 * import { auditLogName } from "./_log_name.ts";
 * import assert from "node:assert/strict";
 * assert.equal(auditLogName("abc"), "ba7816bf8f01cfea");
 * ```
 */
export function auditLogName(id: string): string {
  return createHash("sha256").update(id).digest("hex").slice(0, 16);
}
