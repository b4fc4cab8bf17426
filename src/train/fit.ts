/**
 * The fit step: each question's weights, bias and temperature from its train
 * split.
 *
 * Each of the `ensemble` members (different seeds) is first fitted on the
 * fit part, scoring the validation part after every epoch, and stops once
 * validation log-loss has not improved for `patience` epochs; its best
 * epoch count is kept (and the L2 strength whose members' averaged logits
 * score best, when several are tried). The temperature is fitted on the
 * members' averaged validation logits. Each member is then refitted on the
 * whole train split (fit and validation) for its epoch count, unless the
 * train split has at least `refitBelow` answers: then the validation fits'
 * best weights are kept (15% more data changes little there, and it halves
 * the work). The final weights are the members' average (for a linear model,
 * averaging weights averages logits), stored in serving units (the kind
 * scales folded in). Epochs are capped so that a fit visits about
 * `visitBudget` examples: a million traces need one pass, not ten.
 *
 * Every fit is a job (`fit_job.ts`) that runs in-process or on a worker
 * (`pool.ts`); results are combined in a fixed order, so the weights are
 * the same bytes for any number of workers.
 *
 * @module
 */

import { argmax, softmax } from "../engine/mod.ts";
import { shared, type TrainingLayout } from "./corpus.ts";
import { type FitJob, type QuestionData } from "./fit_job.ts";
import { type JobRunner, startRunner } from "./pool.ts";
import type { SgdOptions } from "./softmax_sgd.ts";
import { type KindScales, storedWeights } from "./kind_scales.ts";
import { fitTemperature, meanNll } from "./temperature.ts";

/** How a question is fitted. */
export interface FitSettings {
  /** L2 strengths tried; the best on validation data is kept. */
  l2Grid: number[];
  /** Most epochs; the best number on validation data is kept. */
  maxEpochs: number;
  /** Validation fits stop after this many epochs without improvement. */
  patience: number;
  /**
   * Example visits a fit needs at most: epochs are capped at
   * `ceil(visitBudget / examples)`, so large data takes few epochs.
   */
  visitBudget: number;
  /**
   * Train splits with fewer answers than this refit each member on the whole
   * train split; larger ones keep the validation fits' weights.
   */
  refitBelow: number;
  learningRate: number;
  /** Probability of dropping a word or bigram at each training step. */
  wordDropout: number;
  /** Gradients below this (per option) are not applied. */
  minGradient: number;
  /** With more options than this, steps compute only the options that matter (see `softmax_sgd.ts`); 0: all. */
  candidates: number;
  /** Final weights are the average of this many fits with different seeds. */
  ensemble: number;
  /** Training-time scale of word, n-gram and bigram rows (see `kind_scales.ts`). */
  kindScales: KindScales;
  seed: number;
  /** Workers that run fits in parallel (1: all in this thread, no worker). */
  workers: number;
}

/** What the validation part says about the chosen model. */
export interface ValidationFigures {
  /** Per validation answer, the confidence of the best option. */
  confidences: Float64Array;
  /** Per validation answer, 1 when the best option is the reference answer. */
  correct: Uint8Array;
  /** Share correct; null without validation answers. */
  accuracy: number | null;
  /** The fit-only model's logits on the validation answers (`n × options`), for the second tier. */
  logits?: Float64Array;
}

/** A fitted question, before calibration. */
export interface FittedModel {
  /** `rows × options` weights in serving units. */
  weights: Float32Array;
  bias: Float32Array;
  temperature: number;
  l2: number;
  epochs: number;
  validation: ValidationFigures;
}

/** One question to fit. */
export interface FitQuestion {
  /** Its name, for progress lines. */
  name: string;
  /** Per trace, the answer's option index (-1: unanswered). */
  labels: Int32Array;
  /** Traces of the fit and validation parts that answer the question. */
  fit: readonly number[];
  validation: readonly number[];
  /** Number of options. */
  options: number;
}

/** The table every question is fitted on. */
export interface FitTable {
  /** All traces' texts, as the training step reads them. */
  layout: TrainingLayout;
  /** Number of rows, and each row's kind (see `radius.ts`). */
  rows: number;
  rowKinds: Uint8Array;
}

/**
 * Fits every question (see the module doc). Deterministic for
 * `settings.seed`, whatever `settings.workers`. Without validation answers,
 * `maxEpochs` and the first L2 strength are used and the temperature is 1.
 * `progress` is told the epoch, rate and time left every few seconds.
 */
