/**
 * A question's second tier chosen (`train --semantic auto|on|off`;
 * `chooseSecondTier`): for a question already fitted and scored on
 * calibration, fit a softmax regression on the texts' sentence embeddings
 * (`semantic_fit.ts`), then certify the two tiers as one rule
 * (`twoTierVerdict`) with one Learn-then-Test fixed sequence over the
 * threshold `L` on the whole calibration part (`two_tier_certify.ts`): the
 * table's answer where its confidence reaches `L`, else the second tier's
 * where its confidence does. Every
 * rule that withholds the table's answer (the out-of-scope rule as the
 * calibration test sees it, an empty text) withholds the second tier's
 * too, and the second tier's own novelty guard (see `semantic.ts` in the
 * engine) withholds it as serving will, its p-value taken leave-one-out
 * among the calibration texts. With `auto`, the second tier is kept only
 * where the same test on the validation part certifies more with it. It
 * reads row numbers and embeddings only; the trainer's stage that runs it
 * for each question is `second_tier.ts`.
 *
 * @module
 */

import {
  type Calibration,
  calibrationInScope,
  quantizeTexts,
  seededRandom,
  semanticAssess,
  type SemanticTier,
  softmax,
  twoTierVerdict,
} from "../engine/mod.ts";
import {
  type CertificationPlan,
  liveGrid,
  type TestGate,
  type ThresholdChoice,
} from "../guarantee/mod.ts";
import {
  type CalibrationOutcome,
  inScopeConfidences,
  type ScoredAnswers,
} from "./calibrate.ts";
import type { ValidationFigures } from "./fit.ts";
import {
  DEFAULT_SEMANTIC_FIT,
  fitTier,
  noveltyReference,
  type SemanticFitSettings,
} from "./semantic_fit.ts";
import {
  certifyTwoTiers,
  ruleCertified,
  withWorstTiers,
} from "./two_tier_certify.ts";
import { percent } from "../format.ts";

/** Whether training adds a second tier. */
export type SemanticMode = "auto" | "on" | "off";
/** The modes, for flag checks. */
export const SEMANTIC_MODES: readonly SemanticMode[] = ["auto", "on", "off"];

/**
 * The least share of a question's answers the table must leave to low
 * confidence (uncertified) for the second tier to be worth its cost when
 * it does not certify more: `train --semantic auto` embeds the texts only
 * where a question's calibration answers reach it
 * (`second_tier_reach.ts`), and keeps a tier that measures no better on
 * validation only where the table leaves that much (`keepsTier`). Below,
 * the second tier could add at most that share, of which it certifies part
 * (on BANKING77 about a third of what it is asked).
 */
export const MIN_REACH = 0.15;

/** Share of calibration texts the novelty guard may withhold from the second tier. */
export const NOVELTY_P = 0.05;

/** One question's second-tier stage, as the trainer hands it over. */
export interface SemanticQuestion {
  labels: Int32Array;
  options: number;
  fit: readonly number[];
  validation: readonly number[];
  calibration: readonly number[];
  /** The table's validation figures (in `validation` order), and its temperature. */
  tableValidation: ValidationFigures;
  tableTemperature: number;
  /** The table's calibration answers as served (in `calibration` order), and its own outcome. */
  scored: ScoredAnswers;
  /** The table's probabilities over all options for each calibration answer (in `calibration` order). */
  tableProbabilities: readonly Float64Array[];
  tableOutcome: CalibrationOutcome;
}

/** Targets and settings of the stage. */
export interface SemanticTargets {
  mode: Exclude<SemanticMode, "off">;
  alpha: number;
  delta: number;
  scopeP: number;
  fit: SemanticFitSettings;
  /** Novelty guard level (0: off). */
  noveltyP: number;
  /** Whether the second tier may read the table's probabilities beside the embedding. */
  readTable: boolean;
  /** The novelty guard's tests (absent: `DEFAULT_GUARD`). */
  guard?: GuardTests;
  /** Calibration answers counted as certified disagreements at every threshold (see `withWorstCases`); absent: none. */
  worstCase?: number;
  /** What the two-tier test must clear to be run (see `TestGate`); absent: always run it. */
  gate?: TestGate;
}

