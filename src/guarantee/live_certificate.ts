/**
 * The live certificate: keeps a question's promise true on live traffic
 * from audits of a random sample of its certified answers, and moves its
 * threshold by that evidence.
 *
 * The service picks each certified answer for audit with probability `R`;
 * the caller's proxy asks its model about the picked ones (and, as it must
 * anyway, about every uncertified one) and reports what the model said.
 * Seen over the decisions whose confidence reaches a candidate threshold
 * `t`, each decision gives one observation of an inverse-probability-
 * weighted disagreement `D = S wrong / pi`: a certified answer is observed
 * (`S = 1`) with probability `pi = R`, an uncertified one always (`pi = 1`).
 * `E[D] = risk(t)`, the disagreement rate among answers above `t`, whatever
 * the threshold in force was when each decision was made.
 *
 * For each candidate and each hypothesised rate `m` two tests by betting run
 * side by side (Waudby-Smith and Ramdas, "Estimating means of bounded random
 * variables by betting"): one bets that the rate is below `m`
 * (capital `prod(1 + lambda (m - D))`), one that it is above
 * (`prod(1 + lambda (D - m))`). Each is a mixture of bets with fixed
 * fractions, the same for every observation (a bet that depended on the
 * decision, its confidence or whether it was audited, would lean on what
 * predicts its outcome, and the capital would no longer be a
 * supermartingale), sized so that `1 + lambda x` stays positive even for
 * the largest observation, an audited disagreement `1/R`.
 * Under its null hypothesis each capital is a nonnegative supermartingale,
 * so by Ville's inequality it ever reaches `1/e` with probability at most
 * `e`: the tests are valid at every moment, however long the stream and
 * whenever one looks. With fixed fractions a capital depends only on how
 * many observations of each kind (agreed, disagreed on audit, disagreed on
 * feedback) a candidate has seen, so the certificate keeps three counts per
 * candidate and works the capitals out when asked.
 *
 * Policy, per question, with `K` candidates and level `delta`: a candidate
 * is *certified* live when its below-alpha capital reaches `K / delta`, and
 * *refuted* when its above-alpha capital reaches `2 / delta` for the
 * bundle's own threshold and `2 (K - 1) / delta` for the others (Bonferroni
 * over candidates, so any rule for picking among them keeps both errors
 * within `delta`).
 * The bundle's own threshold is in force at the start. A refuted candidate,
 * and every more lenient one, is never served again; the service then moves
 * to the most lenient remaining candidate whose live estimate is clearly
 * below alpha (moving stricter needs no certificate), or to the strictest
 * one, and withdraws the question when even that is refuted. A candidate
 * more lenient than the one in force is served once certified live, and
 * only while feedback on uncertified answers has been complete (the evidence
 * for it rests on them).
 *
 * The feedback itself is checked against the bundle's calibration bands
 * (`feedback_check.ts`): once the labelled answers agree with the table far
 * more than calibration allows (an echo), the threshold in force is never
 * more lenient than the bundle's and moves only stricter; a candidate more
 * lenient than the bundle's also needs the *leniency gate*: an echo of
 * either region of the bands (those the bundle certifies, those it does
 * not) would have raised that alarm on the labelled answers so far, and no
 * alarm stands. Without bands, never more lenient than the bundle's. Alarms are
 * part of the policy: they latch until `reset`.
 *
 * Pure: it counts decisions and reports, it reads no clock.
 *
 * @module
 */

import {
  AGREES_TOO_MUCH,
  type BandCounts,
  type CalibrationBand,
  FeedbackCheck,
} from "./feedback_check.ts";
import {
  type CandidateState,
  type LiveDecision,
  type LiveEvidence,
  liveGrid,
  type LivePolicy,
  type LiveSettings,
  type LiveState,
} from "./live_evidence.ts";

