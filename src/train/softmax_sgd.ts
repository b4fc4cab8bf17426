/**
 * Multinomial logistic regression on sparse rows, trained with AdaGrad.
 *
 * L2 regularisation is applied to the rows an example touches, so frequent
 * features are held back more than rare ones, and the cost of a step stays
 * proportional to the example's size.
 *
 * @module
 */

import type { TrainingLayout } from "./corpus.ts";
import { shuffle } from "./split.ts";
import { seededRandom } from "../engine/mod.ts";

/** Training settings. */
export interface SgdOptions {
  epochs: number;
  l2: number;
  learningRate: number;
  seed: number;
  /** Probability of dropping each word (with its n-grams) and each bigram at each step. */
  wordDropout: number;
  /** Options whose gradient is smaller than this in magnitude are not updated at a step. */
  minGradient: number;
  /**
   * With more options than this, most steps compute only the options that
   * matter for the example (see `trainSoftmax`); 0 always computes all.
   */
  candidates: number;
}

/**
 * Full steps (times options squared) spent on each label's first examples
 * before its rivals are trusted: 32 examples a label at 77 options, fewer
 * with more options (at least 1).
 */
export const BOOTSTRAP_WORK = 32 * 77 * 77;
/**
 * At least one visit in this many is a full step that refreshes an
 * example's options; with `k` options and `c` candidates, one in
 * `max(REFRESH_EVERY, floor(k / c))`, so that full steps cost about as much
 * as the others whatever the number of options.
 */
export const REFRESH_EVERY = 4;
/** Options below this probability at a full step are left out of the example's options. */
export const CANDIDATE_FLOOR = 0.005;

/** Weights of a trained model: `rowCount × K` row-major, and a bias per option. */
export interface SoftmaxModel {
  weights: Float32Array;
  bias: Float32Array;
}

/** Raw scores of trace `i`'s text under a model (all its entries, no dropout). */
export function logitsOf(
  model: SoftmaxModel,
  k: number,
  data: TrainingLayout,
  i: number,
  out: Float64Array,
): Float64Array {
  const { weights, bias } = model;
  const { wordStart, words, entryStart, entryRows, entryValues } = data;
  for (let j = 0; j < k; j++) out[j] = bias[j]!;
  const t = data.textOf[i]!;
  for (let x = wordStart[t]!; x < wordStart[t + 1]!; x++) {
    const w = words[x]!;
    for (let e = entryStart[w]!; e < entryStart[w + 1]!; e++) {
      const base = entryRows[e]! * k;
      const v = entryValues[e]!;
      for (let j = 0; j < k; j++) out[j]! += v * weights[base + j]!;
    }
  }
  const v = data.bigramValue;
  for (let x = data.bigramStart[t]!; x < data.bigramStart[t + 1]!; x++) {
    const r = data.bigramRows[x]!;
    if (r < 0) continue;
    for (let j = 0; j < k; j++) out[j]! += v * weights[r * k + j]!;
  }
  return out;
}

/**
 * Trains on the texts listed in `examples`, whose answers are `labels[i]`.
 * Each step drops whole words and bigrams at random (`wordDropout`) and
 * updates only the options whose gradient is at least `minGradient` (about
 * 3 of 77 on BANKING77: the main speed-up, and slightly better held-out
 * accuracy).
 *
 * With more than `candidates` options, a step works on the options that
 * matter for its example: its label and the options that had probability at
 * least `CANDIDATE_FLOOR` at the example's last full step (the most likely
 * `candidates - 1`); logits, softmax, gradients and bias updates are over
 * those only, so the cost of a step no longer grows with the number of
 * options. A full step (all options) is taken for each label's first few
 * examples (`BOOTSTRAP_WORK`), and on a share of all visits that shrinks as
 * options grow (`REFRESH_EVERY`; a hash of example and epoch decides, so the
 * random stream is untouched). An example met without a full step before
 * starts from its label's rivals (options that had a gradient above
 * `minGradient` at full steps of that label), filled up with the most
 * frequent labels. An option left out of a step keeps its weights, as the
 * gradient cut would have left it.
 *
 * `afterEpoch` is called after every epoch and may return false
 * to stop; `tick` is told the epoch and examples done now and then. The
 * weights are trained in `into` when given (zeroed first). Deterministic for
 * a seed.
 */