export function fitQuestions(
  table: FitTable,
  questions: readonly FitQuestion[],
  settings: FitSettings,
  progress: (line: string) => void = () => {},
): FittedModel[] {
  const data = questions.map((q): QuestionData => ({
    labels: sharedCopy(q.labels),
    fit: sharedCopy(q.fit),
    validation: sharedCopy(q.validation),
    train: sharedCopy([...q.fit, ...q.validation].sort((a, b) => a - b)),
    judged: judgedAnswers(q),
    options: q.options,
  }));
  const runner = startRunner(
    { layout: table.layout, rows: table.rows, questions: data },
    settings.workers,
  );
  const meter = new FitProgress(progress);
  const fits = questions.map((question, q) =>
    new QuestionFit(
      { table, settings, runner, meter },
      q,
      question.name,
      data[q]!,
    )
  );
  for (const fit of fits) fit.start();
  try {
    runner.drain(() => meter.report());
  } finally {
    runner.close();
  }
  return fits.map((fit) => {
    const r = fit.result!;
    return {
      ...r,
      weights: storedWeights(
        r.weights,
        r.bias.length,
        table.rowKinds,
        settings.kindScales,
      ),
    };
  });
}

/** What every question's fit shares. */
interface FitContext {
  table: FitTable;
  settings: FitSettings;
  runner: JobRunner;
  meter: FitProgress;
}

/**
 * One question's fit (see the module doc): its validation fits per L2
 * strength and member, the choice of L2, epochs and temperature, and its
 * final fits, whose weights are averaged in member order whichever ends
 * first. `result` is set once every job has ended.
 */
class QuestionFit {
  result: FittedModel | null = null;
  readonly #k: number;
  readonly #valLabels: Int32Array;
  readonly #sum: Float32Array;
  readonly #bias: Float32Array;
  readonly #members: number[];
  /** Final fits ended, waiting for the members before them. */
  readonly #finals: (FitJob | undefined)[] = [];
  #added = 0;
  /**
   * Large train splits skip the refit: the validation fits' own best
   * weights are the members (the validation part adds little there).
   */
  readonly #refit: boolean;

  constructor(
    readonly context: FitContext,
    readonly q: number,
    readonly name: string,
    readonly data: QuestionData,
  ) {
    const { table, settings } = context;
    this.#k = data.options;
    this.#valLabels = Int32Array.from(data.validation, (i) => data.labels[i]!);
    this.#sum = new Float32Array(table.rows * this.#k);
    this.#bias = new Float32Array(this.#k);
    this.#members = Array.from({ length: settings.ensemble }, (_, m) => m);
    this.#refit = data.train.length < settings.refitBelow;
  }

