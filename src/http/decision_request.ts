/**
 * What the three decision routes share once their bodies are checked: one
 * request type (the text, the questions asked, `exposed`, the model name
 * of the decision-model shapes) and the loop that asks the table.
 *
 * In the decision-model shapes (`/v1/decisions`, `/v1/altdecisions`) a
 * question is answered by the table only when its type fits the bundle
 * question of that name: `choice` for a choice question, `predicate` or
 * `noul` for a yes/no question. Any other type (`score` included), a name
 * the bundle does not know, or a type that does not fit comes back
 * uncertified with flag `unsupported`, and is not an HTTP error.
 *
 * @module
 */

import {
  type AskOptions,
  assess,
  type Assessment,
  type PreparedText,
  unsupportedAssessment,
} from "../engine/answer.ts";
import type { DriftGuard } from "../engine/drift.ts";
import type { QuestionKind, Table } from "../engine/table.ts";

/** Most questions one request may ask (more gets 400): keeps every reply bounded. */
export const MAX_QUESTIONS = 1000;
/** Most options one question of a request may offer (more gets 400). */
export const MAX_OPTIONS = 10_000;

/**
 * One question as a request asks it. Every parser makes asks (and
 * requests) with the same fields in the same order, so the code that reads
 * them sees one object shape whatever the route.
 */
export interface Ask {
  name: string;
  /** Offered options (choice); absent or empty: all the table learned. */
  options?: readonly string[] | undefined;
  /**
   * The type the decision-model shapes give (`choice`, `predicate`, `noul`,
   * or anything else: unsupported); absent for `/v1/decide`.
   */
  type?: string | undefined;
}

/** A checked body of any decision route. */
export interface DecisionRequest {
  /** The state or input, as the table reads it. */
  text: string;
  /** The questions asked; null when the body names none (answer all). */
  asks: readonly Ask[] | null;
  exposed: boolean;
  /** The model name the decision-model shapes echo (`table` when the body names none); null for `/v1/decide`. */
  model: string | null;
}

/** True when a question of `type` may be answered by a bundle question of `kind`. */
export function typeFits(type: string, kind: QuestionKind): boolean {
  return kind === "choice"
    ? type === "choice"
    : type === "predicate" || type === "noul";
}

/**
 * Asks the table every question of `request` (every question of the table
 * when it names none), in order; see the module doc for `unsupported`.
 */
export function assessRequest(
  table: Table,
  text: PreparedText,
  request: DecisionRequest,
  guard: DriftGuard,
): Assessment[] {
  const out: Assessment[] = [];
  const ask: AskOptions = { options: undefined, exposed: request.exposed };
  if (request.asks === null) {
    for (const q of table.questions) {
      out.push(assess(table, text, q.name, ask, guard));
    }
    return out;
  }
  for (const a of request.asks) {
    if (a.type !== undefined) {
      const known = table.byName.get(a.name);
      if (known === undefined || !typeFits(a.type, known.kind)) {
        out.push(unsupportedAssessment(table, a.name, text));
        continue;
      }
    }
    ask.options = a.options;
    out.push(assess(table, text, a.name, ask, guard));
  }
  return out;
}
