/**
 * `train`: traces to a bundle folder.
 *
 * @module
 */

import { checkBundleDestination, DEFAULT_KEEP } from "../bundle/mod.ts";
import type { TraceSet } from "../traces/mod.ts";
import {
  kindInWords,
  leakageInWords,
  testInWords,
  ZERO_THRESHOLD,
} from "./report_words.ts";
import {
  AUTO_MIN_GROUPS,
  resolveMode,
  SEMANTIC_SAMPLE_MAX,
  type SemanticMode,
  splitInWords,
  type SplitMode,
  trainBundle,
  TrainOptionError,
  type TrainOptions,
  trainOptions as checkedTrainOptions,
  type TrainOptionsInput,
  type TrainResult,
  withoutTimeColumns,
  writeTrainedBundle,
} from "../train/mod.ts";
import {
  DRIFT_FLAGS,
  driftFlagSettings,
  numberFlag,
  parseFlags,
  UsageError,
  userPath,
} from "./common.ts";
import { ProgressPrinter } from "./progress.ts";
import { reportHtml } from "./report_html.ts";
import {
  type CalibrationRecord,
  recordCalibration,
  trainReportModel,
} from "./train_report.ts";
import {
  readTraceFlags,
  TRACE_FLAGS,
  TRACE_FLAGS_USAGE,
} from "./trace_input.ts";
import { percent } from "../format.ts";

/** Usage text of `train`. */
export const TRAIN_USAGE =
  `Usage: train --traces FILE [--traces FILE ...] [--out DIR] [options]

Trains a decision table from traces and writes a bundle folder (written
atomically: complete or not at all). Relative paths are taken from the folder
the command was typed in (INIT_CWD under deno task).

Options:
${TRACE_FLAGS_USAGE}
  --out DIR                  bundle folder to write (default: bundle); DIR is a link
                             to the folder DIR.v-ID beside it, replaced in one step
  --keep N                   versions of DIR kept, the new one included (default ${DEFAULT_KEEP});
                             older ones are removed after the swap (versions --bundle DIR
                             lists them, rollback --bundle DIR goes back to one)
  --alpha A                  target disagreement rate among certified answers (default 0.05)
  --delta D                  allowed probability that the target fails (default 0.05)
  --seed N                   seed for splits and training (default 1)
  --calibration-share S      share of traces for calibration (default 0.2)
  --test-share S             share of traces for the held-out test (default 0.05)
  --split MODE               how traces are split: auto, time, group or random (default auto:
                             time when every trace has a time, else group when every trace
                             has a group and there are at least ${AUTO_MIN_GROUPS} groups (by their
                             effective number), else random with near-duplicates kept together)
  --similarity S             random split: texts with TF-IDF cosine >= S stay in one split
                             (default 0.8; 1 keeps only equal texts together)
  --min-radius R             minimum radius to certify exposed requests (default 2)
  --serve-new-options        serve answers when requests offer options the table never learned
                             (flag new_options_served; never certified)
  --force-threshold Q=T      serve question Q's answers with confidence >= T even when not
                             certified (flag manual_threshold); repeatable
  --drift-delta D            online drift alarm at evidence 2/D (default 0.01)
  --drift-window N           normal requests needed to clear a drift alarm (default 100)
  --drift-single-p P         single texts whose unseen-feature share has a p-value <= P against
                             the calibration texts are not certified (default 0.01)
  --drift-max-novelty S      single texts with a share > S of features unseen in training
                             are not certified (default 0.5)
  --drift-min-novelty S      the --drift-single-p rule applies only to texts with a share
                             >= S of unseen features (default 0.1)
  --drift-scope-p P          single texts whose answer is spread over the options (choices of
                             three or more) as few calibration texts' are (p-value <= P) look
                             like none of the options, or like nothing the table was calibrated
                             on, and are not certified; costs at most P of texts like the
                             calibration ones (default 0.05; 0 turns the rule off)
  --semantic MODE            a second tier on sentence embeddings, asked when the table is
                             not sure: auto (default: the texts are embedded only when a
                             question leaves at least 15% of its calibration answers to low
                             confidence, and the tier kept per question where it certifies
                             more on the validation part), on (embed and keep it) or off
                             (the table alone). Embedding costs about a minute per 10,000
                             texts on 2 cores and about 1 GB while it runs; serving the
                             tier about 225 MB more and 12-15 ms a text it is asked
  --embed-cache FILE         keep the texts' embeddings in FILE, so a retrain embeds only
                             new texts (with --semantic auto or on)
  --embed-max N              beyond N traces, the second tier is fitted, calibrated and
                             tested on a seeded uniform sample of N (the table on all);
                             default ${SEMANTIC_SAMPLE_MAX}, about 70 s of embedding on 2 cores
  --max-epochs N             most training epochs (default 10)
  --workers N                fits run in parallel on N workers (default: the number of cores;
                             1 starts none); the bundle is the same for any N
  --report-html FILE         write a self-contained HTML report (frontier plot and option
                             table on the calibration split, split, leakage, advice),
                             also when no bundle is written
  --allow-uncalibrated       write the bundle and exit 0 even when a question is left
                             uncalibrated (by default train then writes no bundle and
                             exits 3)
  --quiet                    no progress on stderr
  --help                     this text

Exit codes: 0 bundle written; 2 bad input or flags (nothing written); 3 a question
is uncalibrated, so it would never be certified (no bundle written unless
--allow-uncalibrated; the last line of stdout says why and what would help).`;

