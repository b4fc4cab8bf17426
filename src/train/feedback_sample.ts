/**
 * Which lines of a feedback log may calibrate, read from the log's decision
 * ledger (`src/traces/ledger.ts`). The service draws a coin of probability
 * `rate` for every decision, whatever its verdict: a picked certified
 * answer is an audit, a picked uncertified one a `sample` (the proxy asks
 * its model for it anyway). The picked decisions are a plain random sample
 * of the traffic, so their lines calibrate, unweighted, with the exact test
 * training uses for any trace; none of them trains (`HELD`). Every picked
 * decision that was never answered counts in calibration as a
 * disagreement, so a proxy that drops what would disagree buys nothing: the
 * service kept its text (a `pick` line), so it counts where the new table
 * would certify it (`unanswered`); without its text, at every threshold
 * (`missing`). Unpicked uncertified answers are no sample (the proxy reports
 * the hard cases only): they train (`FIT_ONLY`). In a stretch where nothing
 * could be certified (no bundle, or the question unknown or uncalibrated)
 * and every decision was answered, the lines are all of that stretch's
 * decisions: a census, split like any trace.
 *
 * A line is matched to its stretch by its question, issuing process, bundle
 * and decision time; a line that matches none (a log without a ledger, an
 * older service's line, a stretch not yet settled) trains only, as do
 * lines a client chose to send (`trace`). After a change of the traffic
 * (`calibrateAfter`: the model began answering options the table lacked),
 * the stretches that began before it, and the traces that are no feedback
 * line, only train that question: calibration stands for the traffic since.
 *
 * @module
 */

import type {
  FeedbackOrigins,
  LedgerEntry,
  PickedDecision,
  QuestionAnswers,
  TraceSet,
} from "../traces/mod.ts";
import { FEEDBACK_SOURCES } from "../traces/mod.ts";
import { FIT_ONLY, HELD, UNLABELLED } from "./split.ts";

const SOURCE = {
  uncertified: FEEDBACK_SOURCES.indexOf("uncertified"),
  sample: FEEDBACK_SOURCES.indexOf("sample"),
  audit: FEEDBACK_SOURCES.indexOf("audit"),
};

/** What the ledger says of one question's feedback lines, for the report. */
export interface FeedbackSampleFigures {
  /** Lines of complete stretches where nothing could be certified: split like any trace. */
  census: number;
  /** Lines of picked decisions: calibration or test only. */
  held: number;
  /** Picked decisions never answered whose text the log kept: disagreements in calibration where certified. */
  unanswered: number;
  /** Picked decisions never answered without their text: certified disagreements at every threshold. */
  missing: number;
  /** Lines that train only (unpicked uncertified answers, client-sent lines, lines no settled stretch accounts for). */
  fitOnly: number;
  /** Ledger stretches read (settled ones). */
  stretches: number;
}

/** Where each line of a trace set stands, and the unanswered picks per question. */
export interface FeedbackSample {
  /** Per trace: 0 (split like any trace), `FIT_ONLY` or `HELD` (see `SplitOptions.outside`). */
  outside: Uint8Array;
  /** Per question name, what its feedback lines are (questions without any are absent). */
  figures: Map<string, FeedbackSampleFigures>;
  /** Per question name, the rows of picked decisions never answered (their text, no answer). */
  unanswered: Map<string, number[]>;
}

/** One stretch with the lines that answer its decisions. */
interface Stretch {
  entry: LedgerEntry;
  picked: number[];
  unpicked: number[];
  /** The picks the log kept the text of. */
  picks: PickedDecision[];
}

/**
 * Where each trace of `traces` stands (see the module doc): ledger stretches
 * ending at or after `settledBefore` (ms since the epoch) are left out, as
 * feedback on their decisions may still be on its way. Traces that are no
 * feedback line are split like any trace.
 */
