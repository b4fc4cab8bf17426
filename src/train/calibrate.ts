/**
 * The calibrate step: from a fitted question's answers on the calibration
 * split, the certified threshold (see `certify.ts`) and the references the
 * drift guard compares live texts with; for a question left uncalibrated,
 * advice in words on what would help.
 *
 * @module
 */

import { liveGrid } from "../engine/live.ts";
import { calibrationInScope } from "../engine/scope.ts";
import type { Calibration, DriftReference } from "../engine/table.ts";
import {
  type CertificationPlan,
  fallbackTest,
  planCertification,
  type ThresholdChoice,
} from "./certify.ts";
import type { ValidationFigures } from "./fit.ts";
import { largestPassing, minimumCertifiable } from "./stats.ts";
import { effectiveSize } from "./units.ts";

/** A question's answers on the calibration split, as serving would score them. */
export interface ScoredAnswers {
  /** Confidence of the best option over all options (0 for an empty text). */
  confidences: Float64Array;
  /** 1 where the best option is not the reference model's answer. */
  wrong: Uint8Array;
  /** Share of each text's buckets no training text had. */
  novelty: Float32Array;
  /** Each text's drift score (see `driftScore`). */
  driftScores: Float32Array;
  /** Each text's energy (see `scope.ts`). */
  energies: Float32Array;
  /** Each answer's unit in the split (answers of one unit are not independent); absent: all independent. */
  units?: Int32Array;
}

/** What calibration decided, and how. */
export interface CalibrationOutcome {
  calibration: Calibration;
  /** The threshold search, for the report. */
  choice: ThresholdChoice;
  /** How the search was set up (from validation data only). */
  plan: CertificationPlan;
  /** What the drift guard compares live texts with (sorted copies). */
  drift: DriftReference;
  /** For an uncalibrated question: what would help, in words; null otherwise. */
  advice: string | null;
}

/** Test level and target of the threshold search. */
export interface CalibrationTargets {
  alpha: number;
  delta: number;
  /** Share of the traces that went to calibration (to turn answers into traces in advice). */
  calibrationShare: number;
  /** The out-of-scope rule's level (0: off); the test sees the rule as serving applies it. */
  scopeP: number;
}

/** Alphas that advice may suggest, in the order they are tried. */
const ADVICE_ALPHAS = [0.06, 0.075, 0.1, 0.15, 0.2, 0.3];

/**
 * Chooses a question's threshold from its scored calibration answers. The
 * plan (candidates, start, levels) comes from the validation figures and the
 * calibration size alone, so it is fixed before any calibration label is
 * read.
 */
export function calibrateQuestion(
  scored: ScoredAnswers,
  validation: ValidationFigures,
  targets: CalibrationTargets,
): CalibrationOutcome {
  const { alpha, delta } = targets;
  // The plan weighs the calibration split by its effective size (answers of
  // one unit count together, as in the test); the units are no label.
  const plan = planCertification(
    validation,
    effectiveOf(scored),
    alpha,
    delta,
  );
  const choice = fallbackTest(
    inScopeConfidences(scored, targets.scopeP),
    scored.wrong,
    plan,
    alpha,
    scored.units,
  );
  return {
    calibration: {
      status: choice.threshold === null ? "uncalibrated" : "calibrated",
      threshold: choice.threshold,
      alpha,
      delta,
      reason: choice.reason,
      candidates: liveGrid(plan.grid, choice.threshold),
    },
    choice,
    plan,
    drift: {
      scores: Float32Array.from(scored.driftScores).sort(),
      novelty: Float32Array.from(scored.novelty).sort(),
      energy: Float32Array.from(scored.energies).sort(),
    },
    advice: choice.threshold === null
      ? uncalibratedAdvice(scored, validation, targets)
      : null,
  };
}

/**
 * The calibration confidences as the test must see them: an answer the
 * out-of-scope rule would withhold (its energy judged against the other
 * calibration texts) can never be certified, whatever the threshold.
 */