/** Exit code of `train` when a question is left uncalibrated (without `--allow-uncalibrated`). */
export const EXIT_UNCALIBRATED = 3;

/** The flags of `train`. */
const TRAIN_FLAGS = {
  ...TRACE_FLAGS,
  out: { type: "string", default: "bundle" },
  keep: { type: "string" },
  alpha: { type: "string" },
  delta: { type: "string" },
  seed: { type: "string" },
  "calibration-share": { type: "string" },
  "test-share": { type: "string" },
  split: { type: "string", default: "auto" },
  similarity: { type: "string" },
  "min-radius": { type: "string" },
  "serve-new-options": { type: "boolean", default: false },
  "force-threshold": { type: "string", multiple: true },
  ...DRIFT_FLAGS,
  "max-epochs": { type: "string" },
  semantic: { type: "string", default: "auto" },
  "embed-cache": { type: "string" },
  "embed-max": { type: "string" },
  workers: { type: "string" },
  "allow-uncalibrated": { type: "boolean", default: false },
  "report-html": { type: "string" },
  quiet: { type: "boolean", default: false },
  help: { type: "boolean", default: false },
} as const;

/** The flag values of one `train` run. */
type TrainValues = ReturnType<typeof parseTrainFlags>["values"];

function parseTrainFlags(args: string[]) {
  return parseFlags("train", args, TRAIN_FLAGS);
}