export function trainSoftmax(
  data: TrainingLayout,
  labels: Int32Array,
  examples: ArrayLike<number>,
  k: number,
  rowCount: number,
  options: SgdOptions,
  afterEpoch?: (epoch: number, model: SoftmaxModel) => boolean | void,
  tick?: (epoch: number, examples: number) => void,
  into?: Float32Array,
): SoftmaxModel {
  const weights = into ?? new Float32Array(rowCount * k);
  if (weights.length !== rowCount * k) {
    throw new RangeError(
      `Weights must hold ${rowCount} rows × ${k} options: got ${weights.length}`,
    );
  }
  weights.fill(0);
  const random = seededRandom(options.seed);
  const traces = Array.from(examples);
  // Shuffled example slots (the permutation the traces themselves had).
  const order = Array.from(traces, (_, slot) => slot);
  const steps = new SoftmaxSteps(data, labels, traces, k, weights, options);
  const c = options.candidates;
  const restrict = c > 0 && k > c;
  const options_ = new Options(
    restrict ? traces.length : 0,
    k,
    c,
    restrict ? frequentLabels(traces, labels, k, c) : [],
  );
  for (let epoch = 1; epoch <= options.epochs; epoch++) {
    shuffle(order, random);
    let done = 0;
    for (const slot of order) {
      if ((++done & 4095) === 0) tick?.(epoch, done);
      const i = traces[slot]!;
      const n = steps.gather(i, random);
      const y = labels[i]!;
      if (restrict && !options_.wantsFullStep(slot, y, epoch)) {
        steps.partialStep(
          n,
          y,
          options_.all,
          options_.start(slot),
          options_.count(slot),
        );
        continue;
      }
      steps.fullStep(n, y);
      if (restrict) {
        options_.learn(slot, y, steps.gradient, options.minGradient);
      }
    }
    tick?.(epoch, done);
    if (afterEpoch?.(epoch, steps.model) === false) break;
  }
  return steps.model;
}

/**
 * The state of one training run and its steps: the weights, AdaGrad's sums
 * of squared gradients, and the scratch of one example (its entries after
 * dropout, its logits and gradient).
 */
class SoftmaxSteps {
  readonly model: SoftmaxModel;
  /** After a full step: `p[j] - [j = label]`, the gradient of each option. */
  readonly gradient: Float64Array;
  readonly #sq: Float32Array;
  readonly #biasSq: Float64Array;
  readonly #logits: Float64Array;
  readonly #active: Int32Array;
  readonly #sub: Float64Array;
  /** Per kept word or bigram of the example: whether dropout kept it. */
  readonly #keep: Uint8Array;
  /** The example's kept entries: row offsets (`row * k`) and values. */
  readonly #bases: Int32Array;
  readonly #vals: Float64Array;

  constructor(
    readonly data: TrainingLayout,
    readonly labels: Int32Array,
    traces: readonly number[],
    readonly k: number,
    weights: Float32Array,
    readonly options: SgdOptions,
  ) {
    this.model = { weights, bias: new Float32Array(k) };
    this.#sq = new Float32Array(weights.length);
    this.#biasSq = new Float64Array(k);
    this.#logits = new Float64Array(k);
    this.gradient = new Float64Array(k);
    this.#active = new Int32Array(k);
    this.#sub = new Float64Array(Math.max(options.candidates, 1));
    const { textOf, wordStart, words, entryStart, bigramStart } = data;
    let maxEntries = 0;
    let maxGroups = 0;
    for (const i of traces) {
      const t = textOf[i]!;
      let entries = 0;
      for (let x = wordStart[t]!; x < wordStart[t + 1]!; x++) {
        entries += entryStart[words[x]! + 1]! - entryStart[words[x]!]!;
      }
      const groups = wordStart[t + 1]! - wordStart[t]! + bigramStart[t + 1]! -
        bigramStart[t]!;
      maxEntries = Math.max(maxEntries, entries + groups);
      maxGroups = Math.max(maxGroups, groups);
    }
    this.#keep = new Uint8Array(maxGroups);
    this.#bases = new Int32Array(maxEntries);
    this.#vals = new Float64Array(maxEntries);
  }

