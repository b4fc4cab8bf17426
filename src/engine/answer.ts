/**
 * Answering a question from the table, with the certification verdict.
 *
 * An answer is certified only when every rule holds, checked in this order;
 * the flag names the first rule that failed:
 *
 * 1. `empty_input`: the text has at least one word.
 * 2. `unsupported`: the question is known to the table.
 * 3. `options_changed` (or `new_options_served` when the bundle serves new
 *    options): every offered option is one the table learned; and (a
 *    learning service) the reference model has answered no option the
 *    table lacks (`markOptionsAdded`), always `options_changed`.
 * 4. `option_removed`: the answer over all learned options is among the
 *    offered ones.
 * 5. `uncalibrated`: the question has a threshold in force.
 * 6. `drift`: serving has not withdrawn the question's certification
 *    (`live_audit`), the online drift alarm is quiet (`alarm`), and the text
 *    alone does not look foreign (`novelty`); the verdict names the rule.
 * 7. `low_confidence`: the full-option confidence reaches the threshold in
 *    force.
 * 8. `low_radius`: when `exposed`, the radius reaches the bundle minimum.
 *
 * A forced threshold (`force_thresholds`) turns a failure of rule 5 or 7
 * into `manual_threshold` when the confidence reaches it: the answer is
 * meant to be served, and still reported as not certified.
 *
 * @module
 */

import { argmax, softmax } from "./score.ts";
import type { QuestionTable, Table } from "./table.ts";
import { type PreparedText, prepareText, scorePrepared } from "./prepare.ts";
import { suggestQuestion } from "./suggest.ts";
import { energyOfAnswer, looksInScope, spreadOf } from "./scope.ts";
import { radiusOf } from "./radius.ts";
import {
  type DriftGuard,
  driftScore,
  QUIET_GUARD,
  singleTextLooksFamiliar,
} from "./drift.ts";
import type { QuestionState, TableState } from "./state.ts";
import type {
  Answer,
  Assessment,
  DriftRule,
  Flag,
  RankedOption,
} from "./verdict.ts";

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

/**
 * The assessment of a question the table cannot answer (unknown, or asked
 * in a form it does not support): `unsupported`, or `empty_input` for an
 * empty text, since rule 1 comes first. A name the table does not know
 * carries a `suggestion` when a known one is close.
 *
 * @example
 * ```ts
 * import { prepareText, type Table, TableState, unsupportedAssessment } from "./mod.ts";
 * declare const table: Table;
 * const state = new TableState(table);
 * // A question asked as a type its table question cannot answer.
 * unsupportedAssessment(table, "intent", prepareText(table, state, "hi")).answer.flag; // "unsupported"
 * ```
 */
export function unsupportedAssessment(
  table: Table,
  name: string,
  text: PreparedText,
): Assessment {
  const q = table.byName.get(name);
  return {
    question: name,
    slot: q === undefined ? -1 : table.questions.indexOf(q),
    answer: {
      kind: "none",
      confidence: 0,
      certified: false,
      flag: text.empty ? "empty_input" : "unsupported",
      driftRule: null,
      radius: null,
    },
    threshold: null,
    alpha: null,
    fullConfidence: 0,
    scopeScore: null,
    driftScore: null,
    novelty: text.novelty,
    suggestion: q === undefined ? suggestQuestion(table, name) : null,
  };
}

/**
 * Answers question `name` for a prepared text, with the caller's `state`
 * of `table` (its scratch buffers, word cache and threshold in force; the
 * table is only read). Never throws for a question or option the table
 * does not know: those come back uncertified with their flag. The `guard`
 * sees the text's drift score (unless the text is empty).
 *
 * @example
 * ```ts
 * import { assess, DriftMonitor, prepareText, type Table, TableState } from "./mod.ts";
 * declare const table: Table;
 * const state = new TableState(table);
 * const guard = new DriftMonitor(table.settings.drift);
 * const text = prepareText(table, state, "card not here");
 * const v = assess(table, state, text, "intent", {
 *   options: ["card_arrival", "card_linking"],
 * }, guard);
 * if (v.answer.certified) console.log("serve", v.answer.choice);
 * else console.log("ask the model:", v.answer.flag, v.answer.driftRule);
 * ```
 */
