/**
 * Splitting traces so that the calibration and test answers stand for the
 * traffic that comes next, not for a random slice of the same log.
 *
 * Every trace goes to one of four parts: **fit** and **validation** (together
 * the train split; validation chooses epochs and the temperature and fixes
 * the candidate thresholds), **calibration** (chooses the certified
 * threshold) and **test** (the report only). The unit of a split is a set of
 * traces that must stay together:
 *
 * - in **group** mode, every trace of a group (a user, session or source);
 * - in **time** mode, the trace alone;
 * - in **random** mode, texts equal after normalisation (NFKC, lower case,
 *   collapsed white space), and near-duplicates and paraphrase clusters:
 *   each text joins the most similar cluster leader whose TF-IDF cosine with
 *   it is at least `similarity` (see `linkNearDuplicates` and `similar.ts`).
 *
 * In time and group mode a text may recur in several parts (every user says
 * "thanks"), as it will in the traffic that comes next; linking equal texts
 * there would chain most groups into one, or pull every occurrence of a
 * common text into the newest part. The leakage check reports near-twins.
 *
 * No answer is read: which part a trace lands in depends only on its text,
 * time and group and the seed, so no answer (of the test part in particular)
 * can steer the split.
 *
 * Units are dealt out by trace count: in **time** mode from the newest (test
 * gets the most recent traces, calibration the ones before, validation the
 * newest of the rest: out-of-time, as deployment follows the log); otherwise
 * in the order of a seeded hash. **auto** picks time when every trace has a
 * time, else group when every trace has a group and there are enough groups
 * (`AUTO_MIN_GROUPS`), else random.
 *
 * @module
 */

import { textKey } from "../engine/mod.ts";
import { SimilarityIndex, textVectors } from "./similar.ts";
import { effectiveSize, UnionFind } from "./union_find.ts";

/** The parts of a split. */
export const FIT = 0;
export const VALIDATION = 1;
export const CALIBRATION = 2;
export const TEST = 3;

/** Part names, by part number. */
export const PART_NAMES = ["fit", "validation", "calibration", "test"] as const;

/** How traces are split. */
export type SplitMode = "auto" | "time" | "group" | "random";

/** Every split mode, for command lines. */
export const SPLIT_MODES: readonly SplitMode[] = [
  "auto",
  "time",
  "group",
  "random",
];

/** The modes a split can end up in (`auto` resolves to one of them). */
export type ResolvedSplitMode = Exclude<SplitMode, "auto">;

/** What a split needs of the traces (never their answers). */
export interface SplitSource {
  texts: readonly string[];
  /** Per trace, seconds since the epoch, NaN where none; null when none has one. */
  times?: Float64Array | null;
  /** Per trace, a group number, -1 where none; null when none has one. */
  groups?: Int32Array | null;
}

/** How to split. */
export interface SplitOptions {
  mode: SplitMode;
  /** Shares of all traces for calibration and for test. */
  calibration: number;
  test: number;
  /** Share of the train split (what calibration and test leave) for validation. */
  validation: number;
  seed: number;
  /**
   * Random mode: texts with a TF-IDF cosine at least this stay in one split.
   * 1 keeps only equal texts together.
   */
  similarity: number;
  /**
   * Per trace, 1 for a trace that must train: its unit goes to the fit part
   * and the other parts fill up without it (see `starvedOptions`).
   */
  pinned?: Uint8Array | undefined;
  /**
   * Per trace, where a line of a feedback log stands outside the shares
   * (see `feedback_sample.ts`): `FIT_ONLY` (it trains, never calibrates:
   * no sample of the traffic) or `HELD` (a decision the calibration coin
   * picked: calibration or test, never training); 0 for every other trace.
   * Such a trace is a unit of its own (it is linked to no other, so it
   * never pulls another trace into a part, nor is pulled), and the shares
   * are taken of the other traces.
   */
  outside?: Uint8Array | undefined;
}

/** `SplitOptions.outside`: a trace that trains only. */
export const FIT_ONLY = 1;
/** `SplitOptions.outside`: a trace that calibrates or tests only. */
export const HELD = 2;
/**
 * `SplitOptions.outside`: a row with no answer (the text of a picked
 * decision a feedback log kept); put in the fit part, where it trains
 * nothing, and left out of the parts' counts.
 */
export const UNLABELLED = 3;

