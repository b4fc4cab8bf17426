/**
 * The trainer's second-tier stage (`trainer.ts` runs it after
 * calibration, per question): the question's traces that have an
 * embedding renumbered, the table's own probabilities on them handed to
 * `chooseSecondTier` (`semantic.ts`, which fits, certifies and judges the
 * tier), its progress said in words, and the tier set on the question where
 * it is kept.
 *
 * @module
 */

import {
  fullProbabilities,
  prepareText,
  type Table,
  TableState,
} from "../engine/mod.ts";
import type { QuestionAnswers } from "../traces/mod.ts";
import { inScopeConfidences, type ScoredAnswers } from "./calibrate.ts";
import type { CalibratedQuestion } from "./calibrate_stage.ts";
import type { FittedModel, ValidationFigures } from "./fit.ts";
import { deltaFor, testGate, type TrainOptions } from "./options.ts";
import type { QuestionParts } from "./parts.ts";
import {
  chooseSecondTier,
  NOVELTY_P,
  semanticFitSettings,
  type SemanticMode,
  type SemanticReport,
} from "./semantic.ts";
import { secondTierInWords } from "./words.ts";

/**
 * Runs the second tier for one calibrated question and sets
 * `calibrated.question.semantic` where it is kept; returns its report.
 */
export function secondTierStage(
  base: Table,
  texts: readonly string[],
  embeddings: readonly (Float32Array | undefined)[],
  mode: Exclude<SemanticMode, "off">,
  qa: QuestionAnswers,
  parts: QuestionParts,
  model: FittedModel,
  calibrated: CalibratedQuestion,
  options: TrainOptions,
  say: (line: string) => void,
): SemanticReport {
  const { unscored, outcome } = calibrated;
  const calibrationTable: Table = {
    ...base,
    questions: [unscored],
    byName: new Map([[unscored.name, unscored]]),
  };
  const calibrationState = new TableState(calibrationTable);
  // On a sample (`semantic_sample.ts`), each part's embedded traces; the
  // table's calibration answers keep the out-of-scope verdicts they have
  // among all calibration texts, as serving judges them.
  const embedded = (i: number) => embeddings[i] !== undefined;
  // The stage sees the embedded traces alone, renumbered 0..m-1: on a
  // large log it never holds a row per trace.
  const local = new Map<number, number>();
  const compact: Float32Array[] = [];
  embeddings.forEach((e, i) => {
    if (e === undefined) return;
    local.set(i, compact.length);
    compact.push(e);
  });
  const at = (i: number) => local.get(i)!;
  const labels = new Int32Array(compact.length);
  for (const [i, j] of local) labels[j] = qa.labels[i]!;
  const sampled = {
    fit: parts.fit.filter(embedded),
    validation: positions(parts.validation, embedded),
    calibration: positions(calibrated.rows, embedded),
  };
  const scored = subsetScored(
    calibrated.scored,
    sampled.calibration,
    options.settings.drift.scope_p,
  );
  const stage = chooseSecondTier(
    {
      labels,
      options: qa.options.length,
      fit: sampled.fit.map(at),
      validation: sampled.validation.map((t) => at(parts.validation[t]!)),
      calibration: sampled.calibration.map((t) => at(calibrated.rows[t]!)),
      tableValidation: subsetValidation(
        model.validation,
        sampled.validation,
        qa.options.length,
      ),
      tableTemperature: model.temperature,
      scored,
      tableProbabilities: sampled.calibration.map((t) =>
        fullProbabilities(
          calibrationTable,
          calibrationState,
          prepareText(
            calibrationTable,
            calibrationState,
            texts[calibrated.rows[t]!]!,
          ),
          unscored,
        )
      ),
      tableOutcome: outcome,
    },
    compact,
    {
      mode,
      alpha: options.alpha,
      delta: deltaFor(options, qa.name),
      scopeP: options.settings.drift.scope_p,
      gate: testGate(options, qa.name),
      fit: semanticFitSettings(options.seed),
      noveltyP: NOVELTY_P,
      readTable: true,
      worstCase: calibrated.worstCase,
      ...(options.semanticGuard ? { guard: options.semanticGuard } : {}),
    },
  );
  const all = parts.fit.length + parts.validation.length +
    calibrated.rows.length;
  const used = sampled.fit.length + sampled.validation.length +
    sampled.calibration.length;
  if (used < all) {
    say(
      `${qa.name}: second tier on a sample of ${used} of ${all} traces (${sampled.calibration.length} calibration answers; the table uses all)`,
    );
  }
  say(secondTierInWords(qa.name, stage.report.used, stage.report.reason));
  if (stage.tier !== null) calibrated.question.semantic = stage.tier;
  return used < all
    ? { ...stage.report, sample: { used, of: all } }
    : stage.report;
}

/** The positions in `indices` whose trace passes `keep`. */
function positions(
  indices: readonly number[],
  keep: (i: number) => boolean,
): number[] {
  const out: number[] = [];
  indices.forEach((i, t) => {
    if (keep(i)) out.push(t);
  });
  return out;
}

/**
 * The scored calibration answers at positions `at`, each with the
 * out-of-scope verdict it has among all of them (withheld: confidence -1,
 * so the rule is not judged again on the sample).
 */
function subsetScored(
  scored: ScoredAnswers,
  at: readonly number[],
  scopeP: number,
): ScoredAnswers {
  if (at.length === scored.confidences.length) return scored;
  const confidences = inScopeConfidences(scored, scopeP);
  const at64 = (xs: Float64Array) => Float64Array.from(at, (t) => xs[t]!);
  const at32 = (xs: Float32Array) =>
    xs.length === 0 ? xs : Float32Array.from(at, (t) => xs[t]!);
  return {
    confidences: at64(confidences),
    wrong: Uint8Array.from(at, (t) => scored.wrong[t]!),
    novelty: at32(scored.novelty),
    driftScores: at32(scored.driftScores),
    scopeScores: new Float32Array(0),
    scopeScore: null,
    ...(scored.units === undefined
      ? {}
      : { units: Int32Array.from(at, (t) => scored.units![t]!) }),
    ...(scored.traces === undefined
      ? {}
      : { traces: at.map((t) => scored.traces![t]!) }),
  };
}

/** The table's validation figures at positions `at` (logits: `k` per answer). */
function subsetValidation(
  v: ValidationFigures,
  at: readonly number[],
  k: number,
): ValidationFigures {
  if (at.length === v.confidences.length) return v;
  const correct = Uint8Array.from(at, (t) => v.correct[t]!);
  const logits = v.logits === undefined || v.logits.length === 0
    ? v.logits
    : (() => {
      const out = new Float64Array(at.length * k);
      at.forEach((t, j) =>
        out.set(v.logits!.subarray(t * k, (t + 1) * k), j * k)
      );
      return out;
    })();
  return {
    confidences: Float64Array.from(at, (t) => v.confidences[t]!),
    correct,
    accuracy: at.length === 0
      ? null
      : correct.reduce((a, b) => a + b, 0) / at.length,
    ...(logits === undefined ? {} : { logits }),
  };
}