export function assess(
  table: Table,
  state: TableState,
  text: PreparedText,
  name: string,
  ask: AskOptions,
  guard: DriftGuard,
): Assessment {
  const q = table.byName.get(name);
  if (q === undefined) return unsupportedAssessment(table, name, text);
  const qs = state.question(q);
  // Scratch buffers: nothing below keeps them past this call.
  const logits = scorePrepared(table, state, q, text, qs.logits);
  const full = softmax(logits, q.temperature, undefined, qs.probabilities);
  const best = argmax(full);
  const fullConfidence = full[best]!;
  const scope = q.drift.scope.score;
  const scopeScore = text.empty || scope === null
    ? null
    : scope === "spread"
    ? spreadOf(logits, q.temperature, full, best)
    : energyOfAnswer(logits, q.temperature, full, best);

  // Which options are offered: the learned ones (in table order) and the
  // names the table never learned (in the order given).
  let known: number[] | null = null;
  let unlearned: string[] | null = null;
  if (
    q.kind === "choice" && ask.options !== undefined && ask.options.length > 0
  ) {
    known = [];
    // Repeats are dropped: by a scan for a few options, by a set for many.
    const seen = ask.options.length > 32 ? new Set<string>() : null;
    for (const o of ask.options) {
      if (seen !== null) {
        if (seen.has(o)) continue;
        seen.add(o);
      }
      const i = q.optionIndex.get(o);
      if (i === undefined) {
        unlearned ??= [];
        if (seen !== null || !unlearned.includes(o)) unlearned.push(o);
      } else if (seen !== null || !known.includes(i)) known.push(i);
    }
    known.sort((a, b) => a - b);
  }

  // What is answered: the served option (-1 when no learned option is
  // offered), its position among the options answered over, their names,
  // indices and probabilities.
  let served = best;
  let chosen = best;
  let confidence = fullConfidence;
  let names: readonly string[] = q.options;
  let indices: readonly number[] | null = null;
  let probabilities: number[] | null = null;
  if (q.kind === "choice") {
    if (known === null) probabilities = copy(full);
    else if (known.length === 0) {
      // Every offered option is new to the table: nothing to rank them by.
      names = unlearned!;
      const p = 1 / names.length;
      served = -1;
      chosen = 0;
      confidence = p;
      indices = names.map(() => -1);
      probabilities = names.map(() => p);
    } else {
      const narrowed = softmax(logits, q.temperature, known, qs.narrowed);
      chosen = argmax(narrowed, known.length);
      served = known[chosen]!;
      confidence = narrowed[chosen]!;
      probabilities = copy(narrowed, known.length);
      const offered = known.map((i) => q.options[i]!);
      const offeredIndices = known.slice();
      if (unlearned !== null) {
        for (const o of unlearned) {
          offered.push(o);
          offeredIndices.push(-1);
          probabilities.push(0);
        }
      }
      names = offered;
      indices = offeredIndices;
    }
  }

  const score = text.empty ? null : driftScore(text.novelty, fullConfidence);
  let driftRule: DriftRule | null = null;
  if (score !== null) {
    // The guard sees every scored text, whatever else holds.
    const alarmQuiet = guard.observe(q, score);
    if (qs.withdrawn) driftRule = "live_audit";
    else if (!alarmQuiet) driftRule = "alarm";
    else if (
      !singleTextLooksFamiliar(
        table.settings.drift,
        q.drift.novelty,
        text.novelty,
      )
    ) driftRule = "novelty";
    else if (
      q.drift.scope.values.length > 0 &&
      !looksInScope(
        table.settings.drift.scope_p,
        q.drift.scope.values,
        scopeScore!,
      )
    ) driftRule = "out_of_scope";
  }

  const radius = served < 0
    ? null
    : radiusOf(table, state, q, text, logits, served, known ?? undefined);
  const flag = firstFailure(table, q, qs, text, {
    unknownOffered: unlearned !== null,
    removed: served !== best,
    drift: driftRule !== null,
    fullConfidence,
    radius,
    exposed: ask.exposed === true,
  });
  // Made whole at once: objects of one kind share one shape, whose fields
  // never change representation, which keeps the reply writers optimised.
  const answer: Answer = q.kind === "yes_no"
    ? {
      kind: "yes_no",
      answer: best === 0,
      confidence,
      certified: flag === null,
      flag,
      driftRule: flag === "drift" ? driftRule : null,
      radius,
      probability: full[0]!,
    }
    : {
      kind: "choice",
      choice: served < 0 ? names[0]! : q.options[served]!,
      confidence,
      certified: flag === null,
      flag,
      driftRule: flag === "drift" ? driftRule : null,
      radius,
      options: names,
      optionIndices: indices,
      chosen,
      probabilities: probabilities!,
    };
  return {
    question: name,
    slot: table.questions.indexOf(q),
    answer,
    threshold: qs.threshold,
    alpha: q.calibration.alpha,
    fullConfidence,
    scopeScore,
    driftScore: score,
    novelty: text.novelty,
    suggestion: null,
  };
}

/**
 * The first `n` values of `p` (all by default) as a plain array the answer
 * owns: made at its full length at once (growing it by `push`, or a typed
 * array of this size, costs several times more).
 */
