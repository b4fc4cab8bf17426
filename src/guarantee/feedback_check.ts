/**
 * Feedback checked against what the bundle knows: calibration measured how
 * often the table disagrees with the model in each confidence band, and
 * live feedback that claims far less disagreement than that (an echoing
 * proxy) or far more (a lying proxy, or a model that changed) is evidence
 * about the feedback, not about the table.
 *
 * **Bands.** A question's bands are the intervals between its live
 * candidate thresholds (`liveGrid`, strictest first): band `j` holds the
 * confidences in `[t_j, t_{j-1})` (`t_{-1} = +inf`), the ones whose
 * strictest candidate is `j`. The threshold in force is always a candidate,
 * so at any moment a band lies wholly above it (its answers certified,
 * audited with probability R) or wholly below (uncertified, all reported):
 * the labelled answers of a band are a fair sample of the band's answers,
 * whatever the threshold did. Training counts, per band, the calibration
 * answers the calibration test counted (those the out-of-scope rule
 * withholds left out) and their disagreements (`calibrationBands`); the
 * edges are the candidates, fixed before any calibration label was read.
 *
 * **Null bounds.** At load, per band, one-sided Clopper-Pearson bounds
 * `q_b <= p_b <= u_b` of the band's disagreement rate, each at level
 * `CALIBRATION_DELTA / (2B)` (Bonferroni over both sides of every band):
 * with live traffic exchangeable with the calibration traffic, all hold
 * together with probability at least `1 - CALIBRATION_DELTA`.
 *
 * **Two regions per test.** A proxy may treat the audits and the
 * uncertified answers differently (a plausible bug: audits answered from a
 * cache of the table's choices, feedback from the model; or an attack: a
 * wrong option on every audit, the rest honest), so each test is run per
 * region and a region's honest answers never dilute another's:
 * - the echo test's regions are fixed at load by the bundle's threshold:
 *   the *audited* region (bands at or above it: the answers the bundle
 *   certifies, whose labels are audits while the bundle's threshold is in
 *   force) and the *reported* region (bands below it);
 * - the liar test's regions are the labels' sources: *audits* (answers
 *   certified when served, sampled at random) and *reported* answers
 *   (feedback on answers uncertified when served). Not bands: once lies
 *   on audits have moved the threshold stricter, the bands between the
 *   bundle's threshold and the new one are uncertified and reported in
 *   full, and their honest agreements, counted in a band region, would bury
 *   the lies (in simulation the liar was then never named). Every label of
 *   band `b` has the same null bound whatever its source, so the split
 *   keeps each region's capital a supermartingale.
 *
 * **Two tests by betting** on the labelled answers (audits, and feedback on
 * answers uncertified for the threshold only), each in the band of its
 * confidence, as mixtures over fixed fractions `f`:
 * - *agrees too much* (H0: each band's live rate is at least `q_b`): per
 *   region, an agreement multiplies that region's capital by
 *   `1 + f q_b / (1 - q_b)`, a disagreement by `1 - f`; the test's capital
 *   is the mean of the two regions' capitals (a region without bands
 *   stays at 1);
 * - *disagrees too much* (H0: at most `u_b`): per region, an agreement by
 *   `1 - f`, a disagreement by `1 + f (1 - u_b) / u_b`; the test's capital
 *   is `AUDIT_WEIGHT` (0.9) times the audits' capital plus 0.1 times the
 *   reported answers'.
 * Under H0 each factor has mean at most 1 given the past, so each region's
 * capital and any weighted mean of the two are nonnegative supermartingales
 * starting at 1 and, by Ville's inequality, each test's ever reaches
 * `1 / VILLE_DELTA` with probability at most `VILLE_DELTA`. The weights are
 * how a test's `VILLE_DELTA` is shared by its regions, as a Bonferroni split
 * would share it (`w VILLE_DELTA` and `(1 - w) VILLE_DELTA`), and never
 * weaker: one region alone must reach `1 / (w VILLE_DELTA)`, both together
 * less. The echo test weighs its regions equally (either one echoed is as
 * bad); the liar test gives the audits 0.9, since lies on audits are what
 * move a threshold stricter or withdraw a question (reported answers
 * count only for candidates more lenient than the one in force), so a lone
 * liar on audits needs a capital of 444 rather than 400, and one on the
 * reported answers 4,000.
 *
 * **The leniency gate's power condition** asks, per region, that the
 * region's capital had every labelled answer in it agreed is at least
 * `2 / VILLE_DELTA`. A proxy that echoes a whole region (every answer in
 * it reported as agreeing) makes that region's capital exactly that, so
 * the mean reaches `1 / VILLE_DELTA` and the alarm rises on the very
 * answers that gave the power: an echo of the audits, of the feedback, or
 * of both can never pass the gate. The alarm of a
 * question is raised, then, with probability at most `FEEDBACK_ALARM_RATE
 * = CALIBRATION_DELTA + 2 VILLE_DELTA` (1%) over the whole life of its
 * evidence, on an honest proxy and exchangeable traffic. With fixed
 * fractions a capital depends only on each band's counts of labelled
 * answers and disagreements, by source (`BandCounts`), which the live
 * evidence keeps per candidate (and a fleet pools).
 *
 * Pure: no I/O, no clock.
 *
 * @module
 */

