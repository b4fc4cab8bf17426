/**
 * The learning-curve stage of training, run only for questions left
 * uncalibrated: the question is refitted on nested shares (`CURVE_SHARES`)
 * of its fit part (its validation part choosing epochs and temperature, as
 * in the real fit, but not refitted on), each fit scored on the same
 * calibration answers, and `estimateGrowth` reads from the curve how
 * many traces a pass would take; `curveInWords` (`words.ts`) says it.
 *
 * Advice only: nothing here changes the table or its threshold.
 *
 * @module
 */

import { seededRandom } from "../engine/mod.ts";
import { inScopeConfidences, type ScoredAnswers } from "./calibrate.ts";
import {
  CURVE_SHARES,
  type CurveEstimate,
  type CurvePoint,
  estimateGrowth,
} from "./curve_estimate.ts";
import {
  type FitQuestion,
  fitQuestions,
  type FitSettings,
  type FitTable,
  type FittedModel,
} from "./fit.ts";
import { shuffle } from "./split.ts";

/** A question to advise on (uncalibrated, or certifying little), as the curve needs it. */
export interface CurveQuestion extends FitQuestion {
  /** Its calibration answers as the trained table scored them. */
  scored: ScoredAnswers;
  /** Read the growth that certifies at least this share (see `CurveTargets.minShare`). */
  minShare?: number;
  /** Scores the same calibration answers with another fit of the question. */
  score: (model: FittedModel) => ScoredAnswers;
}

/** What the curve stage is told besides the fits. */
export interface CurveSettings extends FitSettings {
  alpha: number;
  delta: number;
  /** The out-of-scope rule's level, as calibration applied it. */
  scopeP: number;
}

/**
 * Refits each question on nested random shares of its fit part (one fit
 * job per share, all questions together, on `settings.workers`) and reads
 * each curve. Deterministic for `settings.seed`.
 */
export function learningCurves(
  table: FitTable,
  questions: readonly CurveQuestion[],
  settings: CurveSettings,
  progress: (line: string) => void = () => {},
): CurveEstimate[] {
  if (questions.length === 0) return [];
  const jobs: FitQuestion[] = [];
  for (const q of questions) {
    const order = shuffle(
      [...q.fit],
      seededRandom(settings.seed * 7_919 + 17),
    );
    for (const share of CURVE_SHARES) {
      const fit = order.slice(0, Math.max(1, Math.round(share * order.length)))
        .sort((a, b) => a - b);
      jobs.push({
        name: `${q.name} (${Math.round(share * 100)}% of fit)`,
        labels: q.labels,
        fit,
        validation: q.validation,
        options: q.options,
      });
    }
  }
  progress(
    `learning curve: refitting ${questions.length} uncalibrated ${
      questions.length === 1 ? "question" : "questions"
    } on ${CURVE_SHARES.map((s) => `${s * 100}%`).join(", ")} of the fit part`,
  );
  // The shares keep their validation fits' weights (no refit on fit and
  // validation): half the work, and each point is trained on its share of
  // the fit part alone.
  const models = fitQuestions(
    table,
    jobs,
    { ...settings, refitBelow: 0 },
    progress,
  );
  return questions.map((q, at) => {
    const point = (
      scored: ScoredAnswers,
      trainAnswers: number,
    ): CurvePoint => ({
      trainAnswers,
      confidences: inScopeConfidences(scored, settings.scopeP),
      wrong: scored.wrong,
    });
    const points = CURVE_SHARES.map((_, s) => {
      const job = jobs[at * CURVE_SHARES.length + s]!;
      return point(
        q.score(models[at * CURVE_SHARES.length + s]!),
        job.fit.length,
      );
    });
    points.push(point(q.scored, q.fit.length + q.validation.length));
    return estimateGrowth(points, {
      alpha: settings.alpha,
      delta: settings.delta,
      units: q.scored.units,
      seed: settings.seed,
      options: q.options,
      ...(q.minShare === undefined ? {} : { minShare: q.minShare }),
    });
  });
}