/** Runs `train`; returns the exit code. */
export async function trainCommand(args: string[]): Promise<number> {
  const { values } = parseTrainFlags(args);
  if (values.help) {
    console.log(TRAIN_USAGE);
    return 0;
  }
  if (values.traces === undefined) {
    throw new UsageError("train needs --traces FILE (see train --help)");
  }
  if (values.out.trim() === "") {
    throw new UsageError(`--out needs a folder name: got "${values.out}"`);
  }
  const out = userPath(values.out);
  const keep = numberFlag(
    "keep",
    values.keep,
    DEFAULT_KEEP,
    (n) => Number.isInteger(n) && n >= 1,
    "a whole number >= 1",
  );
  if (values["report-html"]?.trim() === "") {
    throw new UsageError(`--report-html needs a file name: got ""`);
  }
  const reportPath = userPath(values["report-html"]);
  const printer = new ProgressPrinter({ quiet: values.quiet });
  const input = trainOptionsInput(values, printer);
  const embedMax = numberFlag(
    "embed-max",
    values["embed-max"],
    SEMANTIC_SAMPLE_MAX,
    (n) => Number.isInteger(n) && n >= 100,
    "an integer of at least 100",
  );
  if (values["embed-max"] !== undefined && values.semantic === "off") {
    throw new UsageError("--embed-max needs --semantic auto or on");
  }
  const options = checkedOptions(input, values);
  const record: CalibrationRecord = new Map();
  if (reportPath !== undefined) {
    input.onCalibration = recordCalibration(record);
  }
  // Fail now, not after training, when the bundle could not be written.
  await checkBundleDestination(out);
  const traces = withoutTimeColumns(
    await readTraceFlags("train", values, printer),
    printer.warn,
  );
  checkAgainstTraces(traces, options);
  const trained = await trainBundle({
    training: input,
    embedMax,
    embedCache: userPath(values["embed-cache"]),
    allowUncalibrated: values["allow-uncalibrated"],
    embedProgress: printer,
  }, traces);
  const { result, uncalibrated: failed, refused } = trained;
  printReport(result);
  if (reportPath !== undefined) {
    const model = trainReportModel(
      result,
      traces,
      record,
      trained.options,
      refused ? `No bundle written: ${failed}.` : `Bundle written to ${out}.`,
    );
    await Deno.writeTextFile(reportPath, reportHtml(model));
    printer.note(`wrote ${reportPath}`);
  }
  if (refused) {
    console.log(`${failed}; no bundle written (exit code 3)`);
    return EXIT_UNCALIBRATED;
  }
  input.progress?.("writing bundle");
  const cleaned = await writeTrainedBundle(out, trained, keep);
  for (const line of cleaned) {
    printer.note(`${line} (left by an earlier run that was stopped)`);
  }
  console.log(
    `wrote ${out} (${result.report.rows} rows, trained in ${
      trained.seconds.toFixed(1)
    }s)` +
      (failed === null ? "" : `; ${failed} (--allow-uncalibrated)`),
  );
  return 0;
}

/** The flag of each training option the `train` command sets. */
const FLAG_OF: Readonly<Record<string, string>> = {
  alpha: "alpha",
  delta: "delta",
  seed: "seed",
  calibrationShare: "calibration-share",
  testShare: "test-share",
  maxEpochs: "max-epochs",
  workers: "workers",
  "settings.min_radius": "min-radius",
  semantic: "semantic",
  split: "split",
  similarity: "similarity",
};

/** The raw flag text behind each training option the command sets. */
function rawOptions(values: TrainValues): Record<string, string | undefined> {
  return {
    alpha: values.alpha,
    delta: values.delta,
    seed: values.seed,
    calibrationShare: values["calibration-share"],
    testShare: values["test-share"],
    maxEpochs: values["max-epochs"],
    workers: values.workers,
    "settings.min_radius": values["min-radius"],
    semantic: values.semantic,
    split: values.split,
    similarity: values.similarity,
  };
}

/**
 * The training options the flags ask for, unchecked: the flags mapped to
 * options (the checks are `trainOptions`' in `src/train/`, see
 * `checkedOptions`).
 */
function trainOptionsInput(
  values: TrainValues,
  printer: ProgressPrinter,
): TrainOptionsInput {
  if (values["embed-cache"] !== undefined && values.semantic === "off") {
    throw new UsageError("--embed-cache needs --semantic auto or on");
  }
  if (values["embed-cache"]?.trim() === "") {
    throw new UsageError(`--embed-cache needs a file name: got ""`);
  }
  const raw = rawOptions(values);
  const number = (key: string) => asNumber(raw[key]);
  return {
    alpha: number("alpha"),
    delta: number("delta"),
    seed: number("seed"),
    calibrationShare: number("calibrationShare"),
    testShare: number("testShare"),
    maxEpochs: number("maxEpochs"),
    workers: number("workers") ??
      Math.min(64, navigator.hardwareConcurrency),
    settings: {
      min_radius: number("settings.min_radius"),
      serve_new_options: values["serve-new-options"],
      force_thresholds: forcedThresholds(values["force-threshold"] ?? []),
      drift: driftFlagSettings(values),
    },
    semantic: values.semantic as SemanticMode,
    split: values.split as SplitMode,
    similarity: number("similarity"),
    progress: printer.line,
    warn: printer.warn,
  };
}

