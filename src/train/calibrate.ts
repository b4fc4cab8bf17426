/**
 * The calibrate step: from a fitted question's answers on the calibration
 * split, the certified threshold (see `certify.ts`) and the references the
 * drift guard compares live texts with; for a question left uncalibrated,
 * advice in words on what would help.
 *
 * @module
 */

import {
  type Calibration,
  calibrationInScope,
  type DriftReference,
  type ScopeScore,
} from "../engine/mod.ts";
import {
  binomialTail,
  calibrationBands,
  type CertificationPlan,
  fallbackTest,
  fixedSequence,
  gridCounts,
  liveGrid,
  minimumCertifiable,
  notTested,
  openCount,
  planCertification,
  type TestGate,
  type ThresholdChoice,
  worthTesting,
} from "../guarantee/mod.ts";
import type { ValidationFigures } from "./fit.ts";
import { effectiveSize } from "./union_find.ts";
import { type AdviceFacts, adviceInWords } from "./words.ts";

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
  /**
   * Each text's score for the out-of-scope rule (see `scope.ts`); empty
   * when the rule does not apply to the question.
   */
  scopeScores: Float32Array;
  /** Which score `scopeScores` holds; null when the rule does not apply. */
  scopeScore?: ScopeScore | null;
  /** Each answer's unit in the split (answers of one unit are not independent); absent: all independent. */
  units?: Int32Array;
  /** Each answer's trace (its index in the trace set), for reports; absent when not known. */
  traces?: readonly number[];
  /**
   * How many answers at the end have no label (picked decisions a proxy
   * never answered, each counted as a disagreement): the test counts them,
   * the feedback check's bands do not. Absent: none.
   */
  unlabelled?: number;
}

/** What calibration decided, and how. */
export interface CalibrationOutcome {
  calibration: Calibration;
  /** The threshold search, for the report. */
  choice: ThresholdChoice;
  /** How the search was set up (from validation data only). */
  plan: CertificationPlan;
  /** Calibration answers a threshold set with no bound to pay would certify (see `openCount`). */
  open: number;
  /** What the drift guard compares live texts with (sorted copies). */
  drift: DriftReference;
  /** For an uncalibrated question: what would help, in words; null otherwise. */
  advice: string | null;
  /** For an uncalibrated question: why, as one word (see `TestFailure`); null otherwise. */
  failure: TestFailure | null;
}

/**
 * Why a question's test certified nothing: `not_tested` (its plan gave it
 * too little chance, so no share of delta was spent), `few` (fewer
 * calibration answers than any pass needs), `withheld` (too few left once
 * the out-of-scope rule withholds some), `all_wrong` (even the most
 * confident answers disagree at alpha or more), `misplaced` (the plan put
 * its level where too many disagreed, though the most confident answers
 * would have passed with the whole level on them) or `too_many` (no top
 * set would have passed even so).
 */
export type TestFailure =
  | "not_tested"
  | "few"
  | "withheld"
  | "all_wrong"
  | "misplaced"
  | "too_many";

/** One word for why an uncalibrated question failed, from its facts (see `TestFailure`). */
export function failureOf(facts: AdviceFacts): TestFailure {
  const why = facts.why;
  if (why.kind === "too_many") {
    return why.borderline === null ? "too_many" : "misplaced";
  }
  return why.kind;
}

/** Test level and target of the threshold search. */
export interface CalibrationTargets {
  alpha: number;
  delta: number;
  /** Share of the traces that went to calibration (to turn answers into traces in advice). */
  calibrationShare: number;
  /** The out-of-scope rule's level (0: off); the test sees the rule as serving applies it. */
  scopeP: number;
  /**
   * Answers the test counts as certified disagreements at every threshold,
   * beside the scored ones: decisions picked for calibration whose label
   * never came (see `feedback_sample.ts`). Absent: none.
   */
  worstCase?: number;
  /** What the test must clear to be run (`notTested` otherwise); absent: always run it. */
  gate?: TestGate;
}

/**
 * Calibration answers with `k` worst cases added: each certified at any
 * threshold (confidence 1), each a disagreement, each a unit of its own
 * (when answers have units). The arrays are returned as they are for `k` 0.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withWorstCases } from "./calibrate.ts";
 * const out = withWorstCases(
 *   { confidences: new Float64Array([0.9]), wrong: new Uint8Array([0]) },
 *   2,
 * );
 * assert.deepEqual([...out.confidences], [0.9, 1, 1]);
 * assert.deepEqual([...out.wrong], [0, 1, 1]);
 * ```
 */
export function withWorstCases<
  T extends {
    confidences: Float64Array;
    wrong: Uint8Array;
    units?: Int32Array;
  },
