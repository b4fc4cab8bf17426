/**
 * Training's warnings and progress lines, in words: one place for the
 * prose the stages of `trainer.ts` print.
 *
 * @module
 */

import { THIN_OPTION, type ThinOption } from "./thin_options.ts";
import type { FedOption } from "./split.ts";
import {
  CURVE_SHARES,
  type CurveEstimate,
  MAX_GROWTH,
} from "./curve_estimate.ts";
import { percent } from "../format.ts";

/** The thin options of a question, in words, with what would help. */
export function thinInWords(
  question: string,
  thin: readonly ThinOption[],
): string {
  const shown = thin.slice(0, 8).map((t) => `${t.option} (${t.answers})`);
  const more = thin.length > 8 ? ` and ${thin.length - 8} more` : "";
  return `question "${question}": ${thin.length} ${
    thin.length === 1 ? "option has" : "options have"
  } fewer than ${THIN_OPTION} training answers, so the table will seldom choose ${
    thin.length === 1 ? "it" : "them"
  }: ${shown.join(", ")}${more}; more traces answering ${
    thin.length === 1 ? "it" : "them"
  } would help`;
}

/** What feeding starved options did, in words. */
export function fedInWords(fed: readonly FedOption[]): string {
  const shown = fed.slice(0, 6).map((f) =>
    `${f.option} (${f.pinned} of ${f.traces})`
  );
  const more = fed.length > 6 ? ` and ${fed.length - 6} more` : "";
  return `time split: ${fed.length} ${
    fed.length === 1 ? "option is" : "options are"
  } held almost only by the newest traces, so ${
    fed.length === 1 ? "its" : "their"
  } oldest traces train the table and calibration takes the next newest: ${
    shown.join(", ")
  }${more}`;
}

/** The questions about to be fitted and on how many threads, in words. */
export function trainingInWords(
  questions: readonly { name: string; options: readonly string[] }[],
  workers: number,
): string {
  return `training ${
    questions.map((qa) => `"${qa.name}" (${qa.options.length} options)`)
      .join(", ")
  } on ${workers} ${workers === 1 ? "thread" : "workers"}`;
}

/** Why a choice question with one option cannot be trained. */
export function singleOptionInWords(question: string, option: string): string {
  return `question "${question}" has a single option ("${option}"); a choice needs at least two`;
}

/** Why a choice question with about as many options as answers is refused. */
export function freeTextInWords(
  question: string,
  options: number,
  answered: number,
): string {
  return `question "${question}" has ${options} options for ${answered} answers (fewer than 4 answers an option); ` +
    `is it an identifier or free-text column?`;
}

/** Why a question with too few answers to certify is refused. */
export function tooFewInWords(
  question: string,
  answered: number,
  minimumAnswers: number,
  needed: number,
  targets: { alpha: number; delta: number; calibrationShare: number },
): string {
  return `question "${question}" has ${answered} answers; at least ${minimumAnswers} are needed to train and certify it ` +
    `(${needed} calibration answers at alpha ${targets.alpha}, delta ${targets.delta}, calibration share ${targets.calibrationShare})`;
}

/** A question's uncalibrated warning with what would help. */
export function uncalibratedInWords(
  question: string,
  reason: string | null,
  advice: string,
): string {
  return `question "${question}" is uncalibrated (${reason}): ${advice}`;
}

/** What the second-tier stage decided for a question, for progress. */
export function secondTierInWords(
  question: string,
  used: boolean,
  reason: string,
): string {
  return `question "${question}": second tier ${
    used ? "kept" : "left out"
  }: ${reason}`;
}

