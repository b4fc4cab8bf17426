/**
 * What would help an uncalibrated question of a learning service, in its
 * own terms: labels (what the proxy sends back), never traces, and no flag
 * the running command lacks; a range that narrows as retrains read it
 * again rather than one that jumps; and a time at the pace the labels come.
 *
 * Each retrain's learning curve gives a range of labels still needed (the
 * 80% range of `train`'s advice). A range met again later is first moved by
 * the labels that came since (a range of 1,900-2,600 more, read 300 labels
 * ago, stands for 1,600-2,300 now); where the new range overlaps it, the
 * overlap is kept (both are estimates of one quantity), and where it does
 * not, or when the labels the older one asked for have all come, the new
 * range replaces it (the curve changed its mind, and the reply says the
 * older estimate is gone rather than averaging them).
 *
 * @module
 */

/** A range of labels still needed; `hi` is Infinity for "over `lo`". */
export interface LabelRange {
  lo: number;
  hi: number;
}

/**
 * The range of labels still needed that `train`'s advice for an
 * uncalibrated question gives (its "about N more (A-B)" or "(A to over
 * B)"), or null when the advice gives none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { labelsNeeded } from "./advice.ts";
 * assert.deepEqual(
 *   labelsNeeded("...; needs about 4,200 traces answering it in all (80% range 2,900-7,800), about 3,700 more (2,400-7,300), of ..."),
 *   { lo: 2400, hi: 7300 },
 * );
 * assert.deepEqual(labelsNeeded("... about 900 more (600 to over 9,000), ..."), { lo: 600, hi: Infinity });
 * assert.equal(labelsNeeded("more of the same would not help"), null);
 * ```
 */
export function labelsNeeded(advice: string | null): LabelRange | null {
  if (advice === null || /would not help/.test(advice)) return null;
  const n = (s: string) => Number(s.replace(/,/g, ""));
  const range = /about [\d,]+ more \(([\d,]+)(?:-| to )(over )?([\d,]+)\)/
    .exec(advice);
  if (range !== null) {
    return { lo: n(range[1]!), hi: range[2] ? Infinity : n(range[3]!) };
  }
  const over = /\(over ([\d,]+) more\)/.exec(advice)?.[1];
  if (over !== undefined) return { lo: n(over), hi: Infinity };
  return null;
}

/**
 * Labels per second, over the labels of the last `windowMs` (a minute by
 * default): the pace a time estimate is read at.
 */
export class LabelPace {
  readonly #windowMs: number;
  readonly #times: number[] = [];

  /** A pace over the labels of the last `windowMs`. */
  constructor(windowMs = 60_000) {
    this.#windowMs = windowMs;
  }

  /** Counts one label at `now` (ms). */
  count(now: number): void {
    this.#times.push(now);
    this.#drop(now);
  }

  /** Labels per second at `now`; 0 before two labels. */
  perSecond(now: number): number {
    this.#drop(now);
    const t = this.#times;
    if (t.length < 2) return 0;
    const span = Math.max(now - t[0]!, 1000);
    return t.length / (span / 1000);
  }

  #drop(now: number): void {
    const t = this.#times;
    let cut = 0;
    while (cut < t.length && t[cut]! < now - this.#windowMs) cut++;
    // Kept bounded: at most one label a millisecond is worth keeping.
    if (t.length - cut > 60_000) cut = t.length - 60_000;
    if (cut > 0) t.splice(0, cut);
  }
}

/** A range with an open end: `high` null for "over `low`". */
export interface Span {
  low: number;
  high: number | null;
}

/** What a question needs now, as `/v1/stats` shows it. */
export interface QuestionNeed {
  /** Labels still needed, by the learning curve; high null for "over low". */
  more_labels: Span;
  /** At the pace the labels come now, in minutes (high null when unbounded); null before a pace. */
  minutes: Span | null;
  /** The pace the minutes are read at, labels a second. */
  labels_per_s: number;
  /** True when the last retrain's range did not overlap the one before (the estimate moved). */
  moved: boolean;
}

