/**
 * The drift guard: withholds certification while live texts stop looking
 * like the texts the question was calibrated on.
 *
 * Two parts. A single text most of whose buckets no training text had
 * (share above `max_novelty`), or whose share of unseen buckets is at least
 * `min_novelty` and higher than almost every calibration text's (conformal
 * p-value at or below `single_p`, which by exchangeability costs at most
 * that share of in-distribution texts), is never certified.
 *
 * And a conformal test martingale watches the stream of drift scores per
 * question. Each request's smoothed p-value against the stored calibration
 * scores is raised by the DKW slack of that finite calibration set, so that
 * for all but `delta / 2` of calibration draws it is super-uniform; it feeds
 * a jumper mixture of power bets `e p^(e-1)` (and one that never bets).
 * When the capital reaches `2 / delta`, the alarm stands and no answer of
 * the question is certified. By Ville's inequality, exchangeable traffic
 * raises a false alarm with probability at most `delta / 2 + delta / 2`.
 * The alarm clears once no betting strategy gained over the last
 * `rearm_window` requests (every power bet's product over the window is at
 * most 1); the test then starts afresh.
 *
 * Everything here is pure: the monitor counts requests, it reads no clock.
 *
 * @module
 */

import { seededRandom } from "./random.ts";
import { countAtMost, countBelow } from "./_sorted.ts";
import type { DriftSettings, QuestionTable } from "./table.ts";

/** The defaults a bundle is trained with. */
export const DEFAULT_DRIFT: DriftSettings = {
  single_p: 0.01,
  max_novelty: 0.5,
  min_novelty: 0.1,
  delta: 0.01,
  rearm_window: 100,
  scope_p: 0.05,
};

/**
 * A text's drift score: higher means less like the calibration texts. Half
 * the share of its buckets no training text had, half one minus its
 * confidence over all options.
 */
export function driftScore(novelty: number, confidence: number): number {
  return 0.5 * novelty + 0.5 * (1 - confidence);
}

/** Number of values in the ascending `sorted` that are at least `x`. */
function countAtLeast(sorted: Float32Array, x: number): number {
  return sorted.length - countBelow(sorted, x);
}

/** Number of values in the ascending `sorted` that are above `x`. */
function countAbove(sorted: Float32Array, x: number): number {
  return sorted.length - countAtMost(sorted, x);
}

/**
 * Conservative conformal p-value of `score` against the calibration scores:
 * `(#{s_i >= score} + 1) / (n + 1)`.
 */
export function conformalPValue(scores: Float32Array, score: number): number {
  return (countAtLeast(scores, Math.fround(score)) + 1) / (scores.length + 1);
}

/** Smoothed conformal p-value, uniform under exchangeability; `u` in [0, 1). */
export function smoothedPValue(
  scores: Float32Array,
  score: number,
  u: number,
): number {
  const s = Math.fround(score);
  const above = countAbove(scores, s);
  const equal = countAtLeast(scores, s) - above;
  return (above + u * (equal + 1)) / (scores.length + 1);
}

/**
 * What the engine asks before certifying. `observe` sees every scored text
 * of a question (with its drift score) and says whether the alarm is quiet.
 */
export interface DriftGuard {
  observe(q: QuestionTable, score: number): boolean;
}

/**
 * A guard that never raises the alarm (the online test switched off).
 *
 * @example
 * ```ts
 * import { assess, prepareText, QUIET_GUARD, type Table, TableState } from "./mod.ts";
 * declare const table: Table;
 * const state = new TableState(table);
 * assess(table, state, prepareText(table, state, "hi"), "intent", {}, QUIET_GUARD);
 * ```
 */
export const QUIET_GUARD: DriftGuard = { observe: () => true };

/** Public state of one question's online test. */
export interface DriftState {
  /** `quiet` or `alarmed`. */
  status: "quiet" | "alarmed";
  /** Requests this question's guard has seen. */
  observed: number;
  /** Request index (1-based) at which the current alarm was raised; null when quiet. */
  alarmed_at: number | null;
  /** Current value of the test martingale (the evidence against exchangeability). */
  evidence: number;
  /** The evidence that raises the alarm, `2 / delta`. */
  alarm_level: number;
  /** Alarms raised so far. */
  alarms: number;
  /** Alarms cleared so far. */
  clears: number;
}