function copy(p: Float64Array, n = p.length): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = p[i]!;
  return out;
}

interface RuleInputs {
  unknownOffered: boolean;
  removed: boolean;
  drift: boolean;
  fullConfidence: number;
  radius: number | null;
  exposed: boolean;
}

function firstFailure(
  table: Table,
  q: QuestionTable,
  qs: QuestionState,
  text: PreparedText,
  r: RuleInputs,
): Flag | null {
  if (text.empty) return "empty_input";
  if (qs.optionsAdded) return "options_changed";
  if (r.unknownOffered) {
    return table.settings.serve_new_options
      ? "new_options_served"
      : "options_changed";
  }
  if (r.removed) return "option_removed";
  const forced = table.settings.force_thresholds[q.name];
  const manual = forced !== undefined && r.fullConfidence >= forced;
  const { threshold } = qs;
  if (threshold === null) return manual ? "manual_threshold" : "uncalibrated";
  if (r.drift) return "drift";
  if (r.fullConfidence < threshold) {
    return manual ? "manual_threshold" : "low_confidence";
  }
  if (r.exposed && r.radius !== null && r.radius < table.settings.min_radius) {
    return "low_radius";
  }
  return null;
}

/**
 * Up to `n` options of an answer with the highest probabilities, best first
 * (for yes/no, `true` and `false`); empty for an answer of kind `none`.
 *
 * @example
 * ```ts
 * import { assess, prepareText, QUIET_GUARD, type Table, TableState, topOptions } from "./mod.ts";
 * declare const table: Table;
 * const state = new TableState(table);
 * const v = assess(table, state, prepareText(table, state, "card not here"), "intent", {}, QUIET_GUARD);
 * topOptions(v.answer); // [{ option: "card_arrival", probability: 0.93 }, ...]
 * ```
 */
export function topOptions(answer: Answer, n = 3): RankedOption[] {
  if (answer.kind === "yes_no") {
    const yes = answer.probability;
    const ranked = [
      { option: "true", probability: yes },
      { option: "false", probability: 1 - yes },
    ];
    if (yes < 0.5) ranked.reverse();
    return ranked.slice(0, n);
  }
  if (answer.kind === "none") return [];
  const p = answer.probabilities;
  const order = p.map((_, i) => i).sort((a, b) => p[b]! - p[a]! || a - b);
  return order.slice(0, n).map((i) => ({
    option: answer.options[i]!,
    probability: p[i]!,
  }));
}

/**
 * A choice answer's probabilities by option name (in reply order); empty
 * for other answers. Any name, `__proto__` included, is an own key.
 *
 * @example
 * ```ts
 * import { assess, prepareText, probabilitiesOf, QUIET_GUARD, type Table, TableState } from "./mod.ts";
 * declare const table: Table;
 * const state = new TableState(table);
 * const v = assess(table, state, prepareText(table, state, "card not here"), "intent", {}, QUIET_GUARD);
 * probabilitiesOf(v.answer); // { card_arrival: 0.93, lost_or_stolen_card: 0.04, ... }
 * ```
 */
export function probabilitiesOf(answer: Answer): Record<string, number> {
  const out: Record<string, number> = {};
  if (answer.kind !== "choice") return out;
  const { options: names, probabilities: p } = answer;
  for (let i = 0; i < names.length; i++) {
    Object.defineProperty(out, names[i]!, {
      value: p[i]!,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * Shorthand: the answer alone.
 *
 * @example
 * ```ts
 * import { answerQuestion, prepareText, QUIET_GUARD, type Table, TableState } from "./mod.ts";
 * declare const table: Table;
 * const state = new TableState(table);
 * answerQuestion(table, state, prepareText(table, state, "refund please"), "intent", {}, QUIET_GUARD).certified;
 * ```
 */
export function answerQuestion(
  table: Table,
  state: TableState,
  text: PreparedText,
  name: string,
  ask: AskOptions,
  guard: DriftGuard,
): Answer {
  return assess(table, state, text, name, ask, guard).answer;
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
 * word cache of `state` with a handful of common words.
 *
 * @example
 * ```ts
 * import { type Table, TableState, warmUp } from "./mod.ts";
 * declare const table: Table;
 * const state = new TableState(table);
 * warmUp(table, state); // before serving
 * ```
 */
export function warmUp(table: Table, state: TableState, rounds = 50): void {
  for (let r = 0; r < rounds; r++) {
    const text = prepareText(
      table,
      state,
      WARM_UP_TEXTS[r % WARM_UP_TEXTS.length]!,
    );
    for (const q of table.questions) {
      assess(table, state, text, q.name, {}, QUIET_GUARD);
    }
  }
}
