/**
 * One trace as a JSON object, the unit of JSON Lines and of JSON array files:
 * `{"text": string | object, "answers": {question: option | true | false},
 * "time"?: ISO 8601 | seconds, "group"?: string | integer, "feedback"?:
 * {"source": string, "audit"?: string, ...}}`; a trace with a `feedback`
 * object is a line of a service's feedback log (see `src/traces/write.ts`).
 * A line naming an audit or decision already read (in any file) is left
 * out. A `{"ledger": {...}}` object is a line of the log's decision ledger
 * and a `{"pick": {...}}` one the text of a picked decision (`ledger.ts`),
 * no trace; nor is a `{"live": {...}}` one, a snapshot of the live
 * certificate's evidence (`src/live/snapshot.ts`), which training skips.
 *
 * @module
 */

import { stateText } from "../engine/mod.ts";
import type { LineOrigin, TraceSetBuilder } from "./builder.ts";
import { parseLedger, parsePick } from "./ledger.ts";
import { jsonGroup, jsonTime } from "./provenance.ts";
import type { TraceFields } from "./types.ts";

/** Which fields of a JSON trace hold the text and the answers. */
export interface JsonFields {
  text: string;
  /** Undefined: every key of `answers`. */
  answers: readonly string[] | undefined;
}

/** Names that cannot be answer columns: the text's, `time` and `group`. */
export function checkFields(fields: TraceFields): void {
  const text = fields.textColumn ?? "text";
  if (text === "") throw new RangeError("the text column's name is empty");
  const seen = new Set<string>();
  for (const name of fields.answerColumns ?? []) {
    if (name === "") throw new RangeError("an answer column's name is empty");
    if (name === text || name === "time" || name === "group") {
      throw new RangeError(
        `"${name}" is the ${
          name === text ? "text" : name
        } column, not an answer column`,
      );
    }
    if (seen.has(name)) {
      throw new RangeError(`answer column "${name}" is named twice`);
    }
    seen.add(name);
  }
}

/** The fields `TraceFields` name, with defaults; throws `RangeError` for names that cannot be (see `checkFields`). */
export function jsonFields(fields: TraceFields): JsonFields {
  checkFields(fields);
  return {
    text: fields.textColumn ?? "text",
    answers: fields.answerColumns,
  };
}

/** Most characters of the reason of a read error; longer ones are cut (they quote what was read). */
export const MAX_REASON_CHARS = 300;

/**
 * Throws the one-line error of a bad trace: `where: reason`, the reason cut
 * to `MAX_REASON_CHARS` (with how long it was), so a huge value quoted in
 * it never makes a huge message.
 */