  /**
   * Trace `i`'s entries after dropout, into the scratch: one dropout draw
   * per word, then per bigram with a row, up to the last one with entries
   * (the text's groups in featurisation order: the draws, and so the weights
   * a seed trains, do not depend on how the entries are stored). Returns
   * their number.
   */
  gather(i: number, random: () => number): number {
    const { textOf, wordStart, words, entryStart, entryRows, entryValues } =
      this.data;
    const { bigramStart, bigramRows, bigramValue } = this.data;
    const { wordDropout } = this.options;
    const keep = this.#keep;
    const bases = this.#bases;
    const vals = this.#vals;
    const k = this.k;
    const t = textOf[i]!;
    const w0 = wordStart[t]!;
    const w1 = wordStart[t + 1]!;
    const b0 = bigramStart[t]!;
    const b1 = bigramStart[t + 1]!;
    let count = 0;
    for (let x = b1 - 1; x >= b0 && count === 0; x--) {
      if (bigramRows[x]! >= 0) {
        count = w1 - w0;
        for (let y = b0; y <= x; y++) if (bigramRows[y]! >= 0) count++;
      }
    }
    for (let x = w1 - 1; x >= w0 && count === 0; x--) {
      if (entryStart[words[x]! + 1]! > entryStart[words[x]!]!) {
        count = x - w0 + 1;
      }
    }
    const drop = wordDropout > 0 && count > 0;
    if (drop) {
      for (let d = 0; d < count; d++) {
        keep[d] = random() < wordDropout ? 0 : 1;
      }
    }
    let n = 0;
    let group = 0;
    for (let x = w0; x < w1; x++, group++) {
      if (drop && keep[group] === 0) continue;
      const w = words[x]!;
      for (let e = entryStart[w]!; e < entryStart[w + 1]!; e++) {
        bases[n] = entryRows[e]! * k;
        vals[n] = entryValues[e]!;
        n++;
      }
    }
    for (let x = b0; x < b1; x++) {
      const r = bigramRows[x]!;
      if (r < 0) continue;
      if (drop && keep[group++] === 0) continue;
      bases[n] = r * k;
      vals[n] = bigramValue;
      n++;
    }
    return n;
  }