import { clopperPearsonBounds } from "./distributions.ts";

/** One band of a question's calibration answers (see the module doc). */
export interface CalibrationBand {
  /** The band's lower edge: a live candidate threshold (the band reaches up to the next stricter one). */
  lower: number;
  /** Calibration answers whose confidence falls in the band. */
  answers: number;
  /** Those where the table's answer was not the model's. */
  disagreements: number;
  /**
   * Kish's effective number of the band's answers when answers of one unit
   * (a cluster or group of the split) are not independent; absent when
   * they all are. The bounds count the band as this many answers.
   */
  effective?: number;
}

/** Probability that one of a question's calibration bounds fails. */
export const CALIBRATION_DELTA = 0.005;
/** Probability that one test's capital ever reaches its bar under its null (Ville). */
export const VILLE_DELTA = 0.0025;
/** The false-alarm rate per question, both alarms together. */
export const FEEDBACK_ALARM_RATE = CALIBRATION_DELTA + 2 * VILLE_DELTA;
/**
 * The share of the disagrees-too-much test's capital (and so of its
 * level) on the audits, the rest on the reported answers: lies on audits
 * are the ones that move a threshold stricter or withdraw a question.
 */
export const AUDIT_WEIGHT = 0.9;
/** Bet fractions of both mixtures. */
const FRACTIONS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9];

/** Alarm bits, as a live policy latches them. */
export const AGREES_TOO_MUCH = 1;
export const DISAGREES_TOO_MUCH = 2;

/**
 * The bands of a question's calibration answers over the live candidate
 * thresholds `thresholds` (strictest first): per candidate, the answers
 * whose confidence reaches it but not the next stricter one. A confidence
 * below every candidate (or negative: withheld by the out-of-scope rule)
 * is in no band.
 */
export function calibrationBands(
  confidences: ArrayLike<number>,
  wrong: ArrayLike<number>,
  thresholds: readonly number[],
  units?: ArrayLike<number>,
): CalibrationBand[] {
  const bands: CalibrationBand[] = thresholds.map((lower) => ({
    lower,
    answers: 0,
    disagreements: 0,
  }));
  const perUnit = thresholds.map(() => new Map<number, number>());
  for (let i = 0; i < confidences.length; i++) {
    const c = confidences[i]!;
    if (c < 0) continue;
    const j = thresholds.findIndex((t) => t <= c);
    if (j < 0) continue;
    bands[j]!.answers++;
    if (wrong[i]) bands[j]!.disagreements++;
    if (units !== undefined) {
      const m = perUnit[j]!;
      m.set(units[i]!, (m.get(units[i]!) ?? 0) + 1);
    }
  }
  if (units !== undefined) {
    bands.forEach((b, j) => {
      let squares = 0;
      for (const n of perUnit[j]!.values()) squares += n * n;
      // Kish: as many independent answers as n^2 / sum of squared unit sizes.
      if (squares > b.answers) b.effective = (b.answers * b.answers) / squares;
    });
  }
  return bands;
}