export function feedbackSample(
  traces: TraceSet,
  questions: readonly QuestionAnswers[],
  settledBefore = Infinity,
  calibrateAfter: Readonly<Record<string, number>> = {},
): FeedbackSample {
  const n = traces.texts.length;
  const outside = new Uint8Array(n);
  const figures = new Map<string, FeedbackSampleFigures>();
  const unanswered = new Map<string, number[]>();
  const origins = traces.origins ?? null;
  const flags = traces.feedback ?? null;
  for (const pick of traces.picks ?? []) outside[pick.row] = UNLABELLED;
  // After a change, what is no feedback line only trains that question.
  for (const qa of questions) {
    if (calibrateAfter[qa.name] === undefined) continue;
    for (let i = 0; i < n; i++) {
      const isLine = (origins !== null && origins.source[i] !== 0) ||
        flags?.[i] === 1;
      if (qa.labels[i]! >= 0 && !isLine) outside[i] = FIT_ONLY;
    }
  }
  if (flags === null && origins === null && traces.picks === undefined) {
    return { outside, figures, unanswered };
  }
  const figuresOf = (name: string) => {
    let f = figures.get(name);
    if (f === undefined) {
      figures.set(
        name,
        f = {
          census: 0,
          held: 0,
          unanswered: 0,
          missing: 0,
          fitOnly: 0,
          stretches: 0,
        },
      );
    }
    return f;
  };
  const stretches = stretchIndex(
    traces.ledger ?? [],
    settledBefore,
    calibrateAfter,
  );
  for (const pick of traces.picks ?? []) {
    const list = stretches.get(
      `${pick.issuer}\u0000${pick.question}\u0000${pick.bundle}`,
    );
    const s = list === undefined ? undefined : within(list, pick.decidedAt);
    if (s !== undefined && Math.abs(s.entry.rate - pick.rate) <= 1e-9) {
      s.picks.push(pick);
    }
  }
  const questionOf = lineQuestions(questions, n);
  for (let i = 0; i < n; i++) {
    const isLine = (origins !== null && origins.source[i] !== 0) ||
      flags?.[i] === 1;
    if (!isLine) continue;
    outside[i] = FIT_ONLY;
    const q = questionOf[i]!;
    const name = q < 0 ? null : questions[q]!.name;
    const stretch = name === null || origins === null
      ? undefined
      : stretchOf(stretches, origins, i, name);
    if (stretch === undefined) {
      if (name !== null) figuresOf(name).fitOnly++;
      continue;
    }
    if (origins!.source[i] === SOURCE.uncertified) stretch.unpicked.push(i);
    else stretch.picked.push(i);
  }
  for (const list of stretches.values()) {
    for (const s of list) {
      const e = s.entry;
      const f = figuresOf(e.question);
      f.stretches++;
      const answered = s.picked.length + s.unpicked.length;
      if (!e.certifiable && answered >= e.decisions) {
        // A census: every decision of the stretch, each with its label.
        for (const i of [...s.picked, ...s.unpicked]) outside[i] = 0;
        f.census += answered;
        continue;
      }
      for (const i of s.picked) outside[i] = HELD;
      f.held += s.picked.length;
      f.fitOnly += s.unpicked.length;
      const answeredIds = new Set<string>();
      for (const i of s.picked) {
        const id = origins!.ids.get(i);
        if (id !== undefined) answeredIds.add(id);
      }
      const kept = s.picks.filter((p) => !answeredIds.has(p.id));
      if (kept.length > 0) {
        let rows = unanswered.get(e.question);
        if (rows === undefined) unanswered.set(e.question, rows = []);
        for (const p of kept) rows.push(p.row);
      }
      f.unanswered += kept.length;
      f.missing += Math.max(0, e.picked - s.picked.length - kept.length);
    }
  }
  return { outside, figures, unanswered };
}

/** The stretch of `list` (in time order) that time `at` falls in, if any. */
function within(list: readonly Stretch[], at: number): Stretch | undefined {
  let lo = 0;
  let hi = list.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.entry.from <= at) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const s = found < 0 ? undefined : list[found]!;
  return s !== undefined && at < s.entry.to ? s : undefined;
}

/** Per trace, the one question it answers (-1 for none or several). */
function lineQuestions(
  questions: readonly QuestionAnswers[],
  n: number,
): Int32Array {
  const out = new Int32Array(n).fill(-1);
  questions.forEach((qa, q) => {
    for (let i = 0; i < n; i++) {
      if (qa.labels[i]! < 0) continue;
      out[i] = out[i] === -1 ? q : -2;
    }
  });
  for (let i = 0; i < n; i++) if (out[i] === -2) out[i] = -1;
  return out;
}

/**
 * Settled stretches by issuer, question and bundle, each list in time
 * order; those that began before their question's `calibrateAfter` are
 * left out.
 */
function stretchIndex(
  ledger: readonly LedgerEntry[],
  settledBefore: number,
  calibrateAfter: Readonly<Record<string, number>>,
): Map<string, Stretch[]> {
  const out = new Map<string, Stretch[]>();
  for (const entry of ledger) {
    if (!(entry.to < settledBefore)) continue;
    if (entry.from < (calibrateAfter[entry.question] ?? -Infinity)) continue;
    const key = `${entry.issuer}\u0000${entry.question}\u0000${entry.bundle}`;
    let list = out.get(key);
    if (list === undefined) out.set(key, list = []);
    list.push({ entry, picked: [], unpicked: [], picks: [] });
  }
  for (const list of out.values()) {
    list.sort((a, b) => a.entry.from - b.entry.from);
  }
  return out;
}

/**
 * The settled stretch that line `i` (answering question `name`) answers a
 * decision of: same issuer and bundle, its decision time inside the
 * stretch, and (for a picked line) the stretch's rate; undefined when none
 * does or the line is no picked or uncertified answer.
 */
function stretchOf(
  stretches: Map<string, Stretch[]>,
  origins: FeedbackOrigins,
  i: number,
  name: string,
): Stretch | undefined {
  const source = origins.source[i]!;
  const picked = source === SOURCE.sample || source === SOURCE.audit;
  if (!picked && source !== SOURCE.uncertified) return undefined;
  const issuer = origins.issuers[origins.issuer[i]!];
  const bundle = origins.bundles[origins.bundle[i]!];
  const at = origins.decidedAt[i]!;
  if (issuer === undefined || bundle === undefined || Number.isNaN(at)) {
    return undefined;
  }
  const list = stretches.get(`${issuer}\u0000${name}\u0000${bundle}`);
  const s = list === undefined ? undefined : within(list, at);
  if (s === undefined) return undefined;
  if (picked && Math.abs(origins.rate[i]! - s.entry.rate) > 1e-9) {
    return undefined;
  }
  return s;
}
