/**
 * The trace input of `train` and `eval`: the flags that say what to read and
 * how, and reading it with progress and notes on stderr.
 *
 * @module
 */

import { readTraces, type TraceSet } from "../traces/mod.ts";
import { type FlagOptions, UsageError, userPath } from "./common.ts";
import type { ProgressPrinter } from "./progress.ts";

/** The trace-input flags, for `parseFlags`. */
export const TRACE_FLAGS = {
  traces: { type: "string", multiple: true },
  "text-column": { type: "string" },
  "answer-columns": { type: "string", multiple: true },
} as const satisfies FlagOptions;

/** Usage lines of the trace-input flags. */
export const TRACE_FLAGS_USAGE =
  `  --traces FILE              traces to read; repeat for several files, read in order
                             as one set; - is standard input. JSON Lines, CSV (.csv),
                             TSV (.tsv) or a JSON array (content starting with [);
                             .gz files are decompressed
  --text-column NAME         the column (CSV, TSV) or field (JSON) holding the text
                             (default: text)
  --answer-columns A,B       read only these answer columns (CSV, TSV), or these keys of
                             "answers" (JSON); JSON traces without "answers" take them
                             from top-level fields`;

/** The parsed values of the trace-input flags. */
export interface TraceFlagValues {
  traces?: string[] | undefined;
  "text-column"?: string | undefined;
  "answer-columns"?: string[] | undefined;
}

/** The answer columns named by the flag (comma-separated, repeatable), or undefined for all. */
export function answerColumns(values: readonly string[] | undefined) {
  if (values === undefined) return undefined;
  const names = values.flatMap((v) => v.split(",")).map((n) => n.trim());
  if (names.some((n) => n === "")) {
    throw new UsageError(
      `--answer-columns must be names separated by commas: got "${
        values.join(",")
      }"`,
    );
  }
  return names;
}

/**
 * Reads the traces the flags name (relative paths from the user's folder),
 * with a "reading" meter and notes on `printer`. `command` names the command
 * in usage errors.
 */
export async function readTraceFlags(
  command: string,
  values: TraceFlagValues,
  printer: ProgressPrinter,
): Promise<TraceSet> {
  const files = (values.traces ?? []).map(userPath);
  if (files.length === 0) {
    throw new UsageError(
      `${command} needs --traces FILE (see ${command} --help)`,
    );
  }
  if (files.includes("")) {
    throw new UsageError(`--traces needs a file name: got ""`);
  }
  const textColumn = values["text-column"];
  if (textColumn !== undefined && textColumn.trim() === "") {
    throw new UsageError(`--text-column needs a name: got "${textColumn}"`);
  }
  const answers = answerColumns(values["answer-columns"]);
  const meter = printer.meter("reading");
  let lines = 0;
  let distinct = 0;
  try {
    const traces = await readTraces(files, {
      ...(textColumn === undefined ? {} : { textColumn: textColumn.trim() }),
      ...(answers === undefined ? {} : { answerColumns: answers }),
      note: printer.note,
      warn: printer.warn,
      progress: (p) => {
        lines = p.lines;
        distinct = p.distinctTexts;
        meter.update(p.lines, p.bytes, p.totalBytes);
      },
    });
    meter.done(
      `read ${lines.toLocaleString("en-US")} lines, ${
        traces.texts.length.toLocaleString("en-US")
      } traces, ${distinct.toLocaleString("en-US")} distinct texts`,
    );
    return traces;
  } catch (e) {
    printer.close();
    // The readers' TypeError is a wrong shape in the files (a question's
    // answers change kind between files): input, as their RangeError and
    // SyntaxError are, not a bug.
    throw e instanceof TypeError ? new UsageError(e.message, { cause: e }) : e;
  }
}