/** Which tests the novelty guard applies (see `semantic.ts` in the engine). */
export interface GuardTests {
  mahalanobis: boolean;
  nearest: boolean;
  spread: boolean;
}

/** The guard's tests by default: chosen by measurement (docs/benchmarks.md). */
export const DEFAULT_GUARD: GuardTests = {
  mahalanobis: true,
  nearest: false,
  spread: false,
};

/** At most this many fit texts are stored for the nearest-text test (a seeded sample beyond). */
export const NEAREST_MAX = 4000;

/** What the stage reports for a question (`report.json`). */
export interface SemanticReport {
  /** True when the question keeps its second tier. */
  used: boolean;
  /** Why, in words. */
  reason: string;
  epochs: number;
  temperature: number;
  /** Weight of the table's log-probabilities in the second tier's logits (0: the embedding alone). */
  table_weight: number;
  validation_accuracy: number | null;
  /** Share of validation answers the test would certify: the table alone, and both tiers. */
  validation_certified: { table: number; both: number };
  /** On a large log, the traces the second tier used (a seeded sample; see `semantic_sample.ts`) of those of its fit, validation and calibration parts; absent when it used all. */
  sample?: { used: number; of: number };
  /** Calibration: the threshold, answers certified by each tier, disagreements; null when not kept. */
  calibration: {
    threshold: number | null;
    by_table: number;
    by_semantic: number;
    disagreements: number;
    novelty_withheld: number;
    /** Candidates the two-tier test ran (0: not run; absent in reports before it was recorded). */
    candidates_tested?: number;
    /** Calibration answers the rule would certify with no bound to pay (see `openCount`; absent before it was recorded). */
    open?: number;
  } | null;
}

/** What `chooseSecondTier` decided. */
export interface SecondTierChoice {
  /** The second tier to serve (with the two-tier rule's calibration), or null when the question keeps the table alone. */
  tier: SemanticTier | null;
  choice: ThresholdChoice;
  plan: CertificationPlan;
  report: SemanticReport;
}

/**
 * Fits, certifies and judges a question's second tier (see the module
 * doc). `embeddings` holds every trace's embedding (only the question's
 * parts are read).
 */