/**
 * `input` checked by `trainOptions` (`src/train/`), whose
 * `TrainOptionError` becomes a `UsageError` naming the flag and the value
 * as typed.
 */
function checkedOptions(
  input: TrainOptionsInput,
  values: TrainValues,
): TrainOptions {
  const raw = rawOptions(values);
  try {
    return checkedTrainOptions(input);
  } catch (e) {
    if (!(e instanceof TrainOptionError)) throw e;
    const flags = e.options.map((o) => FLAG_OF[o]);
    if (flags.some((f) => f === undefined)) throw e;
    if (flags.length > 1) {
      throw new UsageError(
        `${flags.map((f) => `--${f}`).join(" plus ")} must ${e.expected}`,
      );
    }
    throw new UsageError(
      `--${flags[0]} must be ${e.expected}: got "${raw[e.options[0]!]}"`,
    );
  }
}

/** A flag's text as a number: undefined when not given, NaN when blank. */
function asNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  return text.trim() === "" ? NaN : Number(text);
}

/** The `--force-threshold Q=T` flags as question to threshold. */
function forcedThresholds(items: readonly string[]): Record<string, number> {
  const forced: Record<string, number> = {};
  for (const item of items) {
    const at = item.lastIndexOf("=");
    const t = at > 0 ? Number(item.slice(at + 1)) : NaN;
    if (at <= 0 || !(t >= 0 && t <= 1) || item.slice(at + 1).trim() === "") {
      throw new UsageError(
        `--force-threshold must be QUESTION=T with T in [0, 1]: got "${item}"`,
      );
    }
    forced[item.slice(0, at)] = t;
  }
  return forced;
}

/**
 * Throws `UsageError`, before any training, when the flags ask what the
 * traces cannot give: a forced threshold for a question no trace answers,
 * or a split mode the traces cannot follow.
 */
function checkAgainstTraces(traces: TraceSet, options: TrainOptions): void {
  for (const q of Object.keys(options.settings.force_thresholds)) {
    if (!traces.questions.some((t) => t.name === q)) {
      throw new UsageError(
        `--force-threshold names question "${q}", which no trace answers`,
      );
    }
  }
  try {
    resolveMode(traces, options.split);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** Prints the split and, per question, the calibration, test figures and leakage check. */
function printReport(result: TrainResult): void {
  console.log(`split: ${splitInWords(result.report.split)}`);
  for (const q of result.report.questions) {
    const t = q.test;
    const figures = t.n === 0
      ? "no test answers to measure"
      : `${percent(t.coverage ?? 0)} certified, ${
        t.disagreement === null
          ? "so no disagreement rate to measure"
          : `${percent(t.disagreement ?? 0)} disagreement (95% CI up to ${
            percent(t.disagreement_upper ?? 0)
          })`
      }, accuracy ${percent(t.accuracy ?? 0)}`;
    console.log(
      `${q.name} (${
        kindInWords(q.kind, q.options)
      }): ${q.calibration.status}, threshold ${
        q.calibration.threshold?.toFixed(4) ?? "none"
      }; test: ${figures}`,
    );
    if (q.calibration.threshold === 0) {
      console.log(`  threshold 0: ${ZERO_THRESHOLD}`);
    }
    const test = testInWords(t, result.report.alpha, result.report.delta);
    if (test !== null) console.log(`  ${test}`);
    console.log(`  leakage check: ${leakageInWords(q.leakage, false)}`);
    if (q.semantic !== undefined) {
      const s = q.semantic;
      const c = s.calibration;
      console.log(
        `  second tier: ${s.used ? "kept" : "left out"} (${s.reason})` +
          (c === null
            ? ""
            : `; both tiers: threshold ${c.threshold?.toFixed(4) ?? "none"}, ${
              c.by_table + c.by_semantic
            } calibration answers certified (${c.by_semantic} by the second tier)`),
      );
    }
  }
}
