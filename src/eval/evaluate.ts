/**
 * Evaluation: a table answering traces it has never seen, exactly as
 * serving would, counted per question (the `eval` command prints it; the
 * benchmark scripts read it).
 *
 * @module
 */

import {
  Answerer,
  assess,
  type Assessment,
  type DriftGuard,
  DriftMonitor,
  peekGuard,
  prepareText,
  QUIET_GUARD,
  type Table,
  thresholdInForce,
} from "../engine/mod.ts";
import { answerAsServed, type TiersFigures, TierTally } from "./tiers.ts";
import type { TraceSet } from "../traces/mod.ts";
import {
  type EvalFigures,
  QuestionTally,
  unthresholdedState,
} from "./tally.ts";

/** When the online guard raised and cleared its alarm, by request index. */
export interface StreamEvents {
  raised: number[];
  cleared: number[];
}

/** What eval tells a caller about each trace and question it answers. */
export type TraceListener = (
  trace: number,
  question: string,
  assessment: Assessment,
  expected: string,
) => void;

/**
 * Evaluates `table` on `traces`: per question the meter's figures, per
 * option figures, why answers were not certified, and the frontier at the
 * bundle's candidate thresholds. With `stream`, certification also consults
 * an online drift guard. `onTrace` hears every answer.
 */
export function evaluate(
  table: Table,
  traces: TraceSet,
  stream: boolean,
  onTrace?: TraceListener,
  embeddings?: readonly Float32Array[],
): {
  questions: Record<string, EvalFigures & { tiers?: TiersFigures }>;
  stream?: Record<string, StreamEvents>;
} {
  const monitor = stream ? new DriftMonitor(table.settings.drift) : undefined;
  const guard: DriftGuard = monitor ?? QUIET_GUARD;
  const peek: DriftGuard = monitor === undefined
    ? QUIET_GUARD
    : peekGuard(monitor);
  // With the texts' embeddings, both tiers answer as `serve` has them:
  // certified against the two-tier rule's threshold.
  const answerer = new Answerer(table, {
    secondTier: embeddings !== undefined,
    monitor,
  });
  const { state } = answerer;
  const tierTallies = new Map<string, TierTally>();
  const open = unthresholdedState(table);
  const asked = traces.questions.filter((q) => table.byName.has(q.name));
  const tallies = asked.map((q) =>
    new QuestionTally(table.byName.get(q.name)!.options)
  );
  const events: Record<string, StreamEvents> = {};
  const lastStatus = new Map<string, string>();
  for (const q of asked) {
    events[q.name] = { raised: [], cleared: [] };
    lastStatus.set(q.name, "quiet");
  }
  for (let i = 0; i < traces.texts.length; i++) {
    let prepared;
    let openPrepared;
    for (let t = 0; t < asked.length; t++) {
      const q = asked[t]!;
      const label = q.labels[i]!;
      if (label < 0) continue;
      prepared ??= prepareText(table, state, traces.texts[i]!);
      openPrepared ??= prepareText(table, open, traces.texts[i]!);
      const tq = table.byName.get(q.name)!;
      let served = answerer.answer(prepared, q.name, {}, guard);
      const unthresholded = assess(table, open, openPrepared, q.name, {}, peek);
      // The second tier's answer at no threshold, for the frontier of both
      // tiers (null where its novelty guard withholds the text).
      let second: Assessment | null | undefined;
      const embedding = embeddings?.[i];
      if (
        embedding !== undefined && answerer.tiered &&
        tq.semantic !== undefined && tq.semantic.calibration.threshold !== null
      ) {
        const r = answerer.answerWithSecondTier(
          unthresholded,
          embedding,
          answerer.tableInput(unthresholded, prepared),
          0,
        );
        second = r.tier === "semantic" ? r.assessment : null;
      }
      if (embeddings !== undefined && tq.semantic !== undefined) {
        let tally = tierTallies.get(q.name);
        if (tally === undefined) {
          tierTallies.set(q.name, tally = new TierTally());
        }
        const r = answerAsServed(
          answerer,
          prepared,
          served,
          embeddings[i],
          tally,
        );
        served = r.assessment;
        tally.add(served, r.tier, q.options[label]!);
      }
      const expected = q.options[label]!;
      tallies[t]!.add(
        served,
        unthresholded,
        expected,
        tq.optionIndex.has(expected),
        second,
      );
      onTrace?.(i, q.name, served, expected);
      if (monitor !== undefined) {
        const drift = monitor.state(q.name);
        if (drift.status !== lastStatus.get(q.name)) {
          const list = drift.status === "alarmed"
            ? events[q.name]!.raised
            : events[q.name]!.cleared;
          list.push(drift.observed);
          lastStatus.set(q.name, drift.status);
        }
      }
    }
  }
  const questions: Record<string, EvalFigures & { tiers?: TiersFigures }> = {};
  asked.forEach((q, t) => {
    const tq = table.byName.get(q.name)!;
    const tiers = tierTallies.get(q.name)?.result();
    // With both tiers served, the frontier's candidates are the two-tier
    // rule's (its threshold is the one in force).
    const candidates = tiers !== undefined && tq.semantic !== undefined
      ? tq.semantic.calibration.candidates
      : tq.calibration.candidates;
    questions[q.name] = {
      ...tallies[t]!.result(
        candidates,
        thresholdInForce(table, state, q.name),
        tq.calibration.delta,
      ),
      ...(tiers === undefined ? {} : { tiers }),
    };
  });
  return stream ? { questions, stream: events } : { questions };
}