  /**
   * A step on the `m` options that matter for the example (`opts[o ..
   * o + m)`, its label `y` among them): logits, softmax, gradients and bias
   * updates over those only.
   */
  partialStep(
    n: number,
    y: number,
    opts: Uint16Array,
    o: number,
    m: number,
  ): void {
    const { weights, bias } = this.model;
    const { l2, learningRate: lr, minGradient } = this.options;
    const sub = this.#sub;
    const active = this.#active;
    const bases = this.#bases;
    const vals = this.#vals;
    const sq = this.#sq;
    const biasSq = this.#biasSq;
    for (let a = 0; a < m; a++) sub[a] = bias[opts[o + a]!]!;
    for (let t = 0; t < n; t++) {
      const base = bases[t]!;
      const v = vals[t]!;
      for (let a = 0; a < m; a++) {
        sub[a]! += v * weights[base + opts[o + a]!]!;
      }
    }
    let max = -Infinity;
    for (let a = 0; a < m; a++) if (sub[a]! > max) max = sub[a]!;
    let sum = 0;
    for (let a = 0; a < m; a++) {
      const e = Math.exp(sub[a]! - max);
      sub[a] = e;
      sum += e;
    }
    let na = 0;
    for (let a = 0; a < m; a++) {
      const ga = sub[a]! / sum - (opts[o + a] === y ? 1 : 0);
      sub[a] = ga;
      if (ga > minGradient || ga < -minGradient) active[na++] = a;
    }
    for (let t = 0; t < n; t++) {
      const base = bases[t]!;
      const v = vals[t]!;
      for (let b = 0; b < na; b++) {
        const a = active[b]!;
        const at = base + opts[o + a]!;
        const w = weights[at]!;
        const grad = v * sub[a]! + l2 * w;
        const s = sq[at]! + grad * grad;
        sq[at] = s;
        weights[at] = w - lr * grad / Math.sqrt(s + EPS);
      }
    }
    for (let a = 0; a < m; a++) {
      const j = opts[o + a]!;
      const grad = sub[a]!;
      biasSq[j]! += grad * grad;
      bias[j]! -= lr * grad / Math.sqrt(biasSq[j]! + EPS);
    }
  }

  /** A step on every option; leaves each option's gradient in `gradient`. */
  fullStep(n: number, y: number): void {
    const { weights, bias } = this.model;
    const { l2, learningRate: lr, minGradient } = this.options;
    const k = this.k;
    const logits = this.#logits;
    const g = this.gradient;
    const active = this.#active;
    const bases = this.#bases;
    const vals = this.#vals;
    const sq = this.#sq;
    const biasSq = this.#biasSq;
    for (let j = 0; j < k; j++) logits[j] = bias[j]!;
    for (let t = 0; t < n; t++) {
      const base = bases[t]!;
      const v = vals[t]!;
      for (let j = 0; j < k; j++) logits[j]! += v * weights[base + j]!;
    }
    let max = -Infinity;
    for (let j = 0; j < k; j++) if (logits[j]! > max) max = logits[j]!;
    let sum = 0;
    for (let j = 0; j < k; j++) {
      const e = Math.exp(logits[j]! - max);
      g[j] = e;
      sum += e;
    }
    let na = 0;
    for (let j = 0; j < k; j++) {
      const gj = g[j]! / sum - (j === y ? 1 : 0);
      g[j] = gj;
      if (gj > minGradient || gj < -minGradient) active[na++] = j;
    }
    for (let t = 0; t < n; t++) {
      const base = bases[t]!;
      const v = vals[t]!;
      for (let a = 0; a < na; a++) {
        const j = active[a]!;
        const at = base + j;
        const w = weights[at]!;
        const grad = v * g[j]! + l2 * w;
        const s = sq[at]! + grad * grad;
        sq[at] = s;
        weights[at] = w - lr * grad / Math.sqrt(s + EPS);
      }
    }
    for (let j = 0; j < k; j++) {
      const grad = g[j]!;
      biasSq[j]! += grad * grad;
      bias[j]! -= lr * grad / Math.sqrt(biasSq[j]! + EPS);
    }
  }
}

/** AdaGrad's floor under the square root. */
const EPS = 1e-8;

/**
 * Per example, the options that matter (its label first); per label, its
 * rivals (most recent first). See `trainSoftmax`.
 */