/** The ranges of labels each uncalibrated question needs, narrowed as retrains read them again. */
export class LabelNeeds {
  readonly #needs = new Map<
    string,
    { range: LabelRange; at: number; moved: boolean }
  >();

  /**
   * Takes a retrain's `range` for `question`, read at `labels` (null: the
   * question is calibrated now, or the curve gives no range).
   */
  update(question: string, range: LabelRange | null, labels: number): void {
    if (range === null) {
      this.#needs.delete(question);
      return;
    }
    const before = this.#needs.get(question);
    if (before === undefined) {
      this.#needs.set(question, { range, at: labels, moved: false });
      return;
    }
    const since = Math.max(0, labels - before.at);
    const lo = Math.max(0, before.range.lo - since);
    const hi = Math.max(0, before.range.hi - since);
    const overlap = { lo: Math.max(lo, range.lo), hi: Math.min(hi, range.hi) };
    // A range whose labels all came without a calibration is used up.
    const kept = hi > 0 && overlap.lo <= overlap.hi && overlap.hi > 0;
    this.#needs.set(
      question,
      kept
        ? { range: overlap, at: labels, moved: false }
        : { range, at: labels, moved: true },
    );
  }

  /** Forgets every question but those in `keep` (the others are calibrated or gone). */
  keep(keep: ReadonlySet<string>): void {
    for (const q of [...this.#needs.keys()]) {
      if (!keep.has(q)) this.#needs.delete(q);
    }
  }

  /** Each question's need at `labels` labels, with times at `perSecond` labels a second. */
  view(labels: number, perSecond: number): Record<string, QuestionNeed> {
    const out: Record<string, QuestionNeed> = {};
    for (const [q, n] of this.#needs) {
      const since = Math.max(0, labels - n.at);
      const lo = Math.max(0, Math.round(n.range.lo - since));
      const hi = n.range.hi === Infinity
        ? null
        : Math.max(lo, Math.round(n.range.hi - since));
      const minutes = (x: number) => Math.ceil(x / perSecond / 60);
      out[q] = {
        more_labels: { low: lo, high: hi },
        minutes: perSecond > 0
          ? { low: minutes(lo), high: hi === null ? null : minutes(hi) }
          : null,
        labels_per_s: Math.round(perSecond * 100) / 100,
        moved: n.moved,
      };
    }
    return out;
  }
}

/**
 * A question's need in words: "about 1,900-2,600 more labels, about 6-9
 * minutes at 5 labels a second".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { needInWords } from "./advice.ts";
 * assert.equal(
 *   needInWords({ more_labels: { low: 1900, high: 2600 }, minutes: { low: 7, high: 9 }, labels_per_s: 5, moved: false }),
 *   "about 1,900-2,600 more labels (learning curve), about 7-9 minutes at 5 labels a second",
 * );
 * ```
 */
export function needInWords(n: QuestionNeed): string {
  const c = (x: number) => x.toLocaleString("en-US");
  const { low: lo, high: hi } = n.more_labels;
  if (hi === 0) {
    return "the labels the learning curve last asked for have come; the next retrain reads it again";
  }
  const labels = hi === null
    ? `over ${c(lo)} more labels`
    : `about ${c(lo)}-${c(hi)} more labels`;
  const time = n.minutes === null
    ? ""
    : `, ${
      n.minutes.high === null
        ? `over ${c(n.minutes.low)}`
        : n.minutes.low === n.minutes.high
        ? `about ${c(n.minutes.low)}`
        : `about ${c(n.minutes.low)}-${c(n.minutes.high)}`
    } ${
      (n.minutes.high ?? n.minutes.low) === 1 ? "minute" : "minutes"
    } at ${n.labels_per_s} labels a second`;
  return `${labels} (learning curve)${time}${
    n.moved ? "; the estimate moved since the last retrain" : ""
  }`;
}
