/**
 * `eval`: how a bundle does on traces it has never seen.
 *
 * @module
 */

import { loadBundle } from "../bundle/mod.ts";
import type { Table } from "../engine/mod.ts";
import type { TraceSet } from "../traces/mod.ts";
import { evaluate } from "../eval/mod.ts";
import { parseFlags, UsageError, userPath } from "./common.ts";
import { ProgressPrinter } from "./progress.ts";
import { evalInWords } from "./eval_words.ts";
import { compareBundles, comparisonLines } from "./eval_compare.ts";
import { PredictionsFile } from "./predictions_file.ts";
import { evalReport, reportHtml } from "./report_html.ts";
import {
  readTraceFlags,
  TRACE_FLAGS,
  TRACE_FLAGS_USAGE,
} from "./trace_input.ts";

/** Usage text of `eval`. */
export const EVAL_USAGE =
  `Usage: eval --bundle DIR --traces FILE [--traces FILE ...] [--json] [--stream]
            [--predictions FILE] [--report-html FILE] [--table-only]
            [--embed-cache FILE]
       eval --bundle A --bundle B [--bundle C ...] --traces FILE [--json] [--table-only]

Answers every trace with the bundle, as serving would, and reports per question:
answers, certified share, disagreement among certified answers (with the upper
end of the two-sided 95% Clopper-Pearson interval) and accuracy over all answers;
why answers were not certified (counts by flag); per option the traces answering
it, certified answers naming it, their disagreements, precision, recall and F1 of
certified answers; macro and weighted averages of those and of the same over all
answers (as scikit-learn's classification_report); the largest confusions
(reference -> the table's answer); and the frontier: at each candidate threshold of the bundle, the share certified,
their disagreement and the smallest alpha at which that threshold alone passes
the binomial test on these traces. Traces are read as train reads them. When
the traces answer none of the bundle's questions, eval fails (exit code 2).

With several --bundle (two versions of one, say: versions --bundle DIR lists
them), every bundle answers the same traces and eval shows them side by side:
per question each one's answers, certified share, disagreement among certified
answers (with the upper end of its 95% interval) and accuracy, which tiers
answered and the threshold in force (a bundle with a second tier answers with
both, the traces embedded once; --table-only: every bundle by its table alone);
--json prints {bundles: [{label, path, bundle_id}], traces, questions: {Q:
[figures or null per bundle]}}.

Options:
  --bundle DIR               bundle folder (required; repeat to compare bundles)
${TRACE_FLAGS_USAGE}
  --json                     print the figures as JSON (questions.Q: n, certified, coverage,
                             disagreements, disagreement, disagreement_lower/_upper,
                             accuracy, unlearned_answers, options, averages,
                             confusions, not_certified, drift_rules, frontier)
  --table-only               with a bundle that has a second tier, answer with the table
                             alone (by default the traces are embedded, about a minute
                             per 10,000 texts on 2 cores, and both tiers answer as serve
                             has them: the figures then split by tier, questions.Q.tiers)
  --embed-cache FILE         keep the texts' embeddings in FILE (as train --embed-cache)
  --predictions FILE         write one JSON line per trace: its text and, per question,
                             the reference answer, the table's answer, certified, flag,
                             confidence and whether they disagree
  --report-html FILE         write a self-contained HTML report (frontier plot, option
                             tables, the bundle's split and leakage check, advice)
  --stream                   also replay the traces in order through the online drift
                             guard, certify as a live server would, and report when it
                             raised and cleared the alarm (request index, 1-based, per
                             question)
  --quiet                    no progress on stderr (--json implies it)
  --help                     this text`;

