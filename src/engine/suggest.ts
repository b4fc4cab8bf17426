/**
 * The name a user most likely meant when they typed one that is not known:
 * a question, an option, a body field, a flag.
 *
 * @module
 */

import type { Table } from "./table.ts";

/**
 * A known question name that `name` most likely meant (`closestName`).
 * Null when `name` is a question of the table or nothing is that close.
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
 * case, white space, `-` and `_`; else the only one it begins (at least
 * three letters); else the nearest within one slip (names of up to 4
 * letters) or two, a slip being a letter inserted, deleted, changed, or
 * two neighbours swapped. Null when nothing is that close. The one rule
 * for every did-you-mean: questions, options, body fields, flags.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { closestName } from "./suggest.ts";
 * assert.equal(closestName("critera", ["criteria", "state"]), "criteria");
 * assert.equal(closestName("alpah", ["alpha", "delta"]), "alpha");
 * assert.equal(closestName("calibration", ["calibration-share", "test-share"]), "calibration-share");
 * assert.equal(closestName("colour", ["criteria", "state"]), null);
 * ```
 */
export function closestName(
  name: string,
  names: readonly string[],
): string | null {
  const loose = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, "");
  const wanted = loose(name);
  if (wanted === "") return null;
  const same = names.find((n) => loose(n) === wanted);
  if (same !== undefined) return same;
  if (wanted.length >= 3) {
    const begun = names.filter((n) => loose(n).startsWith(wanted));
    if (begun.length === 1) return begun[0]!;
  }
  const reach = wanted.length <= 4 ? 1 : 2;
  let best: string | null = null;
  let bestDistance = reach + 1;
  for (const n of names) {
    const d = slips(wanted, loose(n), reach);
    if (d < bestDistance) {
      best = n;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * Optimal string alignment distance of `a` and `b` (insertions, deletions,
 * substitutions and swaps of two neighbours each cost 1), or `limit + 1`
 * once it passes `limit`.
 */
function slips(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let smallest = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(
        rows[i - 1]![j]! + 1,
        row[j - 1]! + 1,
        rows[i - 1]![j - 1]! + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      }
      row.push(d);
      if (d < smallest) smallest = d;
    }
    if (smallest > limit) return limit + 1;
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}
