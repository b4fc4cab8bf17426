/**
 * The learner of `serve --learn DIR`: it counts the labels the service's
 * feedback brings, keeps the questions and options the bundle has not
 * learned yet (`questions.ts`) and the questions held for options the model
 * added (`holds.ts`), retrains in a worker of its own when the
 * schedule says (`schedule.ts`: on the evidence), and swaps the new bundle
 * in (through `swapIn`, as a reload does) when the retrain wrote one. It
 * keeps the history of retrains (in memory and in `DIR/retrains.jsonl`)
 * and, per stretch of the ledger, the certified share and the model calls
 * the traffic cost, for `/v1/stats` and the dashboard.
 *
 * One retrain runs at a time, on one core by default (the worker trains
 * with one thread and embeds with one encoder); serving never waits for it.
 *
 * @module
 */

import {
  LabelNeeds,
  LabelPace,
  needInWords,
  type QuestionNeed,
} from "./advice.ts";
import type { Table, UnlearnedQuestion } from "../engine/mod.ts";
import type { TrainOptionsInput } from "../train/mod.ts";
import { QuestionRegistry } from "./questions.ts";
import {
  LEARN_FILES,
  type RetrainJob,
  type RetrainOutcome,
} from "./retrain.ts";
import type { RetrainMessage, RetrainRequest } from "./retrain_worker.ts";
import { embedAheadDue, nextRetrainLabels, retrainDue } from "./schedule.ts";
import type { LearnerResume } from "./resume.ts";
import type { RetrainRecord } from "./record.ts";
import { Holds, SETTLED_LABELS } from "./holds.ts";
import { spentLevel, testLevel } from "../guarantee/mod.ts";

/** How long after a ledger stretch ends its feedback counts as arrived: 5 s. */
export const SETTLE_MS = 5_000;
/**
 * How long after the last label its evidence is settled: its decision's
 * ledger stretch (5 s long) ends at most 5 s later, is settled `SETTLE_MS`
 * after that, and a second more for the log to be written.
 */
const SETTLED_AFTER_MS = 2 * SETTLE_MS + 1_000;
/** Retrains kept in memory for `/v1/stats`. */
export const HISTORY_KEPT = 50;
/** Stretches kept for the savings chart (older ones are merged in pairs). */
export const SERIES_KEPT = 500;

/** A test runs only when its plan gives it at least this chance of passing (see `RetrainJob.minPassChance`). */
export const MIN_PASS_CHANCE = 0.4;
/**
 * A question whose last test passed is tested again once its calibration
 * answers grew by this factor since, or its labels by `RETEST_LABELS` (a
 * model trained on that many more labels may certify far more on the same
 * evidence): a test that would change little is not worth its share.
 */
export const RETEST_GROWTH = 1.5;
/** See `RETEST_GROWTH`. */
export const RETEST_LABELS = 1.5;

/** One stretch of traffic: decisions, certified answers, model calls (uncertified answers and audits). */
export interface StretchPoint {
  /** Start and end, ms since the epoch. */
  from: number;
  to: number;
  decisions: number;
  certified: number;
  calls: number;
}

/** What a learner is told. */
export interface LearnerOptions {
  /** The learning service's folder. */
  dir: string;
  /** Seed trace files read at every retrain. */
  seeds?: readonly string[];
  /** Training options of every retrain (the bundle's settings when there is one; see `trainOptionsOf`). */
  training: () => TrainOptionsInput;
  /** The bundle in force's folder, to measure the new one beside; null when none. */
  inForce: () => string | null;
  /**
   * Serves `DIR/bundle` once a retrain wrote it (as a reload does);
   * resolves to false when it is not served after all (a fleet's learner
   * whose lease ran out: `fleet/fleet_learning.ts`).
   */
  swapIn: () => Promise<boolean | void>;
  /** The registry of questions the table lacks (a fleet's, shared by its replicas); one of its own when absent. */
  registry?: QuestionRegistry | undefined;
  /** Where each retrain record goes (a fleet's pool); appended to `DIR/retrains.jsonl` when absent. */
  writeHistory?: ((line: string) => Promise<void>) | undefined;
  /** The table served now. */
  served: () => Table;
  /**
   * Told when the model has answered an option `question`'s table lacks
   * (`added` true): the served state stops certifying the question
   * (`markOptionsAdded`) until a retrain learns it; and with `added` false
   * when the option was taken for noise, so it certifies again.
   */
  optionsAdded?: (question: string, added: boolean) => void;
  /** Versions of `DIR/bundle` kept (default 3). */
  keep?: number;
  /** Where lines about retrains go (stderr by default). */
  log?: (line: string) => void;
  /** The wall clock, ms (`Date.now` by default). */
  clock?: () => number;
  /** How often the schedule is looked at, ms (1000 by default; 0: only by `tick`). */
  tickMs?: number;
  /**
   * What the folder records of an earlier run (`readResume`): the history,
   * the schedule, the tests spent and the log's labels go on from there.
   */
  resume?: LearnerResume | undefined;
}