/** Why an uncalibrated question failed and what a larger alpha would do, as facts. */
export interface AdviceFacts {
  /** Its calibration answers, and the fewest a pass needs. */
  answers: number;
  needed: number;
  alpha: number;
  calibrationShare: number;
  why:
    /** Fewer calibration answers than a pass needs. */
    | { kind: "few" }
    /** Too few left once the out-of-scope rule withholds some. */
    | { kind: "withheld"; certifiable: number }
    /** Even the most confident answers that could pass disagree at alpha or more. */
    | { kind: "all_wrong"; answers: number; wrong: number }
    /**
     * Where the test looked (its main candidate when it had answers, else
     * the most promising top set) too many disagreed; `borderline`: a top
     * set that would have passed with the whole test on it.
     */
    | {
      kind: "too_many";
      atMain: boolean;
      answers: number;
      wrong: number;
      effective: number;
      borderline: { answers: number; wrong: number } | null;
    };
  /** The smallest larger alpha (up to 0.3) this split would pass at, and the answers it would certify. */
  largerAlpha: { alpha: number; certified: number } | null;
}

/** How the larger-alpha part of the advice begins. */
const ALPHA_ADVICE = "at --alpha ";

/** An uncalibrated question's advice in words (see `uncalibratedAdvice`). */
export function adviceInWords(facts: AdviceFacts): string {
  const { answers: n, needed, alpha, why } = facts;
  const parts: string[] = [];
  const traces = (answers: number) =>
    Math.ceil(answers / facts.calibrationShare).toLocaleString("en-US");
  if (why.kind === "few") {
    parts.push(
      `it has ${n} calibration answers and a pass needs at least ${needed} (about ${
        traces(needed - n)
      } more traces answering it)`,
    );
  } else if (why.kind === "withheld") {
    parts.push(
      `only ${why.certifiable} of its ${n} calibration answers can be certified (the out-of-scope rule withholds the rest) and a pass needs at least ${needed} (about ${
        traces(needed - why.certifiable)
      } more traces answering it)`,
    );
  } else if (why.kind === "all_wrong") {
    parts.push(
      `even its ${why.answers} most confident calibration answers disagree with the model ${
        (100 * why.wrong / why.answers).toFixed(1)
      }% of the time, at least alpha (${alpha})`,
    );
  } else {
    const design = why.answers / why.effective;
    const clustered = design >= 1.05
      ? `, counted as about ${
        Math.round(why.effective)
      } independent ones (answers of one cluster or group count together)`
      : "";
    const seen = `${why.wrong} of ${why.answers} (${
      (100 * why.wrong / why.answers).toFixed(1)
    }%)${clustered}`;
    parts.push(
      why.atMain
        ? `at the test's main candidate (placed from the validation answers before calibration) its calibration answers disagree ${seen}, too many for the test at that size`
        : `its most promising calibration answers disagree ${seen}, too many for the test at that size`,
    );
    const b = why.borderline;
    if (b !== null) {
      parts.push(
        `a borderline case: its ${b.answers} most confident answers (${b.wrong} ${
          b.wrong === 1 ? "disagreement" : "disagreements"
        }) would have passed with the whole test on them, but where the test looks is fixed before calibration (retrying other seeds until one passes would void the bound)`,
      );
    }
  }
  const larger = facts.largerAlpha;
  if (larger !== null) {
    parts.push(
      `${ALPHA_ADVICE}${larger.alpha} this calibration split would certify ${larger.certified} of its ${n} answers ` +
        `(alpha is best chosen before seeing this: choosing it after makes the bound less strict)`,
    );
  }
  return parts.length === 0
    ? "no alpha up to 0.3 would pass on this calibration split"
    : parts.join("; ");
}

/**
 * `advice` with `words` (the learning curve's reading) put after why the
 * question failed and before the larger alpha it suggests, if any.
 */
export function adviceWith(advice: string, words: string): string {
  const at = advice.indexOf(ALPHA_ADVICE);
  return at < 0
    ? `${advice}; ${words}`
    : `${advice.slice(0, at)}${words}; ${advice.slice(at)}`;
}

/**
 * A curve's reading in words, for the advice: how the most confident
 * answers' disagreement moved with the training answers, then either how
 * many traces answering the question a pass needs (a point and a range, in
 * all and more than `answering`, the traces answering it now), or that more
 * of the same would not help (the curve is flat above alpha), or that it
 * would take more than `MAX_GROWTH` times as many.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { curveInWords } from "./words.ts";
 * const words = curveInWords({
 *   points: [{ trainAnswers: 300, topRate: 0.2 }, { trainAnswers: 900, topRate: 0.1 }],
 *   topShare: 0.1,
 *   growth: 3,
 *   low: 2,
 *   high: 5,
 *   flat: false,
 * }, 1_500, 0.05);
 * assert.match(words, /about 4,500 traces answering it in all \(80% range 3,000-7,500\), about 3,000 more \(1,500-6,000\)/);
 * ```
 */
