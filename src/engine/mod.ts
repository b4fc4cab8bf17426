/**
 * The decision-table engine as a library: answer a trained table's
 * questions for a text, each answer with its certification verdict, with
 * no I/O, no clock and no module-level state. A table is constant once
 * loaded; what answering keeps between texts (word cache, scratch buffers,
 * the threshold in force) is a `TableState` the caller makes for it and
 * passes to every call. Load a bundle with `loadBundle` from the package's
 * `./bundle` entry (`src/bundle/files.ts`), then prepare a text once and
 * assess any number of questions on it.
 *
 * @example
 * ```ts
 * import { loadBundle } from "../bundle/files.ts";
 * import { assess, DriftMonitor, prepareText, probabilitiesOf, TableState } from "./mod.ts";
 *
 * const table = await loadBundle("demo/bundle");
 * const state = new TableState(table);
 * const guard = new DriftMonitor(table.settings.drift);
 * const text = prepareText(table, state, "where is my parcel, it has not arrived yet");
 * const { answer } = assess(table, state, text, "topic", {}, guard);
 * if (answer.certified) console.log(`serve ${answer.choice}`);
 * else console.log(`ask the model (${answer.flag})`, probabilitiesOf(answer));
 * ```
 *
 * @module
 */

export {
  answerQuestion,
  type AskOptions,
  assess,
  probabilitiesOf,
  topOptions,
  unsupportedAssessment,
  warmUp,
} from "./answer.ts";
export {
  NO_BUNDLE_ID,
  tableWithoutQuestions,
  unlearnedAssessment,
  type UnlearnedQuestion,
} from "./unlearned.ts";
export { type PreparedText, prepareText } from "./prepare.ts";
export { suggestQuestion } from "./suggest.ts";
export {
  type Answer,
  type AnswerKind,
  answerOf,
  type AnswerVerdict,
  type Assessment,
  type ChoiceAnswer,
  disagrees,
  type DriftRule,
  type Flag,
  FLAGS,
  type NoAnswer,
  type RankedOption,
  type YesNoAnswer,
} from "./verdict.ts";
export {
  markOptionsAdded,
  type QuestionState,
  reinstateCertification,
  setThresholdInForce,
  TableState,
  type TableStateOptions,
  thresholdInForce,
  withdrawCertification,
} from "./state.ts";
export {
  type DriftGuard,
  DriftMonitor,
  type DriftState,
  peekGuard,
  QUIET_GUARD,
} from "./drift.ts";
export {
  driftInWords,
  type ReasonContext,
  reasonInWords,
  type TierContext,
  unsupportedInWords,
} from "./reason.ts";
export type {
  Calibration,
  DriftReference,
  DriftSettings,
  NoveltyReference,
  QuestionKind,
  QuestionTable,
  SemanticTier,
  Table,
  TableSettings,
} from "./table.ts";
export { stateText, textKey, wordsOf } from "./text.ts";
export {
  nearestDistance,
  type NearestReference,
  quantizeTexts,
} from "./nearest.ts";
export { DEFAULT_WORD_CACHE_BYTES, WordCache } from "./word_cache.ts";
export {
  guardPValue,
  guardTests,
  noveltyPValue,
  noveltyScore,
  semanticAssess,
  type SemanticAssessment,
  semanticLogits,
  type Tier,
  type TwoTierInputs,
  twoTierVerdict,
} from "./semantic.ts";
export {
  type AnsweringTier,
  answerWithSecondTier,
  asksSecondTier,
  hasSecondTier,
  type QuestionThresholds,
  questionThresholds,
  type TieredAssessment,
} from "./two_tier.ts";
export {
  Answerer,
  type AnswererOptions,
  type AskedAnswers,
  type SecondTierAsk,
} from "./answerer.ts";

// What the program's other folders (serving, training, the live loop) use
// besides answering: features, scoring, scope, the radius's rows.
export {
  bucketKind,
  type FeaturizerSettings,
  textWords,
  wordBucketsOf,
} from "./features.ts";
export { argmax, softmax } from "./score.ts";
export { DEFAULT_DRIFT } from "./drift.ts";
export { BIGRAM_ROW, type GainBounds, NGRAM_ROW, WORD_ROW } from "./radius.ts";
export { seededRandom } from "./random.ts";
export {
  calibrationInScope,
  NO_SCOPE,
  SCOPE_SCORES,
  scopeApplies,
  type ScopeScore,
} from "./scope.ts";
export { fullProbabilities } from "./prepare.ts";
export { closestName } from "./suggest.ts";
export { DEFAULT_FEATURIZER } from "./features.ts";