/** A split of the traces, and what it is made of. */
export interface Split {
  mode: ResolvedSplitMode;
  /** Why this mode, in words. */
  reason: string;
  /** Per trace: `FIT`, `VALIDATION`, `CALIBRATION` or `TEST`. */
  parts: Uint8Array;
  /** Per trace, its unit (the traces that must stay together). */
  unitOf: Int32Array;
  /** Per part (by part number): traces and units. */
  traces: number[];
  units: number[];
  /** Random mode: distinct texts that joined a near-duplicate cluster. */
  similarLinks: number;
}

/** A number in [0, 1) from a string and a seed (FNV-1a then a mixer). */
export function unitHash(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ Math.imul(seed, 0x9e3779b1)) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/** A number in [0, 1) from one in [0, 1) and a seed, uniform whatever the input's distribution. */
function rehash(x: number, seed: number): number {
  let h = (Math.floor(x * 4294967296) ^ Math.imul(seed + 1, 0x85ebca6b)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/**
 * Fewest groups (by their effective number, `n^2 / sum n_g^2`) with which
 * `auto` splits by group: calibration counts a group as one answer, and at
 * the default shares and alpha = delta = 0.05 a pass needs 59 of them in the
 * calibration part, a fifth of the traces. With fewer, `auto` splits at
 * random (near-duplicates together) and the leakage check watches.
 */
export const AUTO_MIN_GROUPS = 300;

/** The mode `auto` resolves to for these traces, and why. */
export function resolveMode(
  source: SplitSource,
  mode: SplitMode,
  minGroups = AUTO_MIN_GROUPS,
): { mode: ResolvedSplitMode; reason: string } {
  const n = source.texts.length;
  const timed = countPresent(source.times, (t) => !Number.isNaN(t));
  const grouped = countPresent(source.groups, (g) => g >= 0);
  const missing = (what: string, have: number) =>
    `--split ${mode} needs a ${what} on every trace: ${
      n - have
    } of ${n} traces have none`;
  switch (mode) {
    case "time":
      if (timed < n) throw new RangeError(missing("time", timed));
      return { mode, reason: "asked for (--split time)" };
    case "group":
      if (grouped < n) throw new RangeError(missing("group", grouped));
      return { mode, reason: "asked for (--split group)" };
    case "random":
      return { mode, reason: "asked for (--split random)" };
    case "auto":
      if (n > 0 && timed === n) {
        return { mode: "time", reason: "every trace has a time" };
      }
      if (n > 0 && grouped === n) {
        const effective = effectiveSize(source.groups!);
        if (effective >= minGroups) {
          return { mode: "group", reason: "every trace has a group" };
        }
        return {
          mode: "random",
          reason: `every trace has a group, but ${
            Math.round(effective)
          } groups by their effective number are too few to certify with a group counted as one answer (${minGroups} wanted); --split group forces it`,
        };
      }
      return {
        mode: "random",
        reason: timed + grouped === 0
          ? "no trace has a time or a group"
          : "not every trace has a time, nor every trace a group",
      };
  }
}

function countPresent<T extends Float64Array | Int32Array>(
  values: T | null | undefined,
  present: (v: number) => boolean,
): number {
  if (values === null || values === undefined) return 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) if (present(values[i]!)) n++;
  return n;
}

/**
 * Splits the traces (see the module doc). Deterministic for a seed; in
 * random and group mode the result does not depend on the order of the
 * traces. Throws `RangeError` when time or group mode is asked for and some
 * trace lacks it.
 */
export function splitTraces(source: SplitSource, options: SplitOptions): Split {
  const { mode, reason } = resolveMode(source, options.mode);
  const n = source.texts.length;
  const outside = options.outside;
  const links = new UnionFind(n);
  // Each trace's hash, from its text; in random mode equal texts are linked.
  const firstOfKey = new Map<string, number>();
  const keyHash = new Float64Array(n);
  const representatives: number[] = [];
  for (let i = 0; i < n; i++) {
    if (outside !== undefined && outside[i] !== 0) {
      // A unit of its own, placed by a hash of its text and position.
      keyHash[i] = unitHash(
        `${textKey(source.texts[i]!)}\u0000${i}`,
        options.seed,
      );
      continue;
    }
    const key = textKey(source.texts[i]!);
    const first = firstOfKey.get(key);
    if (first === undefined) {
      firstOfKey.set(key, i);
      keyHash[i] = unitHash(key, options.seed);
      representatives.push(i);
    } else {
      // A repeat in time or group mode hashes apart from its first occurrence.
      keyHash[i] = mode === "random"
        ? keyHash[first]!
        : unitHash(`${key}\u0000${i}`, options.seed);
      if (mode === "random") links.union(first, i);
    }
  }
  firstOfKey.clear();
  if (mode === "group") {
    const firstOfGroup = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      if (outside !== undefined && outside[i] !== 0) continue;
      const g = source.groups![i]!;
      const first = firstOfGroup.get(g);
      if (first === undefined) firstOfGroup.set(g, i);
      else links.union(first, i);
    }
  }
  let similarLinks = 0;
  if (mode === "random" && options.similarity < 1) {
    similarLinks = linkNearDuplicates(
      source,
      representatives,
      keyHash,
      options.similarity,
      links,
    );
  }
  const { unitOf, count } = links.units();

  // Each unit's sort key: its newest time (time mode), and a hash of its
  // texts that does not depend on trace order.
  const unitHashes = new Float64Array(count).fill(Infinity);
  const unitTimes = new Float64Array(count).fill(-Infinity);
  const unitSizes = new Int32Array(count);
  for (let i = 0; i < n; i++) {
    const u = unitOf[i]!;
    unitSizes[u]!++;
    if (keyHash[i]! < unitHashes[u]!) unitHashes[u] = keyHash[i]!;
    if (mode === "time") {
      unitTimes[u] = Math.max(unitTimes[u]!, source.times![i]!);
    }
  }
  // The smallest member hash names a unit whatever the trace order, but it
  // is biased low for large units: hash it again so that every unit's place
  // is uniform, or large clusters would crowd into the parts dealt first.
  for (let u = 0; u < count; u++) {
    unitHashes[u] = rehash(unitHashes[u]!, options.seed);
  }
  const order = Array.from({ length: count }, (_, u) => u);
  if (mode === "time") {
    // Newest first; equal times in hash order.
    order.sort((a, b) =>
      unitTimes[b]! - unitTimes[a]! || unitHashes[a]! - unitHashes[b]!
    );
  } else {
    order.sort((a, b) => unitHashes[a]! - unitHashes[b]! || a - b);
  }

  // Deal units out: test first, then calibration, validation, fit; the
  // shares are of the traces inside them.
  let inside = n;
  if (outside !== undefined) {
    for (let i = 0; i < n; i++) if (outside[i] !== 0) inside--;
  }
  const test = Math.round(options.test * inside);
  const calibration = Math.round(options.calibration * inside);
  const validation = Math.round(
    options.validation * (inside - test - calibration),
  );
  const targets = [test, calibration, validation, Infinity];
  const partOrder = [TEST, CALIBRATION, VALIDATION, FIT];
  const unitPart = new Uint8Array(count);
  const unitPinned = new Uint8Array(count);
  if (options.pinned !== undefined) {
    for (let i = 0; i < n; i++) {
      if (options.pinned[i] === 1) unitPinned[unitOf[i]!] = 1;
    }
  }
  // Units outside the shares (each one trace): FIT_ONLY or HELD.
  const unitOutside = new Uint8Array(count);
  if (outside !== undefined) {
    for (let i = 0; i < n; i++) {
      if (outside[i] !== 0) unitOutside[unitOf[i]!] = outside[i]!;
    }
  }
  const heldTest = options.test / (options.test + options.calibration);
  const traces = [0, 0, 0, 0];
  const units = [0, 0, 0, 0];
  /** Traces inside the shares dealt to each part so far. */
  const filled = [0, 0, 0, 0];
  let at = 0;
  for (const u of order) {
    if (unitOutside[u] === UNLABELLED) {
      unitPart[u] = FIT;
      continue;
    }
    if (unitOutside[u] !== 0) {
      const part = unitOutside[u] === FIT_ONLY
        ? FIT
        : rehash(unitHashes[u]!, options.seed + 1) < heldTest
        ? TEST
        : CALIBRATION;
      unitPart[u] = part;
      traces[part]! += unitSizes[u]!;
      units[part]!++;
      continue;
    }
    while (filled[partOrder[at]!]! >= targets[at]!) at++;
    const part = unitPinned[u] === 1 ? FIT : partOrder[at]!;
    unitPart[u] = part;
    traces[part]! += unitSizes[u]!;
    filled[part]! += unitSizes[u]!;
    units[part]!++;
  }
  const parts = new Uint8Array(n);
  for (let i = 0; i < n; i++) parts[i] = unitPart[unitOf[i]!]!;
  return { mode, reason, parts, unitOf, traces, units, similarLinks };
}

