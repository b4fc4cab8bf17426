/**
 * The training report's thresholds, test figures and leakage check in
 * words, for `train` and `inspect` (the split's are `src/train/split_words.ts`).
 *
 * @module
 */

import { type QuestionTable, questionThresholds } from "../engine/mod.ts";
import type { LeakageReport } from "../train/mod.ts";
import { percent } from "../format.ts";

/**
 * What a question's threshold in force is, for a bundle with a second
 * tier ("" without one): with the second tier served
 * (`secondTierServed`), the two-tier rule's, the table's own named beside
 * it; served by the table alone, the table's own, the two-tier one named.
 */
export function thresholdNote(
  q: QuestionTable,
  secondTierServed: boolean,
): string {
  const t = questionThresholds(q, secondTierServed);
  const f = (x: number | null) => x === null ? "none" : x.toFixed(4);
  if (t.twoTier === null) return "";
  return secondTierServed
    ? `the two-tier rule's, for both tiers; the table's own: ${f(t.table)}`
    : `the table's own, its second tier not served; the two-tier rule's: ${
      f(t.twoTier)
    }`;
}

/**
 * A question's threshold in words, the one in force named as such (see
 * `thresholdNote`): `threshold 0.9722` for a table alone, `threshold in
 * force 0.9522 (the two-tier rule's, for both tiers; the table's own:
 * 0.9722)` with a second tier served.
 *
 * @example
 * ```ts
 * import { thresholdInWords } from "./report_words.ts";
 * import type { QuestionTable } from "../engine/mod.ts";
 * declare const q: QuestionTable;
 * thresholdInWords(q, true);
 * ```
 */
export function thresholdInWords(
  q: QuestionTable,
  secondTierServed: boolean,
): string {
  const t = questionThresholds(q, secondTierServed);
  const note = thresholdNote(q, secondTierServed);
  const shown = t.inForce === null ? "none" : t.inForce.toFixed(4);
  return note === ""
    ? `threshold ${shown}`
    : `threshold in force ${shown} (${note})`;
}

/**
 * The leakage check in one line; with a warning, the warning in full or
 * (`full` false, when it was already printed) a pointer to it.
 */
export function leakageInWords(l: LeakageReport, full = true): string {
  const n = l.with_twin.answers + l.without_twin.answers;
  if (n === 0) return "no calibration answers";
  const share = percent(l.with_twin.answers / n);
  const twin = `(cosine >= ${l.similarity})`;
  const figures = l.with_twin.answers === 0
    ? `no calibration answer has a near-twin in training ${twin}; accuracy ${
      percent(l.without_twin.accuracy)
    }`
    : l.without_twin.answers === 0
    ? `every calibration answer has a near-twin in training ${twin}; accuracy ${
      percent(l.with_twin.accuracy)
    }`
    : `${share} of calibration answers have a near-twin in training ${twin}; accuracy ${
      percent(l.with_twin.accuracy)
    } with, ${percent(l.without_twin.accuracy)} without`;
  if (l.warning === null) return figures;
  return full
    ? `${figures}. Warning: ${l.warning}`
    : `${figures}: calibration may be optimistic for traffic with fewer near-twins (see the warning above)`;
}

/**
 * How a question's kind was decided, in a few words: yes/no when every
 * answer was true or false (or, in a file, all 1/0 or all t/f), else a
 * choice among its distinct answers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { kindInWords } from "./report_words.ts";
 * assert.equal(kindInWords("yes_no", 2), "yes/no: every answer was true or false");
 * ```
 */
export function kindInWords(kind: string, options: number): string {
  return kind === "yes_no"
    ? "yes/no: every answer was true or false"
    : `a choice of ${options} options: its answers are not all true or false`;
}

/** Why a threshold of 0 is no "certify everything". */
export const ZERO_THRESHOLD =
  "every candidate threshold passed the test on calibration, so confidence alone withholds nothing; the other rules still do (empty, out-of-scope or mostly unseen texts, the drift guard, the radius for exposed requests)";

/** The test part's figures, as `train` and `inspect` read them. */
interface TestFigures {
  n: number;
  certified: number;
  disagreement: number | null;
  disagreement_lower?: number | null;
  disagreement_upper: number | null;
}

/**
 * What the held-out test part's figures are, in one line: a small sample
 * whose 95% interval shows its noise, while the bound (at most alpha with
 * probability 1 - delta) is about traffic like the calibration part. A
 * disagreement above alpha is flagged only when even the interval's lower
 * end is above alpha; otherwise the line says it is within what the
 * interval allows. Null when nothing was certified.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { testInWords } from "./report_words.ts";
 * const line = testInWords({
 *   n: 390, certified: 284, disagreement: 0.053,
 *   disagreement_lower: 0.03, disagreement_upper: 0.086,
 * }, 0.05, 0.05)!;
 * assert.match(line, /within what its interval allows/);
 * ```
 */
export function testInWords(
  t: TestFigures,
  alpha: number,
  delta: number,
): string | null {
  if (t.disagreement === null || t.disagreement_upper === null) return null;
  const share = (x: number) => `${+(100 * x).toFixed(2)}%`;
  const certified = t.certified;
  const what =
    `the test part is a small sample (${certified} certified of ${t.n} held-out answers): its 95% interval, ${
      percent(t.disagreement_lower ?? 0)
    }-${
      percent(t.disagreement_upper)
    }, says how far its disagreement may be from the traffic's; the bound (at most ${
      share(alpha)
    } with probability ${
      share(1 - delta)
    }) is about traffic like the calibration part`;
  const lower = t.disagreement_lower ?? 0;
  if (lower > alpha) {
    return `${what}. Warning: even the interval's lower end is above alpha, so the promise fails on this test part: the calibration part may not be like the rest (see the split and the leakage check)`;
  }
  if (t.disagreement > alpha) {
    return `${what}; ${
      percent(t.disagreement)
    } here is above alpha but within what its interval allows, no evidence against the bound`;
  }
  return what;
}
