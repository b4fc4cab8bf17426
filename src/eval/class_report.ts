/**
 * The arithmetic of a classification report, as scikit-learn's
 * `classification_report` does it: per option precision, recall and F1,
 * their macro average (plain mean over options) and weighted average
 * (weighted by the option's support: the answers whose reference is that
 * option), and the largest confusions. Pure: counts in, figures out.
 *
 * A figure that is undefined is null, never a silent 0: precision when the
 * table never named the option, recall when no reference answer is the
 * option, F1 when neither. Averages leave null figures out (what
 * scikit-learn does with `zero_division=np.nan`; its default, 0, would pull
 * an average down for an option that was never named).
 *
 * @module
 */

/** What is counted of one option. */
export interface OptionCounts {
  /** Answers whose reference is this option. */
  support: number;
  /** Answers of the table naming this option (the predictions counted). */
  named: number;
  /** Of those, the ones whose reference is this option too. */
  agreeing: number;
}

/** Precision, recall and F1 of one option, or of an average. */
export interface Prf {
  /** `agreeing / named`; null when `named` is 0. */
  precision: number | null;
  /** `agreeing / support`; null when `support` is 0. */
  recall: number | null;
  /**
   * The harmonic mean of precision and recall, `2 agreeing / (named +
   * support)`; 0 when either is 0 and the other undefined (as
   * scikit-learn); null when both `named` and `support` are 0.
   */
  f1: number | null;
}

/** The two averages `classification_report` prints. */
export interface Averages {
  /** The plain mean over the options whose figure is defined. */
  macro: Prf;
  /** The mean weighted by support over the options whose figure is defined. */
  weighted: Prf;
}

/**
 * Precision, recall and F1 of one option from its counts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { prfOf } from "./class_report.ts";
 * assert.deepEqual(prfOf({ support: 4, named: 2, agreeing: 2 }), {
 *   precision: 1,
 *   recall: 0.5,
 *   f1: 2 / 3,
 * });
 * assert.deepEqual(prfOf({ support: 3, named: 0, agreeing: 0 }), {
 *   precision: null,
 *   recall: 0,
 *   f1: 0,
 * });
 * ```
 */
export function prfOf(c: OptionCounts): Prf {
  if (c.agreeing > c.named || c.agreeing > c.support || c.agreeing < 0) {
    throw new RangeError(
      `agreeing answers (${c.agreeing}) must be between 0 and both named (${c.named}) and support (${c.support})`,
    );
  }
  const both = c.named + c.support;
  return {
    precision: c.named === 0 ? null : c.agreeing / c.named,
    recall: c.support === 0 ? null : c.agreeing / c.support,
    f1: both === 0 ? null : (2 * c.agreeing) / both,
  };
}

/** The mean of the defined `values`, weighted by `weights`; null when none is defined or the weights are all 0. */
function mean(
  values: readonly (number | null)[],
  weights: readonly number[],
): number | null {
  let sum = 0;
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) continue;
    sum += v * weights[i]!;
    total += weights[i]!;
  }
  return total === 0 ? null : sum / total;
}

/**
 * The macro and support-weighted averages of the options' figures, each
 * figure over the options where it is defined.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { averagesOf } from "./class_report.ts";
 * const a = averagesOf([
 *   { support: 3, named: 1, agreeing: 1 },
 *   { support: 1, named: 3, agreeing: 1 },
 * ]);
 * assert.equal(a.macro.precision, (1 + 1 / 3) / 2);
 * assert.equal(a.weighted.recall, (3 * (1 / 3) + 1 * 1) / 4);
 * ```
 */
export function averagesOf(options: readonly OptionCounts[]): Averages {
  const figures = options.map(prfOf);
  const ones = options.map(() => 1);
  const supports = options.map((o) => o.support);
  const average = (weights: readonly number[]): Prf => ({
    precision: mean(figures.map((f) => f.precision), weights),
    recall: mean(figures.map((f) => f.recall), weights),
    f1: mean(figures.map((f) => f.f1), weights),
  });
  return { macro: average(ones), weighted: average(supports) };
}

/** One cell off the diagonal of the confusion matrix. */
export interface Confusion {
  /** The reference answer. */
  reference: string;
  /** The table's answer; null when it gave none (a question it could not answer). */
  answer: string | null;
  /** Answers with this reference and this answer of the table. */
  count: number;
  /** `count` over the answers whose reference is `reference`. */
  share: number;
  /** Of `count`, the ones that were certified (served without asking the model). */
  certified: number;
}

/** Counts of one cell of the confusion matrix. */
export interface ConfusionCell {
  count: number;
  certified: number;
}

/**
 * The `limit` largest confusions among `cells` (reference, then the
 * table's answer, to its counts; agreeing cells are skipped): by count,
 * ties by reference then answer name. `support` gives each reference's
 * answers, the denominator of `share`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { largestConfusions } from "./class_report.ts";
 * const cells = new Map([
 *   ["a", new Map([["a", { count: 5, certified: 5 }], ["b", { count: 2, certified: 1 }]])],
 * ]);
 * assert.deepEqual(largestConfusions(cells, new Map([["a", 7]]), 10), [
 *   { reference: "a", answer: "b", count: 2, share: 2 / 7, certified: 1 },
 * ]);
 * ```
 */
export function largestConfusions(
  cells: ReadonlyMap<string, ReadonlyMap<string | null, ConfusionCell>>,
  support: ReadonlyMap<string, number>,
  limit: number,
): Confusion[] {
  const out: Confusion[] = [];
  for (const [reference, row] of cells) {
    const total = support.get(reference) ?? 0;
    for (const [answer, cell] of row) {
      if (answer === reference || cell.count === 0) continue;
      out.push({
        reference,
        answer,
        count: cell.count,
        share: total === 0 ? 0 : cell.count / total,
        certified: cell.certified,
      });
    }
  }
  const name = (s: string | null) => s ?? "";
  out.sort((x, y) =>
    y.count - x.count ||
    (x.reference < y.reference ? -1 : x.reference > y.reference ? 1 : 0) ||
    (name(x.answer) < name(y.answer)
      ? -1
      : name(x.answer) > name(y.answer)
      ? 1
      : 0)
  );
  return out.slice(0, Math.max(0, limit));
}
