/**
 * Synthetic trace logs that come in families, as real logs do: one writer
 * (user, template, session) sends several near-identical messages, each
 * with that writer's own rare words, and the reference model answers a
 * family consistently, including its mistakes. A table memorises a family's
 * rare words, so a family member in calibration is easy when its siblings
 * are in training; traffic from new writers is not.
 *
 * @module
 */

import type { TraceSet } from "../src/traces/mod.ts";
import {
  FILLER_WORDS,
  pick,
  randInt,
  rng,
  TOPIC_WORDS,
  TOPICS,
} from "./_fixtures.ts";

/** Words writers add of their own: a pool shared by every family. */
const OWN_WORDS = Array.from(
  { length: 120 },
  (_, i) => `own${(i * 7919 % 997).toString(36)}word`,
);

/** What `familyTraces` makes. */
export interface FamilyOptions {
  /** Number of families (writers). */
  families: number;
  seed: number;
  /**
   * Share of families whose messages mention two topics; the reference model
   * picks one of the two for such a family (by a coin), and keeps to it.
   */
  ambiguity: number;
  /** Most messages per family (each family has 1 to this many). */
  maxSize?: number;
}

/** One message of a family log. */
export interface FamilyTrace {
  text: string;
  topic: string;
  family: number;
  /** Seconds since the epoch: families write one after another. */
  time: number;
}

/** A family log (see the module doc); families are numbered from `seed * 1e6`. */
export function familyTraces(o: FamilyOptions): FamilyTrace[] {
  const random = rng(o.seed);
  const out: FamilyTrace[] = [];
  const maxSize = o.maxSize ?? 6;
  for (let f = 0; f < o.families; f++) {
    const family = o.seed * 1_000_000 + f;
    const topic = pick(random, TOPICS);
    const other = pick(random, TOPICS.filter((t) => t !== topic));
    const ambiguous = random() < o.ambiguity;
    const answer = ambiguous && random() < 0.5 ? other : topic;
    // A writer's own words: two of a shared pool (names, typos, sign-offs),
    // so new writers use known words in new combinations.
    const own = [pick(random, OWN_WORDS), pick(random, OWN_WORDS)];
    const base = [
      ...own,
      ...Array.from(
        { length: 2 + randInt(random, 2) },
        () => pick(random, TOPIC_WORDS[topic]!),
      ),
      ...(ambiguous
        ? [pick(random, TOPIC_WORDS[other]!), pick(random, TOPIC_WORDS[other]!)]
        : []),
      ...Array.from(
        { length: 3 + randInt(random, 3) },
        () => pick(random, FILLER_WORDS),
      ),
    ];
    const size = 1 + randInt(random, maxSize);
    for (let m = 0; m < size; m++) {
      const words = [...base];
      words[2 + randInt(random, words.length - 2)] = pick(random, FILLER_WORDS);
      for (let j = words.length - 1; j > 0; j--) {
        const k = randInt(random, j + 1);
        [words[j], words[k]] = [words[k]!, words[j]!];
      }
      out.push({
        text: words.join(" "),
        topic: answer,
        family,
        time: 1.7e9 + f * 60 + m,
      });
    }
  }
  return out;
}

/** A family log as a trace set with one choice question `topic`; `time` and `group` as asked. */
export function familyTraceSet(
  traces: readonly FamilyTrace[],
  hints: { time?: boolean; group?: boolean } = {},
): TraceSet {
  const options = [...TOPICS];
  const families = [...new Set(traces.map((t) => t.family))];
  const groupOf = new Map(families.map((f, i) => [f, i]));
  return {
    texts: traces.map((t) => t.text),
    questions: [{
      name: "topic",
      kind: "choice",
      options,
      labels: Int32Array.from(traces, (t) => options.indexOf(t.topic)),
    }],
    times: hints.time ? Float64Array.from(traces, (t) => t.time) : null,
    groups: hints.group
      ? Int32Array.from(traces, (t) => groupOf.get(t.family)!)
      : null,
    groupNames: hints.group ? families.map(String) : [],
  } as TraceSet;
}
