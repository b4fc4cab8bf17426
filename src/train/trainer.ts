/**
 * Training a table from traces, as a pipeline of stages, each a function
 * with typed input and output in its own module:
 *
 * 1. admit (`admit.ts`): the questions that can be trained and certified;
 * 2. split (`parts.ts`): fit, validation, calibration and test parts, once
 *    for all questions (see `split.ts`);
 * 3. featurise (`featurise.ts`): features, rows and the fit layout;
 * 4. fit (`fit.ts`): hyper-parameters and temperature chosen on validation,
 *    weights fitted on fit and validation;
 * 5. calibrate (`calibrate_stage.ts`), per question: the certified
 *    threshold on calibration and the leakage check (`trainTable` stops
 *    here; `finishTraining` goes on);
 * 6. second tier (`second_tier.ts`), per question, with embeddings
 *    (`trainTiers` asks for them only where `second_tier_reach.ts` finds
 *    the second tier could add something);
 * 7. learning curve (`curve_advice.ts`): advice for uncalibrated questions,
 *    and for calibrated ones that certify little;
 * 8. measure (`measure.ts`): the test part answered exactly as serving
 *    would, for the report only;
 * 9. contents (`contents.ts`): the bundle files' contents.
 *
 * @module
 */

import {
  calibrationReport,
  type QuestionReport,
  questionReport,
  splitReport,
  type TrainReport,
  trainReport,
} from "./report.ts";
import { splitInWords } from "./split_words.ts";
import type { QuestionTable, Table } from "../engine/mod.ts";
import type { QuestionAnswers, TraceSet } from "../traces/mod.ts";
import { inScopeConfidences, type ScoredAnswers } from "./calibrate.ts";
import { admitQuestions } from "./admit.ts";
import { type CalibratedQuestion, calibrateStage } from "./calibrate_stage.ts";
import type { TrainResult } from "./contents.ts";
import { curveAdviceStage } from "./curve_advice.ts";
import { featuriseStage } from "./featurise.ts";
import { fitQuestions, type FitTable, type FittedModel } from "./fit.ts";
import { calibrationTwins } from "./leakage.ts";
import { measureStage } from "./measure.ts";
import type { TrainOptions } from "./options.ts";
import {
  type QuestionParts,
  questionParts,
  type SplitOutcome,
  splitStage,
} from "./parts.ts";
import { thinOptions } from "./thin_options.ts";
import { scoreAnswers } from "./score.ts";
import { secondTierStage } from "./second_tier.ts";
import type { SemanticReport } from "./semantic.ts";
import { reachInWords, secondTierReach } from "./second_tier_reach.ts";
import { validateTrainOptions } from "./validate_options.ts";
import {
  fedInWords,
  thinInWords,
  trainingInWords,
  uncalibratedInWords,
} from "./words.ts";

/** A question fitted and calibrated, waiting to be measured. */
interface FittedQuestion {
  qa: QuestionAnswers;
  parts: QuestionParts;
  question: QuestionTable;
  /** Its calibration answers as the table scores them. */
  scored: ScoredAnswers;
  report: Omit<QuestionReport, "test">;
  /** `report.calibration`, which the learning-curve stage adds advice to. */
  calibration: QuestionReport["calibration"];
  /** When calibrated, the share of calibration answers certified (both tiers' with a second tier). */
  coverage: { share: number; tiers: boolean } | null;
}

/**
 * The table trained and calibrated, every question (stages 1 to 5), waiting
 * for the second tier and the rest: what `trainTable` gives and
 * `finishTraining` takes. Between the two a caller may look at it
 * (`secondTierReach`) and embed the texts only when the second tier could
 * add something.
 */
export interface TableTraining {
  readonly traces: TraceSet;
  readonly options: TrainOptions;
  readonly refused: TrainReport["refused"];
  readonly split: SplitOutcome["split"];
  readonly fed: SplitOutcome["fed"];
  readonly fromFeedback: SplitOutcome["fromFeedback"];
  readonly sample: SplitOutcome["sample"];
  readonly base: Table;
  readonly fitTable: FitTable;
  readonly rowBuckets: TrainResult["rowBuckets"];
  readonly trainable: readonly QuestionAnswers[];
  readonly partsOf: readonly QuestionParts[];
  readonly thin: readonly ReturnType<typeof thinOptions>[];
  readonly models: readonly FittedModel[];
  readonly calibrated: readonly CalibratedQuestion[];
}

