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
  type AnsweringTier,
  type AskOptions,
  assess,
  type Assessment,
  type DriftGuard,
  type PreparedText,
  type QuestionKind,
  type Table,
  type TableState,
  unlearnedAssessment,
  type UnlearnedQuestion,
  unsupportedAssessment,
} from "../engine/mod.ts";
import type { JsonWriter } from "./json_writer.ts";
import type { ServiceTable } from "./service_table.ts";

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
  /** Offered options (choice); undefined or empty: all the table learned. */
  options: readonly string[] | undefined;
  /**
   * The type the decision-model shapes give (`choice`, `predicate`, `noul`,
   * or anything else: unsupported); undefined for `/v1/decide`.
   */
  type: string | undefined;
}

/** A question as the decision-model shapes ask it: always with a type. */
export interface TypedAsk extends Ask {
  type: string;
}

/** A checked `/v1/decide` body. */
export interface DecideRequest {
  /** The state, as the table reads it. */
  text: string;
  /** The questions asked; null when the body names none (answer all). */
  asks: readonly Ask[] | null;
  exposed: boolean;
  /** No model name: the service's own shape echoes none. */
  model: null;
  /** Print only this many most probable options of a choice answer; null: all. */
  top: number | null;
}

/** A checked body of a decision-model shape (`/v1/decisions`, `/v1/altdecisions`). */
export interface ModelRequest {
  /** The state or input, as the table reads it. */
  text: string;
  /** The questions asked, each with its type. */
  asks: readonly TypedAsk[];
  exposed: boolean;
  /** The model name the reply echoes (`table` when the body names none). */
  model: string;
  /** Print only this many most probable options of a choice answer; null: all. */
  top: number | null;
}

/** A checked body of any decision route. */
export type DecisionRequest = DecideRequest | ModelRequest;

/**
 * How one decision route reads its body and writes its reply. Method
 * syntax on purpose: a shape of a narrower request (`DecideRequest`) is a
 * shape of `DecisionRequest`, so the routes' shapes sit in one table.
 */
export interface DecisionShape<R extends DecisionRequest = DecisionRequest> {
  /** The body the route needs, for error messages. */
  readonly needed: string;
  /** Checks a parsed body; throws a 400 naming what is wrong. */
  parse(body: unknown): R;
  /**
   * Writes the 200 reply for the `answers` to `request` (one per question
   * asked, in order); `audits[i]`, when given, is the audit id of answer
   * `i`; `tiers[i]`, given only when the bundle served has a second
   * tier, is the tier that answered `i`.
   */
  write(
    w: JsonWriter,
    served: ServiceTable,
    request: R,
    answers: readonly Assessment[],
    latencyUs: number,
    audits: readonly (string | undefined)[] | undefined,
    tiers?: readonly AnsweringTier[] | undefined,
  ): void;
}

/** True when a question of `type` may be answered by a bundle question of `kind`. */
export function typeFits(type: string, kind: QuestionKind): boolean {
  return kind === "choice"
    ? type === "choice"
    : type === "predicate" || type === "noul";
}

/**
 * The questions a learning service knows from feedback but its table has
 * not learned yet (`QuestionRegistry` of `src/learn/`).
 */
export interface UnlearnedQuestions {
  names(): readonly string[];
  get(name: string): UnlearnedQuestion | undefined;
  kindOf(name: string): "choice" | "yes_no" | undefined;
}

/**
 * Asks the table every question of `request` (every question of the table
 * when it names none), in order; see the module doc for `unsupported`.
 * With `unlearned` (a learning service), a `/v1/decide` question the table
 * lacks is answered uncertified, flag `uncalibrated`, with a best guess
 * (`unlearnedAssessment`): a choice over the offered options, or as
 * feedback has shown the question; and a request that names no question
 * is answered every question feedback has shown too.
 */
export function assessRequest(
  table: Table,
  state: TableState,
  text: PreparedText,
  request: DecisionRequest,
  guard: DriftGuard,
  unlearned?: UnlearnedQuestions,
): Assessment[] {
  const out: Assessment[] = [];
  const ask: AskOptions = { options: undefined, exposed: request.exposed };
  if (request.asks === null) {
    for (const q of table.questions) {
      out.push(assess(table, state, text, q.name, ask, guard));
    }
    if (unlearned !== undefined) {
      for (const name of unlearned.names()) {
        if (table.byName.has(name)) continue;
        out.push(unlearnedAssessment(name, unlearned.get(name)!, text));
      }
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
    if (unlearned !== undefined && !table.byName.has(a.name)) {
      const known = unlearned.get(a.name) ??
        { kind: "choice", options: a.options ?? [], counts: [] };
      out.push(unlearnedAssessment(a.name, known, text, a.options));
      continue;
    }
    ask.options = a.options;
    out.push(assess(table, state, text, a.name, ask, guard));
  }
  return out;
}