/** A learning service's learner (see the module doc). */
export class Learner {
  readonly dir: string;
  readonly registry: QuestionRegistry;
  readonly #options: LearnerOptions;
  readonly #log: (line: string) => void;
  readonly #clock: () => number;
  #labels: number;
  #lastLabels = 0;
  #lastAt = -Infinity;
  #running: Promise<void> | null = null;
  #worker: Worker | null = null;
  /** Ends the worker running now and settles its promise as interrupted (null: none runs). */
  #interrupt: ((reason: string) => void) | null = null;
  readonly #history: RetrainRecord[] = [];
  #retrains = 0;
  #swaps = 0;
  #series: StretchPoint[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  /** Set when the model answered options the table lacks: retrain now. */
  #news = false;
  /** The labels when texts were last embedded ahead. */
  #embeddedAt = 0;
  /** The labels of the last retrain that ran the encoder's pass (0: none). */
  #encoderTriedAt = 0;
  /** When the last label came (ms). */
  #lastLabelAt = -Infinity;
  /** The pace labels come at, for the times in the advice. */
  readonly #pace = new LabelPace();
  /** What each uncalibrated question needs, narrowed retrain after retrain. */
  readonly #needs = new LabelNeeds();
  /** When the last retrain began (ms). */
  #lastStartedAt = -Infinity;
  /** Which questions are held for options the model added, and since when their traffic changed. */
  readonly #holds: Holds;
  /** Per question, the calibration tests its retrains ran (each spent a share of delta). */
  readonly #tests = new Map<string, number>();
  /** Per question, the calibration answers and the labels its last passing test had. */
  readonly #testedAt = new Map<
    string,
    { calibration: number; labels: number }
  >();

  /** A learner for `options.dir`; starts looking at its schedule every `tickMs`. */
  constructor(options: LearnerOptions) {
    this.#options = options;
    this.dir = options.dir;
    this.registry = options.registry ?? new QuestionRegistry();
    this.#log = options.log ?? ((line) => console.error(line));
    this.#clock = options.clock ?? Date.now;
    const resume = options.resume;
    this.#labels = 0;
    if (resume !== undefined) {
      this.#labels = Math.max(resume.labels, resume.lastLabels);
      this.#lastLabels = resume.lastLabels;
      this.#lastAt = resume.lastAt;
      this.#lastStartedAt = resume.lastAt;
      this.#encoderTriedAt = resume.encoderTriedAt;
      this.#embeddedAt = resume.lastLabels;
      this.#retrains = resume.retrains;
      this.#swaps = resume.swaps;
      this.#history.push(...resume.history.slice(-HISTORY_KEPT));
      for (const [q, n] of Object.entries(resume.tests)) this.#tests.set(q, n);
      for (const [q, at] of Object.entries(resume.testedAt)) {
        this.#testedAt.set(q, at);
      }
      for (const [q, { kind, counts }] of resume.questions) {
        this.registry.set(q, kind, [...counts.keys()], [...counts.values()]);
      }
    }
    this.#holds = new Holds(
      {
        dir: this.dir,
        clock: this.#clock,
        log: this.#log,
        registry: this.registry,
        ...(options.optionsAdded === undefined
          ? {}
          : { optionsAdded: options.optionsAdded }),
        preempt: (reason) => this.#interrupt?.(reason),
        retrainSoon: () => this.#news = true,
      },
      this.#labels,
      resume?.questions,
    );
    const every = options.tickMs ?? 1000;
    if (every > 0) {
      this.#timer = setInterval(() => this.tick(), every);
      Deno.unrefTimer(this.#timer);
    }
  }