/** Runs `eval`; returns the exit code. */
export async function evalCommand(args: string[]): Promise<number> {
  const { values } = parseFlags("eval", args, {
    ...TRACE_FLAGS,
    bundle: { type: "string", multiple: true },
    json: { type: "boolean", default: false },
    stream: { type: "boolean", default: false },
    predictions: { type: "string" },
    "report-html": { type: "string" },
    quiet: { type: "boolean", default: false },
    "table-only": { type: "boolean", default: false },
    "embed-cache": { type: "string" },
    help: { type: "boolean", default: false },
  });
  if (values.help) {
    console.log(EVAL_USAGE);
    return 0;
  }
  if (values.bundle === undefined) {
    throw new UsageError("eval needs --bundle DIR (see eval --help)");
  }
  if (values.traces === undefined) {
    throw new UsageError("eval needs --traces FILE (see eval --help)");
  }
  for (const flag of ["predictions", "report-html"] as const) {
    if (values[flag]?.trim() === "") {
      throw new UsageError(`--${flag} needs a file name: got ""`);
    }
  }
  const printer = new ProgressPrinter({ quiet: values.quiet || values.json });
  if (values.bundle.length > 1) {
    return await compareCommand(values.bundle, values, printer);
  }
  const bundlePath = userPath(values.bundle[0]!);
  const table = await loadBundle(bundlePath);
  const traces = await readTraceFlags("eval", values, printer);
  const skipped = traces.questions.filter((q) => !table.byName.has(q.name));
  if (skipped.length === traces.questions.length) {
    throw new RangeError(
      `nothing to evaluate: the traces answer none of the bundle's questions (bundle: ${
        table.questions.map((q) => q.name).join(", ")
      }; traces: ${traces.questions.map((q) => q.name).join(", ")})`,
    );
  }
  for (const q of skipped) {
    printer.note(
      `the bundle has no question "${q.name}"; its answers are skipped`,
    );
  }
  const predictions = values.predictions === undefined
    ? null
    : new PredictionsFile(userPath(values.predictions), traces);
  const embeddings = await embeddingsFor([table], traces, values, printer);
  const started = performance.now();
  const result = evaluate(
    table,
    traces,
    values.stream,
    predictions?.listener,
    embeddings,
  );
  const seconds = (performance.now() - started) / 1000;
  if (seconds > 1) {
    printer.line(
      `evaluated ${traces.texts.length} traces in ${seconds.toFixed(2)}s`,
    );
  }
  if (predictions !== null) {
    await predictions.write();
    printer.note(`wrote ${predictions.path} (one JSON line per trace)`);
  }
  if (values["report-html"] !== undefined) {
    const path = userPath(values["report-html"]);
    await Deno.writeTextFile(
      path,
      reportHtml(evalReport(bundlePath, table, traces.texts.length, result)),
    );
    printer.note(`wrote ${path}`);
  }
  if (values.json) {
    console.log(JSON.stringify(result, null, 2));
    return 0;
  }
  console.log(evalInWords(result.questions, result.stream).join("\n"));
  return 0;
}

/**
 * The traces' embeddings when a bundle of `tables` has a second tier (so
 * both tiers answer as `serve` has them), or undefined: with none, or with
 * `--table-only`.
 */
async function embeddingsFor(
  tables: readonly Table[],
  traces: TraceSet,
  values: { "table-only": boolean; "embed-cache"?: string | undefined },
  printer: ProgressPrinter,
): Promise<Float32Array[] | undefined> {
  const which = tables.length === 1 ? "the bundle has" : "a bundle has";
  if (!tables.some((t) => t.questions.some((q) => q.semantic !== undefined))) {
    return undefined;
  }
  if (values["table-only"]) {
    printer.note(
      `${which} a second tier; --table-only answers with the table alone, at its own threshold`,
    );
    return undefined;
  }
  printer.note(
    `${which} a second tier: embedding the traces to answer as serve does (--table-only skips it)`,
  );
  const { embedTraces } = await import("../train/mod.ts");
  return await embedTraces(
    traces.texts,
    values["embed-cache"] === undefined
      ? undefined
      : userPath(values["embed-cache"]),
    2,
    printer,
  );
}

/** `eval` with several `--bundle`: the bundles side by side on the same traces. */
async function compareCommand(
  bundles: readonly string[],
  values: Parameters<typeof readTraceFlags>[1] & {
    json: boolean;
    stream: boolean;
    predictions?: string | undefined;
    "report-html"?: string | undefined;
    "table-only": boolean;
    "embed-cache"?: string | undefined;
  },
  printer: ProgressPrinter,
): Promise<number> {
  for (const flag of ["stream", "predictions", "report-html"] as const) {
    if (values[flag] !== undefined && values[flag] !== false) {
      throw new UsageError(
        `--${flag} takes one --bundle; comparing ${bundles.length} bundles shows the figures side by side only`,
      );
    }
  }
  const paths = bundles.map((b) => userPath(b));
  const tables = [];
  for (const path of paths) tables.push(await loadBundle(path));
  const traces = await readTraceFlags("eval", values, printer);
  const embeddings = await embeddingsFor(tables, traces, values, printer);
  const comparison = compareBundles(
    tables,
    paths,
    traces,
    (table, t) => evaluate(table, t, false, undefined, embeddings),
    embeddings !== undefined,
  );
  if (Object.keys(comparison.questions).length === 0) {
    throw new RangeError(
      `nothing to evaluate: the traces answer none of the bundles' questions (traces: ${
        traces.questions.map((q) => q.name).join(", ")
      })`,
    );
  }
  console.log(
    values.json
      ? JSON.stringify(comparison, null, 2)
      : comparisonLines(comparison).join("\n"),
  );
  return 0;
}