/**
 * A question's labelled answers per band (strictest first), as the live
 * evidence counts them.
 */
export interface BandCounts {
  /** Labelled answers (audits and reported feedback). */
  labelled: ArrayLike<number>;
  /** Those that disagreed. */
  disagreed: ArrayLike<number>;
  /** Audits among the labelled answers; absent: none (all reported). */
  audits?: ArrayLike<number>;
  /** Audits that disagreed; absent: none. */
  auditDisagreed?: ArrayLike<number>;
}

/** Where the disagrees-too-much evidence lies: the audits, the reported (uncertified) answers, or both. */
export type DisagreeRegion = "audits" | "reported" | "both";

/** What the check says about a question's feedback so far. */
export interface FeedbackCheckState {
  /** Latched alarms (until a reset or a new bundle). */
  agreesTooMuch: boolean;
  disagreesTooMuch: boolean;
  /** Log capitals of the two tests now, and the bar an alarm needs (`ln(1 / VILLE_DELTA)`). */
  agreeLogCapital: number;
  disagreeLogCapital: number;
  logBar: number;
  /** Labelled answers in the bands, and how many disagreed. */
  labelled: number;
  disagreed: number;
  /** Disagreements calibration would expect on those answers (each band's calibration rate). */
  expected: number;
  /** The least and most disagreements the null bounds allow on them. */
  expectedLow: number;
  expectedHigh: number;
  /** Per region (audited, reported): its log capital of the agrees-too-much test now, and had every labelled answer in it agreed. */
  agreeRegionLogCapitals: [number, number];
  echoRegionLogCapitals: [number, number];
  /** The bar each region's all-agreed capital must reach for the gate (`ln(2 / VILLE_DELTA)`). */
  regionLogBar: number;
  /** True once an echo of either region would have raised the alarm (the leniency gate's first condition). */
  echoPowered: boolean;
  /** Per region of the disagrees-too-much test (audits, reported): its log capital now. */
  disagreeRegionLogCapitals: [number, number];
  /** Audits among the labelled answers, and how many disagreed. */
  audits: number;
  auditDisagreed: number;
  /**
   * While the disagrees-too-much alarm stands, where its evidence lies
   * now: each region whose weighed capital alone reaches the bar, or else
   * the larger one (the evidence faded since); null without that alarm.
   */
  disagreeRegion: DisagreeRegion | null;
}

/** The check of one question (see the module doc), with its log factors precomputed. */
export class FeedbackCheck {
  readonly bands: readonly CalibrationBand[];
  /** Bands `[0, split)` form the audited region (at or above the bundle's threshold), `[split, B)` the reported one. */
  readonly split: number;
  /** Per band, the null bounds. */
  readonly lower: Float64Array;
  readonly upper: Float64Array;
  /** `f * B + b`: log factor of an agreement in band b (agrees-too-much test). */
  readonly #agreeA: Float64Array;
  /** `f * B + b`: log factor of a disagreement in band b (disagrees-too-much test). */
  readonly #disagreeD: Float64Array;
  /** `ln(1 - f)` per fraction. */
  readonly #loss: Float64Array;
  readonly #logs: Float64Array;
  /** Scratch of the disagrees-too-much test: per band, disagreements on audits and on reported answers. */
  readonly #auditD: Float64Array;
  readonly #reportedD: Float64Array;
  readonly logBar = Math.log(1 / VILLE_DELTA);
  readonly regionLogBar = Math.log(2 / VILLE_DELTA);

