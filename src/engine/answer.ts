/**
 * Answering a question from the table, with the certification verdict.
 *
 * An answer is certified only when every rule holds, checked in this order;
 * the flag names the first rule that failed:
 *
 * 1. `empty_input`: the text has at least one word.
 * 2. `unsupported`: the question is known to the table.
 * 3. `options_changed` (or `new_options_served` when the bundle serves new
 *    options): every offered option is one the table learned.
 * 4. `option_removed`: the answer over all learned options is among the
 *    offered ones.
 * 5. `uncalibrated`: the question has a calibrated threshold.
 * 6. `drift`: the drift guard is quiet, and the text alone does not look
 *    foreign.
 * 7. `low_confidence`: the full-option confidence reaches the threshold.
 * 8. `low_radius`: when `exposed`, the radius reaches the bundle minimum.
 *
 * A forced threshold (`force_thresholds`) turns a failure of rule 5 or 7
 * into `manual_threshold` when the confidence reaches it: the answer is
 * meant to be served, and still reported as not certified.
 *
 * @module
 */

import { featurize, type TextFeatures } from "./features.ts";
import {
  argmax,
  noveltyShare,
  type QuestionTable,
  scoreEntries,
  softmax,
  type Table,
  type WordEntry,
} from "./table.ts";
import { radiusOf } from "./radius.ts";
import {
  type DriftGuard,
  driftScore,
  QUIET_GUARD,
  singleTextLooksFamiliar,
} from "./drift.ts";

/** Why an answer is not certified. */
export type Flag =
  | "low_confidence"
  | "drift"
  | "low_radius"
  | "uncalibrated"
  | "unsupported"
  | "empty_input"
  | "options_changed"
  | "option_removed"
  | "new_options_served"
  | "manual_threshold";

/** One answer, field for field as the service returns it. */
export interface Answer {
  /** Best option (choice questions). */
  choice?: string;
  /** Yes or no (yes/no questions). */
  answer?: boolean;
  confidence: number;
  certified: boolean;
  flag: Flag | null;
  radius: number | null;
  /** Option to probability (choice questions; only the offered ones when narrowed). */
  probabilities?: Record<string, number>;
  /** Probability of yes (yes/no questions). */
  probability?: number;
}

/** A text featurised once, to answer any number of questions. */
export interface PreparedText {
  features: TextFeatures;
  /** The table's entry of each word, `entries[i]` for `features.words[i]`. */
  entries: readonly WordEntry[];
  /** Share of the text's buckets no training text had. */
  novelty: number;
}

/** Featurises a text for `table`, looking each distinct word up once. */
export function prepareText(table: Table, text: string): PreparedText {
  const entries: WordEntry[] = [];
  const features = featurize(text, table.featurizer, (word) => {
    const entry = table.words.entry(table, word);
    entries.push(entry);
    return entry.buckets;
  });
  return withNovelty(table, features, entries);
}

/** Prepares a text featurised earlier (as training does) for `table`. */
export function prepareFeatures(
  table: Table,
  features: TextFeatures,
): PreparedText {
  const entries = features.words.map((w, i) =>
    table.words.entry(table, w, features.wordBuckets[i])
  );
  return withNovelty(table, features, entries);
}

function withNovelty(
  table: Table,
  features: TextFeatures,
  entries: readonly WordEntry[],
): PreparedText {
  let total = 0;
  let unseen = 0;
  for (let i = 0; i < entries.length; i++) {
    total += entries[i]!.buckets.length;
    unseen += entries[i]!.unseen;
  }
  return {
    features,
    entries,
    novelty: noveltyShare(table, features, total, unseen),
  };
}

/** How one question is asked. */
export interface AskOptions {
  /**
   * Offered options (choice questions): narrows the answer to them. Absent or
   * empty means all learned options.
   */
  options?: readonly string[] | undefined;
  /** The text may be adversarial: also require the radius minimum. */
  exposed?: boolean | undefined;
}

/** An answer together with what led to it. */
export interface Assessment {
  /** The question as asked. */
  question: string;
  answer: Answer;
  /** Certified threshold of the question, null when uncalibrated or unknown. */
  threshold: number | null;
  /** The question's target disagreement rate, null when unknown. */
  alpha: number | null;
  /** Confidence of the full-option answer (what the threshold is compared with). */
  fullConfidence: number;
  /** Up to three options with the highest probabilities, best first. */
  top: { option: string; probability: number }[];
  /** The drift score of the text, null when not scored. */
  driftScore: number | null;
  /** Share of the text's buckets no training text had. */
  novelty: number;
}

/**
 * The assessment of a question the table cannot answer (unknown, or asked
 * in a form it does not support): `unsupported`, or `empty_input` for an
 * empty text, since rule 1 comes first.
 */
