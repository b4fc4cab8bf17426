/**
 * What `eval` counts per question beyond the meter: per option (answers,
 * certified, disagreements, precision, recall, F1, the same over all
 * answers), their macro and weighted averages, the largest confusions, why
 * answers were not certified (counts by flag), and the answers the
 * coverage frontier is measured on. The arithmetic is `class_report.ts`'s.
 *
 * @module
 */

import {
  type Answer,
  type Assessment,
  disagrees,
  setThresholdInForce,
  type Table,
  TableState,
} from "../engine/mod.ts";
import { type Measurement, Meter } from "../train/mod.ts";
import {
  type Averages,
  averagesOf,
  type Confusion,
  type ConfusionCell,
  largestConfusions,
  type OptionCounts,
  type Prf,
  prfOf,
} from "./class_report.ts";
import {
  type FrontierAnswers,
  frontierOf,
  type FrontierPoint,
  spreadThresholds,
} from "./frontier.ts";

/** One option's figures; the reference model's answer is the truth. */
export interface OptionFigures {
  /** Traces whose reference answer is this option. */
  answers: number;
  /** Certified answers that name this option. */
  certified: number;
  /** Of those, the ones whose reference answer is another option. */
  disagreements: number;
  /** `(certified - disagreements) / certified`; null when none is certified. */
  precision: number | null;
  /** Certified answers naming this option that agree, over `answers`; null when `answers` is 0. */
  recall: number | null;
  /** Harmonic mean of that precision and recall (`2 agreeing / (certified + answers)`); null when both counts are 0. */
  f1: number | null;
  /**
   * The same over all answers, certified or not (the table's best answer
   * against the reference, as scikit-learn's `classification_report`):
   * `named` answers of the table name this option, `agreeing` of them
   * agree.
   */
  all_answers: Prf & { named: number; agreeing: number };
}

/** How many confusions `eval` lists per question. */
export const CONFUSIONS_LISTED = 10;

/** The averages of the option figures, of certified answers and of all answers. */
export interface AveragesFigures {
  /** Over certified answers (an uncertified answer names no option), as the option table. */
  certified: Averages;
  /** Over all answers, as scikit-learn's `classification_report`. */
  all_answers: Averages;
}

/** Per-question figures of an evaluation. */
export interface EvalFigures extends Measurement {
  /** Traces whose answer is an option the bundle never learned (counted as disagreements). */
  unlearned_answers: number;
  /** Per option of the question (yes/no: `true` and `false`). */
  options: Record<string, OptionFigures>;
  /** Answers not certified, by flag (flags with none left out). */
  not_certified: Record<string, number>;
  /** Answers withheld by the drift guard (flag `drift`), by rule. */
  drift_rules: Record<string, number>;
  /** Certified share and disagreement at each candidate threshold of the bundle. */
  frontier: FrontierPoint[];
  /** Macro and support-weighted averages of precision, recall and F1. */
  averages: AveragesFigures;
  /** The `CONFUSIONS_LISTED` largest confusions over all answers (reference -> the table's answer). */
  confusions: Confusion[];
}

/** What the tally keeps per option. */
interface OptionTally {
  answers: number;
  certified: number;
  disagreements: number;
  /** Answers of the table naming the option, certified or not. */
  named: number;
  /** Of those, the ones whose reference is the option. */
  agreeing: number;
}

/** The option an answer names, spelled as traces spell it; null for no answer. */
function optionNamed(answer: Answer): string | null {
  return answer.kind === "choice"
    ? answer.choice
    : answer.kind === "yes_no"
    ? String(answer.answer)
    : null;
}

/**
 * A serving state for `table` whose every question has threshold 0 in
 * force: answers assessed with it are certified when every rule but the
 * confidence threshold lets them through, which is what the frontier needs.
 */
export function unthresholdedState(table: Table): TableState {
  const state = new TableState(table);
  for (const q of table.questions) {
    setThresholdInForce(table, state, q.name, 0);
  }
  return state;
}

/** The running tally of one question. */
export class QuestionTally {
  readonly #meter = new Meter();
  readonly #options = new Map<string, OptionTally>();
  /** Reference answer, then the table's answer (null: none), to their counts. */
  readonly #cells = new Map<string, Map<string | null, ConfusionCell>>();
  readonly #flags = new Map<string, number>();
  readonly #driftRules = new Map<string, number>();
  readonly #confidences: number[] = [];
  readonly #wrong: boolean[] = [];
  /** With a second tier: per frontier answer, its confidence (-1: none) and disagreement. */
  #second: { confidences: number[]; wrong: boolean[] } | null = null;
  #unlearned = 0;

