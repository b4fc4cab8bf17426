/**
 * The meter: how held-out answers did. One tally per question of who was
 * certified, who disagreed with the reference model and who was right at
 * all; `train` (its test split) and `eval` (a trace file) both measure with
 * it, so their figures mean the same thing.
 *
 * An undefined figure (a share of nothing) is `null`, never a silent 0.
 *
 * @module
 */

import { clopperPearson } from "../guarantee/mod.ts";

/** Certified share and disagreement among certified answers, with a 95% Clopper-Pearson interval. */
export interface Measurement {
  /** Answers measured. */
  n: number;
  /** Answers certified. */
  certified: number;
  /** `certified / n`; null when nothing was measured. */
  coverage: number | null;
  /** Certified answers that disagree with the reference model. */
  disagreements: number;
  /** `disagreements / certified`; null when nothing was certified. */
  disagreement: number | null;
  /** Two-sided 95% Clopper-Pearson interval of the disagreement rate. */
  disagreement_lower: number | null;
  disagreement_upper: number | null;
  /** Share of all answers (certified or not) that agree with the reference model. */
  accuracy: number | null;
}

/** A running tally of held-out answers. */
export class Meter {
  #n = 0;
  #certified = 0;
  #disagreements = 0;
  #right = 0;

  /** Counts one answer: whether it was certified and whether it disagreed. */
  add(certified: boolean, wrong: boolean): void {
    this.#n++;
    if (!wrong) this.#right++;
    if (certified) {
      this.#certified++;
      if (wrong) this.#disagreements++;
    }
  }

  /** Answers counted so far. */
  get n(): number {
    return this.#n;
  }

  /** The figures of everything counted so far. */
  result(): Measurement {
    const n = this.#n;
    const c = this.#certified;
    const k = this.#disagreements;
    const ci = clopperPearson(k, c);
    return {
      n,
      certified: c,
      coverage: n === 0 ? null : c / n,
      disagreements: k,
      disagreement: c === 0 ? null : k / c,
      disagreement_lower: ci.lower,
      disagreement_upper: ci.upper,
      accuracy: n === 0 ? null : this.#right / n,
    };
  }
}

/** Measures answers given as parallel flags: `certified[i]`, `wrong[i]`. */
export function measure(certified: Uint8Array, wrong: Uint8Array): Measurement {
  const meter = new Meter();
  for (let i = 0; i < certified.length; i++) {
    meter.add(certified[i] === 1, wrong[i] === 1);
  }
  return meter.result();
}