  /** Queues the validation fits, or without usable validation answers the final fits. */
  start(): void {
    const { settings, meter, table } = this.context;
    const d = this.data;
    const k = this.#k;
    if (
      d.validation.length === 0 || d.fit.length === 0 ||
      !d.judged.includes(1)
    ) {
      const epochs = epochCap(settings, d.train.length);
      this.#finish(
        settings.l2Grid[0]!,
        this.#members.map(() => epochs),
        new Float64Array(0),
        null,
      );
      return;
    }
    const cap = epochCap(settings, d.fit.length);
    if (this.#refit) {
      meter.expect(this.name, settings.ensemble * cap * d.train.length);
    }
    // Validation fits: per L2 strength, per member.
    const jobs = settings.l2Grid.map((l2) =>
      this.#members.map((m) =>
        meter.job(this.name, d.fit.length, {
          kind: "validation",
          question: this.q,
          epochs: cap,
          patience: settings.patience,
          sgd: { ...sgdOptions(settings, l2, m), epochs: cap },
          logits: shared(Float64Array, d.validation.length * k),
          ...(this.#refit ? {} : {
            weights: shared(Float32Array, table.rows * k),
            bias: shared(Float32Array, k),
          }),
          done: shared(Int32Array, 1),
          progress: shared(Float64Array, 2),
        })
      )
    );
    let pending = jobs.length * this.#members.length;
    for (const byMember of jobs) {
      for (const job of byMember) {
        this.context.runner.submit(job, () => {
          meter.finished(job);
          if (--pending === 0) this.#chooseL2(jobs);
        });
      }
    }
  }

  /**
   * Temperature and L2 are judged on the validation answers whose option
   * the fit part has (see `QuestionData.judged`).
   */
  #judged(logits: Float64Array): [Float64Array, Int32Array] {
    return judgedRows(logits, this.#valLabels, this.data.judged, this.#k);
  }

  /** Keeps the L2 strength whose members' averaged logits score best on validation. */
  #chooseL2(jobs: FitJob[][]): void {
    const { settings } = this.context;
    const k = this.#k;
    let best = { at: 0, nll: Infinity, logits: new Float64Array(0) };
    jobs.forEach((byMember, at) => {
      const logits = new Float64Array(this.data.validation.length * k);
      for (const job of byMember) {
        for (let t = 0; t < logits.length; t++) {
          logits[t]! += job.logits![t]! / settings.ensemble;
        }
      }
      const [rows, labels] = this.#judged(logits);
      const nll = meanNll(rows, labels, k, fitTemperature(rows, labels, k));
      if (nll < best.nll) best = { at, nll, logits };
    });
    this.#finish(
      settings.l2Grid[best.at]!,
      jobs[best.at]!.map((job) => Math.max(1, job.done[0]!)),
      best.logits,
      this.#refit ? null : jobs[best.at]!,
    );
  }

  /**
   * Fits the temperature and records the result; adds the validation fits'
   * weights (`fitted`) or queues the final fits for the chosen epochs.
   */
  #finish(
    l2: number,
    epochs: number[],
    logits: Float64Array,
    fitted: FitJob[] | null,
  ): void {
    const { settings, meter, runner, table } = this.context;
    const k = this.#k;
    const temperature = logits.length > 0
      ? fitTemperature(...this.#judged(logits), k)
      : 1;
    this.result = {
      weights: this.#sum,
      bias: this.#bias,
      temperature,
      l2,
      epochs: Math.max(...epochs),
      validation: validationFigures(logits, this.#valLabels, k, temperature),
    };
    if (fitted !== null) {
      for (const job of fitted) this.#add(job);
      return;
    }
    for (const m of this.#members) {
      const job = meter.job(this.name, this.data.train.length, {
        kind: "final",
        question: this.q,
        epochs: epochs[m]!,
        patience: 0,
        sgd: { ...sgdOptions(settings, l2, m), epochs: epochs[m]! },
        weights: shared(Float32Array, table.rows * k),
        bias: shared(Float32Array, k),
        done: shared(Int32Array, 1),
        progress: shared(Float64Array, 2),
      });
      runner.submit(job, () => {
        meter.finished(job);
        this.#finals[m] = job;
        for (
          let next = this.#finals[this.#added];
          next;
          next = this.#finals[this.#added]
        ) {
          this.#add(next);
          this.#finals[this.#added++] = undefined;
        }
      });
    }
  }

  /** Adds one member's weights to the average. */
  #add(job: FitJob): void {
    const { ensemble } = this.context.settings;
    const w = job.weights!;
    const sum = this.#sum;
    for (let i = 0; i < sum.length; i++) sum[i]! += w[i]! / ensemble;
    for (let j = 0; j < this.#k; j++) {
      this.#bias[j]! += job.bias![j]! / ensemble;
    }
  }
}

/** Most epochs for a fit over `examples`: about `visitBudget` visits, at most `maxEpochs`. */
function epochCap(settings: FitSettings, examples: number): number {
  return Math.min(
    settings.maxEpochs,
    Math.max(1, Math.ceil(settings.visitBudget / Math.max(1, examples))),
  );
}

/** The SGD options of member `member` at L2 strength `l2`. */
function sgdOptions(
  settings: FitSettings,
  l2: number,
  member: number,
): SgdOptions {
  return {
    epochs: settings.maxEpochs,
    l2,
    learningRate: settings.learningRate,
    seed: settings.seed + 1009 * member,
    wordDropout: settings.wordDropout,
    minGradient: settings.minGradient,
    candidates: settings.candidates,
  };
}