function inScopeConfidences(
  scored: ScoredAnswers,
  scopeP: number,
): Float64Array {
  const inScope = calibrationInScope(scored.energies, scopeP);
  return scored.confidences.map((c, i) => inScope[i] ? c : -1);
}

/**
 * What would let an uncalibrated question certify, in words: how many more
 * traces a pass would take at the disagreement rate its most confident
 * calibration answers show, and the smallest alpha at which this same
 * calibration split would pass. Read from the calibration labels, so it is
 * advice only: it never changes the threshold.
 */
export function uncalibratedAdvice(
  scored: ScoredAnswers,
  validation: ValidationFigures,
  targets: CalibrationTargets,
): string {
  const { alpha, delta, calibrationShare } = targets;
  const n = scored.confidences.length;
  const needed = minimumCertifiable(alpha, delta);
  const parts: string[] = [];
  const traces = (answers: number) =>
    Math.ceil(answers / calibrationShare).toLocaleString("en-US");
  if (n < needed) {
    parts.push(
      `it has ${n} calibration answers and a pass needs at least ${needed} (about ${
        traces(needed - n)
      } more traces answering it)`,
    );
  } else {
    // The best rate among the most confident answers (at least `needed` of them).
    const order = Array.from(scored.confidences, (_, i) => i).sort((a, b) =>
      scored.confidences[b]! - scored.confidences[a]!
    );
    let k = 0;
    let bestRate = Infinity;
    let bestTop = 0;
    order.forEach((i, at) => {
      k += scored.wrong[i]!;
      const top = at + 1;
      if (top >= needed && k / top < bestRate) {
        bestRate = k / top;
        bestTop = top;
      }
    });
    // Answers of one cluster or group count together in the test (Kish's
    // effective size), so a pass needs `design` times as many answers as
    // independent ones would.
    const design = n / effectiveOf(scored);
    if (bestRate >= alpha) {
      parts.push(
        `even its ${bestTop} most confident calibration answers disagree with the model ${
          (bestRate * 100).toFixed(1)
        }% of the time, at least alpha (${alpha}): more traces of the same kind would not help`,
      );
    } else {
      // Calibration answers needed for that rate to pass, growing the top share in proportion.
      let grow = 1;
      const passes = (g: number) => {
        const effective = Math.floor((bestTop * g) / design);
        return largestPassing(effective, alpha, delta) >=
          Math.ceil(bestRate * effective);
      };
      while (grow < 64 && !passes(grow)) grow *= 1.25;
      const clustered = design >= 1.05
        ? ` (its ${n} answers count as about ${
          Math.round(n / design)
        } independent ones: answers of one cluster or group count together)`
        : "";
      if (grow < 64) {
        parts.push(
          `its most confident calibration answers disagree ${
            (bestRate * 100).toFixed(1)
          }% of the time${clustered}; at that rate a pass needs about ${
            Math.ceil(grow * 10) / 10
          } times as many traces (about ${
            traces(n * (grow - 1))
          } more, of as many different kinds as the ones it has)`,
        );
      }
    }
  }
  for (const a of ADVICE_ALPHAS) {
    if (a <= alpha) continue;
    const plan = planCertification(
      validation,
      effectiveOf(scored),
      a,
      delta,
    );
    const c = fallbackTest(
      inScopeConfidences(scored, targets.scopeP),
      scored.wrong,
      plan,
      a,
      scored.units,
    );
    if (c.threshold !== null) {
      parts.push(
        `at --alpha ${a} this calibration split would certify ${c.certified} of its ${n} answers ` +
          `(alpha is best chosen before seeing this: choosing it after makes the bound less strict)`,
      );
      break;
    }
  }
  return parts.length === 0
    ? "no alpha up to 0.3 would pass on this calibration split"
    : parts.join("; ");
}

/** The effective number of calibration answers, as the test counts them (Kish, by unit). */
function effectiveOf(scored: ScoredAnswers): number {
  return scored.units === undefined
    ? scored.confidences.length
    : effectiveSize(scored.units);
}