  /** Labels counted so far (at start, those of the last run's last retrain). */
  get labels(): number {
    return this.#labels;
  }

  /** True while a retrain runs. */
  get running(): boolean {
    return this.#running !== null;
  }

  /** Retrains started so far, and how many swapped a bundle in. */
  get retrains(): number {
    return this.#retrains;
  }
  get swaps(): number {
    return this.#swaps;
  }

  /** Per question, when its traffic changed (ms since the epoch): calibration stands for the traffic since. */
  calibrateAfter(): Record<string, number> {
    return this.#holds.calibrateAfter();
  }

  /** The retrains so far, latest last (at most `HISTORY_KEPT`). */
  get history(): readonly RetrainRecord[] {
    return this.#history;
  }

  /** The traffic per stretch since the start (see `StretchPoint`). */
  get series(): readonly StretchPoint[] {
    return this.#series;
  }

  /** The labels at which the next retrain is due. */
  get nextAt(): number {
    return nextRetrainLabels(
      this.#lastLabels,
      this.#holds.changedSince(this.#lastLabels),
    );
  }

  /**
   * Counts one label: what the model answered to `question`. An answer
   * `table` cannot give (its question or option is not the table's) is
   * kept in the registry of the unlearned; an option the question's table
   * lacks holds the question once the frequency test says the traffic
   * changed (`option_change.ts`), and is learned at the next retrain
   * either way, but only from labels of decisions the service made
   * (`backed`: the item carried an id signed for its text): an item a
   * client made up, or forged, never adds an option (`backed_options.ts`).
   */
  observe(
    question: string,
    answer: string | boolean,
    table: Table,
    backed = true,
  ): void {
    this.#labels++;
    this.#lastLabelAt = this.#clock();
    this.#pace.count(this.#lastLabelAt);
    const q = table.byName.get(question);
    if (q === undefined) {
      this.registry.observe(question, answer);
      return;
    }
    this.#holds.observe(question, answer, table, this.#labels, backed);
  }

  /** What is known of a question the table lacks; undefined when nothing. */
  unlearned(question: string): UnlearnedQuestion | undefined {
    return this.registry.get(question);
  }