  /** A tally for a question with these options (yes/no: `true`, `false`). */
  constructor(options: readonly string[]) {
    for (const o of options) this.#option(o);
  }

  #option(name: string): OptionTally {
    let f = this.#options.get(name);
    if (f === undefined) {
      f = { answers: 0, certified: 0, disagreements: 0, named: 0, agreeing: 0 };
      this.#options.set(name, f);
    }
    return f;
  }

  /**
   * Counts one trace: the served assessment, the same text assessed with no
   * threshold (`open`), and the reference model's answer; `learned` says
   * whether the bundle knows that option. With a second tier served,
   * `second` is its answer to the text at no threshold (null where it
   * cannot answer), for the frontier of both tiers.
   */
  add(
    served: Assessment,
    open: Assessment,
    expected: string,
    learned: boolean,
    second?: Assessment | null,
  ): void {
    const a = served.answer;
    const wrong = disagrees(a, expected);
    this.#meter.add(a.certified, wrong);
    if (!learned) this.#unlearned++;
    this.#option(expected).answers++;
    const named = optionNamed(a);
    if (named !== null) {
      const f = this.#option(named);
      f.named++;
      if (!wrong) f.agreeing++;
      if (a.certified) {
        f.certified++;
        if (wrong) f.disagreements++;
      }
    }
    let row = this.#cells.get(expected);
    if (row === undefined) this.#cells.set(expected, row = new Map());
    let cell = row.get(named);
    if (cell === undefined) row.set(named, cell = { count: 0, certified: 0 });
    cell.count++;
    if (a.certified) cell.certified++;
    if (!a.certified && a.flag !== null) {
      this.#flags.set(a.flag, (this.#flags.get(a.flag) ?? 0) + 1);
      if (a.driftRule !== null) {
        this.#driftRules.set(
          a.driftRule,
          (this.#driftRules.get(a.driftRule) ?? 0) + 1,
        );
      }
    }
    if (open.answer.certified) {
      this.#confidences.push(open.fullConfidence);
      this.#wrong.push(disagrees(open.answer, expected));
      if (second !== undefined) {
        this.#second ??= { confidences: [], wrong: [] };
        const ok = second !== null && second.answer.certified;
        this.#second.confidences.push(ok ? second.fullConfidence : -1);
        this.#second.wrong.push(ok && disagrees(second.answer, expected));
      }
    }
  }

  /** The figures counted, with the frontier at `thresholds` (the bundle's candidates). */
  result(
    thresholds: readonly number[],
    inForce: number | null,
    delta: number,
  ): EvalFigures {
    const options: Record<string, OptionFigures> = {};
    const served: OptionCounts[] = [];
    const all: OptionCounts[] = [];
    const support = new Map<string, number>();
    // Options by label, as scikit-learn's classification_report.
    const byLabel = [...this.#options].sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0
    );
    for (const [name, f] of byLabel) {
      const s = {
        support: f.answers,
        named: f.certified,
        agreeing: f.certified - f.disagreements,
      };
      const a = { support: f.answers, named: f.named, agreeing: f.agreeing };
      served.push(s);
      all.push(a);
      support.set(name, f.answers);
      options[name] = {
        answers: f.answers,
        certified: f.certified,
        disagreements: f.disagreements,
        ...prfOf(s),
        all_answers: { named: f.named, agreeing: f.agreeing, ...prfOf(a) },
      };
    }
    const measured = this.#meter.result();
    const answers: FrontierAnswers = {
      total: measured.n,
      confidences: this.#confidences,
      wrong: this.#wrong,
      second: this.#second ?? undefined,
    };
    return {
      ...measured,
      unlearned_answers: this.#unlearned,
      options,
      not_certified: Object.fromEntries(
        [...this.#flags].sort((a, b) => b[1] - a[1]),
      ),
      drift_rules: Object.fromEntries(
        [...this.#driftRules].sort((a, b) => b[1] - a[1]),
      ),
      frontier: frontierOf(
        answers,
        thresholds.length > 0
          ? thresholds
          : spreadThresholds(this.#confidences),
        inForce,
        delta,
      ),
      averages: { certified: averagesOf(served), all_answers: averagesOf(all) },
      confusions: largestConfusions(this.#cells, support, CONFUSIONS_LISTED),
    };
  }
}
