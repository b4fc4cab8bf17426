/**
 * The learning-curve stage of training, run only for questions left
 * uncalibrated: the question is refitted on nested shares (`CURVE_SHARES`)
 * of its fit part (its validation part choosing epochs and temperature, as
 * in the real fit, but not refitted on), each fit scored on the same
 * calibration answers, and `estimateGrowth` reads from the curve how
 * many traces a pass would take; `curveInWords` says it.
 *
 * Advice only: nothing here changes the table or its threshold.
 *
 * @module
 */

import { seededRandom } from "../engine/random.ts";
import { inScopeConfidences, type ScoredAnswers } from "./calibrate.ts";
import {
  type CurveEstimate,
  type CurvePoint,
  estimateGrowth,
  MAX_GROWTH,
} from "./curve_estimate.ts";
import {
  type FitQuestion,
  fitQuestions,
  type FitSettings,
  type FitTable,
  type FittedModel,
} from "./fit.ts";
import { shuffle } from "./split.ts";

/** Shares of the fit part the curve refits on; the trained table is the curve's last point. */
export const CURVE_SHARES = [0.25, 0.5, 0.75];

/** An uncalibrated question, as the curve needs it. */
export interface CurveQuestion extends FitQuestion {
  /** Its calibration answers as the trained table scored them. */
  scored: ScoredAnswers;
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
    });
  });
}

/**
 * A curve's reading in words, for the advice: how the most confident
 * answers' disagreement moved with the training answers, then either how
 * many traces answering the question a pass needs (a point and a range, in
 * all and more than `answering`, the traces answering it now), or that more
 * of the same would not help (the curve is flat above alpha), or that it
 * would take more than `MAX_GROWTH` times as many.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { curveInWords } from "./learning_curve.ts";
 * const words = curveInWords({
 *   points: [{ trainAnswers: 300, topRate: 0.2 }, { trainAnswers: 900, topRate: 0.1 }],
 *   topShare: 0.1,
 *   growth: 3,
 *   low: 2,
 *   high: 5,
 *   flat: false,
 * }, 1_500, 0.05);
 * assert.match(words, /about 4,500 traces answering it in all \(80% range 3,000-7,500\), about 3,000 more \(1,500-6,000\)/);
 * ```
 */
export function curveInWords(
  e: CurveEstimate,
  answering: number,
  alpha: number,
): string {
  const first = e.points[0]!;
  const last = e.points[e.points.length - 1]!;
  const rate = (r: number) => `${(100 * r).toFixed(1)}%`;
  const top = `its most confident ${Math.round(100 * e.topShare)}%`;
  const seen = `learning curve (the table refitted on ${
    CURVE_SHARES.map((s) => s * 100).join(", ")
  } and 100% of its fit part, scored on the same calibration answers): ${top} of calibration answers disagree ${
    rate(first.topRate)
  } at ${count(first.trainAnswers)} training answers and ${
    rate(last.topRate)
  } at ${count(last.trainAnswers)}`;
  if (e.flat) {
    return `${seen}, at least alpha (${alpha}) at every size and not falling: more traces of the same kind would not help; cleaner labels would (the model answering alike texts alike), or a larger --alpha`;
  }
  if (e.growth === null) {
    const low = e.low === null
      ? ""
      : ` (the calibration sample allows as few as about ${
        round(e.low * answering)
      } in all)`;
    return `${seen}; at the pace it falls, a pass needs more than ${MAX_GROWTH} times as many traces answering it (over ${
      round(MAX_GROWTH * answering)
    } more)${low}: the curve cannot say how many`;
  }
  const total = (g: number | null) =>
    g === null ? `over ${round(MAX_GROWTH * answering)}` : round(g * answering);
  const more = (g: number | null) =>
    g === null
      ? `over ${round((MAX_GROWTH - 1) * answering)}`
      : round(Math.max(0, g - 1) * answering);
  const span = (f: (g: number | null) => string) =>
    `${f(e.low)}${e.high === null ? " to " : "-"}${f(e.high)}`;
  return `${seen}; at the pace it falls, a pass needs about ${
    total(e.growth)
  } traces answering it in all (80% range ${span(total)}), about ${
    more(e.growth)
  } more (${
    span(more)
  }), of as many different kinds as the ones it has (the range is the calibration sample's and the curve's; it assumes the curve keeps its pace)`;
}

/** A count with thousands separators. */
function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** A count rounded to two significant figures (hundreds at least), with separators. */
function round(n: number): string {
  const step = n < 1_000 ? 10 : 10 ** (Math.floor(Math.log10(n)) - 1);
  return count(Math.round(n / step) * step);
}