export function unsupportedAssessment(
  name: string,
  text: PreparedText,
): Assessment {
  const empty = text.features.empty;
  return {
    question: name,
    answer: {
      confidence: 0,
      certified: false,
      flag: empty ? "empty_input" : "unsupported",
      radius: null,
    },
    threshold: null,
    alpha: null,
    fullConfidence: 0,
    top: [],
    driftScore: null,
    novelty: text.novelty,
  };
}

/**
 * Answers question `name` for a prepared text. Never throws for a question
 * or option the table does not know: those come back uncertified with their
 * flag. The `guard` sees the text's drift score (unless the text is empty).
 */
export function assess(
  table: Table,
  text: PreparedText,
  name: string,
  ask: AskOptions,
  guard: DriftGuard,
): Assessment {
  const q = table.byName.get(name);
  if (q === undefined) return unsupportedAssessment(name, text);
  // Scratch buffers: nothing below keeps them past this call.
  const [logitsBuffer, fullBuffer] = scratchFor(q.options.length);
  const logits = scoreEntries(
    table,
    q,
    text.features,
    text.entries,
    logitsBuffer,
  );
  const full = softmax(logits, q.temperature, undefined, fullBuffer);
  const best = argmax(full);
  const fullConfidence = full[best]!;

  // Which options are offered, and are they all known?
  let offered: number[] | undefined;
  let unknownOffered = false;
  if (
    q.kind === "choice" && ask.options !== undefined && ask.options.length > 0
  ) {
    const seen = new Set<number>();
    for (const o of ask.options) {
      const i = q.optionIndex.get(o);
      if (i === undefined) unknownOffered = true;
      else seen.add(i);
    }
    offered = [...seen].sort((a, b) => a - b);
  }

  let answer: Answer;
  let top: { option: string; probability: number }[];
  let served: number;
  if (offered === undefined) {
    served = best;
    answer = shapeAnswer(q, best, full, undefined);
    top = topOptions(q, full, undefined);
  } else if (offered.length === 0) {
    // Every offered option is new to the table: nothing to rank them by.
    const names = [...new Set(ask.options)];
    const p = 1 / names.length;
    served = -1;
    answer = {
      choice: names[0]!,
      confidence: p,
      certified: false,
      flag: null,
      radius: null,
      probabilities: Object.fromEntries(names.map((n) => [n, p])),
    };
    top = names.slice(0, 3).map((option) => ({ option, probability: p }));
  } else {
    const narrowed = softmax(logits, q.temperature, offered);
    served = offered[argmax(narrowed)]!;
    answer = shapeAnswer(q, served, narrowed, offered);
    top = topOptions(q, narrowed, offered);
  }

  const score = text.features.empty
    ? null
    : driftScore(text.novelty, fullConfidence);
  const quiet = score === null ? true : guard.observe(q, score) &&
    singleTextLooksFamiliar(
      table.settings.drift,
      q.drift.novelty,
      text.novelty,
    );

  answer.radius = served < 0
    ? null
    : radiusOf(table, q, text.features, logits, served, offered);
  answer.flag = firstFailure(table, q, text, {
    unknownOffered,
    removed: served !== best,
    quiet,
    fullConfidence,
    radius: answer.radius,
    exposed: ask.exposed === true,
  });
  answer.certified = answer.flag === null;
  return {
    question: name,
    answer: orderFields(answer),
    threshold: q.calibration.threshold,
    alpha: q.calibration.alpha,
    fullConfidence,
    top,
    driftScore: score,
    novelty: text.novelty,
  };
}

const scratch = new Map<number, [Float64Array, Float64Array]>();

/**
 * Two reusable arrays of `k` entries for one question's logits and
 * probabilities. Allocating them per request costs more than the arithmetic
 * (their size puts them outside the JavaScript heap).
 */
function scratchFor(k: number): [Float64Array, Float64Array] {
  let pair = scratch.get(k);
  if (pair === undefined) {
    pair = [new Float64Array(k), new Float64Array(k)];
    scratch.set(k, pair);
  }
  return pair;
}

interface RuleInputs {
  unknownOffered: boolean;
  removed: boolean;
  quiet: boolean;
  fullConfidence: number;
  radius: number | null;
  exposed: boolean;
}

function firstFailure(
  table: Table,
  q: QuestionTable,
  text: PreparedText,
  r: RuleInputs,
): Flag | null {
  if (text.features.empty) return "empty_input";
  if (r.unknownOffered) {
    return table.settings.serve_new_options
      ? "new_options_served"
      : "options_changed";
  }
  if (r.removed) return "option_removed";
  const forced = table.settings.force_thresholds[q.name];
  const manual = forced !== undefined && r.fullConfidence >= forced;
  const { threshold } = q.calibration;
  if (threshold === null) return manual ? "manual_threshold" : "uncalibrated";
  if (!r.quiet) return "drift";
  if (r.fullConfidence < threshold) {
    return manual ? "manual_threshold" : "low_confidence";
  }
  if (r.exposed && r.radius !== null && r.radius < table.settings.min_radius) {
    return "low_radius";
  }
  return null;
}