/**
 * Trains every question of `traces`. Deterministic for `options.seed`.
 * With `embeddings` (one per trace, from `src/encoder/`; undefined for a
 * trace outside the sample of `semantic_sample.ts`) and `options.semantic`
 * not `off`, each question may get a second tier.
 * Throws `TrainOptionError` (a `RangeError`) for an option out of range,
 * before any work, and `TrainingError` when no question can be trained.
 */
export function train(
  traces: TraceSet,
  options: TrainOptions,
  embeddings?: readonly (Float32Array | undefined)[],
): TrainResult {
  return finishTraining(trainTable(traces, options), embeddings);
}

/**
 * `train` for a caller that embeds the texts itself (the `train`
 * command): the table first; then, with `options.semantic` `on`, or
 * `auto` where `secondTierReach` finds a question that leaves enough of
 * its calibration answers to low confidence for the second tier to
 * matter, `embed()` is called for the embeddings and both tiers are
 * finished; else the table alone, no text embedded. `say` hears why.
 */
export async function trainTiers(
  traces: TraceSet,
  options: TrainOptions,
  embed: () => Promise<readonly (Float32Array | undefined)[]>,
): Promise<TrainResult> {
  const trained = trainTable(traces, options);
  const say = options.progress ?? (() => {});
  if (options.semantic === "off") return finishTraining(trained);
  if (options.semantic === "auto") {
    const reach = secondTierReach(trained);
    say(reachInWords(reach));
    if (!reach.worth) return finishTraining(trained);
  }
  return finishTraining(trained, await embed());
}

/**
 * Stages 1 to 5 of training (see the module doc): admit, split,
 * featurise, fit, calibrate. Throws as `train` does.
 */
export function trainTable(
  traces: TraceSet,
  options: TrainOptions,
): TableTraining {
  validateTrainOptions(options);
  const say = options.progress ?? (() => {});
  const warn = options.warn ?? say;
  const { texts } = traces;

  // Questions that cannot be trained and certified are refused, each with
  // its reason; training goes on with the others, and fails when none is left.
  const { trainable, refused } = admitQuestions(traces, options);
  for (const reason of refused) warn(`refused ${reason}`);

  say(`splitting ${texts.length} traces`);
  const { split, fed, fromFeedback, sample } = splitStage(
    traces,
    trainable,
    options,
  );
  say(`split: ${
    splitInWords(
      splitReport(split, options.similarity, fed, fromFeedback, sample.figures),
    )
  }`);
  if (fed.length > 0) warn(fedInWords(fed));

  say(`featurising ${texts.length} texts`);
  const { base, fitTable, rowBuckets, rowKinds } = featuriseStage(
    texts,
    split,
    options,
    say,
  );

  say("checking calibration texts for near-twins in the train split");
  const twins = calibrationTwins(texts, split.parts, options.twinSimilarity);

  const partsOf = trainable.map((qa) => questionParts(qa.labels, split.parts));
  const thin = trainable.map((qa, q) => thinOptions(qa, partsOf[q]!));
  thin.forEach((t, q) => {
    if (t.length > 0) warn(thinInWords(trainable[q]!.name, t));
  });
  say(trainingInWords(trainable, options.workers));
  const models = fitQuestions(
    fitTable,
    trainable.map((qa, q) => ({
      name: qa.name,
      labels: qa.labels,
      fit: partsOf[q]!.fit,
      validation: partsOf[q]!.validation,
      options: qa.options.length,
    })),
    options,
    say,
  );

  say("fitted; calibrating and measuring");
  const calibrated = trainable.map((qa, q) =>
    calibrateStage(
      {
        base,
        rowKinds,
        texts,
        split,
        twins,
        missing: sample.figures,
        unanswered: sample.unanswered,
      },
      qa,
      partsOf[q]!,
      models[q]!,
      options,
      warn,
    )
  );
  return {
    traces,
    options,
    refused,
    split,
    fed,
    fromFeedback,
    sample,
    base,
    fitTable,
    rowBuckets,
    trainable,
    partsOf,
    thin,
    models,
    calibrated,
  };
}

