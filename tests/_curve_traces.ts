/**
 * Constructed traces for the learning-curve advice: a choice among many
 * options, each with its own words, so that a small log leaves many words
 * unseen and the table improves with every trace added.
 *
 * @module
 */

import { FILLER_WORDS, pick, rng, shuffled } from "./_fixtures.ts";

/** What `curveTraces` makes. */
export interface CurveTraceOptions {
  count: number;
  seed: number;
  /** Number of options (default 40). */
  options?: number;
  /** Distinct words per option (default 12). */
  words?: number;
  /** Share of answers replaced by a random option (default 0.01). */
  noise?: number;
  /**
   * Spell each option's words as unrelated letters (`w3x7` shares its
   * characters with the other words of option 3; an opaque word shares
   * nothing), so a word unseen in training says nothing of its option.
   */
  opaque?: boolean;
}

/** Letters standing for word `k` of option `o`, the same for every call. */
function opaqueWord(o: number, k: number): string {
  let h = Math.imul(o + 1, 0x9e3779b1) ^ Math.imul(k + 7, 0x85ebca77);
  let word = "";
  for (let i = 0; i < 7; i++) {
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    word += String.fromCharCode(97 + ((h >>> 8) % 26 + 26) % 26);
  }
  return word;
}

/**
 * `count` JSON Lines traces answering `intent`: each text holds one word of
 * its option (out of `words`) among three to six filler words; a `noise`
 * share of answers is a random option. The first `n` lines of a set are a
 * nested subset of any longer one made with the same seed.
 */
export function curveTraces(o: CurveTraceOptions): string {
  const random = rng(o.seed);
  const options = o.options ?? 40;
  const words = o.words ?? 12;
  const noise = o.noise ?? 0.01;
  const lines: string[] = [];
  for (let i = 0; i < o.count; i++) {
    const option = Math.floor(random() * options);
    const k = Math.floor(random() * words);
    const text = [o.opaque ? opaqueWord(option, k) : `w${option}x${k}`];
    const fillers = 3 + Math.floor(random() * 4);
    for (let j = 0; j < fillers; j++) text.push(pick(random, FILLER_WORDS));
    shuffled(random, text);
    const answer = random() < noise ? Math.floor(random() * options) : option;
    lines.push(
      JSON.stringify({
        text: text.join(" "),
        answers: { intent: `o${answer}` },
      }),
    );
  }
  return lines.join("\n") + "\n";
}
