/**
 * One retrain of a learning service, as its worker runs it: every label it
 * has (the seed traces and the feedback log of its folder, ledger and
 * picks included) trained as `train` would (`trainBundle`), the new
 * bundle measured beside the one in force on the same held-out traces (the
 * new split's test part), and written to `DIR/bundle` as `train --out`
 * writes it only when it is calibrated and certifies more there.
 *
 * It reads files and writes the bundle; it keeps no state between runs.
 *
 * @module
 */

import { loadBundle } from "../bundle/mod.ts";
import type { Table } from "../engine/mod.ts";
import { evaluate } from "../eval/mod.ts";
import { testLevel } from "../guarantee/mod.ts";
import { readTraces, type TraceSet } from "../traces/mod.ts";
import { withBackedOptions } from "./backed_options.ts";
import { type LabelRange, labelsNeeded } from "./advice.ts";
import {
  embedSample,
  SEMANTIC_SAMPLE_MAX,
  TEST_PART,
  type TestFailure,
  trainBundle,
  TrainingError,
  type TrainOptionsInput,
  trainOptionsOf,
  writeTrainedBundle,
} from "../train/mod.ts";

/** Where a learning service keeps its files, under its folder. */
export const LEARN_FILES = {
  /** The bundle in force (a link to its newest version, as `train --out` writes). */
  bundle: "bundle",
  /** The feedback log, its ledger and picks (rotated to `feedback.1.jsonl`). */
  log: "feedback.jsonl",
  rotated: "feedback.1.jsonl",
  /** The texts' embeddings, kept between retrains. */
  embeddings: "embeddings.cache",
  /** The retrains so far, one JSON line each. */
  history: "retrains.jsonl",
  /** The key the decision ids are signed with (made at the first start). */
  key: "audit.key",
  /** Per question, when the model began answering options its bundle lacked. */
  changes: "changes.json",
} as const;

/** What one retrain is asked to do. */
export interface RetrainJob {
  /** The learning service's folder. */
  dir: string;
  /** Seed trace files read beside the log (`serve --learn DIR --traces FILE`). */
  seeds: readonly string[];
  /**
   * Training options (functions aside: they do not cross to a worker),
   * over the settings the bundle in force was trained with.
   */
  training: TrainOptionsInput;
  /** The bundle in force, to measure beside the new one; null when none is. */
  inForce: string | null;
  /** Ledger stretches ending from this time on (ms) are not settled yet. */
  settledBefore: number;
  /** Versions of `DIR/bundle` kept. */
  keep: number;
  /**
   * Per question, the options the model added (that a table lacked when
   * first seen) with their labels so far: a bundle that has not learned
   * each of them from `settled` labels is held on that question (it
   * certifies nothing there), and is measured so.
   */
  added: Record<string, Record<string, number>>;
  /** Labels an added option needs before its question is no longer held. */
  settled: number;
  /** The questions the bundle in force is held on now. */
  held: readonly string[];
  /** Per question, when the model began answering options a table lacked: calibration stands for the traffic since. */
  calibrateAfter: Record<string, number>;
  /** The labels of the last retrain that ran the encoder's pass (0: none yet; see `retrainPasses`). */
  encoderTriedAt: number;
  /**
   * Per question, the retrains that ran its calibration test so far: the
   * next spends `testLevel(delta, tests + 1)` (one promise over every
   * retrain: `src/guarantee/spending.ts`), shared by its passes. Absent
   * question: none yet.
   */
  tests: Record<string, number>;
  /** A question's test runs only when its plan gives it at least this chance of passing. */
  minPassChance: number;
  /** Per question, its test runs only with at least this many calibration answers (more than its last test had). */
  minCalibration: Record<string, number>;
}

/**
 * The share of a retrain's level its quick pass (the table alone) runs its
 * test at, when the encoder's pass follows: the encoder's bundle, which
 * certifies more, gets the rest.
 */
export const QUICK_SHARE = 0.4;

/**
 * The share of a census's lines (stretches where every decision was asked)
 * that calibrates, in a learner's retrains: above a batch's fifth, since a
 * learner's first bundles, and its first after a change of the traffic,
 * are calibrated on the census alone, at a level that is a share of delta.
 */
