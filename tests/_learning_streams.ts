/**
 * Whole learning streams in a world whose truth is known, for the tests of
 * the promise a learning service makes over all its retrains.
 *
 * The traffic: each text has a confidence `c`, uniform on [0, 1] and the
 * same for every bundle (a bundle ranks texts as any other does), and a
 * hardness `u`, uniform on [0, 1] and also fixed. A bundle trained on `L`
 * labels disagrees with the model on a text when `u < a(L) 3 (1 - c)^2`,
 * `a(L) = A (300 / L)^B`: better with more labels, and the texts a better
 * bundle gets wrong are wrong for every worse one too (errors as
 * correlated as they can be, the case where reusing calibration evidence
 * across retrains is most dangerous). So the disagreement among the
 * answers at or above `t` is `a(L) (1 - t)^2`, known exactly.
 *
 * The service as a learner runs it: no bundle at first (every decision
 * asked: a census, whose lines split 75% train, 20% calibration, 5% test
 * by a hash of the text); a verdict-blind coin picks each decision at the
 * rate (picks calibrate, 80%, or test, 20%); the proxy asks its model for
 * every uncertified answer and every pick, and drops some feedback as the
 * drop mode says; a pick never answered counts as a disagreement where the
 * new bundle would certify it. Retrains come on the learner's schedule
 * (`nextRetrainLabels`), each tested with the real plan and fixed-sequence
 * test (`calibrateQuestion`) at the level the policy gives (the learner's:
 * its k-th test at its share of delta, run only when its plan gives it
 * `MIN_PASS_CHANCE` and its evidence grew `RETEST_GROWTH` times, or its
 * labels `RETEST_LABELS` times, since its last test), and a bundle
 * that passes is swapped in when it certifies more right answers than the
 * one in force.
 *
 * A falsifying proxy (`Falsify`) reports the table's own answer (an
 * agreement) for the texts of a confidence band it wants certified: on
 * every decision of the band it is asked for when it cannot tell the
 * calibration picks (`hidden`: the service's ids), or on the picks only
 * when it can (`leak`: an id whose kind byte told the pick). The promise
 * is then measured against what the proxy reports for the traffic (the
 * model as the service sees it): with `hidden`, the band's answers agree
 * for the served traffic too; with `leak`, the traffic's answers are the
 * model's.
 *
 * @module
 */

import { testLevel } from "../src/guarantee/mod.ts";
import {
  MIN_PASS_CHANCE,
  nextRetrainLabels,
  RETEST_GROWTH,
  RETEST_LABELS,
} from "../src/learn/mod.ts";
import { calibrateQuestion } from "../src/train/calibrate.ts";
import { rng } from "./_fixtures.ts";

export const ALPHA = 0.05;
export const DELTA = 0.05;
/** The world's error scale at 300 labels and how fast it falls with labels. */
const A = 0.6;
const B = 0.5;
/** Decisions per ledger stretch. */
const STRETCH = 250;

/** What the proxy drops: nothing, 1% at random, or a fifth of the answers that disagree. */
export type Drop = "none" | "random" | "adversarial";

/** A proxy that falsifies feedback to agreement in `BAND`: `none`, `hidden` (cannot tell picks), `leak` (falsifies the picks only). */
export type Falsify = "none" | "hidden" | "leak";
/** The confidence band a falsifying proxy wants certified. */
const BAND = [0.3, 0.7] as const;

/** The share of a bundle's errors among the answers at or above `t` (`a (1 - t)^3`, unnormalised) that fall in `BAND`. */
function bandErrors(a: number, t: number): number {
  const lo = Math.max(t, BAND[0]);
  const hi = Math.max(t, BAND[1]);
  return a * (Math.pow(1 - lo, 3) - Math.pow(1 - hi, 3));
}

/** How each retrain's test is leveled. */
export type Policy =
  /** Every test at the full delta, every time (a test repeated until it passes). */
  | "full"
  /** The learner's: the k-th test a question runs at `testLevel(delta, k)`, run only when its plan gives it `MIN` chance. */
  | "spent";

/** The error scale of a bundle trained on `labels` labels. */
function scale(labels: number): number {
  return Math.min(1 / 3, A * Math.pow(300 / Math.max(labels, 1), B));
}

/** The true disagreement among the answers at or above `t` of a bundle of scale `a`. */
export function trueRisk(a: number, t: number): number {
  return a * (1 - t) * (1 - t);
}

interface Text {
  c: number;
  u: number;
  /** Where a census line lands: 0 train, 1 calibration, 2 test. */
  part: number;
}

/** One stream's outcome. */
export interface StreamOutcome {
  /** True when some swapped-in bundle's true disagreement is above alpha. */
  violated: boolean;
  /** Bundles swapped in, tests run. */
  swaps: number;
  tests: number;
  /** The last bundle's share of traffic certified (0 without one). */
  certified: number;
}

/**
 * One learning stream of `n` decisions at coin rate `rate`, with the
 * proxy dropping as `drop` says and tests leveled by `policy` (see the
 * module doc).
 */
