/**
 * Certification verdicts in words, for people (playground, dashboard, and
 * the `hint` of an unsupported answer).
 *
 * @module
 */

import type { DriftState } from "./drift.ts";
import type { AnsweringTier } from "./two_tier.ts";
import type { Assessment, DriftRule } from "./verdict.ts";
import { percent } from "../format.ts";

/**
 * The online drift guard's state in words, for one question: quiet or
 * alarmed, since which request, and the evidence against the alarm level.
 *
 * @example
 * ```ts
 * import { DriftMonitor, driftInWords, type Table } from "./mod.ts";
 * declare const table: Table;
 * const guard = new DriftMonitor(table.settings.drift);
 * driftInWords(guard.state("intent")); // "Drift guard: quiet (evidence 1.0 of 200, after 0 requests)."
 * ```
 */
export function driftInWords(state: DriftState): string {
  const evidence = `evidence ${formatEvidence(state.evidence)} of ${
    formatEvidence(state.alarm_level)
  }`;
  return state.status === "alarmed"
    ? `Drift guard: alarmed since request ${state.alarmed_at} of this question (${evidence}).`
    : `Drift guard: quiet (${evidence}, after ${state.observed} requests).`;
}

function formatEvidence(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toPrecision(2);
}

/**
 * Why a question name is unsupported, in one sentence: the name, a
 * suggestion when one is close, and the table's question names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { unsupportedInWords } from "./mod.ts";
 * assert.equal(
 *   unsupportedInWords("Topic", "topic", ["topic", "urgent"]),
 *   'The table has no question named "Topic"; did you mean "topic"? Its questions are: topic, urgent.',
 * );
 * ```
 */
export function unsupportedInWords(
  name: string,
  suggestion: string | null,
  questions: readonly string[],
): string {
  const guess = suggestion === null
    ? "."
    : `; did you mean ${JSON.stringify(suggestion)}?`;
  return `The table has no question named ${
    JSON.stringify(name)
  }${guess} Its questions are: ${questions.join(", ")}.`;
}

/**
 * How a question with a second tier was answered, for the reason: which
 * tier gave the answer, the thresholds, and why the second tier did not
 * answer when it was to be asked.
 */
export interface TierContext {
  /** The tier that gave the answer. */
  tier: AnsweringTier;
  /** The table's own calibrated threshold, named beside the one in force when they differ. */
  tableThreshold: number | null;
  /** The table's confidence (over all options), when the second tier was asked. */
  tableConfidence?: number | undefined;
  /**
   * Why the second tier, asked, did not answer: its queue was full
   * (`shed`), it failed, or its novelty guard withheld the text (`novel`).
   */
  notAnswered?: "shed" | "failed" | "novel" | undefined;
}

/** What the reason may say beyond the assessment itself. */
export interface ReasonContext {
  /** The question's online drift guard state: adds a sentence on it. */
  drift?: DriftState | undefined;
  /** The table's question names: named when the question is unknown. */
  questions?: readonly string[] | undefined;
  /**
   * With a second tier served for the question: which tier answered and
   * the thresholds, so the reason names the tier and the threshold in
   * force (the two-tier rule's) beside the table's own.
   */
  tiers?: TierContext | undefined;
}

/**
 * One sentence saying why an answer is or is not certified; with the
 * question's drift guard state, a second sentence on the guard; for a
 * question the table does not know, given the table's question names, the
 * names (and a close one).
 *
 * @example
 * ```ts
 * import { assess, DriftMonitor, prepareText, reasonInWords, type Table, TableState } from "./mod.ts";
 * declare const table: Table;
 * const guard = new DriftMonitor(table.settings.drift);
 * const state = new TableState(table);
 * const v = assess(table, state, prepareText(table, state, "card not here"), "intent", {}, guard);
 * reasonInWords(v, { drift: guard.state("intent"), questions: table.questions.map((q) => q.name) });
 * ```
 */
export function reasonInWords(
  a: Assessment,
  context: ReasonContext = {},
): string {
  const { drift } = context;
  if (a.answer.flag === "unsupported") {
    const known = context.questions;
    if (a.slot >= 0 || known === undefined) return verdictInWords(a);
    const why = unsupportedInWords(a.question, a.suggestion, known);
    return `Not certified: t${why.slice(1)}`;
  }
  const main = context.tiers === undefined
    ? verdictInWords(a)
    : tieredInWords(a, context.tiers);
  return drift === undefined ? main : `${main} ${driftInWords(drift)}`;
}

/** Why the second tier, asked, did not answer. */
const NOT_ANSWERED = {
  shed:
    "the second tier was not asked: its queue was full, so the table's answer went back at once",
  failed: "the second tier failed, so the table's answer went back",
  novel:
    "the second tier's novelty guard withheld this text (it is unlike the texts the second tier was trained on)",
};

