/**
 * A column of timestamps read as answers: a CSV's `created` or `timestamp`
 * column, or a JSON field of times, becomes a "question" with an option
 * per distinct time. Training would refuse it as an identifier; this says
 * what it is and what to do (name it `time`, and the split follows it).
 *
 * @module
 */

import {
  MAX_EPOCH_SECONDS,
  parseIsoTime,
  type TraceSet,
} from "../traces/mod.ts";
import { TrainingError } from "./admit.ts";

/** Fewest distinct options before a question is looked at as a column of times. */
const FEW_OPTIONS = 20;

/** Whether an option reads as a time: ISO 8601, or seconds since the epoch after 1973. */
function readsAsTime(option: string): boolean {
  const s = option.trim();
  if (/^\d{9,11}(\.\d+)?$/.test(s)) {
    const n = Number(s);
    return n >= 1e8 && n <= MAX_EPOCH_SECONDS;
  }
  return "seconds" in parseIsoTime(s);
}

/**
 * The choice questions of `traces` whose options are nearly all times (at
 * least 90% of up to 200 looked at), each with one of its options as an
 * example.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseCsvTraces } from "../traces/mod.ts";
 * import { timeColumns } from "./time_column.ts";
 * const rows = Array.from({ length: 40 }, (_, i) =>
 *   `hello ${i},yes,2024-05-${String(1 + (i % 28)).padStart(2, "0")}T10:${String(i).padStart(2, "0")}Z`);
 * const traces = parseCsvTraces("t.csv", `text,ok,created\n${rows.join("\n")}\n`);
 * assert.deepEqual(timeColumns(traces).map((c) => c.name), ["created"]);
 * ```
 */
export function timeColumns(
  traces: TraceSet,
): { name: string; example: string }[] {
  const out: { name: string; example: string }[] = [];
  for (const q of traces.questions) {
    if (q.kind !== "choice" || q.options.length < FEW_OPTIONS) continue;
    const looked = q.options.slice(0, 200);
    const times = looked.filter(readsAsTime).length;
    if (times >= 0.9 * looked.length) {
      out.push({ name: q.name, example: q.options[0]! });
    }
  }
  return out;
}

/**
 * What to do about a column of times, in one line: name it `time` (when the
 * traces have no time yet) or leave it out with `--answer-columns`.
 */
export function timeColumnAdvice(
  column: { name: string; example: string },
  hasTime: boolean,
): string {
  return `column "${column.name}" holds times (such as ${
    JSON.stringify(column.example)
  }), not answers, so it is left out: ${
    hasTime
      ? "the traces already have a time; list the answer columns with --answer-columns to leave it out quietly"
      : `rename it "time" and train splits by it (calibrating and testing on the newest traces), or list the answer columns with --answer-columns`
  }`;
}

/**
 * The traces without columns of times read as answers, each left out with
 * a warning (to `warn`) saying to name it `time`; throws `TrainingError`
 * when nothing else is left to train.
 */
export function withoutTimeColumns(
  traces: TraceSet,
  warn: (line: string) => void,
): TraceSet {
  const columns = timeColumns(traces);
  if (columns.length === 0) return traces;
  const advice = columns.map((c) => timeColumnAdvice(c, traces.times !== null));
  const left = traces.questions.filter((q) =>
    !columns.some((c) => c.name === q.name)
  );
  if (left.length === 0) {
    throw new TrainingError(`nothing to train: ${advice.join("; ")}`);
  }
  for (const line of advice) warn(line);
  return { ...traces, questions: left };
}