/** Bet fractions of the below-alpha (certify) mixture, as shares of the largest safe bet. */
const CERTIFY_FRACTIONS = [0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9];
/**
 * Bet fractions of the above-alpha (refute) mixture, as shares of the
 * largest safe bet `1 / m`. Audited disagreements weigh `1/R`, so the good
 * bets are small: about `(r - m) m R / r` for a true rate `r`.
 */
const REFUTE_FRACTIONS = [
  0.0001,
  0.0002,
  0.0005,
  0.001,
  0.002,
  0.005,
  0.01,
  0.03,
];
/** Hypothesised rates for the reported interval (alpha is added). */
const RATE_GRID = [
  0.0025,
  0.005,
  0.01,
  0.015,
  0.02,
  0.025,
  0.03,
  0.035,
  0.04,
  0.045,
  0.055,
  0.06,
  0.07,
  0.08,
  0.09,
  0.1,
  0.125,
  0.15,
  0.2,
  0.25,
  0.3,
  0.4,
  0.5,
];
/** Feedback must have reached this share of uncertified decisions for lower thresholds to be certified. */
export const FEEDBACK_COVERAGE = 0.95;
/** After a refutation, a candidate qualifies when its estimate is at most this share of alpha... */
export const MOVE_MARGIN = 0.8;
/** ...over at least this many labelled answers. */
export const MOVE_MIN_LABELLED = 30;
/**
 * Observation kinds: no disagreement (`D = 0`: a certified answer not
 * audited, an audit or feedback that agreed), a disagreement on audit
 * (`D = 1/R`), a disagreement on feedback (`D = 1`).
 */
const AGREED = 0;
const DISAGREED_AUDIT = 1;
const DISAGREED_FEEDBACK = 2;
const KINDS = 3;

/** A candidate's observations by kind (see the constants above). */
type Counts = [number, number, number];

/** The live certificate of one question (see the module doc). */
export class LiveCertificate {
  readonly #settings: LiveSettings;
  readonly #bundleThreshold: number | null;
  /** Candidate thresholds, strictest first. */
  readonly #thresholds: number[];
  /** Hypothesised rates; `#alphaAt` is alpha's position. */
  readonly #rates: number[];
  readonly #alphaAt: number;
  /**
   * Observations by kind and by the strictest candidate they reach
   * (`kind * K + candidate`); a candidate's counts are the sums over the
   * candidates up to and including it.
   */
  readonly #bins: Float64Array;
  /** Labelled answers (audits and feedback) by the strictest candidate they reach. */
  readonly #labelledBins: Float64Array;
  /** Audits among them, likewise. */
  readonly #auditBins: Float64Array;
  #audited = 0;
  #auditDisagreements = 0;
  #feedback = 0;
  #uncertified = 0;
  /**
   * Index of the strictest candidate refuted so far: it and every more
   * lenient one are out (a refutation stands: Ville's inequality bounds the
   * first crossing). The number of candidates while none is refuted.
   */
  #floor: number;
  /** Index of the candidate in force; -1 when withdrawn or uncalibrated. */
  #inForce: number;
  /** Index of the bundle's threshold; -1 when uncalibrated. */
  readonly #bundle: number;
  /** The check of the feedback against the calibration bands; null without bands. */
  readonly #check: FeedbackCheck | null;
  /** Latched feedback alarms (see `feedback_check.ts`). */
  #alarms = 0;
  /** Resets so far. */
  #generation = 0;
  /** Scratch: per candidate band, labelled answers that disagreed. */
  readonly #bandDisagreed: Float64Array;
  /** The counts the feedback check weighs: views of the bins and `#bandDisagreed`. */
  readonly #bandView: BandCounts;
  /**
   * Per bet fraction, the log factor each kind of observation multiplies
   * the capital by, at rate alpha (`fraction * KINDS + kind`): `decide`
   * then costs multiply-adds, not logarithms.
   */
  readonly #certifyAtAlpha: Float64Array;
  readonly #refuteAtAlpha: Float64Array;
  /** Scratch of `decide`: each candidate's counts by kind (`kind * K + j`). */
  readonly #cumulative: Float64Array;
  /** Scratch of `#passes`: one log capital per fraction. */
  readonly #logs: Float64Array;