/**
 * Stages 6 to 9 (see the module doc) on a table trained by `trainTable`:
 * with `embeddings` and `options.semantic` not `off`, each question's
 * second tier; the learning-curve advice; the test part measured; the
 * bundle's contents. Call it once per `TableTraining` (the second tier
 * is set on its questions).
 */
export function finishTraining(
  trained: TableTraining,
  embeddings?: readonly (Float32Array | undefined)[],
): TrainResult {
  const { traces, options, base, fitTable, trainable } = trained;
  if (embeddings !== undefined && embeddings.length !== traces.texts.length) {
    throw new RangeError(
      `Expected one embedding per trace (${traces.texts.length}): got ${embeddings.length}`,
    );
  }
  const semantic = embeddings !== undefined && options.semantic !== "off"
    ? options.semantic
    : "off";
  const say = options.progress ?? (() => {});
  const warn = options.warn ?? say;
  const { texts } = traces;

  const fitted = trainable.map((qa, q): FittedQuestion => {
    const parts = trained.partsOf[q]!;
    const model = trained.models[q]!;
    const calibrated = trained.calibrated[q]!;
    const semanticReport = semantic === "off" ? undefined : secondTierStage(
      base,
      texts,
      embeddings!,
      semantic,
      qa,
      parts,
      model,
      calibrated,
      options,
      say,
    );
    const calibration = calibrationReport(calibrated.outcome);
    return {
      qa,
      parts,
      question: calibrated.question,
      scored: calibrated.scored,
      calibration,
      coverage: coverageOf(
        calibrated,
        semanticReport,
        parts.calibration.filter((i) => embeddings?.[i] !== undefined).length,
        options,
      ),
      report: questionReport(
        qa,
        parts,
        trained.thin[q]!,
        model,
        calibration,
        calibrated.leakage,
        semanticReport,
      ),
    };
  });

  curveAdviceStage(fitted, fitTable, options, (f, model) =>
    scoreAnswers(
      base,
      {
        ...f.question,
        weights: model.weights,
        bias: model.bias,
        temperature: model.temperature,
      },
      f.qa.labels,
      texts,
      f.parts.calibration,
    ));
  for (const f of fitted) {
    const c = f.calibration;
    if (c.advice === null) continue;
    if (c.status === "calibrated") {
      warn(`question "${f.qa.name}" ${c.advice}`);
    } else warn(uncalibratedInWords(f.qa.name, c.reason, c.advice));
  }

  const { table, tests } = measureStage(
    base,
    fitted.map((f) => ({ qa: f.qa, question: f.question, test: f.parts.test })),
    texts,
    embeddings,
  );
  const { split, fed, fromFeedback, sample, rowBuckets, refused } = trained;
  const report = trainReport(options, {
    split,
    fed,
    fromFeedback,
    sample: sample.figures,
    traces: texts.length,
    rows: rowBuckets.length,
    questions: fitted.map((f, q) => ({ ...f.report, test: tests[q]! })),
    refused,
  });
  return {
    table: { ...table, info: { report } },
    rowBuckets,
    report,
    parts: split.parts,
  };
}

/**
 * The share of a calibrated question's calibration answers certified:
 * both tiers' when it keeps a second tier (over the `embedded` calibration
 * answers its stage used), else the table's; null when uncalibrated.
 */
function coverageOf(
  calibrated: CalibratedQuestion,
  semantic: SemanticReport | undefined,
  embedded: number,
  options: TrainOptions,
): { share: number; tiers: boolean } | null {
  const s = semantic?.used ? semantic.calibration : null;
  if (s != null && s.threshold !== null && embedded > 0) {
    return { share: (s.by_table + s.by_semantic) / embedded, tiers: true };
  }
  const threshold = calibrated.outcome.calibration.threshold;
  if (threshold === null) return null;
  const confidences = inScopeConfidences(
    calibrated.scored,
    options.settings.drift.scope_p,
  );
  if (confidences.length === 0) return null;
  let certified = 0;
  for (const c of confidences) if (c >= threshold) certified++;
  return { share: certified / confidences.length, tiers: false };
}
