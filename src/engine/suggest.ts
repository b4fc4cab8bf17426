/**
 * The question a name the table does not know most likely meant.
 *
 * @module
 */

import type { Table } from "./table.ts";

/**
 * A known question name that `name` most likely meant: one equal to it but
 * for case, white space, `-` and `_`, or else one within an edit or two of
 * it ignoring case (one for names of up to 5 characters). Null when `name`
 * is a question of the table or nothing is that close.
 *
 * @example
 * ```ts
 * import { suggestQuestion, type Table } from "./mod.ts";
 * declare const table: Table; // with a question named "intent"
 * suggestQuestion(table, "Intent"); // "intent"
 * ```
 */
export function suggestQuestion(table: Table, name: string): string | null {
  if (table.byName.has(name)) return null;
  return closestName(name, table.questions.map((q) => q.name));
}

/**
 * Among `names`, the one `name` most likely meant: equal to it but for
 * case, white space, `-` and `_`, or else within an edit or two of it
 * ignoring case (one for names of up to 5 characters). Null when nothing
 * is that close.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { closestName } from "./suggest.ts";
 * assert.equal(closestName("critera", ["criteria", "state"]), "criteria");
 * assert.equal(closestName("colour", ["criteria", "state"]), null);
 * ```
 */
export function closestName(
  name: string,
  names: readonly string[],
): string | null {
  const loose = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, "");
  const wanted = loose(name);
  for (const n of names) if (loose(n) === wanted) return n;
  const lower = name.toLowerCase();
  const reach = lower.length <= 5 ? 1 : 2;
  let best: string | null = null;
  let bestDistance = reach + 1;
  for (const n of names) {
    const d = editDistance(lower, n.toLowerCase(), reach);
    if (d < bestDistance) {
      best = n;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance of `a` and `b`, or `limit + 1` once it passes `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let smallest = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const v = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + cost,
      );
      row.push(v);
      if (v < smallest) smallest = v;
    }
    if (smallest > limit) return limit + 1;
    previous = row;
  }
  return previous[b.length]!;
}
