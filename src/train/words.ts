/**
 * Training's warnings and progress lines, in words: one place for the
 * prose the stages of `trainer.ts` print.
 *
 * @module
 */

import type { ThinOption } from "./report.ts";
import { THIN_OPTION } from "./report.ts";
import { type FedOption, PART_NAMES, type Split } from "./split.ts";

/** The thin options of a question, in words, with what would help. */
export function thinInWords(
  question: string,
  thin: readonly ThinOption[],
): string {
  const shown = thin.slice(0, 8).map((t) => `${t.option} (${t.answers})`);
  const more = thin.length > 8 ? ` and ${thin.length - 8} more` : "";
  return `question "${question}": ${thin.length} ${
    thin.length === 1 ? "option has" : "options have"
  } fewer than ${THIN_OPTION} training answers, so the table will seldom choose ${
    thin.length === 1 ? "it" : "them"
  }: ${shown.join(", ")}${more}; more traces answering ${
    thin.length === 1 ? "it" : "them"
  } would help`;
}

/** What feeding starved options did, in words. */
export function fedInWords(fed: readonly FedOption[]): string {
  const shown = fed.slice(0, 6).map((f) =>
    `${f.option} (${f.pinned} of ${f.traces})`
  );
  const more = fed.length > 6 ? ` and ${fed.length - 6} more` : "";
  return `time split: ${fed.length} ${
    fed.length === 1 ? "option is" : "options are"
  } held almost only by the newest traces, so ${
    fed.length === 1 ? "its" : "their"
  } oldest traces train the table and calibration takes the next newest: ${
    shown.join(", ")
  }${more}`;
}

/** The split in one line, for progress. */
export function describeSplit(split: Split): string {
  const unit = split.mode === "group"
    ? "groups"
    : split.mode === "random"
    ? "clusters"
    : "texts";
  const parts = PART_NAMES.map((name, p) =>
    `${name} ${split.traces[p]} traces (${split.units[p]} ${unit})`
  ).join(", ");
  return `${split.mode} (${split.reason}): ${parts}`;
}

/** The questions about to be fitted and on how many threads, in words. */
export function trainingInWords(
  questions: readonly { name: string; options: readonly string[] }[],
  workers: number,
): string {
  return `training ${
    questions.map((qa) => `"${qa.name}" (${qa.options.length} options)`)
      .join(", ")
  } on ${workers} ${workers === 1 ? "thread" : "workers"}`;
}

/** Why a choice question with one option cannot be trained. */
export function singleOptionInWords(question: string, option: string): string {
  return `question "${question}" has a single option ("${option}"); a choice needs at least two`;
}

/** Why a choice question with about as many options as answers is refused. */
export function freeTextInWords(
  question: string,
  options: number,
  answered: number,
): string {
  return `question "${question}" has ${options} options for ${answered} answers (fewer than 4 answers an option); ` +
    `is it an identifier or free-text column?`;
}

/** Why a question with too few answers to certify is refused. */
export function tooFewInWords(
  question: string,
  answered: number,
  minimumAnswers: number,
  needed: number,
  targets: { alpha: number; delta: number; calibrationShare: number },
): string {
  return `question "${question}" has ${answered} answers; at least ${minimumAnswers} are needed to train and certify it ` +
    `(${needed} calibration answers at alpha ${targets.alpha}, delta ${targets.delta}, calibration share ${targets.calibrationShare})`;
}

/** A question's uncalibrated warning with what would help. */
export function uncalibratedInWords(
  question: string,
  reason: string | null,
  advice: string,
): string {
  return `question "${question}" is uncalibrated (${reason}): ${advice}`;
}

/** What the second-tier stage decided for a question, for progress. */
export function secondTierInWords(
  question: string,
  used: boolean,
  reason: string,
): string {
  return `question "${question}": second tier ${
    used ? "kept" : "left out"
  }: ${reason}`;
}