function shapeAnswer(
  q: QuestionTable,
  index: number,
  p: Float64Array,
  offered: number[] | undefined,
): Answer {
  const at = (i: number) => offered === undefined ? i : offered.indexOf(i);
  const confidence = p[at(index)]!;
  if (q.kind === "yes_no") {
    return {
      answer: index === 0,
      confidence,
      certified: false,
      flag: null,
      radius: null,
      probability: p[at(0)] ?? 0,
    };
  }
  let probabilities: Record<string, number>;
  if (offered === undefined) {
    probabilities = probabilitiesMaker(q)(p);
  } else {
    probabilities = {};
    for (let t = 0; t < offered.length; t++) {
      // defineProperty: an option named "__proto__" stays an own property.
      Object.defineProperty(probabilities, q.options[offered[t]!]!, {
        value: p[t]!,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return {
    choice: q.options[index]!,
    confidence,
    certified: false,
    flag: null,
    radius: null,
    probabilities,
  };
}

const makers = new WeakMap<
  QuestionTable,
  (p: Float64Array) => Record<string, number>
>();

/**
 * A function that builds the option-to-probability object of a question in
 * one object literal. Objects with many keys built one key at a time fall
 * into slow dictionary mode; a literal keeps the hot path fast. The option
 * names enter the source as JSON string literals, so any name is safe.
 */
function probabilitiesMaker(
  q: QuestionTable,
): (p: Float64Array) => Record<string, number> {
  let make = makers.get(q);
  if (make === undefined) {
    // Plain keys keep the literal fast; "__proto__" alone needs a computed
    // key, which defines an own property instead of setting the prototype.
    const key = (o: string) =>
      o === "__proto__" ? '["__proto__"]' : JSON.stringify(o);
    const body = q.options.map((o, i) => `${key(o)}: p[${i}]`).join(", ");
    make = new Function("p", `return { ${body} };`) as (
      p: Float64Array,
    ) => Record<string, number>;
    makers.set(q, make);
  }
  return make;
}

function topOptions(
  q: QuestionTable,
  p: Float64Array,
  offered: number[] | undefined,
): { option: string; probability: number }[] {
  // A linear pass keeps the three best: no sort of every option per request.
  const best = [-1, -1, -1];
  for (let t = 0; t < p.length; t++) {
    if (best[0]! < 0 || p[t]! > p[best[0]!]!) {
      [best[0], best[1], best[2]] = [t, best[0]!, best[1]!];
    } else if (best[1]! < 0 || p[t]! > p[best[1]!]!) {
      [best[1], best[2]] = [t, best[1]!];
    } else if (best[2]! < 0 || p[t]! > p[best[2]!]!) best[2] = t;
  }
  return best.filter((t) => t >= 0).map((t) => ({
    option: q.options[offered === undefined ? t : offered[t]!]!,
    probability: p[t]!,
  }));
}

/** The same answer with its fields in the order the interface lists them. */
function orderFields(a: Answer): Answer {
  const head = a.choice !== undefined
    ? { choice: a.choice }
    : { answer: a.answer ?? false };
  const tail = a.probabilities !== undefined
    ? { probabilities: a.probabilities }
    : { probability: a.probability ?? 0 };
  return {
    ...head,
    confidence: a.confidence,
    certified: a.certified,
    flag: a.flag,
    radius: a.radius,
    ...tail,
  };
}

/** Shorthand: the answer alone. */
export function answerQuestion(
  table: Table,
  text: PreparedText,
  name: string,
  ask: AskOptions,
  guard: DriftGuard,
): Answer {
  return assess(table, text, name, ask, guard).answer;
}

const WARM_UP_TEXTS = [
  "I am still waiting for my order, where is it?",
  "please cancel my subscription and refund the last payment",
  "the app keeps crashing when I open it on my phone",
  "can I speak to a real person about my account",
];

/**
 * Runs every question on a few made-up texts so the hot paths are compiled
 * before the first real request. Touches no drift guard state; fills only the
 * word caches with a handful of common words.
 */
export function warmUp(table: Table, rounds = 50): void {
  for (let r = 0; r < rounds; r++) {
    const text = prepareText(table, WARM_UP_TEXTS[r % WARM_UP_TEXTS.length]!);
    for (const q of table.questions) {
      assess(table, text, q.name, {}, QUIET_GUARD);
    }
  }
}