/** Cosine at which a leader is taken without looking for a closer one. */
const GOOD_ENOUGH_LEADER = 0.95;

/**
 * Links traces whose texts are near-duplicates, by leader clustering: in a
 * canonical order (the texts' hashes, so the result does not depend on
 * trace order), each text joins the most similar earlier leader with cosine
 * at least `similarity`, or becomes a leader itself. Every member of a
 * cluster is that similar to its leader; unlike linking every similar pair,
 * this never chains unrelated texts into one huge cluster through
 * intermediate ones. Returns the number of texts that joined a leader.
 */
function linkNearDuplicates(
  source: SplitSource,
  representatives: readonly number[],
  keyHash: Float64Array,
  similarity: number,
  links: UnionFind,
): number {
  const order = [...representatives].sort((a, b) =>
    keyHash[a]! - keyHash[b]! || a - b
  );
  const vectors = textVectors(order.map((i) => source.texts[i]!));
  const index = new SimilarityIndex(vectors, similarity);
  let joined = 0;
  for (let r = 0; r < order.length; r++) {
    let leader = -1;
    let best = -1;
    index.query(r, (j, c) => {
      if (c > best || (c === best && j < leader)) {
        best = c;
        leader = j;
      }
      // A leader this close is the one: looking further costs more than it
      // could change.
      return c >= GOOD_ENOUGH_LEADER;
    });
    if (leader < 0) index.add(r);
    else {
      links.union(order[leader]!, order[r]!);
      joined++;
    }
  }
  return joined;
}