>(answers: T, k: number): T {
  if (k === 0) return answers;
  const n = answers.confidences.length;
  const confidences = new Float64Array(n + k).fill(1);
  confidences.set(answers.confidences);
  const wrong = new Uint8Array(n + k).fill(1);
  wrong.set(answers.wrong);
  const out = { ...answers, confidences, wrong };
  if (answers.units !== undefined) {
    let next = 0;
    for (const u of answers.units) next = Math.max(next, u + 1);
    const units = new Int32Array(n + k);
    units.set(answers.units);
    for (let j = 0; j < k; j++) units[n + j] = next + j;
    out.units = units;
  }
  return out;
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
  const worst = targets.worstCase ?? 0;
  // The plan weighs the calibration split by its effective size (answers of
  // one unit count together, as in the test); the units are no label.
  const plan = planCertification(
    validation,
    effectiveOf(scored) + worst,
    alpha,
    delta,
  );
  const inScope = inScopeConfidences(scored, targets.scopeP);
  const tested = withWorstCases({
    confidences: inScope,
    wrong: scored.wrong,
    ...(scored.units === undefined ? {} : { units: scored.units }),
  }, worst);
  const counts = gridCounts(
    tested.confidences,
    tested.wrong,
    plan.grid,
    tested.units,
  );
  const size = tested.confidences.length;
  const choice = worthTesting(plan, size, targets.gate ?? {})
    ? fixedSequence(plan, counts, alpha, tested.confidences.length)
    : notTested(plan, size, targets.gate ?? {});
  const candidates = liveGrid(plan.grid, choice.threshold);
  return {
    calibration: {
      status: choice.threshold === null ? "uncalibrated" : "calibrated",
      threshold: choice.threshold,
      alpha,
      delta,
      reason: choice.reason,
      candidates,
      // The live feedback check's bands: edges at the live candidates
      // (fixed before any label was read), counts over the answers the
      // test counted, clustered ones by their effective number.
      ...(choice.threshold === null ? {} : {
        bands: labelledBands(
          inScope,
          scored,
          liveGrid(candidates, choice.threshold),
        ),
      }),
    },
    choice,
    plan,
    open: openCount(counts, alpha),
    drift: {
      scores: Float32Array.from(scored.driftScores).sort(),
      novelty: Float32Array.from(scored.novelty).sort(),
      scope: {
        score: scored.scopeScore ?? null,
        values: Float32Array.from(scored.scopeScores).sort(),
      },
    },
    ...failed(choice, scored, validation, targets, plan),
  };
}

/** What an uncalibrated test's outcome says of why, in words and as one word (null for a calibrated one). */
function failed(
  choice: ThresholdChoice,
  scored: ScoredAnswers,
  validation: ValidationFigures,
  targets: CalibrationTargets,
  plan: CertificationPlan,
): { advice: string | null; failure: TestFailure | null } {
  if (choice.threshold !== null) return { advice: null, failure: null };
  if (choice.tested === 0) {
    return {
      advice:
        "more calibration answers (the test is run once its plan gives it a fair chance)",
      failure: "not_tested",
    };
  }
  const facts = uncalibratedFacts(scored, validation, targets, plan);
  return { advice: adviceInWords(facts), failure: failureOf(facts) };
}

/**
 * The calibration confidences as the test must see them: an answer the
 * out-of-scope rule would withhold (its score judged against the other
 * calibration texts) can never be certified, whatever the threshold (its
 * confidence is -1).
 */
export function inScopeConfidences(
  scored: ScoredAnswers,
  scopeP: number,
): Float64Array {
  const inScope = calibrationInScope(
    scored.scopeScores,
    scopeP,
    scored.confidences.length,
  );
  return scored.confidences.map((c, i) => inScope[i] ? c : -1);
}

/**
 * Why an uncalibrated question failed, in words: too few calibration
 * answers (and how many more traces the count alone asks for), too few left
 * by the out-of-scope rule, or what the most confident answers or the
 * test's main candidate (placed before calibration) saw; whether the
 * question was borderline (one threshold would have passed with the whole
 * test on it); and the smallest alpha at which this same calibration split
 * would pass. How many more traces would help beyond a count is the
 * learning curve's to say (`learning_curve.ts`): a projection from one
 * calibration rate swings with every answer near alpha. Read from the
 * calibration labels, so it is advice only: it never changes the threshold.
 */
export function uncalibratedAdvice(
  scored: ScoredAnswers,
  validation: ValidationFigures,
  targets: CalibrationTargets,
  plan: CertificationPlan = planCertification(
    validation,
    effectiveOf(scored),
    targets.alpha,
    targets.delta,
  ),
): string {
  return adviceInWords(uncalibratedFacts(scored, validation, targets, plan));
}

/**
 * What `uncalibratedAdvice` says, as facts: why the question failed (see
 * `AdviceFacts`) and the smallest larger alpha at which this calibration
 * split would pass, if any up to 0.3.
 */
