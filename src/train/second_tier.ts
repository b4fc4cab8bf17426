/**
 * The second-tier stage of training, per question: the table's own
 * probabilities on the calibration part handed to `semanticStage`
 * (`semantic.ts`), which fits a tier on sentence embeddings and keeps it
 * where the two tiers certify more.
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
import type { CalibratedQuestion } from "./calibrate_stage.ts";
import type { FittedModel } from "./fit.ts";
import type { TrainOptions } from "./options.ts";
import type { QuestionParts } from "./parts.ts";
import {
  NOVELTY_P,
  semanticFitSettings,
  type SemanticMode,
  type SemanticReport,
  semanticStage,
} from "./semantic.ts";
import { secondTierInWords } from "./words.ts";

/**
 * Runs the second tier for one calibrated question and sets
 * `calibrated.question.semantic` where it is kept; returns its report.
 */
export function secondTierStage(
  base: Table,
  texts: readonly string[],
  embeddings: readonly Float32Array[],
  mode: Exclude<SemanticMode, "off">,
  qa: QuestionAnswers,
  parts: QuestionParts,
  model: FittedModel,
  calibrated: CalibratedQuestion,
  options: TrainOptions,
  say: (line: string) => void,
): SemanticReport {
  const { unscored, scored, outcome } = calibrated;
  const calibrationTable: Table = {
    ...base,
    questions: [unscored],
    byName: new Map([[unscored.name, unscored]]),
  };
  const calibrationState = new TableState(calibrationTable);
  const stage = semanticStage(
    {
      labels: qa.labels,
      options: qa.options.length,
      fit: parts.fit,
      validation: parts.validation,
      calibration: parts.calibration,
      tableValidation: model.validation,
      tableTemperature: model.temperature,
      scored,
      tableProbabilities: parts.calibration.map((i) =>
        fullProbabilities(
          calibrationTable,
          calibrationState,
          prepareText(calibrationTable, calibrationState, texts[i]!),
          unscored,
        )
      ),
      tableOutcome: outcome,
    },
    embeddings,
    {
      mode,
      alpha: options.alpha,
      delta: options.delta,
      scopeP: options.settings.drift.scope_p,
      fit: semanticFitSettings(options.seed),
      noveltyP: NOVELTY_P,
      readTable: true,
      ...(options.semanticGuard ? { guard: options.semanticGuard } : {}),
    },
  );
  say(secondTierInWords(qa.name, stage.report.used, stage.report.reason));
  if (stage.tier !== null) calibrated.question.semantic = stage.tier;
  return stage.report;
}
