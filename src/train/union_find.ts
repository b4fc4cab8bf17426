/**
 * Units of a split: sets of traces that must land in the same split. A
 * disjoint-set forest (union by size, path halving) links traces; each
 * resulting set is one unit.
 *
 * @module
 */

/** A disjoint-set forest over `0 .. n-1`. */
export class UnionFind {
  readonly #parent: Int32Array;
  readonly #size: Int32Array;

  /** `n` singletons. */
  constructor(n: number) {
    this.#parent = Int32Array.from({ length: n }, (_, i) => i);
    this.#size = new Int32Array(n).fill(1);
  }

  /** The representative of `i`'s set. */
  find(i: number): number {
    const parent = this.#parent;
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  }

  /** Merges the sets of `a` and `b`; true when they were apart. */
  union(a: number, b: number): boolean {
    let ra = this.find(a);
    let rb = this.find(b);
    if (ra === rb) return false;
    if (this.#size[ra]! < this.#size[rb]!) [ra, rb] = [rb, ra];
    this.#parent[rb] = ra;
    this.#size[ra]! += this.#size[rb]!;
    return true;
  }

  /**
   * Numbers the sets `0 .. count-1` in order of their smallest member:
   * `unitOf[i]` is the number of `i`'s set.
   */
  units(): { unitOf: Int32Array; count: number } {
    const n = this.#parent.length;
    const unitOf = new Int32Array(n);
    const numberOf = new Int32Array(n).fill(-1);
    let count = 0;
    for (let i = 0; i < n; i++) {
      const r = this.find(i);
      if (numberOf[r]! < 0) numberOf[r] = count++;
      unitOf[i] = numberOf[r]!;
    }
    return { unitOf, count };
  }
}

/**
 * Kish's effective number of `units.length` answers that share units:
 * `n^2 / sum n_u^2`, where `n_u` answers carry unit `u`. It is `n` when every
 * answer has its own unit and the number of units when they are all the same
 * size; a few large units count as few.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { effectiveSize } from "./union_find.ts";
 * assert.equal(effectiveSize(Int32Array.of(0, 0, 1, 2)), 16 / 6);
 * ```
 */
export function effectiveSize(units: ArrayLike<number>): number {
  const n = units.length;
  if (n === 0) return 0;
  const sizes = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    sizes.set(units[i]!, (sizes.get(units[i]!) ?? 0) + 1);
  }
  let squares = 0;
  for (const c of sizes.values()) squares += c * c;
  return (n * n) / squares;
}