/** An option that only the newest traces held, and how many of its traces train. */
export interface FedOption {
  question: string;
  option: string;
  /** Its oldest traces, pinned to the fit part. */
  pinned: number;
  /** The option's traces in all. */
  traces: number;
}

/** The answers of a question, as `starvedOptions` reads them. */
export interface LabelledQuestion {
  name: string;
  options: readonly string[];
  /** Per trace, the option index (-1: unanswered). */
  labels: Int32Array;
}

/**
 * In time mode, an option that only the newest traces hold (a new product,
 * a seasonal intent) lands wholly in calibration and test, and the table
 * never learns it. This finds, in a time split, each option with fewer
 * training answers (fit and validation) than half its fair share
 * (`trainShare` of its traces), and pins its oldest traces, its fair share
 * of them, to the fit part: split again with `SplitOptions.pinned`, the
 * calibration and test parts keep their sizes and each option's newest
 * traces, out of time as before, and fill up with the next newest traces.
 * Returns the options found starved now and every trace pinned so far
 * (`pinnedBefore`, from an earlier round, and the new ones). This reads
 * answers, but only to decide which traces train.
 */
export function starvedOptions(
  split: Split,
  questions: readonly LabelledQuestion[],
  times: Float64Array,
  trainShare: number,
  pinnedBefore?: Uint8Array,
): { fed: FedOption[]; pinned: Uint8Array } {
  const fed: FedOption[] = [];
  const pinned = pinnedBefore === undefined
    ? new Uint8Array(split.parts.length)
    : Uint8Array.from(pinnedBefore);
  for (const q of questions) {
    const traces: number[][] = q.options.map(() => []);
    const trained = new Int32Array(q.options.length);
    for (let i = 0; i < q.labels.length; i++) {
      const o = q.labels[i]!;
      if (o < 0) continue;
      traces[o]!.push(i);
      if (isTrain(split.parts[i]!)) trained[o]!++;
    }
    q.options.forEach((option, o) => {
      const all = traces[o]!;
      const fair = Math.ceil(trainShare * all.length);
      if (trained[o]! >= fair / 2) return;
      all.sort((a, b) => times[a]! - times[b]! || a - b);
      for (let x = 0; x < fair; x++) pinned[all[x]!] = 1;
      fed.push({ question: q.name, option, pinned: fair, traces: all.length });
    });
  }
  return { fed, pinned };
}

/** True for the parts that train the weights (fit and validation). */
export function isTrain(part: number): boolean {
  return part === FIT || part === VALIDATION;
}

/** Fisher-Yates shuffle in place with a seeded generator. */
export function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
