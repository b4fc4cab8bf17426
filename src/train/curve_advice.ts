/**
 * The learning-curve stage of training: advice for each uncalibrated
 * question with enough calibration answers, and for each calibrated one
 * that certifies under `COVERAGE_ADVICE` of them (how many traces would
 * certify that share), from refits on shares of its fit part (see
 * `learning_curve.ts`). Advice only: the table is unchanged.
 *
 * @module
 */

import type { QuestionAnswers } from "../traces/mod.ts";
import type { ScoredAnswers } from "./calibrate.ts";
import { adviceWith, coverageAdvice, curveInWords } from "./words.ts";
import type { FitTable, FittedModel } from "./fit.ts";
import { learningCurves } from "./learning_curve.ts";
import type { TrainOptions } from "./options.ts";
import type { QuestionParts } from "./parts.ts";
import { minimumCertifiable } from "../guarantee/mod.ts";

/**
 * A calibrated question certifying under this share of its calibration
 * answers is told how many traces would likely lift it to this share.
 */
export const COVERAGE_ADVICE = 0.6;

/** A calibrated question as the learning-curve stage reads it. */
export interface AdvisedQuestion {
  qa: QuestionAnswers;
  parts: QuestionParts;
  /** Its calibration answers as the table scores them. */
  scored: ScoredAnswers;
  /** Its advice (null when calibrated), which this stage adds to. */
  calibration: { advice: string | null };
  /**
   * When calibrated: the share of its calibration answers certified (both
   * tiers' when it keeps a second tier) and whether both tiers count;
   * null when uncalibrated.
   */
  coverage: { share: number; tiers: boolean } | null;
}

/**
 * Adds to the advice of each uncalibrated question with enough calibration
 * answers (and at least 8 fit answers) what its learning curve says;
 * `score` scores a question's calibration answers with another fit of it.
 * Does nothing when `options.learningCurve` is false.
 */
export function curveAdviceStage<Q extends AdvisedQuestion>(
  questions: readonly Q[],
  fitTable: FitTable,
  options: TrainOptions,
  score: (q: Q, model: FittedModel) => ScoredAnswers,
): void {
  if (options.learningCurve === false) return;
  const needed = minimumCertifiable(options.alpha, options.delta);
  const low = (f: Q) =>
    f.coverage !== null && f.coverage.share < COVERAGE_ADVICE;
  const curved = questions.filter((f) =>
    (f.calibration.advice !== null || low(f)) &&
    f.parts.calibration.length >= needed && f.parts.fit.length >= 8
  );
  const curves = learningCurves(
    fitTable,
    curved.map((f) => ({
      name: f.qa.name,
      labels: f.qa.labels,
      fit: f.parts.fit,
      validation: f.parts.validation,
      options: f.qa.options.length,
      scored: f.scored,
      score: (model) => score(f, model),
      ...(low(f) ? { minShare: COVERAGE_ADVICE } : {}),
    })),
    { ...options, scopeP: options.settings.drift.scope_p },
    options.progress,
  );
  curved.forEach((f, i) => {
    const c = f.calibration;
    const p = f.parts;
    const answering = p.fit.length + p.validation.length +
      p.calibration.length + p.test.length;
    c.advice = low(f)
      ? coverageAdvice(
        f.coverage!.share,
        f.coverage!.tiers,
        COVERAGE_ADVICE,
        curves[i]!,
        answering,
        options.alpha,
      )
      : adviceWith(
        c.advice!,
        curveInWords(curves[i]!, answering, options.alpha),
      );
  });
}
