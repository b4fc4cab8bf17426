/**
 * Writing traces: one trace as a line of JSON Lines, in the form
 * `readTraces` reads back (`{"text", "answers", "time"}`, and `"feedback"`
 * for a line of a service's feedback log), so what a
 * service keeps (the feedback log) trains the next table as it is.
 *
 * @module
 */

/** The largest time (ms from the epoch, either way) a `Date` holds. */
const MAX_DATE_MS = 8.64e15;

/** One trace to write: its text, its answers by question, and when it was seen. */
export interface TraceRecord {
  text: string;
  /** Question name and answer (an option, or true / false for yes/no), in order. */
  answers: readonly (readonly [question: string, answer: string | boolean])[];
  time: Date;
  /**
   * For a line of a service's feedback log: where it came from and the
   * bundle it answered, written as `"feedback": {"source",
   * "sampling_probability"?, "audit"? or "id"?, "decided_at"?, "issuer"?,
   * "bundle"}` (see `src/live/feedback.ts`); `audit` (or `id`, for an
   * uncertified answer) names the decision the line answers, so `train`
   * keeps one line per decision across the logs of a fleet; `decided_at`
   * and `issuer` tie it to its stretch of the decision ledger.
   */
  feedback?: {
    source: string;
    samplingProbability: number | null;
    audit?: string | undefined;
    id?: string | undefined;
    /** When the decision was made, ms since the epoch. */
    decidedAt?: number | undefined;
    issuer?: string | undefined;
    bundle: string;
  };
}

/**
 * The trace as one JSON Lines line, newline-terminated:
 * `{"text":...,"answers":{...},"time":"<ISO 8601>"}`. Any question name,
 * `__proto__` included, is written as a key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { traceLine } from "./write.ts";
 * assert.equal(
 *   traceLine({ text: "hi", answers: [["topic", "greeting"]], time: new Date(0) }),
 *   '{"text":"hi","answers":{"topic":"greeting"},"time":"1970-01-01T00:00:00.000Z"}\n',
 * );
 * // A decision time no date can hold (a forged id's) is left out, not thrown on.
 * assert.doesNotThrow(() =>
 *   traceLine({
 *     text: "hi",
 *     answers: [["topic", "greeting"]],
 *     time: new Date(0),
 *     feedback: { source: "uncertified", samplingProbability: 1, decidedAt: 1e300, bundle: "ab" },
 *   })
 * );
 * ```
 */
export function traceLine(trace: TraceRecord): string {
  let answers = "";
  for (const [question, answer] of trace.answers) {
    if (answers !== "") answers += ",";
    answers += `${JSON.stringify(question)}:${JSON.stringify(answer)}`;
  }
  const time = JSON.stringify(trace.time.toISOString());
  const line = `{"text":${
    JSON.stringify(trace.text)
  },"answers":{${answers}},"time":${time}`;
  const f = trace.feedback;
  if (f === undefined) return `${line}}\n`;
  let p = f.samplingProbability === null
    ? ""
    : `,"sampling_probability":${JSON.stringify(f.samplingProbability)}`;
  if (f.audit !== undefined) p += `,"audit":${JSON.stringify(f.audit)}`;
  if (f.id !== undefined) p += `,"id":${JSON.stringify(f.id)}`;
  // A time beyond what a date can hold (a forged id's) is no decision time.
  if (f.decidedAt !== undefined && Math.abs(f.decidedAt) <= MAX_DATE_MS) {
    p += `,"decided_at":${JSON.stringify(new Date(f.decidedAt).toISOString())}`;
  }
  if (f.issuer !== undefined) p += `,"issuer":${JSON.stringify(f.issuer)}`;
  return `${line},"feedback":{"source":${
    JSON.stringify(f.source)
  }${p},"bundle":${JSON.stringify(f.bundle)}}}\n`;
}
