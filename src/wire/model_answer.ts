/**
 * One answer of the two decision-model shapes, `/v1/decisions` and
 * `/v1/altdecisions`. They write the same fields in the same order and
 * differ in two places only: a decisions answer names its question (the
 * alternate shape keys answers by name instead), and writes a choice's
 * probabilities as an array of `{value, probability}` where the alternate
 * shape writes an object keyed by option.
 *
 * @module
 */

import type { AnsweringTier, Assessment } from "../engine/mod.ts";
import type { JsonWriter } from "./json_writer.ts";
import {
  writeChoice,
  writeHint,
  writeProbabilities,
  writeQuestionName,
  writeService,
} from "./reply_parts.ts";
import type { ServiceTable } from "./service_table.ts";

/** Which decision-model shape an answer is written in. */
export type ModelShape = "decisions" | "alt";

/**
 * Writes one answer: `type` (and `name` in the decisions shape), then
 * `choice`, `confidence`, `probabilities` (choice), `confidence`,
 * `probability`, `noul`, `answer` (noul), `confidence`, `probability`
 * (predicate) or only `confidence` (unsupported, with a `hint` for a name
 * the table does not know), and `service` (with `audit` when given). With
 * `top`, a choice's `probabilities` hold only the `top` most probable
 * options, the answer first.
 */
export function writeModelAnswer(
  w: JsonWriter,
  served: ServiceTable,
  shape: ModelShape,
  type: string,
  a: Assessment,
  audit: string | undefined,
  top: number | null = null,
  tier: AnsweringTier = "table",
): void {
  const { answer } = a;
  w.ascii('{"type":').string(type);
  if (shape === "decisions") {
    w.ascii(',"name":');
    writeQuestionName(w, served, a);
  }
  if (answer.kind === "choice") {
    w.ascii(',"choice":');
    writeChoice(w, served, a.slot, answer);
    w.ascii(',"confidence":').number(answer.confidence);
    w.ascii(',"probabilities":');
    writeProbabilities(w, served, a.slot, answer, shape === "decisions", top);
  } else if (answer.kind === "yes_no") {
    const p = answer.probability;
    w.ascii(',"confidence":').number(answer.confidence);
    w.ascii(',"probability":').number(p);
    if (type === "noul") {
      w.ascii(',"noul":').number(p).ascii(',"answer":').boolean(answer.answer);
    }
  } else {
    w.ascii(',"confidence":').number(answer.confidence);
    writeHint(w, served, a);
  }
  w.ascii(',"service":');
  writeService(w, a, audit, tier);
  w.ascii("}");
}