export const LEARNER_CALIBRATION_SHARE = 0.3;

/** What a retrain found, for the history. */
export interface RetrainOutcome {
  /** Labelled traces read (seed traces and feedback lines). */
  labels: number;
  seconds: number;
  /** True when the new bundle was written to `DIR/bundle` (to be swapped in). */
  swapped: boolean;
  /** Why it was or was not, in words. */
  reason: string;
  /** Held-out test answers both bundles were measured on. */
  testAnswers: number;
  /** Certified test answers that agree with the model, of the bundle in force (null without one) and of the new one (null when none was trained). */
  certifiedBefore: number | null;
  certifiedAfter: number | null;
  /** Questions calibrated in the new bundle, of those it has. */
  calibrated: number;
  questions: number;
  /** True for a pass that trained with the encoder (a second tier asked for). */
  encoder: boolean;
  /**
   * Per question whose calibration test this pass ran, the level it ran at
   * (a share of delta: see `RetrainJob.tests`); questions whose plan gave
   * the test too little chance are absent (not tested, nothing spent).
   */
  tested: Record<string, number>;
  /** Per question whose test this pass ran, its calibration answers. */
  calibration: Record<string, number>;
  /**
   * Per question the new bundle left uncalibrated, why in one word (see
   * `TestFailure`; `held` for a question held for the options the model
   * added, which certifies nothing whatever its test found).
   */
  failures: Record<string, TestFailure | "held">;
  /**
   * Per question of the new bundle, the labels its learning curve says it
   * still needs to calibrate (null when calibrated, or when the curve gives
   * no range); absent when nothing was trained.
   */
  needs?: Record<string, LabelRange | null>;
  /** The labels' questions: kind, options and answers per option, for the registry of the unlearned. */
  seen: {
    name: string;
    kind: "choice" | "yes_no";
    options: string[];
    counts: number[];
  }[];
}