export function curveInWords(
  e: CurveEstimate,
  answering: number,
  alpha: number,
  goal = "a pass",
): string {
  const first = e.points[0]!;
  const last = e.points[e.points.length - 1]!;
  const top = `its most confident ${Math.round(100 * e.topShare)}%`;
  const seen = `learning curve (the table refitted on ${
    CURVE_SHARES.map((s) => s * 100).join(", ")
  } and 100% of its fit part, scored on the same calibration answers): ${top} of calibration answers disagree ${
    percent(first.topRate)
  } at ${count(first.trainAnswers)} training answers and ${
    percent(last.topRate)
  } at ${count(last.trainAnswers)}`;
  if (e.flat) {
    return `${seen}, at least alpha (${alpha}) at every size and not falling: more traces of the same kind would not help; cleaner labels would (the model answering alike texts alike), or a larger --alpha`;
  }
  if (e.growth === null) {
    const low = e.low === null
      ? ""
      : ` (the calibration sample allows as few as about ${
        round(e.low * answering)
      } in all)`;
    return `${seen}; at the pace it falls, ${goal} needs more than ${MAX_GROWTH} times as many traces answering it (over ${
      round(MAX_GROWTH * answering)
    } more)${low}: the curve cannot say how many`;
  }
  const total = (g: number | null) =>
    g === null ? `over ${round(MAX_GROWTH * answering)}` : round(g * answering);
  const more = (g: number | null) =>
    g === null
      ? `over ${round((MAX_GROWTH - 1) * answering)}`
      : round(Math.max(0, g - 1) * answering);
  const span = (f: (g: number | null) => string) =>
    `${f(e.low)}${e.high === null ? " to " : "-"}${f(e.high)}`;
  return `${seen}; at the pace it falls, ${goal} needs about ${
    total(e.growth)
  } traces answering it in all (80% range ${span(total)}), about ${
    more(e.growth)
  } more (${
    span(more)
  }), of as many different kinds as the ones it has (the range is the calibration sample's and the curve's; it assumes the curve keeps its pace)`;
}

/**
 * The advice for a calibrated question that certifies little: the share
 * it certifies (`tiers`: of both tiers), then what its learning curve,
 * read at a coverage of at least `target`, says of the traces that would
 * certify that share (the table alone; a second tier adds to it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { coverageAdvice } from "./words.ts";
 * const words = coverageAdvice(0.387, false, 0.6, {
 *   points: [{ trainAnswers: 600, topRate: 0.04 }, { trainAnswers: 2200, topRate: 0.02 }],
 *   topShare: 0.02,
 *   growth: 2.8,
 *   low: 2.2,
 *   high: 4,
 *   flat: false,
 * }, 3_000, 0.05);
 * assert.match(words, /^certifies 38\.7% of its calibration answers; .*certifying 60% of them needs about 8,400 traces answering it in all \(80% range 6,600-12,000\)/);
 * ```
 */
export function coverageAdvice(
  share: number,
  tiers: boolean,
  target: number,
  e: CurveEstimate,
  answering: number,
  alpha: number,
): string {
  return `certifies ${percent(share)} of its calibration answers${
    tiers ? " with both tiers" : ""
  }; ${
    curveInWords(
      e,
      answering,
      alpha,
      `certifying ${Math.round(100 * target)}% of them${
        tiers ? " (the table alone; its second tier adds to it)" : ""
      }`,
    )
  }`;
}

/** A count with thousands separators. */
function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** A count rounded to two significant figures (hundreds at least), with separators. */
function round(n: number): string {
  const step = n < 1_000 ? 10 : 10 ** (Math.floor(Math.log10(n)) - 1);
  return count(Math.round(n / step) * step);
}