export function chooseSecondTier(
  q: SemanticQuestion,
  embeddings: readonly Float32Array[],
  targets: SemanticTargets,
): SecondTierChoice {
  const dim = embeddings[q.fit[0] ?? q.calibration[0] ?? 0]?.length ?? 0;
  const k = q.options;
  const fitted = fitTier(
    embeddings,
    q.labels,
    q.fit,
    q.validation,
    k,
    dim,
    targets.fit,
    targets.readTable
      ? tableLogProbs(q.tableValidation, q.tableTemperature, k)
      : null,
  );
  const novelty = noveltyReference(
    embeddings,
    q.labels,
    [...q.fit, ...q.validation],
    k,
    dim,
    targets.fit.shrinkage,
    targets.noveltyP,
  );
  const guard = targets.guard ?? DEFAULT_GUARD;
  const stored = guard.nearest
    ? nearestSample([...q.fit, ...q.validation], targets.fit.seed)
    : [];
  const nearest = guard.nearest
    ? {
      dim,
      ...quantizeTexts(embeddings, stored, dim),
      scores: new Float32Array(0),
    }
    : undefined;
  const tier: SemanticTier = {
    dim,
    scale: targets.fit.scale,
    weights: fitted.weights,
    bias: fitted.bias,
    temperature: fitted.temperature,
    tableWeight: fitted.tableWeight,
    novelty: {
      ...novelty,
      ...(nearest === undefined ? {} : { nearest }),
    },
    calibration: q.tableOutcome.calibration,
  };

  // Calibration: both tiers' inputs as serving computes them.
  const n = q.calibration.length;
  const tableConf = inScopeConfidences(q.scored, targets.scopeP);
  const noveltyScores = new Float32Array(n);
  const nearestScores = new Float32Array(n);
  const spreadScores = new Float32Array(n);
  const tierConf = new Float64Array(n);
  const tierWrong = new Uint8Array(n);
  q.calibration.forEach((i, t) => {
    const a = semanticAssess(
      tier,
      embeddings[i]!,
      undefined,
      q.tableProbabilities[t],
    );
    noveltyScores[t] = a.novelty;
    nearestScores[t] = a.nearest;
    spreadScores[t] = a.spread;
    tierConf[t] = a.confidence;
    tierWrong[t] = a.best === q.labels[i] ? 0 : 1;
  });
  // Leave-one-out conformal verdicts, each test at p / m (high distances
  // are novel: negated scores make "others at or below" the others at or
  // above; low spreads are novel as they are).
  const m = (guard.mahalanobis ? 1 : 0) + (guard.nearest ? 1 : 0) +
    (guard.spread ? 1 : 0);
  const level = m === 0 ? 0 : targets.noveltyP / m;
  const familiar = new Uint8Array(n).fill(1);
  const tests: Float32Array[] = [];
  if (guard.mahalanobis) tests.push(noveltyScores.map((s) => -s));
  if (guard.nearest) tests.push(nearestScores.map((s) => -s));
  if (guard.spread) tests.push(spreadScores);
  for (const scores of tests) {
    const pass = calibrationInScope(scores, level, n);
    for (let t = 0; t < n; t++) familiar[t]! &= pass[t]!;
  }
  let withheld = 0;
  for (let t = 0; t < n; t++) {
    // The table's rules withhold both tiers; the guard the second one.
    if (tableConf[t]! <= 0) tierConf[t] = -1;
    else if (familiar[t] === 0) {
      tierConf[t] = -1;
      withheld++;
    }
  }
  tier.novelty = {
    ...novelty,
    p: level * m,
    scores: guard.mahalanobis
      ? Float32Array.from(noveltyScores).sort()
      : new Float32Array(0),
    ...(nearest === undefined ? {} : {
      nearest: { ...nearest, scores: Float32Array.from(nearestScores).sort() },
    }),
    ...(guard.spread
      ? { spreads: Float32Array.from(spreadScores).sort() }
      : {}),
  };

  const v = q.validation.length;
  const shares = {
    table: ruleCertified(
      q.tableValidation.confidences,
      q.tableValidation.correct,
      null,
      targets,
    ),
    both: ruleCertified(
      q.tableValidation.confidences,
      q.tableValidation.correct,
      fitted.validation,
      targets,
    ),
  };
  const validationAccuracy = v === 0
    ? null
    : fitted.validation.correct.reduce((a, b) => a + b, 0) / v;
  const base = {
    epochs: fitted.epochs,
    temperature: fitted.temperature,
    table_weight: fitted.tableWeight,
    validation_accuracy: validationAccuracy,
    validation_certified: shares,
  };
  const noise = autoNoise(shares.table, v);
  if (targets.mode === "auto" && !keepsTier(shares, v)) {
    return {
      tier: null,
      choice: q.tableOutcome.choice,
      plan: q.tableOutcome.plan,
      report: {
        ...base,
        used: false,
        reason: `on the validation part the same test would certify ${
          percent(shares.both)
        } with the second tier and ${
          percent(shares.table)
        } with the table alone (noise about ${
          percent(noise)
        }): kept the table alone`,
        calibration: null,
      },
    };
  }
  const { plan, choice, open } = certifyTwoTiers(
    {
      table: q.tableValidation,
      tier: fitted.validation,
    },
    withWorstTiers({
      tableConf,
      tableWrong: q.scored.wrong,
      tierConf,
      tierWrong,
      ...(q.scored.units === undefined ? {} : { units: q.scored.units }),
    }, targets.worstCase ?? 0),
    targets.alpha,
    targets.delta,
    targets.gate,
  );
  let byTable = 0;
  let bySemantic = 0;
  if (choice.threshold !== null) {
    for (let t = 0; t < n; t++) {
      const who = twoTierVerdict({
        table: tableConf[t]!,
        semantic: tierConf[t]!,
      }, choice.threshold);
      if (who === "table") byTable++;
      else if (who === "semantic") bySemantic++;
    }
  }
  const calibration: Calibration = {
    status: choice.threshold === null ? "uncalibrated" : "calibrated",
    threshold: choice.threshold,
    alpha: targets.alpha,
    delta: targets.delta,
    reason: choice.reason,
    candidates: liveGrid(plan.grid, choice.threshold),
  };
  return {
    tier: { ...tier, calibration },
    choice,
    plan,
    report: {
      ...base,
      used: true,
      reason: targets.mode === "on"
        ? "--semantic on"
        : `on the validation part the same test would certify ${
          percent(shares.both)
        } with the second tier and ${
          percent(shares.table)
        } with the table alone`,
      calibration: {
        threshold: choice.threshold,
        by_table: byTable,
        by_semantic: bySemantic,
        disagreements: choice.disagreements,
        novelty_withheld: withheld,
        candidates_tested: choice.tested,
        open,
      },
    },
  };
}

