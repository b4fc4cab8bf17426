/**
 * The first stage of training: which questions can be trained and
 * certified, and why the others are refused.
 *
 * @module
 */

import type { QuestionAnswers, TraceSet } from "../traces/mod.ts";
import type { TrainOptions } from "./options.ts";
import { minimumCertifiable } from "../guarantee/mod.ts";
import {
  freeTextInWords,
  singleOptionInWords,
  tooFewInWords,
} from "./words.ts";

/** Training that cannot go on (no question can be trained). */
export class TrainingError extends Error {
  override name = "TrainingError";
}

/** The questions training goes on with, and the reasons for the others. */
export interface Admitted {
  trainable: QuestionAnswers[];
  /** One reason per refused question, in words. */
  refused: string[];
}

/**
 * Splits `traces.questions` into those that can be trained and certified
 * at the options' targets and the refused, each with its reason; throws
 * `TrainingError` (all reasons) when none is left.
 */
export function admitQuestions(
  traces: TraceSet,
  options: Pick<TrainOptions, "alpha" | "delta" | "calibrationShare">,
): Admitted {
  const needed = minimumCertifiable(options.alpha, options.delta);
  const minimumAnswers = Math.ceil(needed / options.calibrationShare);
  const refused: string[] = [];
  const trainable = traces.questions.filter((q) => {
    const reason = refusal(q, minimumAnswers, needed, options);
    if (reason !== null) refused.push(reason);
    return reason === null;
  });
  if (trainable.length === 0) throw new TrainingError(refused.join("; "));
  return { trainable, refused };
}

/** Why a question cannot be trained and certified, or null when it can. */
function refusal(
  q: QuestionAnswers,
  minimumAnswers: number,
  needed: number,
  options: Pick<TrainOptions, "alpha" | "delta" | "calibrationShare">,
): string | null {
  if (q.kind === "choice" && q.options.length < 2) {
    return singleOptionInWords(q.name, q.options[0]!);
  }
  const answered = q.labels.reduce((n, l) => n + (l >= 0 ? 1 : 0), 0);
  if (q.kind === "choice" && q.options.length > answered / 4) {
    return freeTextInWords(q.name, q.options.length, answered);
  }
  if (answered < minimumAnswers) {
    return tooFewInWords(q.name, answered, minimumAnswers, needed, options);
  }
  return null;
}