class Options {
  #of: Uint16Array;
  #count: Uint8Array;
  #rivals: Uint16Array;
  #rivalCount: Uint8Array;
  #fullSteps: Int32Array;
  #probs: Float64Array;
  #bootstrap: number;
  #period: number;
  constructor(
    examples: number,
    private k: number,
    private c: number,
    private frequent: readonly number[],
  ) {
    this.#of = new Uint16Array(examples * c);
    this.#count = new Uint8Array(examples);
    this.#rivals = new Uint16Array(examples > 0 ? k * c : 0);
    this.#rivalCount = new Uint8Array(examples > 0 ? k : 0);
    this.#fullSteps = new Int32Array(examples > 0 ? k : 0);
    this.#probs = new Float64Array(c);
    this.#bootstrap = Math.max(
      1,
      Math.min(32, Math.floor(BOOTSTRAP_WORK / (k * k))),
    );
    this.#period = Math.max(REFRESH_EVERY, Math.floor(k / c));
    if (examples > 0 && k > 0xffff) {
      throw new RangeError(
        `At most 65535 options can be trained with candidate options: got ${k}`,
      );
    }
  }

  /** Whether the example's step must see every option; else seeds its options when new. */
  wantsFullStep(slot: number, label: number, epoch: number): boolean {
    const fresh = this.#count[slot] === 0;
    if (fresh && this.#fullSteps[label]! < this.#bootstrap) {
      this.#fullSteps[label]!++;
      return true;
    }
    let h = Math.imul(slot ^ Math.imul(epoch, 0x9e3779b1), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    if ((h >>> 0) % this.#period === 0) return true;
    if (fresh) {
      // The label, its rivals, then the most frequent labels.
      const c = this.c;
      const of = this.#of;
      const base = slot * c;
      of[base] = label;
      let n = 1;
      const r = this.#rivalCount[label]!;
      for (let x = 0; x < r; x++) of[base + n++] = this.#rivals[label * c + x]!;
      for (let x = 0; x < this.frequent.length && n < c; x++) {
        const j = this.frequent[x]!;
        let known = false;
        for (let y = 0; y < n && !known; y++) known = of[base + y] === j;
        if (!known) of[base + n++] = j;
      }
      this.#count[slot] = n;
    }
    return false;
  }

  /** Every example's options: example `slot`'s are `count(slot)` from `start(slot)`. */
  get all(): Uint16Array {
    return this.#of;
  }

  start(slot: number): number {
    return slot * this.c;
  }

  count(slot: number): number {
    return this.#count[slot]!;
  }

  /**
   * After a full step: the example's options become its label and its most
   * likely options above the floor; options above `minGradient` join the
   * label's rivals. `g[j]` is the gradient `p[j] - [j = label]`.
   */
  learn(slot: number, label: number, g: Float64Array, minGradient: number) {
    const c = this.c;
    const of = this.#of;
    const probs = this.#probs;
    const base = slot * c;
    of[base] = label;
    let n = 1;
    for (let j = 0; j < this.k; j++) {
      if (j === label) continue;
      const p = g[j]!;
      if (p < CANDIDATE_FLOOR || (n === c && p <= probs[n - 1]!)) continue;
      // Insert in descending order of probability; the last falls off when full.
      let at = n === c ? n - 1 : n++;
      while (at > 1 && probs[at - 1]! < p) {
        probs[at] = probs[at - 1]!;
        of[base + at] = of[base + at - 1]!;
        at--;
      }
      probs[at] = p;
      of[base + at] = j;
      if (p > minGradient) this.#addRival(label, j);
    }
    this.#count[slot] = n;
  }

  #addRival(label: number, j: number): void {
    const c = this.c;
    const rivals = this.#rivals;
    const base = label * c;
    let n = this.#rivalCount[label]!;
    let at = 0;
    while (at < n && rivals[base + at] !== j) at++;
    if (at === n) {
      if (n < c - 1) this.#rivalCount[label] = ++n;
      at = n - 1;
    }
    for (; at > 0; at--) rivals[base + at] = rivals[base + at - 1]!;
    rivals[base] = j;
  }
}

/** The `c` labels most frequent among the examples, most frequent first. */
function frequentLabels(
  traces: readonly number[],
  labels: Int32Array,
  k: number,
  c: number,
): number[] {
  const counts = new Int32Array(k);
  for (const i of traces) counts[labels[i]!]!++;
  return Array.from(counts.keys())
    .sort((a, b) => counts[b]! - counts[a]! || a - b)
    .slice(0, c);
}
