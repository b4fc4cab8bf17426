/**
 * Whether embedding the texts could pay, read off the table before any
 * text is embedded (`train --semantic auto`, the default): the second tier
 * answers only what the table withholds for low confidence, so per
 * question the share of its calibration answers the table withholds for
 * that reason alone is the most both tiers could certify beyond the table
 * (its reach). Embedding costs about a minute per 10,000 texts on 2 cores,
 * and serving the tier about 225 MB and 12-15 ms a text asked; below
 * `MIN_REACH` (`semantic.ts`) on every question, or with too few calibration answers for
 * any threshold to pass, the table alone is kept without embedding.
 *
 * @module
 */

import { inScopeConfidences } from "./calibrate.ts";
import type { CalibratedQuestion } from "./calibrate_stage.ts";
import { minimumCertifiable } from "../guarantee/mod.ts";
import type { TrainOptions } from "./options.ts";
import { MIN_REACH } from "./semantic.ts";
import { percent } from "../format.ts";

/** One question's reach. */
export interface QuestionReach {
  name: string;
  /** Calibration answers. */
  answers: number;
  /** Share of them the table withholds for low confidence alone (all in-scope ones when uncalibrated). */
  reach: number;
}

/** What `secondTierReach` found. */
export interface SecondTierReach {
  /** True when some question reaches `MIN_REACH` with enough calibration answers. */
  worth: boolean;
  /** Per question, its reach. */
  questions: QuestionReach[];
  /** Fewest calibration answers a threshold can pass on. */
  needed: number;
}

/** The calibrated questions and options of a trained table, as this module reads them. */
export interface ReachInput {
  readonly trainable: readonly { readonly name: string }[];
  readonly calibrated: readonly CalibratedQuestion[];
  readonly options: TrainOptions;
}

/**
 * Each question's reach and whether embedding could pay (see the module
 * doc).
 *
 * @example
 * ```ts ignore
 * const trained = trainTable(traces, options);
 * if (secondTierReach(trained).worth) embed(); // else the table alone
 * ```
 */
export function secondTierReach(trained: ReachInput): SecondTierReach {
  const { options } = trained;
  const needed = minimumCertifiable(options.alpha, options.delta);
  const questions = trained.calibrated.map((c, q): QuestionReach => {
    const confidences = inScopeConfidences(
      c.scored,
      options.settings.drift.scope_p,
    );
    const threshold = c.outcome.calibration.threshold;
    let low = 0;
    for (const x of confidences) {
      if (x < 0) continue;
      if (threshold === null || x < threshold) low++;
    }
    const n = confidences.length;
    return {
      name: trained.trainable[q]!.name,
      answers: n,
      reach: n === 0 ? 0 : low / n,
    };
  });
  return {
    worth: questions.some((q) => q.answers >= needed && q.reach >= MIN_REACH),
    questions,
    needed,
  };
}

/** What `auto` decided, in one line. */
export function reachInWords(r: SecondTierReach): string {
  const best = [...r.questions].filter((q) => q.answers >= r.needed).sort((
    a,
    b,
  ) => b.reach - a.reach)[0];
  if (r.worth) {
    return `second tier (--semantic auto): "${best!.name}" leaves ${
      percent(best!.reach)
    } of its calibration answers to low confidence, which the second tier may certify: embedding the texts (it is kept per question where it certifies more on the validation part)`;
  }
  if (best === undefined) {
    return `second tier (--semantic auto): no question has the ${r.needed} calibration answers a threshold needs; the table alone, no text embedded (--semantic on embeds anyway)`;
  }
  return `second tier (--semantic auto): the table leaves at most ${
    percent(best.reach)
  } of a question's calibration answers to low confidence ("${best.name}"), under the ${
    percent(MIN_REACH)
  } that would make embedding worth its cost; the table alone, no text embedded (--semantic on embeds anyway)`;
}
