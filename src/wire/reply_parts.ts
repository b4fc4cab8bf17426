/**
 * Pieces the three decision reply shapes share: an answer's probabilities
 * (as an object or as an array of `{value, probability}`), its flag, the
 * `hint` of a question the table does not know, and the `service` object
 * of the decision-model shapes. Choice probabilities are printed to
 * `PROBABILITY_DIGITS` significant digits (see `json_number.ts`); when a
 * rival would print the same as the answer, both are printed exactly, so
 * the printed probabilities never name another winner.
 *
 * @module
 */

import {
  type AnsweringTier,
  type Assessment,
  type ChoiceAnswer,
  type Flag,
  unsupportedInWords,
} from "../engine/mod.ts";
import {
  EXACT_KEY,
  probabilityKey,
  writeProbabilityKey,
} from "./json_number.ts";
import { fragment, JsonWriter } from "./json_writer.ts";
import type { ServiceTable } from "./service_table.ts";
import { topPositions } from "./top_options.ts";

const FLAG_TEXT: Record<Flag, Uint8Array> = {
  low_confidence: fragment('"low_confidence"'),
  drift: fragment('"drift"'),
  low_radius: fragment('"low_radius"'),
  uncalibrated: fragment('"uncalibrated"'),
  unsupported: fragment('"unsupported"'),
  empty_input: fragment('"empty_input"'),
  options_changed: fragment('"options_changed"'),
  option_removed: fragment('"option_removed"'),
  new_options_served: fragment('"new_options_served"'),
  manual_threshold: fragment('"manual_threshold"'),
};
const NULL = fragment("null");

/** Writes a flag as a JSON string, or `null`. */
export function writeFlag(w: JsonWriter, flag: Flag | null): void {
  w.raw(flag === null ? NULL : FLAG_TEXT[flag]);
}

/** Writes the question name of an assessment as a JSON string. */
export function writeQuestionName(
  w: JsonWriter,
  served: ServiceTable,
  a: Assessment,
): void {
  if (a.slot >= 0) w.raw(served.fragments[a.slot]!.name);
  else w.string(a.question);
}

/** Writes the question name of an assessment as an object key (`"name":`). */
export function writeQuestionKey(
  w: JsonWriter,
  served: ServiceTable,
  a: Assessment,
): void {
  if (a.slot >= 0) w.raw(served.fragments[a.slot]!.key);
  else w.string(a.question).ascii(":");
}

/** Writes the best option of a choice answer to the question at `slot` as a JSON string. */
export function writeChoice(
  w: JsonWriter,
  served: ServiceTable,
  slot: number,
  answer: ChoiceAnswer,
): void {
  const index = answer.optionIndices === null
    ? answer.chosen
    : answer.optionIndices[answer.chosen]!;
  if (slot >= 0 && index >= 0) {
    w.raw(served.fragments[slot]!.option[index]!);
  } else w.string(answer.choice);
}

/**
 * Writes `,"hint":"..."` for a question name the table does not know (a
 * close known name, and the table's questions); nothing otherwise.
 */
export function writeHint(
  w: JsonWriter,
  served: ServiceTable,
  a: Assessment,
): void {
  if (a.slot >= 0) return;
  w.ascii(',"hint":').string(
    unsupportedInWords(a.question, a.suggestion, served.questionNames),
  );
}

/**
 * Writes the probabilities of a choice answer to the question at `slot`:
 * `{"a":0.5,...}` (`array` false) or `[{"value":"a","probability":0.5},...]`
 * (`array` true). Every option in answer order by default; with `top` (a
 * request's `top`), only the `top` most probable, the answer first (see
 * `top_options.ts`).
 */
export function writeProbabilities(
  w: JsonWriter,
  served: ServiceTable,
  slot: number,
  answer: ChoiceAnswer,
  array: boolean,
  top: number | null = null,
): void {
  const start = w.length;
  const order = top === null
    ? null
    : topPositions(answer.probabilities, answer.chosen, top);
  if (!writeProbabilitiesOnce(w, served, slot, answer, array, false, order)) {
    // A rival prints like the answer: print those exactly.
    w.reset(start);
    writeProbabilitiesOnce(w, served, slot, answer, array, true, order);
  }
}