/**
 * The verdict of an answer served with a second tier: the tier named, and
 * the threshold in force named as the two-tier rule's, with the table's
 * own beside it when it differs.
 */
function tieredInWords(a: Assessment, t: TierContext): string {
  const { answer, threshold, alpha, fullConfidence } = a;
  const inForce = threshold === null
    ? "no threshold in force"
    : `the threshold in force ${percent(threshold)}`;
  const own = t.tableThreshold === null
    ? "; the table alone has none"
    : t.tableThreshold === threshold
    ? ""
    : `; the table's own is ${percent(t.tableThreshold)}`;
  const rule = `(the two-tier rule's, for both tiers${own})`;
  const bound = alpha === null
    ? ""
    : `; certified answers of both tiers disagree with the model at most ${
      percent(alpha)
    } of the time`;
  if (t.tier === "semantic") {
    const table = t.tableConfidence === undefined
      ? ""
      : `, where the table's confidence ${percent(t.tableConfidence)} did not`;
    if (answer.certified) {
      return `Certified by the second tier (sentence encoder): its confidence ${
        percent(fullConfidence)
      } reaches ${inForce} ${rule}${table}${bound}.`;
    }
    if (answer.flag === "low_confidence") {
      return `Not certified: the second tier (sentence encoder) answered, but its confidence ${
        percent(fullConfidence)
      } is below ${inForce} ${rule}, as the table's${
        t.tableConfidence === undefined
          ? ""
          : ` (${percent(t.tableConfidence)})`
      } was.`;
    }
    return `${
      verdictInWords(a)
    } (The second tier, sentence encoder, answered.)`;
  }
  if (answer.certified) {
    return `Certified by the table: confidence ${
      percent(fullConfidence)
    } reaches ${inForce} ${rule}${bound}.`;
  }
  if (answer.flag === "low_confidence") {
    const why = t.notAnswered === undefined
      ? ""
      : `; ${NOT_ANSWERED[t.notAnswered]}`;
    return `Not certified: the table's confidence ${
      percent(fullConfidence)
    } is below ${inForce} ${rule}${why}.`;
  }
  return verdictInWords(a);
}

const DRIFT_REASONS: Record<DriftRule, (a: Assessment) => string> = {
  live_audit: () =>
    "Not certified: certification of this question is withdrawn while a live audit finds the bound does not hold.",
  alarm: () =>
    "Not certified: the drift guard's alarm stands for this question (recent traffic does not look like the calibration data).",
  novelty: (a) =>
    `Not certified: this text does not look like the calibration texts (${
      percent(a.novelty)
    } of its features were never seen in training).`,
  out_of_scope: () =>
    "Not certified: this text looks like none of the options, or like nothing the table was calibrated on (out-of-scope rule: the table is unsure among its options in a way few calibration texts are).",
};

function verdictInWords(a: Assessment): string {
  const { answer, threshold, alpha, fullConfidence } = a;
  const bound = alpha === null
    ? ""
    : ` (certified answers disagree with the model at most ${
      percent(alpha)
    } of the time)`;
  switch (answer.flag) {
    case null:
      return `Certified: confidence ${
        percent(fullConfidence)
      } reaches the threshold ${percent(threshold ?? 0)}${bound}.`;
    case "empty_input":
      return "Not certified: the text is empty, and an empty text is never served.";
    case "unsupported":
      return a.slot < 0
        ? `Not certified: the table has no question named "${a.question}".`
        : `Not certified: the question "${a.question}" cannot be asked in this form.`;
    case "options_changed":
      return "Not certified: an offered option is one the table never learned (or the language model has answered options the table has not learned yet), so the language model must decide.";
    case "new_options_served":
      return "Served by configuration but not certified: an offered option is one the table never learned.";
    case "option_removed":
      return "Not certified: the answer over all options is one the request removed.";
    case "uncalibrated":
      return "Not certified: this question has no calibrated threshold (too little held-out data, or no threshold passed the test).";
    case "drift":
      return answer.driftRule === null
        ? "Not certified: the drift guard withholds certification."
        : DRIFT_REASONS[answer.driftRule](a);
    case "low_confidence":
      return `Not certified: confidence ${
        percent(fullConfidence)
      } is below the threshold ${percent(threshold ?? 1)}.`;
    case "low_radius":
      return `Not certified: ${answer.radius} inserted word(s) could change the answer, fewer than the bundle's minimum for exposed input.`;
    case "manual_threshold":
      return `Served by a forced threshold but not certified: confidence ${
        percent(fullConfidence)
      } is below the calibrated threshold.`;
  }
}
