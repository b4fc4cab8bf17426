/**
 * Did-you-mean for names a user typed: flags, questions, columns. One rule
 * for every command, so a slip gets the same kind of hint everywhere.
 *
 * @module
 */

/**
 * Optimal string alignment distance of `a` and `b` (insertions, deletions,
 * substitutions and swaps of two neighbours each cost 1), or `limit + 1`
 * once it passes `limit`.
 */
function distance(a: string, b: string, limit: number): number {
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
      smallest = Math.min(smallest, d);
    }
    if (smallest > limit) return limit + 1;
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name `typed` most likely meant, or null: one that differs only
 * in case, `-` or `_`; else the only one it begins (at least three letters);
 * else the nearest within one slip (names up to 4 letters) or two.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { suggestName } from "./did_you_mean.ts";
 * assert.equal(suggestName("alpah", ["alpha", "delta"]), "alpha");
 * assert.equal(suggestName("calibration", ["calibration-share", "test-share"]), "calibration-share");
 * assert.equal(suggestName("zzz", ["alpha"]), null);
 * ```
 */
export function suggestName(
  typed: string,
  known: readonly string[],
): string | null {
  const loose = (s: string) => s.toLowerCase().replace(/[-_\s]+/g, "");
  const wanted = loose(typed);
  if (wanted === "") return null;
  const same = known.find((k) => loose(k) === wanted);
  if (same !== undefined) return same;
  if (wanted.length >= 3) {
    const begun = known.filter((k) => loose(k).startsWith(wanted));
    if (begun.length === 1) return begun[0]!;
  }
  const reach = wanted.length <= 4 ? 1 : 2;
  let best: string | null = null;
  let bestDistance = reach + 1;
  for (const k of known) {
    const d = distance(wanted, loose(k), reach);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}
