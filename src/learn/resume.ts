/**
 * What a learning service finds in its folder when it starts again: the
 * retrains its history recorded (`DIR/retrains.jsonl`: how many, what the
 * last one read and when it ended, the tests each question spent) and the
 * labels its feedback log holds (how many, and per question the answers
 * given), so a restart goes on where the stop left it rather than from
 * nothing: the schedule counts from the last retrain, the next test of a
 * question is run at its next share of delta, and a question the bundle
 * has not learned is answered with the counts seen so far.
 *
 * @module
 */

import { LEARN_FILES } from "./retrain.ts";
import type { RetrainRecord } from "./record.ts";

/** The learner's state as its folder records it (see the module doc). */
export interface LearnerResume {
  /** The retrains' passes, in the order recorded. */
  history: RetrainRecord[];
  /** Retrains recorded, and passes that swapped a bundle in. */
  retrains: number;
  swaps: number;
  /** Labels the last retrain read (0: none yet), and when it ended (ms; -Infinity: none). */
  lastLabels: number;
  lastAt: number;
  /** Labels of the last pass that ran the encoder (0: none). */
  encoderTriedAt: number;
  /** Per question, the calibration tests run so far, and the calibration answers and labels the last passing one had. */
  tests: Record<string, number>;
  testedAt: Record<string, { calibration: number; labels: number }>;
  /** Labelled lines in the feedback log (the rotated file included). */
  labels: number;
  /** Per question, its kind and the answers per option the log holds, in the order first seen. */
  questions: Map<
    string,
    { kind: "choice" | "yes_no"; counts: Map<string, number> }
  >;
}

/**
 * The state recorded by a history's lines (see `LearnerResume`; the log's
 * labels are left at 0 and the questions empty). A line that is not a
 * record (a torn last line) is skipped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { historyState } from "./resume.ts";
 * const s = historyState([
 *   '{"retrain":1,"labels":300,"swapped":false,"ended":"2026-12-01T00:00:00.000Z","tested":{"intent":0.011}}',
 *   '{"retrain":2,"labels":400,"swapped":true,"ended":"2026-12-01T00:01:00.000Z","tested":{"intent":0.007}}',
 *   '{"retrain":2,"lab',
 * ]);
 * assert.equal(s.retrains, 2);
 * assert.equal(s.swaps, 1);
 * assert.equal(s.lastLabels, 400);
 * assert.deepEqual(s.tests, { intent: 2 });
 * ```
 */
export function historyState(lines: readonly string[]): LearnerResume {
  const history: RetrainRecord[] = [];
  for (const line of lines) {
    if (line.trim() === "") continue;
    try {
      const r = JSON.parse(line) as RetrainRecord;
      if (typeof r === "object" && r !== null && typeof r.labels === "number") {
        history.push(r);
      }
    } catch { /* a torn line */ }
  }
  let retrains = 0;
  let swaps = 0;
  let encoderTriedAt = 0;
  const tests: Record<string, number> = {};
  const testedAt: LearnerResume["testedAt"] = {};
  let previous: number | undefined;
  let testedHere = new Set<string>();
  history.forEach((r, i) => {
    // Records before retrains were numbered count one retrain each.
    if (r.retrain === undefined || r.retrain !== previous) {
      retrains++;
      testedHere = new Set();
    }
    previous = r.retrain;
    if (r.swapped) swaps++;
    if (r.encoder) encoderTriedAt = r.labels;
    // A retrain spends one share per question, whichever passes tested it.
    for (const q of Object.keys(r.tested ?? {})) {
      if (!testedHere.has(q)) tests[q] = (tests[q] ?? 0) + 1;
      testedHere.add(q);
    }
    // Its last pass says whether the next test waits for more evidence.
    const next = history[i + 1];
    if (
      next !== undefined && next.retrain !== undefined &&
      next.retrain === r.retrain
    ) return;
    for (const q of Object.keys(r.tested ?? {})) {
      if (r.failures?.[q] === undefined) {
        testedAt[q] = {
          calibration: r.calibration?.[q] ?? 0,
          labels: r.labels,
        };
      } else delete testedAt[q];
    }
  });
  const last = history.at(-1);
  const ended = last === undefined ? NaN : Date.parse(last.ended);
  return {
    history,
    retrains,
    swaps,
    lastLabels: last === undefined ? 0 : Math.max(1, last.labels),
    lastAt: Number.isFinite(ended) ? ended : -Infinity,
    encoderTriedAt,
    tests,
    testedAt,
    labels: 0,
    questions: new Map(),
  };
}

/**
 * Counts the labelled lines of a feedback log's text (`lines`), per
 * question and answer, into `into` (see `LearnerResume.questions`);
 * returns the labelled lines. Ledger, pick and other lines without
 * answers, and lines that are not JSON, are skipped.
 */
export function countLabels(
  lines: Iterable<string>,
  into: LearnerResume["questions"],
): number {
  let labels = 0;
  for (const line of lines) {
    if (!line.startsWith('{"text"')) continue;
    let answers: unknown;
    try {
      answers = (JSON.parse(line) as { answers?: unknown }).answers;
    } catch {
      continue;
    }
    if (typeof answers !== "object" || answers === null) continue;
    let any = false;
    for (const [q, a] of Object.entries(answers)) {
      if (typeof a !== "string" && typeof a !== "boolean") continue;
      any = true;
      let entry = into.get(q);
      if (entry === undefined) {
        into.set(
          q,
          entry = {
            kind: typeof a === "boolean" ? "yes_no" : "choice",
            counts: new Map(),
          },
        );
      }
      const name = String(a);
      entry.counts.set(name, (entry.counts.get(name) ?? 0) + 1);
    }
    if (any) labels++;
  }
  return labels;
}

/**
 * What `dir` records of an earlier run (see the module doc): its history
 * and its log's labels. A folder with neither gives the state of a first
 * start. Throws only for a file that exists but cannot be read.
 */
export async function readResume(dir: string): Promise<LearnerResume> {
  const text = async (name: string) => {
    try {
      return await Deno.readTextFile(`${dir}/${name}`);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return "";
      throw e;
    }
  };
  const state = historyState((await text(LEARN_FILES.history)).split("\n"));
  for (const name of [LEARN_FILES.rotated, LEARN_FILES.log]) {
    state.labels += countLabels(
      (await text(name)).split("\n"),
      state.questions,
    );
  }
  return state;
}
