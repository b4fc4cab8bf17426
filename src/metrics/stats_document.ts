/**
 * The `/v1/stats` document: its type (from its schema,
 * `../openapi/stats_schemas.ts`) and the pieces it is assembled from.
 *
 * @module
 */

import type { StatsDocument } from "../openapi/mod.ts";

/**
 * The `/v1/stats` document as the statistics make it: everything but the
 * `live` section, which the live certificate adds.
 */
export type StatsSnapshot = Omit<StatsDocument, "live">;

/** `part / whole`, or null when `whole` is 0 (an undefined share is not 0). */
export function share(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

/** An object from entries, any key (`__proto__` included) an own property. */
export function record<T>(entries: Iterable<[string, T]>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of entries) setKey(out, k, v);
  return out;
}

/**
 * Sets `key` on `target` as an own enumerable property, even when the key
 * is `__proto__` (which plain assignment would treat as the prototype).
 * Objects stay ordinary so `JSON.stringify` keeps its fast path (objects
 * without a prototype make it several times slower).
 */
export function setKey<T>(
  target: Record<string, T>,
  key: string,
  value: T,
): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else target[key] = value;
}