/** The log files of `dir` that exist, the rotated one first. */
async function logFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of [LEARN_FILES.rotated, LEARN_FILES.log]) {
    try {
      const info = await Deno.stat(`${dir}/${name}`);
      if (info.isFile && info.size > 0) out.push(`${dir}/${name}`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return out;
}

/** The traces at `rows`, as a trace set of their own. */
function subset(traces: TraceSet, rows: readonly number[]): TraceSet {
  return {
    texts: rows.map((i) => traces.texts[i]!),
    questions: traces.questions.map((q) => ({
      ...q,
      labels: Int32Array.from(rows, (i) => q.labels[i]!),
    })),
    times: null,
    groups: null,
    groupNames: [],
  };
}

/**
 * Certified answers that agree with the model, of `table` on `traces`,
 * over every question it has but the `held` ones (which certify nothing).
 * Counting the agreeing ones alone, a bundle that certifies what it gets
 * wrong (the texts of an option it lacks) gains nothing by it.
 */
function certifiedOn(
  table: Table,
  traces: TraceSet,
  embeddings: readonly Float32Array[] | undefined,
  held: ReadonlySet<string>,
): number {
  const { questions } = evaluate(table, traces, false, undefined, embeddings);
  let certified = 0;
  for (const [name, f] of Object.entries(questions)) {
    if (!held.has(name)) certified += f.certified - f.disagreements;
  }
  return certified;
}

/** The questions of `table` held for the options the model added (see `RetrainJob.added`). */
export function heldQuestions(
  table: Table,
  added: RetrainJob["added"],
  settled: number,
): Set<string> {
  const out = new Set<string>();
  for (const [question, options] of Object.entries(added)) {
    const q = table.byName.get(question);
    if (q === undefined) continue;
    const learned = Object.entries(options).every(([o, n]) =>
      q.optionIndex.has(o) && n >= settled
    );
    if (!learned) out.add(question);
  }
  return out;
}

/**
 * Runs one retrain as one or two passes: with a second tier asked for
 * while no calibrated bundle is in force (a service still starting) or it
 * is held on a question (the traffic changed), a quick pass with the table
 * alone first, its bundle written (and `onSwapped`
 * awaited, so the service serves it) before the slower pass with the
 * encoder, which is then measured against it. When the quick pass
 * calibrated no question, the encoder's pass (ten times slower) runs only
 * when the quick pass's plan gave its test a fair chance (it ran it), or
 * once the labels have doubled since it last ran (`encoderTriedAt`):
 * evidence too thin for the table's test to be worth running is too thin
 * for both tiers too, as a rule, and the next quick pass comes the
 * sooner. The passes share the retrain's level per question
 * (`QUICK_SHARE` for the quick one, the rest for the encoder's). Hands each pass's
 * outcome to `onPass` as it ends (a service shows the quick pass's swap
 * without waiting for the encoder's) and returns them all.
 */
export async function retrainPasses(
  job: RetrainJob,
  note: (line: string) => void = () => {},
  quickFirst = true,
  onSwapped: () => Promise<void> = () => Promise.resolve(),
  onPass: (outcome: RetrainOutcome) => void = () => {},
): Promise<RetrainOutcome[]> {
  const started = performance.now();
  const files = [...job.seeds, ...await logFiles(job.dir)];
  const seconds = () => (performance.now() - started) / 1000;
  const none = (reason: string, labels = 0): RetrainOutcome => ({
    labels,
    seconds: seconds(),
    swapped: false,
    reason,
    testAnswers: 0,
    certifiedBefore: null,
    certifiedAfter: null,
    calibrated: 0,
    questions: 0,
    encoder: false,
    tested: {},
    calibration: {},
    failures: {},
    seen: [],
  });
  if (files.length === 0) return [none("no labels yet")];
  let traces: TraceSet;
  try {
    traces = await readTraces(files, { warn: note, note });
  } catch (e) {
    if (e instanceof RangeError) return [none("no labels yet")];
    throw e;
  }
  const labels = traces.texts.length - (traces.picks?.length ?? 0);
  // The bundle in force says how it was trained; the job's options go over.
  let old = job.inForce === null ? null : await loadBundle(job.inForce)
    .catch(() => null);
  // An option the bundle lacks comes only from decisions the service made.
  const backed = withBackedOptions(traces, old);
  traces = backed.traces;
  for (const [question, options] of backed.dropped) {
    note(
      `${question}: ${
        options.join(", ")
      } left out: no decision the service made was answered so (labels without an id add no option)`,
    );
  }
  const seen = traces.questions.map((q) => {
    const counts = new Array<number>(q.options.length).fill(0);
    for (const l of q.labels) if (l >= 0) counts[l]!++;
    return { name: q.name, kind: q.kind, options: q.options, counts };
  });
  const base = old === null ? {} : trainOptionsOf(old);
  const semantic = job.training.semantic ?? "off";
  // A quick pass with the table alone first while nothing calibrated
  // serves, or while a question is held: any calibrated bundle then serves
  // better. Once one serves, a quick pass would spend part of a test's
  // share on a bundle the encoder's pass replaces seconds later.
  const serving = old?.questions.some((q) =>
    q.calibration.threshold !== null ||
    (q.semantic?.calibration.threshold ?? null) !== null
  ) ?? false;
  const modes = quickFirst && semantic !== "off" &&
      (!serving || job.held.length > 0)
    ? ["off" as const, semantic]
    : [semantic];
  const outcomes: RetrainOutcome[] = [];
  let held = new Set(job.held);
  // A retrain spends one share of delta per question (its next test's):
  // with two passes, the quick one runs at QUICK_SHARE of it and the
  // encoder's at what is left (all of it when the quick pass ran no test).
  const delta = job.training.delta ?? base.delta ?? 0.05;
  const share = new Map(
    traces.questions.map((q) => [
      q.name,
      testLevel(delta, (job.tests[q.name] ?? 0) + 1),
    ]),
  );
  const spent = new Map<string, number>();
  for (const [m, mode] of modes.entries()) {
    const last = m === modes.length - 1;
    if (
      mode !== "off" && outcomes.length > 0 &&
      outcomes.every((o) => o.calibrated === 0)
    ) {
      // The quick pass calibrated nothing: the encoder's pass (ten times
      // slower, and holding the next quick pass back) runs only when the
      // quick pass's plan gave its test a fair chance, or the labels have
      // doubled since it last ran.
      const tested = outcomes.some((o) => Object.keys(o.tested).length > 0);
      if (!tested && labels < 2 * job.encoderTriedAt) {
        note(
          `the encoder's pass waits for a test with a fair chance or ${
            2 * job.encoderTriedAt
          } labels (it last ran on ${job.encoderTriedAt})`,
        );
        break;
      }
    }
    let trained;
    try {
      trained = await trainBundle({
        training: {
          ...base,
          ...job.training,
          semantic: mode,
          settings: { ...base.settings, ...job.training.settings },
          calibrationShare: LEARNER_CALIBRATION_SHARE,
          settledBefore: job.settledBefore,
          calibrateAfter: job.calibrateAfter,
          questionDelta: Object.fromEntries(
            [...share].map(([q, level]) => [
              q,
              last ? level - (spent.get(q) ?? 0) : QUICK_SHARE * level,
            ]),
          ),
          minPassChance: job.minPassChance,
          questionMinCalibration: job.minCalibration,
        },
        embedCache: `${job.dir}/${LEARN_FILES.embeddings}`,
        embedWorkers: 1,
        allowUncalibrated: true,
      }, traces);
    } catch (e) {
      if (e instanceof TrainingError) {
        return [...outcomes, {
          ...none(`not trained: ${e.message}`, labels),
          encoder: mode !== "off",
          seen,
        }];
      }
      throw e;
    }
    const outcome = measured(job, trained, traces, old, held);
    const tested = testsRun(trained);
    const calibration = Object.fromEntries(
      Object.keys(tested).map((q) => [
        q,
        trained.result.report.questions.find((r) => r.name === q)?.answers
          .calibration ?? 0,
      ]),
    );
    const failures = failuresOf(
      trained,
      heldQuestions(trained.result.table, job.added, job.settled),
    );
    for (const [q, level] of Object.entries(tested)) {
      spent.set(q, (spent.get(q) ?? 0) + level);
    }
    outcomes.push({
      ...outcome,
      labels,
      seconds: seconds(),
      encoder: mode !== "off",
      tested,
      calibration,
      failures,
      needs: Object.fromEntries(
        trained.result.report.questions.map((r) => [
          r.name,
          r.calibration.status === "calibrated"
            ? null
            : labelsNeeded(r.calibration.advice),
        ]),
      ),
      seen,
      reason: modes.length > 1
        ? `${mode === "off" ? "table alone" : "both tiers"}: ${outcome.reason}`
        : outcome.reason,
    });
    // The pass (and the tests it spent) is told before its bundle is
    // written, so no bundle serves on a test the history does not count.
    onPass(outcomes.at(-1)!);
    if (outcome.swapped) {
      await writeTrainedBundle(
        `${job.dir}/${LEARN_FILES.bundle}`,
        trained,
        job.keep,
      );
      old = trained.result.table;
      held = heldQuestions(old, job.added, job.settled);
      await onSwapped();
    }
  }
  return outcomes;
}

/** Per question a trained bundle certifies nothing of, why (see `RetrainOutcome.failures`). */
function failuresOf(
  trained: Awaited<ReturnType<typeof trainBundle>>,
  held: ReadonlySet<string>,
): Record<string, TestFailure | "held"> {
  const out: Record<string, TestFailure | "held"> = {};
  for (const q of trained.result.report.questions) {
    const table = q.calibration.threshold !== null;
    const tiers = (q.semantic?.calibration?.threshold ?? null) !== null;
    if (held.has(q.name)) out[q.name] = "held";
    else if (!table && !tiers) {
      out[q.name] = q.calibration.failure ?? "too_many";
    }
  }
  return out;
}

/**
 * Per question whose calibration test a trained bundle ran (the table's
 * rule or the two tiers'), the level it ran at.
 */
function testsRun(
  trained: Awaited<ReturnType<typeof trainBundle>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const q of trained.result.report.questions) {
    const ran = q.calibration.candidates_tested > 0 ||
      (q.semantic?.calibration?.candidates_tested ?? 0) > 0;
    const level = trained.result.table.byName.get(q.name)?.calibration.delta;
    if (ran && level !== undefined) out[q.name] = level;
  }
  return out;
}

/**
 * A trained bundle measured beside `old` (the bundle in force, held on
 * `held`) on the same held-out traces (its split's test part): whether it
 * is to be swapped in, and why.
 */
function measured(
  job: RetrainJob,
  trained: Awaited<ReturnType<typeof trainBundle>>,
  traces: TraceSet,
  old: Table | null,
  held: ReadonlySet<string>,
): Omit<
  RetrainOutcome,
  | "labels"
  | "seconds"
  | "seen"
  | "encoder"
  | "tested"
  | "calibration"
  | "failures"
> {
  const table = trained.result.table;
  const calibrated =
    table.questions.filter((q) => q.calibration.threshold !== null).length;
  const parts = trained.result.parts!;
  const testRows: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === TEST_PART) testRows.push(i);
  }
  const test = subset(traces, testRows);
  let testAnswers = 0;
  for (const q of test.questions) {
    for (const l of q.labels) if (l >= 0) testAnswers++;
  }
  // Both bundles answer the same held-out traces, with both tiers when
  // every one of them has its embedding.
  const embedded = trained.embeddings === undefined
    ? undefined
    : testRows.map((i) => trained.embeddings![i]);
  const embeddings = embedded?.every((e) => e !== undefined)
    ? embedded as Float32Array[]
    : undefined;
  const certifiedAfter = certifiedOn(
    table,
    test,
    embeddings,
    heldQuestions(table, job.added, job.settled),
  );
  const certifiedBefore = old === null
    ? null
    : certifiedOn(old, test, embeddings, held);
  const oldCalibrated = old === null
    ? 0
    : old.questions.filter((q) => q.calibration.threshold !== null).length;
  let swapped = false;
  let reason: string;
  if (calibrated === 0) {
    // In a learner's terms: labels, not traces, and no flag `serve --learn`
    // lacks (its advice, with a time, is the learner's: `advice.ts`).
    const failed = trained.result.report.questions.filter((r) =>
      r.calibration.status !== "calibrated"
    ).map((r) => r.name);
    reason = `${
      oldCalibrated > 0
        ? "the new bundle calibrates no question; the one in force stays"
        : "no question calibrated yet"
    } (${
      failed.join(", ")
    }, at alpha ${trained.result.report.alpha}; why each: failures); more labels will help: learn.advice in /v1/stats says how many, and when`;
  } else if (old === null) {
    swapped = true;
    reason =
      `the first calibrated bundle (${calibrated} of ${table.questions.length} questions)`;
  } else if (testAnswers === 0) {
    swapped = calibrated > oldCalibrated;
    reason = swapped
      ? `no test answers yet; calibrates ${calibrated} questions where the bundle in force calibrates ${oldCalibrated}`
      : `no test answers to tell them apart, and no more questions calibrated (${calibrated})`;
  } else {
    swapped = certifiedAfter > certifiedBefore!;
    reason =
      `certifies ${certifiedAfter} of ${testAnswers} held-out answers rightly where the bundle in force certifies ${certifiedBefore}`;
  }
  return {
    swapped,
    reason,
    testAnswers,
    certifiedBefore,
    certifiedAfter,
    calibrated,
    questions: table.questions.length,
  };
}

/**
 * Embeds, into the folder's embedding cache, the texts of the labels a
 * next retrain will read that the cache lacks (the same seeded sample
 * `trainBundle` embeds), so that the retrain itself embeds only what came
 * after: a learner runs it between retrains, when a second tier is asked
 * for. Returns how many texts were read.
 */
export async function embedAhead(
  job: Pick<RetrainJob, "dir" | "seeds" | "training">,
  note: (line: string) => void = () => {},
): Promise<number> {
  const files = [...job.seeds, ...await logFiles(job.dir)];
  if (files.length === 0) return 0;
  let traces: TraceSet;
  try {
    traces = await readTraces(files, { warn: () => {}, note: () => {} });
  } catch (e) {
    if (e instanceof RangeError) return 0;
    throw e;
  }
  await embedSample(
    traces.texts,
    SEMANTIC_SAMPLE_MAX,
    job.training.seed ?? 1,
    `${job.dir}/${LEARN_FILES.embeddings}`,
    1,
    { line: note, note, meterLine() {}, terminal: false },
  );
  return traces.texts.length;
}