/** Most bytes one printed probability takes (an exact double, or `}` after it). */
const NUMBER_ROOM = 26;

/**
 * One pass of `writeProbabilities`; with `exactTies` false, returns
 * false (having written a useless text) when a rival rounds like the
 * answer. `order` lists the positions to print (null: all, in order).
 * Options the table learned are written from their pre-encoded fragments
 * straight into the writer's buffer; names it never learned are escaped.
 */
function writeProbabilitiesOnce(
  w: JsonWriter,
  served: ServiceTable,
  slot: number,
  answer: ChoiceAnswer,
  array: boolean,
  exactTies: boolean,
  order: readonly number[] | null,
): boolean {
  const p = answer.probabilities;
  const indices = answer.optionIndices;
  const chosen = answer.chosen;
  const frags = slot >= 0 ? served.fragments[slot]! : null;
  if (frags === null || (indices !== null && indices.includes(-1))) {
    return writeNamedProbabilities(w, answer, array, exactTies, order);
  }
  const first = array ? frags.optionEntry : frags.optionKey;
  const next = array ? frags.nextOptionEntry : frags.nextOptionKey;
  const chosenKey = probabilityKey(p[chosen]!);
  const n = order === null ? p.length : order.length;
  const buf = w.reserve(frags.optionBytes + NUMBER_ROOM * n + 2);
  let at = w.length;
  buf[at++] = array ? 91 : 123; // [ or {
  let clean = true;
  for (let j = 0; j < n; j++) {
    const i = order === null ? j : order[j]!;
    const index = indices === null ? i : indices[i]!;
    const f = j === 0 ? first[index]! : next[index]!;
    buf.set(f, at);
    at += f.length;
    const pi = p[i]!;
    let key = probabilityKey(pi);
    if (key === chosenKey && key !== EXACT_KEY && i !== chosen) {
      clean = false;
      key = EXACT_KEY;
    }
    if (exactTies && i === chosen) key = EXACT_KEY;
    at = writeProbabilityKey(buf, at, key, pi);
    if (array) buf[at++] = 125; // }
  }
  buf[at++] = array ? 93 : 125; // ] or }
  w.advance(at);
  return clean || exactTies;
}

/** `writeProbabilitiesOnce` for options without fragments (names the table never learned). */
function writeNamedProbabilities(
  w: JsonWriter,
  answer: ChoiceAnswer,
  array: boolean,
  exactTies: boolean,
  order: readonly number[] | null,
): boolean {
  const p = answer.probabilities;
  const names = answer.options;
  const chosen = answer.chosen;
  const chosenKey = probabilityKey(p[chosen]!);
  w.ascii(array ? "[" : "{");
  let clean = true;
  const n = order === null ? p.length : order.length;
  for (let j = 0; j < n; j++) {
    const i = order === null ? j : order[j]!;
    if (j > 0) w.ascii(",");
    if (array) w.ascii('{"value":').string(names[i]!).ascii(',"probability":');
    else w.string(names[i]!).ascii(":");
    let key = probabilityKey(p[i]!);
    if (key === chosenKey && key !== EXACT_KEY && i !== chosen) {
      clean = false;
      key = EXACT_KEY;
    }
    if (exactTies && i === chosen) key = EXACT_KEY;
    w.probability(key, p[i]!);
    if (array) w.ascii("}");
  }
  w.ascii(array ? "]" : "}");
  return clean || exactTies;
}

/**
 * Writes the `service` object of the decision-model shapes, with an
 * optional id: `audit` for a certified answer picked for audit,
 * `feedback_id` for an uncertified answer.
 */
export function writeService(
  w: JsonWriter,
  a: Assessment,
  audit: string | undefined,
  tier: AnsweringTier = "table",
): void {
  w.ascii(
    tier === "table"
      ? '{"source":"table","certified":'
      : '{"source":"semantic","certified":',
  ).boolean(a.answer.certified);
  w.ascii(',"flag":');
  writeFlag(w, a.answer.flag);
  if (audit !== undefined) {
    w.ascii(a.answer.certified ? ',"audit":' : ',"feedback_id":')
      .string(audit);
  }
  w.ascii("}");
}