  /** Adds one stretch of traffic to the series (older points merged in pairs past `SERIES_KEPT`). */
  addStretch(point: StretchPoint): void {
    this.#series.push(point);
    if (this.#series.length <= SERIES_KEPT) return;
    const merged: StretchPoint[] = [];
    for (let i = 0; i + 1 < this.#series.length; i += 2) {
      const a = this.#series[i]!;
      const b = this.#series[i + 1]!;
      merged.push({
        from: a.from,
        to: b.to,
        decisions: a.decisions + b.decisions,
        certified: a.certified + b.certified,
        calls: a.calls + b.calls,
      });
    }
    if (this.#series.length % 2 === 1) merged.push(this.#series.at(-1)!);
    this.#series = merged;
  }

  /**
   * Starts a retrain when one is due and none runs (see `schedule.ts`);
   * otherwise, when a second tier is asked for and `embedAheadDue` says
   * so, embeds the new texts ahead of the next retrain.
   */
  tick(): void {
    if (this.#closed || this.#running !== null) return;
    const now = this.#clock();
    const schedule = {
      labels: this.#labels,
      lastLabels: this.#lastLabels,
      lastAt: this.#lastAt,
      now,
      changedLabels: this.#holds.changedSince(this.#lastLabels),
    };
    const due = this.#news || retrainDue(schedule) ||
      // The traffic went quiet with labels the last retrain could not use
      // yet (too fresh to be settled when it began): read them, once.
      (this.#lastLabels > 0 &&
        this.#lastStartedAt < this.#lastLabelAt + SETTLED_AFTER_MS &&
        now >= this.#lastLabelAt + SETTLED_AFTER_MS);
    if (due) void this.retrainNow();
    else if (
      (this.#options.training().semantic ?? "off") !== "off" &&
      embedAheadDue(schedule, this.#embeddedAt)
    ) {
      this.#embeddedAt = this.#labels;
      this.#running = this.#embedAhead().finally(() => this.#running = null);
    }
  }

  /** Embeds the log's new texts in a worker (see `embedAhead`); a failure is logged and forgotten. */
  async #embedAhead(): Promise<void> {
    const worker = new Worker(
      new URL("./retrain_worker.ts", import.meta.url),
      { type: "module" },
    );
    this.#worker = worker;
    try {
      await new Promise<void>((resolve, reject) => {
        this.#interrupt = (reason) => reject(new RetrainInterrupted(reason));
        worker.onmessage = (e: MessageEvent<RetrainMessage>) => {
          if (e.data.type === "embedded") resolve();
          else if (e.data.type === "failed") reject(new Error(e.data.message));
        };
        worker.onerror = (e) => {
          e.preventDefault();
          reject(new Error(e.message));
        };
        worker.postMessage(
          { type: "embed", job: this.#job() } satisfies RetrainRequest,
        );
      });
    } catch (e) {
      if (e instanceof RetrainInterrupted) {
        // Its texts will be embedded by the retrain that comes now.
        this.#embeddedAt = 0;
        this.#log(`learn: embedding ahead interrupted: ${e.message}`);
      } else {
        this.#log(`learn: embedding ahead failed: ${(e as Error).message}`);
      }
    } finally {
      this.#interrupt = null;
      worker.terminate();
      if (this.#worker === worker) this.#worker = null;
    }
  }

  /** Retrains now (or waits for the one running); resolves once it ended and any swap is done. */
  retrainNow(): Promise<void> {
    this.#running ??= this.#run().finally(() => this.#running = null);
    return this.#running;
  }

  async #run(): Promise<void> {
    const started = this.#clock();
    this.#retrains++;
    this.#news = false;
    this.#lastStartedAt = started;
    // The added options' labels as this retrain reads them.
    const counted = new Map(
      [...this.#holds.added()].map(([q, m]) => [q, new Map(m)]),
    );
    const job = this.#job(started, counted);
    // Each pass is shown as it ends (a quick pass's swap long before the
    // encoder's pass ends), and kept in the history file in order.
    let written = Promise.resolve();
    const record = (r: RetrainRecord) => {
      this.#history.push(r);
      while (this.#history.length > HISTORY_KEPT) this.#history.shift();
      const line = JSON.stringify(r) + "\n";
      const write = this.#options.writeHistory;
      written = written.then(() =>
        write !== undefined ? write(line) : Deno.writeTextFile(
          `${this.dir}/${LEARN_FILES.history}`,
          line,
          { append: true },
        )
      ).catch((e) =>
        this.#log(`learn: cannot write the retrain history: ${e.message}`)
      );
    };
    let passStarted = started;
    let reported = 0;
    const retrain = this.#retrains;
    // A retrain spends one share per question, whichever passes ran tests.
    const testedHere = new Set<string>();
    const pass = (outcome: RetrainOutcome) => {
      reported++;
      const {
        seen: _seen,
        encoder,
        tested,
        calibration,
        failures,
        needs,
        ...figures
      } = outcome;
      for (const [q, range] of Object.entries(needs ?? {})) {
        this.#needs.update(q, range, outcome.labels);
      }
      for (const q of Object.keys(tested)) {
        if (!testedHere.has(q)) {
          testedHere.add(q);
          this.#tests.set(q, (this.#tests.get(q) ?? 0) + 1);
        }
      }
      if (encoder) {
        this.#encoderTriedAt = outcome.labels;
        // The encoder's pass left the texts it needed in the cache.
        this.#embeddedAt = Math.max(this.#embeddedAt, outcome.labels);
      }
      record({
        ...figures,
        retrain,
        encoder,
        tested,
        calibration,
        failures,
        started: new Date(passStarted).toISOString(),
        ended: new Date(started + 1000 * outcome.seconds).toISOString(),
      });
      passStarted = started + 1000 * outcome.seconds;
      const why = Object.entries(failures).map(([q, w]) => `${q}: ${w}`);
      const advice = Object.entries(this.advice()).filter(([q]) =>
        failures[q] !== undefined
      ).map(([q, n]) => `${q}: ${needInWords(n)}`);
      this.#log(
        `learn: retrained on ${outcome.labels} labels in ${
          outcome.seconds.toFixed(1)
        }s; ${outcome.swapped ? "swapped in" : "kept the bundle in force"}${
          why.length === 0 ? "" : ` [${why.join(", ")}]`
        }: ${outcome.reason}${
          advice.length === 0 ? "" : `; what would help: ${advice.join("; ")}`
        }`,
      );
    };
    try {
      const outcomes = await this.#inWorker(job, async () => {
        // The pass's record (and the tests it spent) is on disk first.
        await written;
        if ((await this.#options.swapIn()) === false) return;
        this.#swaps++;
        this.#holds.settle(counted, this.#options.served());
      }, pass);
      for (const outcome of outcomes.slice(reported)) pass(outcome);
      const last = outcomes.at(-1)!;
      // After its last pass passed a question's test, the next waits for
      // more evidence; after it failed, only for a plan with a fair chance.
      for (const q of Object.keys(last.tested)) {
        if (last.failures[q] === undefined) {
          this.#testedAt.set(q, {
            calibration: last.calibration[q] ?? 0,
            labels: last.labels,
          });
        } else this.#testedAt.delete(q);
      }
      this.#lastLabels = Math.max(last.labels, 1);
      // Labels counted while it ran stay counted beyond what it read.
      this.#labels = Math.max(this.#labels, last.labels);
      // The registry learns what the log holds (after a restart too).
      for (const q of last.seen) {
        this.registry.set(q.name, q.kind, q.options, q.counts);
      }
      const served = this.#options.served();
      this.registry.learned(served);
      this.#holds.settleWatch(served);
    } catch (e) {
      // A retrain that ended without an outcome (the pass it was in).
      const ended = (reason: string, error?: string): RetrainRecord => ({
        retrain,
        labels: this.#labels,
        seconds: (this.#clock() - started) / 1000,
        swapped: false,
        reason,
        testAnswers: 0,
        certifiedBefore: null,
        certifiedAfter: null,
        calibrated: 0,
        questions: 0,
        started: new Date(passStarted).toISOString(),
        ended: new Date(this.#clock()).toISOString(),
        ...(error === undefined ? {} : { error }),
      });
      if (e instanceof RetrainInterrupted) {
        // What it would have made is of no use now; the labels it read
        // stay due (the last retrain's count is kept), after a short pause.
        record(ended(`interrupted: ${e.message}`));
        this.#log(`learn: retrain interrupted: ${e.message}`);
      } else {
        const error = (e as Error)?.message ?? String(e);
        record(ended("the retrain failed", error));
        this.#lastLabels = Math.max(this.#labels, 1);
        this.#log(`learn: retrain failed: ${error}`);
      }
    }
    this.#lastAt = this.#clock();
    await written;
  }

  /** The job of a retrain starting at `started` (see `RetrainJob`). */
  #job(
    started = this.#clock(),
    counted: ReadonlyMap<string, ReadonlyMap<string, number>> = this.#holds
      .added(),
  ): RetrainJob {
    return {
      dir: this.dir,
      seeds: this.#options.seeds ?? [],
      training: this.#options.training(),
      inForce: this.#options.inForce(),
      settledBefore: started - SETTLE_MS,
      keep: this.#options.keep ?? 3,
      added: Object.fromEntries(
        [...counted].map(([q, m]) => [q, Object.fromEntries(m)]),
      ),
      settled: SETTLED_LABELS,
      held: this.#holds.held,
      calibrateAfter: this.#holds.calibrateAfter(),
      encoderTriedAt: this.#encoderTriedAt,
      tests: Object.fromEntries(this.#tests),
      minPassChance: MIN_PASS_CHANCE,
      // Tested again, after a pass, once its evidence or its labels grew.
      minCalibration: Object.fromEntries(
        [...this.#testedAt].filter(([, at]) =>
          this.#labels < RETEST_LABELS * at.labels
        ).map(([q, at]) => [q, Math.ceil(RETEST_GROWTH * at.calibration)]),
      ),
    };
  }

  /**
   * Runs `job` in a worker of its own, ended when it is done; `swap` is
   * awaited each time a pass wrote a bundle, before the next pass.
   */
  #inWorker(
    job: RetrainJob,
    swap: () => Promise<void>,
    pass: (outcome: RetrainOutcome) => void,
  ): Promise<RetrainOutcome[]> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(
        new URL("./retrain_worker.ts", import.meta.url),
        { type: "module" },
      );
      this.#worker = worker;
      const end = () => {
        this.#interrupt = null;
        worker.terminate();
        if (this.#worker === worker) this.#worker = null;
      };
      this.#interrupt = (reason) => {
        end();
        reject(new RetrainInterrupted(reason));
      };
      worker.onmessage = (e: MessageEvent<RetrainMessage>) => {
        const m = e.data;
        if (m.type === "note") this.#log(`learn: ${m.line}`);
        else if (m.type === "pass") pass(m.outcome);
        else if (m.type === "swap") {
          swap().catch((e) => this.#log(`learn: swap failed: ${e}`))
            .finally(() =>
              worker.postMessage({ type: "swapped" } satisfies RetrainRequest)
            );
        } else if (m.type === "done") {
          end();
          resolve(m.outcomes);
        } else if (m.type === "failed") {
          end();
          reject(new Error(m.message));
        }
      };
      worker.onerror = (e) => {
        e.preventDefault();
        end();
        reject(new Error(e.message));
      };
      worker.postMessage({ type: "job", job } satisfies RetrainRequest);
    });
  }

  /** The delta each question's tests share: the training's, or the default. */
  #delta(): number {
    return this.#options.training().delta ?? 0.05;
  }

  /** What `/v1/stats` shows of the learner (its `learn` section). */
  /** What each uncalibrated question needs now, with times at the pace labels come. */
  advice(): Record<string, QuestionNeed> {
    return this.#needs.view(
      this.#labels,
      this.#pace.perSecond(this.#clock()),
    );
  }

  stats() {
    const iso = (ms: number) => new Date(ms).toISOString();
    const pace = this.#pace.perSecond(this.#clock());
    return {
      dir: this.dir,
      labels: this.#labels,
      next_retrain_at: this.nextAt,
      labels_per_s: Math.round(pace * 100) / 100,
      next_retrain_in_s: pace > 0
        ? Math.max(0, Math.round((this.nextAt - this.#labels) / pace))
        : null,
      advice: this.advice(),
      running: this.running,
      retrains: this.#retrains,
      swaps: this.#swaps,
      held: this.#holds.held,
      unlearned: this.registry.names().filter((n) =>
        !this.#options.served().byName.has(n)
      ),
      tests: Object.fromEntries(
        [...this.#tests].map(([q, n]) => [q, {
          tests: n,
          spent: spentLevel(this.#delta(), n),
          next_level: testLevel(this.#delta(), n + 1),
        }]),
      ),
      history: this.#history.slice(-20).map((r) => ({
        ...(r.retrain === undefined ? {} : { retrain: r.retrain }),
        ...(r.encoder === undefined ? {} : { encoder: r.encoder }),
        ...(r.tested === undefined ? {} : { tested: r.tested }),
        ...(r.failures === undefined ? {} : { failures: r.failures }),
        started: r.started,
        ended: r.ended,
        labels: r.labels,
        seconds: r.seconds,
        swapped: r.swapped,
        reason: r.reason,
        test_answers: r.testAnswers,
        certified_before: r.certifiedBefore,
        certified_after: r.certifiedAfter,
        calibrated: r.calibrated,
        questions: r.questions,
        ...(r.error === undefined ? {} : { error: r.error }),
      })),
      series: this.#series.map((p) => ({
        from: iso(p.from),
        to: iso(p.to),
        decisions: p.decisions,
        certified: p.certified,
        calls: p.calls,
      })),
    };
  }

  /** Stops the schedule and ends a retrain running now (its bundle is not written). */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#worker?.terminate();
    this.#worker = null;
  }
}

/** A retrain (or embedding ahead) ended early because the traffic changed. */
class RetrainInterrupted extends Error {
  override name = "RetrainInterrupted";
}
