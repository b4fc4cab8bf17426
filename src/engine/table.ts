/**
 * The table: per question, one weight row per hashed bucket and option, a
 * bias per option and a temperature, and its second tier's numbers when it
 * has one. The shapes only: scoring (a sum of rows) is `score.ts`.
 *
 * @module
 */

import type { FeaturizerSettings } from "./features.ts";
import type { CalibrationBand } from "../guarantee/mod.ts";
import type { NearestReference } from "./nearest.ts";
import type { ScopeReference } from "./scope.ts";

/** A choice among options, or a yes/no question. */
export type QuestionKind = "choice" | "yes_no";

/** Option names of a yes/no question, in table order: yes first. */
export const YES_NO_OPTIONS: readonly string[] = ["true", "false"];

/** What calibration decided for a question. */
export interface Calibration {
  /** `calibrated` when a threshold passed the finite-sample test. */
  status: "calibrated" | "uncalibrated";
  /** Lowest confidence that is certified; null when uncalibrated. */
  threshold: number | null;
  /** Target disagreement rate among certified answers. */
  alpha: number;
  /** Allowed probability that the target fails. */
  delta: number;
  /** Why the question is uncalibrated, in words; null when calibrated. */
  reason: string | null;
  /**
   * Candidate thresholds for the live certificate, strictest first (the
   * bundle's threshold among them): taken from the grid calibration
   * tested, fixed before any calibration label was read. Empty in bundles
   * of format version 1.
   */
  candidates: number[];
  /**
   * Per live candidate (strictest first, as `liveGrid` spreads them), the
   * calibration answers whose confidence reaches it but not the next
   * stricter one, and their disagreements: what the live feedback is
   * checked against (`feedback_check.ts`). Absent in bundles trained
   * before it was written (their threshold is then never lowered live).
   */
  bands?: CalibrationBand[];
}

/** What the drift guard needs of a question, computed at training. */
export interface DriftReference {
  /** Drift scores of the calibration texts, sorted ascending. */
  scores: Float32Array;
  /** Novelty shares of the calibration texts, sorted ascending. */
  novelty: Float32Array;
  /**
   * What the out-of-scope rule compares a text with (see `scope.ts`): the
   * calibration texts' spreads (format 3) or energies (format 2), sorted
   * ascending; empty where the rule is off (format 1, and questions of two
   * options in format 3).
   */
  scope: ScopeReference;
}

/** One trained question. */
export interface QuestionTable {
  name: string;
  kind: QuestionKind;
  /** Option names; for yes/no, `YES_NO_OPTIONS`. */
  options: string[];
  /** `rows × options.length` weights, row-major. */
  weights: Float32Array;
  /** One bias per option. */
  bias: Float32Array;
  /** Logits are divided by this before the softmax. */
  temperature: number;
  calibration: Calibration;
  /**
   * Per ordered option pair `(a, b)` at `a * K + b`: the most one inserted
   * word's own buckets (its word row plus its n-gram average) can raise
   * `score[b] - score[a]`.
   */
  wordGain: Float32Array;
  /** Likewise for one new bigram bucket. */
  bigramGain: Float32Array;
  drift: DriftReference;
  /** Option name to index. */
  optionIndex: Map<string, number>;
  /**
   * The second tier (format 4, see `semantic.ts`): with the threshold in
   * force set to its `calibration.threshold`, asked when the table's only
   * failing rule is `low_confidence`; absent for the table alone.
   */
  semantic?: SemanticTier;
}

/** What scoring needs of a question: its options, weights and bias. */
export type QuestionWeights = Pick<
  QuestionTable,
  "options" | "weights" | "bias"
>;

/** Settings chosen at training that change how answers are certified. */
export interface TableSettings {
  /** Minimum radius for certification when a request is `exposed`. */
  min_radius: number;
  /** Serve answers over offered options the table never learned. */
  serve_new_options: boolean;
  /** Per question, a confidence above which uncertified answers are served. */
  force_thresholds: Record<string, number>;
  /** Drift guard settings. */
  drift: DriftSettings;
}