  /**
   * A certificate over `grid` (the bundle's candidates; the live grid is
   * taken from it) for a question whose bundle threshold is `threshold`,
   * with the bundle's calibration `bands` when it has them (without, the
   * threshold in force is never more lenient than the bundle's). Throws
   * `RangeError` for settings out of range or bands that do not match the
   * live grid.
   */
  constructor(
    grid: readonly number[],
    threshold: number | null,
    settings: LiveSettings,
    bands?: readonly CalibrationBand[] | null,
  ) {
    if (!(settings.alpha > 0 && settings.alpha < 1)) {
      throw new RangeError(
        `Live alpha must be in (0, 1): got ${settings.alpha}`,
      );
    }
    if (!(settings.delta > 0 && settings.delta < 1)) {
      throw new RangeError(
        `Live delta must be in (0, 1): got ${settings.delta}`,
      );
    }
    if (!(settings.auditRate > 0 && settings.auditRate <= 1)) {
      throw new RangeError(
        `Audit rate must be in (0, 1]: got ${settings.auditRate}`,
      );
    }
    this.#settings = settings;
    this.#bundleThreshold = threshold;
    this.#rates = [...new Set([...RATE_GRID, settings.alpha])].sort((a, b) =>
      a - b
    );
    this.#alphaAt = this.#rates.indexOf(settings.alpha);
    this.#thresholds = liveGrid(grid, threshold);
    const k = this.#thresholds.length;
    this.#bins = new Float64Array(KINDS * k);
    this.#labelledBins = new Float64Array(k);
    this.#auditBins = new Float64Array(k);
    this.#floor = k;
    this.#bundle = threshold === null
      ? -1
      : this.#thresholds.indexOf(threshold);
    this.#inForce = this.#bundle;
    this.#check = bands === undefined || bands === null || this.#bundle < 0
      ? null
      : new FeedbackCheck(bands, this.#thresholds, threshold!);
    this.#bandDisagreed = new Float64Array(k);
    this.#bandView = {
      labelled: this.#labelledBins,
      disagreed: this.#bandDisagreed,
      audits: this.#auditBins,
      auditDisagreed: this.#bins.subarray(
        DISAGREED_AUDIT * k,
        DISAGREED_AUDIT * k + k,
      ),
    };
    const r = settings.auditRate;
    const m = settings.alpha;
    this.#certifyAtAlpha = Float64Array.from(
      CERTIFY_FRACTIONS.flatMap((f) => {
        const lambda = f / (1 / r - m);
        return [
          Math.log1p(lambda * m),
          Math.log1p(lambda * (m - 1 / r)),
          Math.log1p(lambda * (m - 1)),
        ];
      }),
    );
    this.#refuteAtAlpha = Float64Array.from(
      REFUTE_FRACTIONS.flatMap((f) => {
        const lambda = f / m;
        return [
          Math.log1p(-lambda * m),
          Math.log1p(lambda * (1 / r - m)),
          Math.log1p(lambda * (1 - m)),
        ];
      }),
    );
    this.#cumulative = new Float64Array(KINDS * k);
    this.#logs = new Float64Array(
      Math.max(CERTIFY_FRACTIONS.length, REFUTE_FRACTIONS.length),
    );
  }

  /** Fills `#cumulative` with every candidate's counts by kind. */
  #accumulate(): void {
    const k = this.#thresholds.length;
    for (let kind = 0; kind < KINDS; kind++) {
      let sum = 0;
      for (let j = 0; j < k; j++) {
        sum += this.#bins[kind * k + j]!;
        this.#cumulative[kind * k + j] = sum;
      }
    }
  }

  /**
   * Whether the mixture with log factors `factors` over candidate `j`'s
   * counts (in `#cumulative`) reaches log capital `bar`: the same value as
   * `#certify` / `#refute` at alpha, with the logarithms computed once.
   */
  #passes(factors: Float64Array, j: number, bar: number): boolean {
    const k = this.#thresholds.length;
    const c = this.#cumulative;
    const n0 = c[j]!;
    const n1 = c[k + j]!;
    const n2 = c[2 * k + j]!;
    const count = factors.length / KINDS;
    const logs = this.#logs;
    let max = -Infinity;
    for (let i = 0; i < count; i++) {
      const l = n0 * factors[i * KINDS]! + n1 * factors[i * KINDS + 1]! +
        n2 * factors[i * KINDS + 2]!;
      logs[i] = l;
      if (l > max) max = l;
    }
    // The mean of the capitals lies between max / count and max.
    if (max < bar) return false;
    if (max - Math.log(count) >= bar) return true;
    let sum = 0;
    for (let i = 0; i < count; i++) sum += Math.exp(logs[i]! - max);
    return max + Math.log(sum / count) >= bar;
  }

  /** The candidate thresholds, strictest first. */
  get thresholds(): number[] {
    return [...this.#thresholds];
  }

  /**
   * The strictest candidate `confidence` reaches (-1 for none): an answer
   * at that confidence counts for it and every more lenient one.
   */
  candidateOf(confidence: number): number {
    return this.#first(confidence);
  }

  /** A copy of the evidence so far. */
  evidence(): LiveEvidence {
    const k = this.#thresholds.length;
    const bins = this.#bins;
    return {
      agreed: Array.from(bins.subarray(AGREED * k, AGREED * k + k)),
      auditDisagreed: Array.from(
        bins.subarray(DISAGREED_AUDIT * k, DISAGREED_AUDIT * k + k),
      ),
      feedbackDisagreed: Array.from(
        bins.subarray(DISAGREED_FEEDBACK * k, DISAGREED_FEEDBACK * k + k),
      ),
      labelled: Array.from(this.#labelledBins),
      auditLabelled: Array.from(this.#auditBins),
      audited: this.#audited,
      auditDisagreements: this.#auditDisagreements,
      feedback: this.#feedback,
      uncertified: this.#uncertified,
    };
  }

  /** The evidence so far, leaving none (the policy stays): what a replica hands to its fleet's store. */
  takeEvidence(): LiveEvidence {
    const out = this.evidence();
    this.#bins.fill(0);
    this.#labelledBins.fill(0);
    this.#auditBins.fill(0);
    this.#audited = 0;
    this.#auditDisagreements = 0;
    this.#feedback = 0;
    this.#uncertified = 0;
    return out;
  }

  /** Where the policy stands now (as `decide` last left it). */
  policy(): LivePolicy {
    return {
      floor: this.#floor,
      inForce: this.#inForce,
      alarms: this.#alarms,
    };
  }

  /** True when the bundle gave calibration bands (the feedback is checked, a lenient move possible). */
  get checked(): boolean {
    return this.#check !== null;
  }

  /** How many times `reset` was called: audits given before the last reset are not its evidence. */
  get generation(): number {
    return this.#generation;
  }

  /** Forgets all evidence, the policy and the alarms: the certificate starts afresh (a reset). */
  reset(): void {
    this.#generation++;
    this.takeEvidence();
    this.#floor = this.#thresholds.length;
    this.#inForce = this.#bundle;
    this.#alarms = 0;
  }

  /**
   * Replaces the evidence with `evidence` and, when given, the policy with
   * `policy` (for example the pooled evidence and policy of a fleet, read
   * from its store). Throws `RangeError` for evidence over another number
   * of candidates, a negative or non-finite count, or a policy that is not
   * one this certificate could reach (a floor outside [0, K], a candidate
   * in force at or past the floor, any in force while uncalibrated).
   */
  restore(evidence: LiveEvidence, policy?: LivePolicy): void {
    const k = this.#thresholds.length;
    const lists = [
      evidence.agreed,
      evidence.auditDisagreed,
      evidence.feedbackDisagreed,
      evidence.labelled,
      evidence.auditLabelled,
    ];
    const totals = [
      evidence.audited,
      evidence.auditDisagreements,
      evidence.feedback,
      evidence.uncertified,
    ];
    const ok = (v: number) => Number.isFinite(v) && v >= 0;
    if (lists.some((l) => l.length !== k)) {
      throw new RangeError(
        `Live evidence must count ${k} candidates: got ${
          lists.map((l) => l.length).join(", ")
        }`,
      );
    }
    if (!lists.every((l) => l.every(ok)) || !totals.every(ok)) {
      throw new RangeError("Live evidence counts must be finite and >= 0");
    }
    if (policy !== undefined) {
      const { floor, inForce } = policy;
      const alarms = policy.alarms ?? 0;
      const valid = Number.isInteger(floor) && floor >= 0 && floor <= k &&
        Number.isInteger(inForce) && inForce >= -1 && inForce < floor &&
        (this.#bundle >= 0 || inForce === -1) && Number.isInteger(alarms) &&
        alarms >= 0 && alarms <= 3;
      if (!valid) {
        throw new RangeError(
          `A live policy needs 0 <= floor <= ${k}, -1 <= inForce < floor and alarms in 0..3: got floor ${floor}, inForce ${inForce}, alarms ${alarms}`,
        );
      }
    }
    lists.slice(0, KINDS).forEach((l, kind) => this.#bins.set(l, kind * k));
    this.#labelledBins.set(evidence.labelled);
    this.#auditBins.set(evidence.auditLabelled);
    [
      this.#audited,
      this.#auditDisagreements,
      this.#feedback,
      this.#uncertified,
    ] = totals as [number, number, number, number];
    if (policy !== undefined) {
      this.#floor = policy.floor;
      this.#inForce = policy.inForce;
      this.#alarms = policy.alarms ?? 0;
    }
  }

  /** The strictest candidate a confidence reaches (-1 for none): the candidates it counts for start there. */
  #first(confidence: number): number {
    const t = this.#thresholds;
    let lo = 0;
    let hi = t.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (t[mid]! > confidence) lo = mid + 1;
      else hi = mid;
    }
    return lo < t.length ? lo : -1;
  }

  #add(
    kind: number,
    confidence: number,
    labelled: boolean,
    audit = false,
  ): void {
    const first = this.#first(confidence);
    if (first < 0) return;
    this.#bins[kind * this.#thresholds.length + first]!++;
    if (labelled) this.#labelledBins[first]!++;
    if (audit) this.#auditBins[first]!++;
  }

  /**
   * Records one answer that passed every rule but the threshold, when it
   * was given: its confidence, whether it was certified, and whether it was
   * picked for audit. A certified answer not picked counts at once (seen as
   * "no disagreement observed"); a picked one when its audit comes back
   * (`recordAudit`); an uncertified one when feedback on it comes
   * (`recordFeedback`).
   */
  recordDecision(
    confidence: number,
    certified: boolean,
    audited: boolean,
  ): void {
    if (!certified) this.#uncertified++;
    else if (!audited) this.#add(AGREED, confidence, false);
  }

  /** What an audit found: the confidence the audited answer had, and whether the model disagreed. */
  recordAudit(confidence: number, wrong: boolean): void {
    this.#audited++;
    if (wrong) this.#auditDisagreements++;
    this.#add(wrong ? DISAGREED_AUDIT : AGREED, confidence, true, true);
  }

  /** Feedback on an answer that was not certified: its confidence, and whether the model disagreed. */
  recordFeedback(confidence: number, wrong: boolean): void {
    this.#feedback++;
    this.#add(wrong ? DISAGREED_FEEDBACK : AGREED, confidence, true);
  }

  /** Candidate `j`'s observations by kind. */
  #counts(j: number): Counts {
    const k = this.#thresholds.length;
    const out: Counts = [0, 0, 0];
    for (let kind = 0; kind < KINDS; kind++) {
      let sum = 0;
      for (let i = 0; i <= j; i++) sum += this.#bins[kind * k + i]!;
      out[kind] = sum;
    }
    return out;
  }

  #labelled(j: number): number {
    let sum = 0;
    for (let i = 0; i <= j; i++) sum += this.#labelledBins[i]!;
    return sum;
  }

  /** Log capital of the below-`m` (certify) mixture over counts `n`. */
  #certify(n: Counts, m: number): number {
    const r = this.#settings.auditRate;
    // A bet lambda on m - D, D at most 1/R: lambda <= f / (1/R - m).
    return mixture(CERTIFY_FRACTIONS, (f) => {
      const lambda = f / (1 / r - m);
      return n[AGREED] * Math.log1p(lambda * m) +
        n[DISAGREED_AUDIT] * Math.log1p(lambda * (m - 1 / r)) +
        n[DISAGREED_FEEDBACK] * Math.log1p(lambda * (m - 1));
    });
  }

  /** Log capital of the above-`m` (refute) mixture over counts `n`. */
  #refute(n: Counts, m: number): number {
    const r = this.#settings.auditRate;
    // A bet lambda on D - m >= -m: lambda <= f / m.
    return mixture(REFUTE_FRACTIONS, (f) => {
      const lambda = f / m;
      return n[AGREED] * Math.log1p(-lambda * m) +
        n[DISAGREED_AUDIT] * Math.log1p(lambda * (1 / r - m)) +
        n[DISAGREED_FEEDBACK] * Math.log1p(lambda * (1 - m));
    });
  }

  /**
   * Applies the policy to the evidence so far (see the module doc) and
   * returns the threshold in force. Call it after each batch of audits and
   * feedback; the threshold moves only here.
   */
  decide(): LiveDecision {
    if (this.#bundle < 0) return { threshold: null, reason: "uncalibrated" };
    const k = this.#thresholds.length;
    const { delta } = this.#settings;
    const certifyBar = Math.log(k / delta);
    const refuteBar = (j: number) =>
      Math.log(
        j === this.#bundle ? 2 / delta : (2 * Math.max(1, k - 1)) / delta,
      );
    this.#accumulate();
    for (let j = 0; j < this.#floor; j++) {
      if (this.#passes(this.#refuteAtAlpha, j, refuteBar(j))) {
        this.#floor = j;
        break;
      }
    }
    if (this.#inForce >= this.#floor) this.#inForce = this.#moveStricter();
    // The feedback checked against calibration: an alarm latches; while the
    // agrees-too-much one stands, the threshold only moves stricter and is
    // never more lenient than the bundle's.
    let echoPowered = false;
    if (this.#check !== null) {
      const seen = this.#check.evaluate(this.#bandCounts(), this.#alarms);
      this.#alarms = seen.alarms;
      echoPowered = seen.echoPowered;
    }
    const echo = (this.#alarms & AGREES_TOO_MUCH) !== 0;
    if (echo && this.#inForce > this.#bundle) this.#inForce = this.#bundle;
    // A candidate more lenient than the bundle's also needs the leniency
    // gate: a check that could have caught an echo of either region (the
    // audits, or the uncertified answers), and no alarm.
    const lenientOk = this.#check !== null && echoPowered &&
      this.#alarms === 0;
    if (this.#inForce >= 0 && !echo) {
      const complete = this.#uncertified === 0 ||
        this.#feedback >= FEEDBACK_COVERAGE * this.#uncertified;
      for (let j = this.#floor - 1; complete && j > this.#inForce; j--) {
        if (j > this.#bundle && !lenientOk) continue;
        if (this.#passes(this.#certifyAtAlpha, j, certifyBar)) {
          this.#inForce = j;
          break;
        }
      }
    }
    return this.current();
  }

  /** Per candidate band, the labelled answers, audits and disagreements the feedback check weighs (scratch arrays). */
  #bandCounts(): BandCounts {
    const k = this.#thresholds.length;
    for (let j = 0; j < k; j++) {
      this.#bandDisagreed[j] = this.#bins[DISAGREED_AUDIT * k + j]! +
        this.#bins[DISAGREED_FEEDBACK * k + j]!;
    }
    return this.#bandView;
  }

  /** The weighted disagreement estimate over counts `n`; null before any decision. */
  #estimate(n: Counts): number | null {
    const decisions = n[0] + n[1] + n[2];
    if (decisions === 0) return null;
    return (n[DISAGREED_AUDIT] / this.#settings.auditRate +
      n[DISAGREED_FEEDBACK]) / decisions;
  }

  /** After a refutation: the most lenient remaining candidate clearly below alpha, else the strictest; -1 when none remains. */
  #moveStricter(): number {
    for (let j = this.#floor - 1; j >= 0; j--) {
      const estimate = this.#estimate(this.#counts(j));
      if (
        this.#labelled(j) >= MOVE_MIN_LABELLED && estimate !== null &&
        estimate <= MOVE_MARGIN * this.#settings.alpha
      ) return j;
    }
    return this.#floor > 0 ? 0 : -1;
  }

  #candidateState(j: number): CandidateState {
    const n = this.#counts(j);
    const interval = Math.log(2 / this.#settings.delta);
    // The interval: rates neither test rules out, each at delta / 2.
    let lower: number | null = null;
    let upper: number | null = null;
    for (const m of this.#rates) {
      if (this.#refute(n, m) >= interval) lower = m;
      if (upper === null && this.#certify(n, m) >= interval) upper = m;
    }
    return {
      threshold: this.#thresholds[j]!,
      decisions: n[0] + n[1] + n[2],
      labelled: this.#labelled(j),
      estimate: this.#estimate(n),
      lower,
      upper,
      certified: this.#certify(n, this.#settings.alpha) >=
        Math.log(this.#thresholds.length / this.#settings.delta),
      refuted: j >= this.#floor,
    };
  }

  /** The threshold in force as the policy stands, without weighing new evidence (`decide` does that). */
  current(): LiveDecision {
    if (this.#bundle < 0) return { threshold: null, reason: "uncalibrated" };
    const f = this.#inForce;
    return {
      threshold: f < 0 ? null : this.#thresholds[f]!,
      reason: f < 0
        ? "withdrawn"
        : f === this.#bundle
        ? "bundle"
        : f > this.#bundle
        ? "live_lower"
        : "live_stricter",
    };
  }

  /** The feedback check's alarms raised (`AGREES_TOO_MUCH`, `DISAGREES_TOO_MUCH` bits); 0 when none. */
  get alarms(): number {
    return this.#alarms;
  }

  /**
   * The threshold in force (after `decide`, unless `decide` is false: then
   * as the policy stands), why, and what the evidence says about every
   * candidate.
   */
  state(decide = true): LiveState {
    const decision = decide ? this.decide() : this.current();
    const states = this.#thresholds.map((_, j) => this.#candidateState(j));
    const at = this.#inForce >= 0 ? this.#inForce : this.#bundle;
    return {
      threshold: decision.threshold,
      reason: decision.reason,
      bundleThreshold: this.#bundleThreshold,
      audited: this.#audited,
      auditDisagreements: this.#auditDisagreements,
      feedback: this.#feedback,
      uncertifiedDecisions: this.#uncertified,
      inForce: at >= 0 ? states[at]! : null,
      candidates: states,
      feedbackCheck: this.#check === null
        ? null
        : this.#check.state(this.#bandCounts(), this.#alarms),
    };
  }
}

/** Log of the mean of `exp(logCapital(f))` over the fractions `f`. */
function mixture(
  fractions: readonly number[],
  logCapital: (f: number) => number,
): number {
  const logs = fractions.map(logCapital);
  const max = Math.max(...logs);
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (const l of logs) sum += Math.exp(l - max);
  return max + Math.log(sum / logs.length);
}
