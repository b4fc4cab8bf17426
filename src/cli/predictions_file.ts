/**
 * `eval --predictions FILE`: one JSON line per trace, with its text and,
 * per question it answers, the reference model's answer next to the
 * table's, so a user can read the disagreements one by one.
 *
 * @module
 */

import { answerOf, type Assessment, disagrees } from "../engine/mod.ts";
import type { TraceSet } from "../traces/mod.ts";
import type { TraceListener } from "../eval/mod.ts";

/** One question of one trace, as written. */
interface PredictedAnswer {
  /** As `answer` spells it: a boolean for a yes/no question, else the option. */
  reference: string | boolean;
  answer: string | boolean | null;
  certified: boolean;
  flag: string | null;
  drift_rule?: string;
  confidence: number;
  disagrees: boolean;
}

/** The lines of a predictions file, gathered while eval answers, written at the end. */
export class PredictionsFile {
  readonly path: string;
  readonly #traces: TraceSet;
  readonly #answers: (Record<string, PredictedAnswer> | undefined)[];
  /** The traces' yes/no questions, whose reference answers are written as booleans. */
  readonly #yesNo: Set<string>;

  /** A file at `path` for the traces of `traces`. */
  constructor(path: string, traces: TraceSet) {
    this.path = path;
    this.#traces = traces;
    this.#answers = new Array(traces.texts.length);
    this.#yesNo = new Set(
      traces.questions.filter((q) => q.kind === "yes_no").map((q) => q.name),
    );
  }

  /** Hears one answer of eval (pass it to `evaluate`). */
  readonly listener: TraceListener = (
    trace: number,
    question: string,
    a: Assessment,
    expected: string,
  ) => {
    const given = answerOf(a.answer);
    const entry: PredictedAnswer = {
      reference: this.#yesNo.has(question) ? expected === "true" : expected,
      answer: given,
      certified: a.answer.certified,
      flag: a.answer.flag,
      ...(a.answer.driftRule === null
        ? {}
        : { drift_rule: a.answer.driftRule }),
      confidence: a.answer.confidence,
      disagrees: disagrees(a.answer, expected),
    };
    (this.#answers[trace] ??= {})[question] = entry;
  };

  /** Writes every trace's line (`trace` is its 1-based position among the traces read). */
  async write(): Promise<void> {
    const file = await Deno.open(this.path, {
      write: true,
      create: true,
      truncate: true,
    });
    const writer = file.writable.getWriter();
    const encoder = new TextEncoder();
    try {
      let chunk = "";
      for (let i = 0; i < this.#traces.texts.length; i++) {
        chunk += JSON.stringify({
          trace: i + 1,
          text: this.#traces.texts[i],
          answers: this.#answers[i] ?? {},
        }) + "\n";
        if (chunk.length > 1 << 16) {
          await writer.write(encoder.encode(chunk));
          chunk = "";
        }
      }
      if (chunk !== "") await writer.write(encoder.encode(chunk));
    } finally {
      await writer.close();
    }
  }
}
