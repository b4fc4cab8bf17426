/**
 * Thin options: options with so few training answers that the table will
 * seldom choose them. The trainer finds them, `words.ts` warns of them and
 * the report (`report.ts`) lists them.
 *
 * @module
 */

import type { QuestionAnswers } from "../traces/mod.ts";

/** Fewest training answers (fit and validation) an option should have; fewer earns a warning. */
export const THIN_OPTION = 10;

/** An option with few training answers. */
export interface ThinOption {
  option: string;
  /** Its training answers (fit and validation). */
  answers: number;
}

/** A question's options with fewer than `THIN_OPTION` training answers, fewest first. */
export function thinOptions(
  qa: QuestionAnswers,
  parts: {
    readonly fit: readonly number[];
    readonly validation: readonly number[];
  },
): ThinOption[] {
  const counts = new Int32Array(qa.options.length);
  for (const i of parts.fit) counts[qa.labels[i]!]!++;
  for (const i of parts.validation) counts[qa.labels[i]!]!++;
  return qa.options
    .map((option, o) => ({ option, answers: counts[o]! }))
    .filter((t) => t.answers < THIN_OPTION)
    .sort((a, b) => a.answers - b.answers || (a.option < b.option ? -1 : 1));
}