export function fail(where: string, reason: string): never {
  const shown = reason.length <= MAX_REASON_CHARS
    ? reason
    : `${reason.slice(0, MAX_REASON_CHARS)}... (cut: ${
      reason.length.toLocaleString("en-US")
    } characters)`;
  throw new SyntaxError(`${where}: ${shown.replace(/\s*\n\s*/g, " ")}`);
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Adds the trace `value` (parsed JSON) to `builder`; `where` (`file:line`, or
 * `file:line: element N`) prefixes every error.
 */
export function addJsonTrace(
  value: unknown,
  fields: JsonFields,
  builder: TraceSetBuilder,
  where: string,
): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(
      where,
      `a trace must be a JSON object with "${fields.text}" and "answers" (got ${
        kindOf(value)
      })`,
    );
  }
  const trace = value as Record<string, unknown>;
  if (trace.ledger !== undefined && trace[fields.text] === undefined) {
    const entry = parseLedger(trace.ledger);
    if (typeof entry === "string") fail(where, entry);
    builder.addLedger(entry);
    return;
  }
  // A live certificate's snapshot (`src/live/snapshot.ts`): no trace.
  if (trace.live !== undefined && trace[fields.text] === undefined) return;
  if (trace.pick !== undefined && trace[fields.text] === undefined) {
    const pick = parsePick(trace.pick);
    if (typeof pick === "string") fail(where, pick);
    builder.addPick(pick);
    return;
  }
  const text = trace[fields.text];
  if (text === undefined) {
    fail(
      where,
      `the trace has no "${fields.text}" field (it has ${
        Object.keys(trace).map((k) => JSON.stringify(k)).join(", ") || "none"
      }); name the field that holds the text with --text-column NAME`,
    );
  }
  if (
    typeof text !== "string" && (typeof text !== "object" || text === null)
  ) {
    fail(where, `"${fields.text}" must be a string or an object`);
  }
  const answers = trace.answers;
  let source: Record<string, unknown>;
  if (answers === undefined && fields.answers !== undefined) {
    source = trace;
  } else if (
    typeof answers !== "object" || answers === null || Array.isArray(answers)
  ) {
    const hint = answers === undefined
      ? ` (this trace has ${
        Object.keys(trace).map((k) => JSON.stringify(k)).join(", ")
      }; name top-level answer fields with --answer-columns)`
      : "";
    fail(
      where,
      `"answers" must be an object of question to option, true or false${hint}`,
    );
  } else {
    source = answers as Record<string, unknown>;
  }
  const time = jsonTime(trace.time);
  if ("reason" in time) fail(where, time.reason);
  const group = jsonGroup(trace.group);
  if ("reason" in group) fail(where, group.reason);

  const feedback = trace.feedback;
  let fromFeedback = false;
  let origin: LineOrigin | undefined;
  if (feedback !== undefined && feedback !== null) {
    if (
      typeof feedback !== "object" || Array.isArray(feedback) ||
      typeof (feedback as Record<string, unknown>).source !== "string"
    ) {
      fail(
        where,
        `"feedback" must be an object with a "source" (a line of a service's feedback log): got ${
          JSON.stringify(feedback)
        }`,
      );
    }
    fromFeedback = true;
    const f = feedback as Record<string, unknown>;
    for (const key of ["audit", "id", "issuer", "bundle"]) {
      if (f[key] !== undefined && typeof f[key] !== "string") {
        fail(
          where,
          `"feedback"."${key}" must be a string: got ${JSON.stringify(f[key])}`,
        );
      }
    }
    // One audit or decision, one trace: a fleet's replicas may each have
    // logged it.
    const name = (f.audit ?? f.id) as string | undefined;
    if (name !== undefined && !builder.firstAudit(name)) return;
    origin = lineOrigin(f, where, name);
  }
  const row = builder.addTrace(
    stateText(text),
    time.seconds,
    group.name,
    fromFeedback,
  );
  if (origin !== undefined) builder.setOrigin(row, origin);
  const add = (question: string, a: unknown) => {
    if (a === null || a === undefined) return;
    if (typeof a === "boolean") {
      builder.answer(row, question, a ? "true" : "false", where);
    } else if (typeof a !== "string") {
      fail(where, `answer to "${question}" must be a string, true or false`);
    } else if (a === "") {
      fail(where, `answer to "${question}" is an empty string`);
    } else {
      builder.answer(row, question, a, where);
    }
  };
  if (fields.answers === undefined) {
    for (const question in source) add(question, source[question]);
  } else {
    for (const question of fields.answers) add(question, source[question]);
  }
}

/**
 * How a feedback line's decision was picked: its source, probability
 * (`sampling_probability`, in (0, 1]), decision time (`decided_at`), issuing
 * process and bundle; throws the line's error for a probability or time
 * that cannot be.
 */
function lineOrigin(
  f: Record<string, unknown>,
  where: string,
  id: string | undefined,
): LineOrigin {
  const p = f.sampling_probability;
  if (
    p !== undefined && p !== null &&
    !(typeof p === "number" && p > 0 && p <= 1)
  ) {
    fail(
      where,
      `"feedback"."sampling_probability" must be a probability in (0, 1]: got ${
        JSON.stringify(p)
      }`,
    );
  }
  let decidedAt = NaN;
  if (f.decided_at !== undefined && f.decided_at !== null) {
    const t = jsonTime(f.decided_at);
    if ("reason" in t) fail(where, `"feedback"."decided_at": ${t.reason}`);
    decidedAt = t.seconds * 1000;
  }
  return {
    source: f.source as string,
    id,
    rate: typeof p === "number" ? p : NaN,
    decidedAt,
    issuer: f.issuer as string | undefined,
    bundle: f.bundle as string | undefined,
  };
}