const EPSILONS = [0.05, 0.1, 0.2, 0.35, 0.5, 0.75];
const LOG_EPSILONS = EPSILONS.map(Math.log);

interface QuestionMonitor {
  /** Share of the capital held by each betting component (sums to 1). */
  shares: Float64Array;
  /** log of the martingale's value. */
  logValue: number;
  status: "quiet" | "alarmed";
  observed: number;
  alarmedAt: number | null;
  /**
   * Ring buffer, `rearm_window` rows of one log bet per power component:
   * what each component would have won over the recent requests.
   */
  recent: Float64Array;
  /** Per component, the sum of its log bets in the ring buffer. */
  recentSums: Float64Array;
  recentCount: number;
  recentNext: number;
  alarms: number;
  clears: number;
}

/**
 * How much a conformal p-value against `n` fixed calibration scores may
 * fall short of uniform, with probability at least `1 - confidence` over
 * the calibration draw (Dvoretzky-Kiefer-Wolfowitz): `sqrt(ln(2/c) / 2n)`.
 */
export function calibrationSlack(n: number, confidence: number): number {
  return Math.sqrt(Math.log(2 / confidence) / (2 * n));
}

/**
 * The online guard: one conformal test martingale per question. Create one
 * per served table; `observe` is called on every scored request.
 *
 * @example
 * ```ts
 * import { DriftMonitor, type Table } from "./mod.ts";
 * declare const table: Table;
 * const guard = new DriftMonitor(table.settings.drift);
 * guard.state("intent").status; // "quiet"
 * ```
 */
export class DriftMonitor implements DriftGuard {
  readonly #settings: DriftSettings;
  readonly #byQuestion = new Map<string, QuestionMonitor>();
  readonly #random: () => number;

  /** A monitor with the given settings; `seed` fixes the p-value smoothing. */
  constructor(settings: DriftSettings, seed = 1) {
    if (!(settings.delta > 0 && settings.delta < 1)) {
      throw new RangeError(
        `Drift delta must be in (0, 1): got ${settings.delta}`,
      );
    }
    if (
      !(Number.isInteger(settings.rearm_window) && settings.rearm_window >= 1)
    ) {
      throw new RangeError(
        `Drift re-arm window must be a positive integer: got ${settings.rearm_window}`,
      );
    }
    this.#settings = settings;
    this.#random = seededRandom(seed);
  }

  /** The settings in force. */
  get settings(): DriftSettings {
    return this.#settings;
  }

  #monitor(name: string): QuestionMonitor {
    let m = this.#byQuestion.get(name);
    if (m === undefined) {
      m = {
        shares: initialShares(),
        logValue: 0,
        status: "quiet",
        observed: 0,
        alarmedAt: null,
        recent: new Float64Array(this.#settings.rearm_window * EPSILONS.length),
        recentSums: new Float64Array(EPSILONS.length),
        recentCount: 0,
        recentNext: 0,
        alarms: 0,
        clears: 0,
      };
      this.#byQuestion.set(name, m);
    }
    return m;
  }