/** The table's log-probabilities on its validation answers (`n × k`), or null without its logits. */
function tableLogProbs(
  v: ValidationFigures,
  temperature: number,
  k: number,
): Float64Array | null {
  if (v.logits === undefined || v.logits.length === 0) return null;
  const out = new Float64Array(v.logits.length);
  for (let t = 0; t * k < v.logits.length; t++) {
    const p = softmax(v.logits.subarray(t * k, (t + 1) * k), temperature);
    for (let j = 0; j < k; j++) {
      out[t * k + j] = Math.log(Math.max(p[j]!, 1e-12));
    }
  }
  return out;
}

/**
 * Two standard errors of a share `p` measured on `v` validation answers
 * (at least one answer's worth): how far apart two such shares may lie
 * by chance.
 */
export function autoNoise(p: number, v: number): number {
  return v === 0 ? 0 : Math.max(2 * Math.sqrt((p * (1 - p)) / v), 1 / v);
}

/**
 * `auto`'s choice, on the validation part: keep the second tier where the
 * same test certifies more with it (two validation answers or more), or,
 * where the table leaves at least `MIN_REACH` of the part uncertified
 * (room for the second tier), where it certifies less by no more than the
 * part's noise (`autoNoise`): the part is small (about 340 answers at 3,000
 * traces), and a tier that measured a few points worse there still
 * certified more on held-out data in every case measured (see
 * docs/benchmarks.md). So where the table alone certifies (nearly) every
 * validation answer and the tier adds nothing, the table stays alone. A
 * tier that certifies nothing there is never kept; the promise holds
 * either way.
 */
export function keepsTier(
  shares: { table: number; both: number },
  v: number,
): boolean {
  if (!(shares.both > 0)) return false;
  const gain = shares.both - shares.table;
  if (gain * v >= 2 - 1e-9) return true;
  return 1 - shares.table >= MIN_REACH &&
    gain >= -autoNoise(shares.table, v);
}

/**
 * The fit texts the nearest-text test stores: all of `indices` up to
 * `NEAREST_MAX`, else a seeded sample of that many (in index order).
 */
export function nearestSample(
  indices: readonly number[],
  seed: number,
): number[] {
  if (indices.length <= NEAREST_MAX) return [...indices];
  const random = seededRandom(seed ^ 0x5eed);
  const order = [...indices];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order.slice(0, NEAREST_MAX).sort((a, b) => a - b);
}

/** The default fit settings, with the training seed. */
export function semanticFitSettings(seed: number): SemanticFitSettings {
  return { ...DEFAULT_SEMANTIC_FIT, seed };
}