/** Progress of the fits: epoch, examples per second and time left. */
class FitProgress {
  #jobs: {
    name: string;
    examples: number;
    job: FitJob;
    epochs: number;
    ended: boolean;
  }[] = [];
  /** Per question, the examples its final fits will take, until they are queued. */
  #expected = new Map<string, number>();
  #started = performance.now();
  #lastLine = performance.now();
  constructor(private say: (line: string) => void) {}

  /** Registers a job over `examples` training examples; returns it. */
  job(name: string, examples: number, job: FitJob): FitJob {
    if (job.kind === "final") this.#expected.delete(name);
    this.#jobs.push({ name, examples, job, epochs: job.epochs, ended: false });
    return job;
  }

  /** Counts on final fits of `examples` examples for `name`, not queued yet. */
  expect(name: string, examples: number): void {
    this.#expected.set(name, examples);
  }

  /** Notes a job's end (a validation fit may stop before its most epochs) in a line. */
  finished(job: FitJob): void {
    const entry = this.#jobs.find((j) => j.job === job)!;
    entry.epochs = job.progress[0]!;
    entry.ended = true;
    // Every fit of a question and kind is queued at once.
    const alike = this.#jobs.filter((j) =>
      j.name === entry.name && j.job.kind === job.kind
    );
    this.#line(
      `"${entry.name}" ${job.kind} fit ${
        alike.indexOf(entry) + 1
      } of ${alike.length} ended after epoch ${entry.epochs}${
        job.kind === "validation" ? ` of at most ${job.epochs}` : ""
      }`,
    );
  }

  /** Prints what runs now, when the last line is a few seconds old. */
  report(): void {
    if (performance.now() - this.#lastLine < 3000) return;
    const running: string[] = [];
    for (const { name, examples, job, epochs, ended } of this.#jobs) {
      const epoch = job.progress[0]!;
      if (ended || epoch === 0) continue;
      const scoring = job.kind === "validation" &&
        job.progress[1]! >= examples;
      running.push(
        `"${name}" ${job.kind} fit ${
          scoring ? "scoring validation after" : "at"
        } epoch ${epoch} of ${
          job.kind === "validation" ? "at most " : ""
        }${epochs}`,
      );
    }
    this.#line(running.join(", ") || "starting");
  }

  /** A line of progress: what, examples per second, time left at most. */
  #line(what: string): void {
    const now = performance.now();
    this.#lastLine = now;
    let done = 0;
    let planned = 0;
    for (const { examples, job, epochs } of this.#jobs) {
      done += Math.max(0, job.progress[0]! - 1) * examples + job.progress[1]!;
      planned += epochs * examples;
    }
    for (const examples of this.#expected.values()) planned += examples;
    const seconds = (now - this.#started) / 1000;
    const rate = done / Math.max(seconds, 1e-3);
    const left = rate > 0 ? Math.max(0, planned - done) / rate : NaN;
    this.say(
      `fitting: ${what}; ${
        Math.round(rate).toLocaleString("en-US")
      } examples/s, at most ${formatSeconds(left)} left`,
    );
  }
}

function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return "?";
  const m = Math.floor(s / 60);
  return m > 0
    ? `${m}m${String(Math.round(s % 60)).padStart(2, "0")}s`
    : `${Math.round(s)}s`;
}

/** Per validation answer of `q`, 1 when the fit part has answers of its option. */
function judgedAnswers(q: FitQuestion): Uint8Array {
  const seen = new Uint8Array(q.options);
  for (const i of q.fit) seen[q.labels[i]!] = 1;
  const out = shared(Uint8Array, q.validation.length);
  q.validation.forEach((i, t) => out[t] = seen[q.labels[i]!]!);
  return out;
}

/** The rows of `logits` (`n × k`) and their labels where `judged` is 1. */
function judgedRows(
  logits: Float64Array,
  labels: Int32Array,
  judged: Uint8Array,
  k: number,
): [Float64Array, Int32Array] {
  if (!judged.includes(0)) return [logits, labels];
  const keep = labels.map((_, t) => t).filter((t) => judged[t] === 1);
  const rows = new Float64Array(keep.length * k);
  keep.forEach((t, r) => rows.set(logits.subarray(t * k, (t + 1) * k), r * k));
  return [rows, Int32Array.from(keep, (t) => labels[t]!)];
}

function sharedCopy(values: ArrayLike<number>): Int32Array {
  const out = shared(Int32Array, values.length);
  out.set(values);
  return out;
}

function validationFigures(
  logits: Float64Array,
  labels: Int32Array,
  k: number,
  temperature: number,
): ValidationFigures {
  const n = logits.length === 0 ? 0 : labels.length;
  const confidences = new Float64Array(n);
  const correct = new Uint8Array(n);
  let right = 0;
  for (let t = 0; t < n; t++) {
    const p = softmax(logits.subarray(t * k, (t + 1) * k), temperature);
    const a = argmax(p);
    confidences[t] = p[a]!;
    if (a === labels[t]) {
      right++;
      correct[t] = 1;
    }
  }
  return {
    confidences,
    correct,
    accuracy: n === 0 ? null : right / n,
    logits: logits.subarray(0, n * k),
  };
}