  /** Feeds one request's drift score; true while the question's alarm is quiet. */
  observe(q: QuestionTable, score: number): boolean {
    const n = q.drift.scores.length;
    if (n === 0) return true;
    const m = this.#monitor(q.name);
    m.observed++;
    // Half of delta covers the calibration draw: the p-value is raised by
    // the DKW slack, so it is super-uniform for all but delta/2 of
    // calibration sets, and the martingale a supermartingale; the other half
    // is Ville's, hence the alarm at 2 / delta.
    const slack = calibrationSlack(n, this.#settings.delta / 2);
    const p = Math.min(
      1,
      smoothedPValue(q.drift.scores, score, this.#random()) + slack,
    );
    m.logValue += jumpAndBet(m.shares, p);

    const width = EPSILONS.length;
    const window = this.#settings.rearm_window;
    const lp = Math.log(Math.max(p, 1e-12));
    const row = m.recentNext * width;
    const full = m.recentCount === window;
    if (!full) m.recentCount++;
    for (let i = 0; i < width; i++) {
      const bet = LOG_EPSILONS[i]! + (EPSILONS[i]! - 1) * lp;
      if (full) m.recentSums[i]! -= m.recent[row + i]!;
      m.recent[row + i] = bet;
      m.recentSums[i]! += bet;
    }
    m.recentNext = (m.recentNext + 1) % window;

    if (m.status === "quiet") {
      if (m.logValue >= Math.log(2 / this.#settings.delta)) {
        m.status = "alarmed";
        m.alarmedAt = m.observed;
        m.alarms++;
        m.recentCount = 0;
        m.recentNext = 0;
        m.recentSums.fill(0);
      }
    } else if (
      m.recentCount === window && m.recentSums.every((sum) => sum <= 0)
    ) {
      // Cleared only when no betting strategy gained over the whole window.
      m.status = "quiet";
      m.alarmedAt = null;
      m.clears++;
      m.shares = initialShares();
      m.logValue = 0;
    }
    return m.status === "quiet";
  }

  /** True while the question's alarm is quiet; records nothing. */
  isQuiet(name: string): boolean {
    return this.#byQuestion.get(name)?.status !== "alarmed";
  }

  /** The state of one question's test. */
  state(name: string): DriftState {
    const m = this.#byQuestion.get(name);
    const level = 2 / this.#settings.delta;
    if (m === undefined) {
      return {
        status: "quiet",
        observed: 0,
        alarmed_at: null,
        evidence: 1,
        alarm_level: level,
        alarms: 0,
        clears: 0,
      };
    }
    return {
      status: m.status,
      observed: m.observed,
      alarmed_at: m.alarmedAt,
      evidence: Math.exp(Math.min(700, m.logValue)),
      alarm_level: level,
      alarms: m.alarms,
      clears: m.clears,
    };
  }
}

/** Capital shares at the start: all of it on the component that never bets. */
function initialShares(): Float64Array {
  const shares = new Float64Array(EPSILONS.length + 1);
  shares[0] = 1;
  return shares;
}

/** Fraction of the capital spread evenly over the components at each step. */
const JUMP = 0.01;

/**
 * One step of the jumper mixture: spread `JUMP` of the capital evenly over the
 * components (the never-betting one and the power bets `e p^(e-1)`), then let
 * each bet on `p`. Returns the log growth of the whole capital. Every bet has
 * expectation 1 for a uniform `p`, so the capital is a test martingale.
 */
function jumpAndBet(shares: Float64Array, p: number): number {
  const m = shares.length;
  const lp = Math.log(Math.max(p, 1e-12));
  let growth = 0;
  for (let i = 0; i < m; i++) {
    const share = (1 - JUMP) * shares[i]! + JUMP / m;
    const factor = i === 0
      ? 1
      : Math.exp(LOG_EPSILONS[i - 1]! + (EPSILONS[i - 1]! - 1) * lp);
    shares[i] = share * factor;
    growth += shares[i]!;
  }
  for (let i = 0; i < m; i++) shares[i]! /= growth;
  return Math.log(growth);
}

/**
 * The single-text rule: true when a text looks like the calibration texts
 * enough to be certified at all.
 */
export function singleTextLooksFamiliar(
  settings: DriftSettings,
  calibrationNovelty: Float32Array,
  novelty: number,
): boolean {
  if (novelty > settings.max_novelty) return false;
  return novelty < settings.min_novelty || calibrationNovelty.length === 0 ||
    conformalPValue(calibrationNovelty, novelty) > settings.single_p;
}

/**
 * A read-only view of a guard: judges without recording (for the playground).
 *
 * @example
 * ```ts
 * import { DriftMonitor, peekGuard, type Table } from "./mod.ts";
 * declare const table: Table;
 * const peek = peekGuard(new DriftMonitor(table.settings.drift));
 * ```
 */
export function peekGuard(monitor: DriftMonitor): DriftGuard {
  return { observe: (q) => monitor.isQuiet(q.name) };
}
