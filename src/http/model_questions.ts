/**
 * What the two decision-model shapes (`/v1/decisions`, `/v1/altdecisions`)
 * share: typed questions, asked of the table.
 *
 * A question is answered by the table only when its type fits the bundle
 * question of that name: `choice` for a choice question, `predicate` or
 * `noul` for a yes/no question. Any other type (`score` included), a name
 * the bundle does not know, or a type that does not fit comes back
 * uncertified with flag `unsupported`, and is not an HTTP error.
 *
 * @module
 */

import {
  assess,
  type Assessment,
  type PreparedText,
  unsupportedAssessment,
} from "../engine/answer.ts";
import type { DriftGuard } from "../engine/drift.ts";
import type { Table } from "../engine/table.ts";

/** A question as a decision-model body asks it. */
export interface ModelQuestion {
  name: string;
  /** As sent: `choice`, `predicate`, `noul`, or anything else (unsupported). */
  type: string;
  /** Offered options (choice); absent or empty: all the table learned. */
  options?: readonly string[] | undefined;
}

/** A typed question's assessment. */
export interface TypedAssessment {
  type: string;
  assessment: Assessment;
}

/** True when a question of `type` may be answered by a bundle question of `kind`. */
export function typeFits(type: string, kind: "choice" | "yes_no"): boolean {
  return kind === "choice"
    ? type === "choice"
    : type === "predicate" || type === "noul";
}

/** Assesses every question in order; see the module doc for `unsupported`. */
export function assessTyped(
  table: Table,
  text: PreparedText,
  questions: readonly ModelQuestion[],
  exposed: boolean,
  guard: DriftGuard,
): TypedAssessment[] {
  return questions.map((q) => {
    const known = table.byName.get(q.name);
    const assessment = known !== undefined && typeFits(q.type, known.kind)
      ? assess(table, text, q.name, { options: q.options, exposed }, guard)
      : unsupportedAssessment(q.name, text);
    return { type: q.type, assessment };
  });
}

/** The `service` object of one answer. */
export function serviceOf(
  a: Assessment,
): { source: "table"; certified: boolean; flag: string | null } {
  return {
    source: "table",
    certified: a.answer.certified,
    flag: a.answer.flag,
  };
}