  /**
   * A check over `bands`, which must match the live candidates
   * `thresholds` edge for edge, for a bundle whose threshold is `bundle`
   * (one of them: it splits the regions). Throws `RangeError` when the
   * bands do not match, when `bundle` is not a candidate, or when a count
   * is not a whole number with `disagreements <= answers`.
   */
  constructor(
    bands: readonly CalibrationBand[],
    thresholds: readonly number[],
    bundle: number,
  ) {
    if (
      bands.length !== thresholds.length ||
      bands.some((b, j) => Math.abs(b.lower - thresholds[j]!) > 1e-9)
    ) {
      throw new RangeError(
        `Calibration bands (${bands.length}, edges ${
          bands.map((b) => b.lower.toFixed(4)).join(" ")
        }) do not match the live candidates (${thresholds.length})`,
      );
    }
    for (const b of bands) {
      if (
        !Number.isInteger(b.answers) || !Number.isInteger(b.disagreements) ||
        b.answers < 0 || b.disagreements < 0 ||
        b.disagreements > b.answers ||
        (b.effective !== undefined &&
          !(b.effective > 0 && b.effective <= b.answers))
      ) {
        throw new RangeError(
          `A calibration band needs whole counts with 0 <= disagreements <= answers: got ${
            JSON.stringify(b)
          }`,
        );
      }
    }
    const at = thresholds.indexOf(bundle);
    if (at < 0) {
      throw new RangeError(
        `The bundle's threshold ${bundle} is not a live candidate (${
          thresholds.map((t) => t.toFixed(4)).join(" ")
        })`,
      );
    }
    this.bands = bands;
    this.split = at + 1;
    const nb = bands.length;
    const gamma = CALIBRATION_DELTA / (2 * Math.max(1, nb));
    this.lower = new Float64Array(nb);
    this.upper = new Float64Array(nb);
    bands.forEach((b, j) => {
      // Clustered answers count as their effective number, the
      // disagreements scaled alike (as the calibration test counts them).
      const n = b.effective ?? b.answers;
      const k = b.answers === 0 ? 0 : (b.disagreements * n) / b.answers;
      const { lower, upper } = clopperPearsonBounds(k, n, gamma);
      this.lower[j] = lower;
      this.upper[j] = upper;
    });
    this.#agreeA = new Float64Array(FRACTIONS.length * nb);
    this.#disagreeD = new Float64Array(FRACTIONS.length * nb);
    this.#loss = Float64Array.from(FRACTIONS, (f) => Math.log1p(-f));
    FRACTIONS.forEach((f, i) => {
      for (let j = 0; j < nb; j++) {
        const q = this.lower[j]!;
        const u = this.upper[j]!;
        this.#agreeA[i * nb + j] = Math.log1p((f * q) / (1 - q));
        this.#disagreeD[i * nb + j] = u >= 1
          ? 0
          : Math.log1p((f * (1 - u)) / u);
      }
    });
    this.#logs = new Float64Array(2 * FRACTIONS.length);
    this.#auditD = new Float64Array(nb);
    this.#reportedD = new Float64Array(nb);
  }