/** How the drift guard judges single texts and streams. */
export interface DriftSettings {
  /**
   * A single text whose novelty (share of buckets unseen in training) has a
   * conformal p-value at or below this, against the calibration texts'
   * novelty, is not certified. Costs at most this share of in-domain texts.
   */
  single_p: number;
  /** A single text with a larger share of buckets unseen in training is not certified. */
  max_novelty: number;
  /**
   * The `single_p` rule applies only to texts with at least this share of
   * unseen buckets, so that in a repetitive domain one new word is no alarm.
   */
  min_novelty: number;
  /**
   * The online alarm is raised when the test martingale reaches 2/delta
   * (half of delta covers the calibration draw, half Ville's inequality).
   */
  delta: number;
  /** Requests of normal traffic needed to clear an alarm. */
  rearm_window: number;
  /**
   * A single text whose answer is spread over the options (or, in format 2
   * bundles, carries as little evidence) as few calibration texts' are
   * (conformal p-value at or below this, see `scope.ts`) is not certified:
   * it looks like none of the options, or like nothing the table was
   * calibrated on. Costs at most this share of texts like the calibration
   * ones; 0 turns it off.
   */
  scope_p: number;
}

/**
 * A loaded table: everything needed to answer, shared by all questions.
 * Constant once loaded: what answering keeps between texts (the word
 * cache, scratch buffers, the threshold in force) is the caller's
 * `TableState`, passed to every call beside the table.
 */
export interface Table {
  readonly featurizer: FeaturizerSettings;
  readonly settings: TableSettings;
  /** Bucket to row, -1 for a bucket no training text had. */
  readonly rowOf: Int32Array;
  readonly rowCount: number;
  readonly questions: QuestionTable[];
  readonly byName: Map<string, QuestionTable>;
  /**
   * What the table knows about its bundle (format and tool versions, id,
   * training settings, report), as the codec or the trainer wrote it; the
   * engine reads none of it. `bundleInfo()` in `train/` reads it typed.
   */
  readonly info: TableInfo;
}

/**
 * The shape of `Table.info` as far as the engine knows it: a record the
 * bundle's codec and the trainer fill (`BundleInfo` in `train/bundle_info.ts`
 * says what each field holds). Kept apart so that the engine imports
 * nothing of training or bundles.
 */
export interface TableInfo {
  readonly format?: string;
  readonly format_version?: number;
  readonly tool_version?: string;
  readonly bundle_id?: string | null;
  readonly training?: object | null;
  readonly report?: object | null;
}

/** What the novelty guard compares a text with. */
export interface NoveltyReference {
  /**
   * `dim × rank` row-major: a text's whitened coordinates are
   * `x^T projection` (for the shared covariance `S`, `projection
   * projection^T = S^-1`).
   */
  projection: Float32Array;
  rank: number;
  /** Per option, its mean embedding's whitened coordinates: `options × rank`. */
  means: Float32Array;
  /** The calibration texts' distances, sorted ascending. */
  scores: Float32Array;
  /** A text whose conformal p-value is at or below this is withheld (0: the guard is off). */
  p: number;
  /** The nearest-fit-text test (absent: not applied). */
  nearest?: NearestReference;
  /**
   * The spread test: the calibration texts' spreads of the second tier's
   * answer (`sum p ln p` over all options), sorted ascending (absent or
   * empty: not applied).
   */
  spreads?: Float32Array;
}

/** One question's second tier, as trained. */
export interface SemanticTier {
  /** Numbers per embedding. */
  dim: number;
  /** The embedding is multiplied by this before the weights (the scale it was trained at). */
  scale: number;
  /** `dim × options` weights, row-major (row = embedding coordinate). */
  weights: Float32Array;
  /** One bias per option. */
  bias: Float32Array;
  /** Logits are divided by this before the softmax. */
  temperature: number;
  /**
   * Weight of the table's log-probabilities (over all options) added to
   * the logits: the second tier reads the table's scores beside the
   * embedding; 0 reads the embedding alone.
   */
  tableWeight: number;
  novelty: NoveltyReference;
  /**
   * The two-tier rule's calibration: its threshold `L` is the one both
   * tiers are certified against. The question's own `calibration` stays
   * the table's alone, for a server that does not ask the second tier.
   */
  calibration: Calibration;
}