export function uncalibratedFacts(
  scored: ScoredAnswers,
  validation: ValidationFigures,
  targets: CalibrationTargets,
  plan: CertificationPlan,
): AdviceFacts {
  const { alpha, delta, calibrationShare } = targets;
  const n = scored.confidences.length;
  const needed = minimumCertifiable(alpha, delta);
  const tops = topSets(inScopeConfidences(scored, targets.scopeP), scored);
  const lowest = tops.lowestRate(needed);
  let why: AdviceFacts["why"];
  if (n < needed) {
    why = { kind: "few" };
  } else if (lowest === null) {
    why = { kind: "withheld", certifiable: tops.all.answers };
  } else if (lowest.wrong / lowest.answers >= alpha) {
    why = { kind: "all_wrong", answers: lowest.answers, wrong: lowest.wrong };
  } else {
    // The candidate the plan put most of delta on, and what it saw there.
    let main = 0;
    plan.levels.forEach((l, i) => {
      if (l > plan.levels[main]!) main = i;
    });
    const atMain = tops.at(plan.grid[main]!);
    const nearest = tops.nearest(alpha);
    const fromMain = atMain.answers > 0;
    const from = fromMain ? atMain : nearest;
    why = {
      kind: "too_many",
      atMain: fromMain,
      answers: from.answers,
      wrong: from.wrong,
      effective: from.effective,
      borderline: nearest.p <= delta
        ? { answers: nearest.answers, wrong: nearest.wrong }
        : null,
    };
  }
  let largerAlpha: AdviceFacts["largerAlpha"] = null;
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
      largerAlpha = { alpha: a, certified: c.certified };
      break;
    }
  }
  return { answers: n, needed, alpha, calibrationShare, why, largerAlpha };
}

/** Calibration answers at or above a confidence, as the test counts them. */
interface TopSet {
  answers: number;
  wrong: number;
  /** Kish's effective number of the answers, by unit. */
  effective: number;
}

/**
 * The calibration answers' top sets, most confident first, counted as the
 * test counts them; answers the out-of-scope rule withholds (confidence -1)
 * are left out.
 */
function topSets(confidences: Float64Array, scored: ScoredAnswers) {
  const order = Array.from(confidences, (_, i) => i)
    .filter((i) => confidences[i]! >= 0)
    .sort((a, b) => confidences[b]! - confidences[a]!);
  const sets: TopSet[] = [];
  const perUnit = new Map<number, number>();
  let wrong = 0;
  let squares = 0;
  order.forEach((i, at) => {
    wrong += scored.wrong[i]!;
    const answers = at + 1;
    let effective = answers;
    if (scored.units !== undefined) {
      const before = perUnit.get(scored.units[i]!) ?? 0;
      perUnit.set(scored.units[i]!, before + 1);
      squares += 2 * before + 1;
      effective = (answers * answers) / squares;
    }
    sets.push({ answers, wrong, effective });
  });
  const none: TopSet = { answers: 0, wrong: 0, effective: 0 };
  return {
    /** Every answer the test can certify. */
    all: sets[sets.length - 1] ?? none,
    /** The answers with confidence at least `t`. */
    at(t: number): TopSet {
      let count = 0;
      while (count < order.length && confidences[order[count]!]! >= t) count++;
      return count === 0 ? none : sets[count - 1]!;
    },
    /** The top set nearest to passing with all of the test on it, and its p-value there. */
    nearest(alpha: number): TopSet & { p: number } {
      let best = { ...none, p: 1 };
      for (const s of sets) {
        const p = binomialTail(
          (s.wrong * s.effective) / s.answers,
          s.effective,
          alpha,
        );
        if (p < best.p) best = { ...s, p };
      }
      return best;
    },
    /** The lowest disagreement rate among top sets of at least `size` answers; null if none is that large. */
    lowestRate(size: number): TopSet | null {
      let best: TopSet | null = null;
      for (const s of sets) {
        if (
          s.answers >= size &&
          (best === null || s.wrong / s.answers < best.wrong / best.answers)
        ) best = s;
      }
      return best;
    },
  };
}

/** The effective number of calibration answers, as the test counts them (Kish, by unit). */
function effectiveOf(scored: ScoredAnswers): number {
  return scored.units === undefined
    ? scored.confidences.length
    : effectiveSize(scored.units);
}

/** The feedback check's bands over the labelled calibration answers (see `ScoredAnswers.unlabelled`). */
function labelledBands(
  inScope: Float64Array,
  scored: ScoredAnswers,
  edges: readonly number[],
) {
  const n = inScope.length - (scored.unlabelled ?? 0);
  return calibrationBands(
    inScope.subarray(0, n),
    scored.wrong.subarray(0, n),
    edges,
    scored.units?.subarray(0, n),
  );
}