  /**
   * Whether the mean capital over the fractions (logs in `#logs`) reaches
   * log `bar`; the mean lies between max / count and max, so most calls
   * need no exponential.
   */
  #reaches(bar: number, from: number, count: number): boolean {
    const logs = this.#logs;
    let max = -Infinity;
    for (let i = from; i < from + count; i++) {
      if (logs[i]! > max) max = logs[i]!;
    }
    if (max < bar) return false;
    if (max - Math.log(count) >= bar) return true;
    return this.#mix(from, count) >= bar;
  }

  /** Log of the mean capital over `count` entries of `#logs` from `from`. */
  #mix(from: number, count: number): number {
    const logs = this.#logs;
    let max = -Infinity;
    for (let i = from; i < from + count; i++) {
      if (logs[i]! > max) max = logs[i]!;
    }
    if (max === -Infinity) return max;
    let sum = 0;
    for (let i = from; i < from + count; i++) sum += Math.exp(logs[i]! - max);
    return max + Math.log(sum / count);
  }

  /**
   * Log capital of the agrees-too-much test (the mean of both regions'
   * capitals) over per-band counts; with `echo`, as if every labelled
   * answer had agreed (what a pure echo would have reached).
   */
  agreeLog(counts: BandCounts, echo = false): number {
    this.#fillAgree(counts, echo);
    return this.#mix(0, 2 * FRACTIONS.length);
  }

  /**
   * Log capital of one region's agrees-too-much test (0: audited, 1:
   * reported) over the same counts; with `echo`, had every labelled answer
   * in it agreed.
   */
  agreeRegionLog(region: 0 | 1, counts: BandCounts, echo = false): number {
    this.#fillAgree(counts, echo);
    return this.#mix(region * FRACTIONS.length, FRACTIONS.length);
  }

  /** Fills `#logs` with the audited region's log capitals per fraction, then the reported region's. */
  #fillAgree(counts: BandCounts, echo: boolean): void {
    const { labelled, disagreed } = counts;
    const nb = this.bands.length;
    const nf = FRACTIONS.length;
    for (let r = 0; r < 2; r++) {
      const from = r === 0 ? 0 : this.split;
      const to = r === 0 ? this.split : nb;
      for (let i = 0; i < nf; i++) {
        let l = 0;
        let d = 0;
        for (let j = from; j < to; j++) {
          const dj = echo ? 0 : disagreed[j]!;
          l += (labelled[j]! - dj) * this.#agreeA[i * nb + j]!;
          d += dj;
        }
        this.#logs[r * nf + i] = l + (d === 0 ? 0 : d * this.#loss[i]!);
      }
    }
  }

  /** Log capital of the disagrees-too-much test (the regions' capitals weighed `AUDIT_WEIGHT` and the rest) over the same counts. */
  disagreeLog(counts: BandCounts): number {
    this.#fillDisagree(counts);
    return this.#weighed();
  }

  /** The disagrees-too-much test's log capital from the regions' logs in `#logs`. */
  #weighed(): number {
    const nf = FRACTIONS.length;
    const a = Math.log(AUDIT_WEIGHT) + this.#mix(0, nf);
    const r = Math.log(1 - AUDIT_WEIGHT) + this.#mix(nf, nf);
    const max = Math.max(a, r);
    if (max === -Infinity) return max;
    return max + Math.log(Math.exp(a - max) + Math.exp(r - max));
  }

  /** Log capital of one region's disagrees-too-much test (0: audits, 1: reported) over the same counts. */
  disagreeRegionLog(region: 0 | 1, counts: BandCounts): number {
    this.#fillDisagree(counts);
    return this.#mix(region * FRACTIONS.length, FRACTIONS.length);
  }

  /** Fills `#logs` with the audits' log capitals per fraction of the disagrees-too-much test, then the reported answers'. */
  #fillDisagree(counts: BandCounts): void {
    const { labelled, disagreed, audits, auditDisagreed } = counts;
    const nb = this.bands.length;
    const nf = FRACTIONS.length;
    // Per band, the disagreements of each region; the agreements of a
    // region all weigh ln(1 - f), whatever their band.
    const da = this.#auditD;
    const dr = this.#reportedD;
    let agreedA = 0;
    let agreedR = 0;
    for (let j = 0; j < nb; j++) {
      const la = audits?.[j] ?? 0;
      const dj = auditDisagreed?.[j] ?? 0;
      da[j] = dj;
      dr[j] = disagreed[j]! - dj;
      agreedA += la - dj;
      agreedR += labelled[j]! - la - dr[j]!;
    }
    const logs = this.#logs;
    for (let i = 0; i < nf; i++) {
      let a = 0;
      let r = 0;
      for (let j = 0; j < nb; j++) {
        const d = this.#disagreeD[i * nb + j]!;
        a += da[j]! * d;
        r += dr[j]! * d;
      }
      const loss = this.#loss[i]!;
      logs[i] = a + (agreedA === 0 ? 0 : agreedA * loss);
      logs[nf + i] = r + (agreedR === 0 ? 0 : agreedR * loss);
    }
  }

  /**
   * The alarms the counts raise now with those `latched` already
   * (`AGREES_TOO_MUCH | DISAGREES_TOO_MUCH` bits), and, while none stands,
   * whether an echo of either region would have been caught on as many
   * labelled answers (each region's all-agreed capital at least
   * `2 / VILLE_DELTA`; false when an alarm stands).
   */
  evaluate(
    counts: BandCounts,
    latched = 0,
  ): { alarms: number; echoPowered: boolean } {
    const bar = this.logBar;
    const nf = FRACTIONS.length;
    let alarms = latched;
    // A latched alarm needs no test; the echo's power matters only while
    // no alarm stands (the leniency gate needs both).
    if ((alarms & AGREES_TOO_MUCH) === 0) {
      this.#fillAgree(counts, false);
      if (this.#reaches(bar, 0, 2 * nf)) alarms |= AGREES_TOO_MUCH;
    }
    if ((alarms & DISAGREES_TOO_MUCH) === 0) {
      this.#fillDisagree(counts);
      // The weighed capital is at most the largest of the logs: most calls
      // need no exponential.
      let max = -Infinity;
      for (let i = 0; i < 2 * nf; i++) {
        if (this.#logs[i]! > max) max = this.#logs[i]!;
      }
      if (max >= bar && this.#weighed() >= bar) alarms |= DISAGREES_TOO_MUCH;
    }
    let echoPowered = false;
    if (alarms === 0) {
      this.#fillAgree(counts, true);
      echoPowered = this.#reaches(this.regionLogBar, 0, nf) &&
        this.#reaches(this.regionLogBar, nf, nf);
    }
    return { alarms, echoPowered };
  }

  /** The figures of the check over the counts, with latched `alarms`. */
  state(counts: BandCounts, alarms: number): FeedbackCheckState {
    const { labelled, disagreed } = counts;
    let n = 0;
    let d = 0;
    let na = 0;
    let da = 0;
    let expected = 0;
    let low = 0;
    let high = 0;
    this.bands.forEach((b, j) => {
      const l = labelled[j]!;
      n += l;
      d += disagreed[j]!;
      na += counts.audits?.[j] ?? 0;
      da += counts.auditDisagreed?.[j] ?? 0;
      expected += b.answers === 0 ? 0 : (l * b.disagreements) / b.answers;
      low += l * this.lower[j]!;
      high += l * this.upper[j]!;
    });
    const region = (echo: boolean): [number, number] => [
      this.agreeRegionLog(0, counts, echo),
      this.agreeRegionLog(1, counts, echo),
    ];
    const echoes = region(true);
    const liar: [number, number] = [
      this.disagreeRegionLog(0, counts),
      this.disagreeRegionLog(1, counts),
    ];
    const disagreesTooMuch = (alarms & DISAGREES_TOO_MUCH) !== 0;
    return {
      agreesTooMuch: (alarms & AGREES_TOO_MUCH) !== 0,
      disagreesTooMuch,
      agreeLogCapital: this.agreeLog(counts),
      disagreeLogCapital: this.disagreeLog(counts),
      logBar: this.logBar,
      labelled: n,
      disagreed: d,
      expected,
      expectedLow: low,
      expectedHigh: high,
      agreeRegionLogCapitals: region(false),
      echoRegionLogCapitals: echoes,
      regionLogBar: this.regionLogBar,
      echoPowered: echoes[0] >= this.regionLogBar &&
        echoes[1] >= this.regionLogBar,
      disagreeRegionLogCapitals: liar,
      audits: na,
      auditDisagreed: da,
      disagreeRegion: disagreesTooMuch ? regionOf(liar, this.logBar) : null,
    };
  }
}

/**
 * Where the disagree evidence lies (see `FeedbackCheckState.disagreeRegion`):
 * each region whose weighed capital alone reaches the bar, else the one
 * with the larger weighed capital.
 */
function regionOf(logs: [number, number], bar: number): DisagreeRegion {
  const a = logs[0] + Math.log(AUDIT_WEIGHT);
  const r = logs[1] + Math.log(1 - AUDIT_WEIGHT);
  if (a >= bar && r >= bar) return "both";
  if (a >= bar) return "audits";
  if (r >= bar) return "reported";
  return a >= r ? "audits" : "reported";
}