export function learningStream(
  seed: number,
  n: number,
  rate: number,
  drop: Drop,
  policy: Policy,
  minPassChance = MIN_PASS_CHANCE,
  falsify: Falsify = "none",
): StreamOutcome {
  const inBand = (c: number) => c >= BAND[0] && c < BAND[1];
  // What the proxy reports for the traffic, its "model": the band agrees
  // when it falsifies every decision there.
  const reportedRisk = (a: number, t: number) =>
    falsify === "hidden"
      ? (a * Math.pow(1 - t, 3) - bandErrors(a, t)) / (1 - t)
      : trueRisk(a, t);
  const random = rng(seed);
  const text = (): Text => {
    const h = random();
    return {
      c: random(),
      u: random(),
      part: h < 0.75 ? 0 : h < 0.95 ? 1 : 2,
    };
  };
  /** Calibration evidence: census calibration lines and picks (`answered` false: a pick never answered; `agreed`: falsified to agreement). */
  const calibration: { t: Text; answered: boolean; agreed?: boolean }[] = [];
  let trainLines = 0;
  let labels = 0;
  let served = null as { a: number; t: number } | null;
  let lastRetrain = 0;
  let tests = 0;
  /** The calibration answers of the last test run. */
  let testedAt = 0;
  let testedLabels = 0;
  let swaps = 0;
  let violated = false;
  let stretch: {
    t: Text;
    picked: boolean;
    answered: boolean;
    toCalibration: boolean;
    agreed: boolean;
  }[] = [];
  const closeStretch = (certifiable: boolean) => {
    const census = !certifiable && stretch.every((d) => d.answered);
    for (const d of stretch) {
      if (census) {
        if (d.t.part === 0) trainLines++;
        else if (d.t.part === 1) {
          calibration.push({ t: d.t, answered: true, agreed: d.agreed });
        }
      } else if (d.picked) {
        // Picks: 80% calibrate, 20% test.
        if (d.toCalibration) {
          calibration.push({ t: d.t, answered: d.answered, agreed: d.agreed });
        }
      } else if (d.answered) trainLines++;
    }
    stretch = [];
  };
  const retrain = () => {
    const a = scale(trainLines / 0.85);
    // The plan's validation answers: a fit-only model on 85% of the lines.
    const fitA = scale(trainLines);
    const v = Math.max(20, Math.round(0.15 * trainLines));
    const vc = new Float64Array(v);
    const vr = new Uint8Array(v);
    for (let i = 0; i < v; i++) {
      const c = random();
      vc[i] = c;
      vr[i] = random() < fitA * 3 * (1 - c) * (1 - c) ? 0 : 1;
    }
    const m = calibration.length;
    const conf = new Float64Array(m);
    const wrong = new Uint8Array(m);
    calibration.forEach((x, i) => {
      conf[i] = x.t.c;
      wrong[i] = !x.answered ||
          !x.agreed && x.t.u < a * 3 * (1 - x.t.c) * (1 - x.t.c)
        ? 1
        : 0;
    });
    const level = policy === "full" ? DELTA : testLevel(DELTA, tests + 1);
    const outcome = calibrateQuestion(
      {
        confidences: conf,
        wrong,
        novelty: new Float32Array(m),
        driftScores: new Float32Array(m),
        scopeScores: new Float32Array(0),
        scopeScore: null,
      },
      { confidences: vc, correct: vr, accuracy: null },
      {
        alpha: ALPHA,
        delta: level,
        calibrationShare: 0.2,
        scopeP: 0,
        ...(policy === "spent"
          ? {
            gate: {
              minPassChance,
              ...(labels < RETEST_LABELS * testedLabels
                ? { minCalibration: Math.ceil(RETEST_GROWTH * testedAt) }
                : {}),
            },
          }
          : {}),
      },
    );
    if (outcome.choice.tested > 0) tests++;
    if (outcome.calibration.threshold !== null) {
      testedAt = m;
      testedLabels = labels;
    }
    const t = outcome.calibration.threshold;
    if (t === null) return;
    // Swapped in when it certifies more right answers than the one in force.
    const right = (b: { a: number; t: number }) =>
      (1 - b.t) * (1 - trueRisk(b.a, b.t));
    const candidate = { a, t };
    if (served !== null && right(candidate) <= right(served)) return;
    served = candidate;
    swaps++;
    if (reportedRisk(a, t) > ALPHA) violated = true;
  };
  for (let i = 0; i < n; i++) {
    const t = text();
    const certified = served !== null && t.c >= served.t;
    const picked = random() < rate;
    const asked = !certified || picked;
    let answered = asked;
    if (asked && drop !== "none") {
      const wrongNow = served !== null &&
        t.u < served.a * 3 * (1 - t.c) * (1 - t.c);
      answered = drop === "random"
        ? random() >= 0.01
        : !(wrongNow && random() < 0.2);
    }
    if (asked && answered) labels++;
    stretch.push({
      t,
      picked,
      answered: !asked || answered,
      toCalibration: random() < 0.8,
      agreed: inBand(t.c) &&
        (falsify === "hidden" || falsify === "leak" && picked),
    });
    if (stretch.length === STRETCH) closeStretch(served !== null);
    if (labels >= nextRetrainLabels(lastRetrain) && labels > lastRetrain) {
      lastRetrain = labels;
      retrain();
    }
  }
  return {
    violated,
    swaps,
    tests,
    certified: served === null ? 0 : 1 - served.t,
  };
}
