/**
 * What the service has done since it started: counters, latency, request
 * rate, recent decisions and drift alarm times, updated on the request path
 * without allocating, and turned into the `/v1/stats` document (and
 * `/metrics`) on demand.
 *
 * Totals (`counts`, `deferral_reasons`) run from the start of the process;
 * what belongs to one bundle (`bundle_counts`, `per_question`, a
 * question's drift alarm time) restarts when a reload swaps the bundle, so
 * that no figure mixes the old table's answers with the new one's
 * thresholds. `reloads` says when each swap happened.
 *
 * @module
 */

import {
  type Assessment,
  type DriftMonitor,
  type Table,
  type TableState,
  thresholdInForce,
} from "../engine/mod.ts";
import { bundleIdOf } from "../live/mod.ts";
import { AnswerCounts, ResponseCounts } from "./counters.ts";
import { record, share, type StatsSnapshot } from "./stats_document.ts";
import type { QuestionCounts } from "../openapi/mod.ts";
import { LatencyHistogram, round1, WindowedLatency } from "./latency.ts";
import { RequestRate } from "./rate.ts";
import { ReloadLog } from "./reloads.ts";
import { DescriptorProbe } from "./descriptors.ts";
import { TransportCounters } from "./transport.ts";
import { keptText, RecentDecisions } from "./recent.ts";

/** Seconds over which the request rate (and each recent-latency window) is measured. */
export const RATE_WINDOW_S = 10;

/** Options of `ServiceStats`. */
export interface StatsOptions {
  /**
   * The routes counted: the decision routes (their requests, in the order
   * the statistics report them) and every route label a response is
   * counted under (the route table's `DECISION_ROUTES` and `ROUTE_LABELS`).
   */
  routes: { decisions: readonly string[]; labels: readonly string[] };
  /** The served table. */
  table: Table;
  /** Its serving state (threshold in force, word cache). */
  state: TableState;
  /** The drift guard of the decision routes. */
  monitor: DriftMonitor;
  /** The bundle folder as given on the command line. */
  bundlePath: string;
  /** Milliseconds the bundle took to load, when known. */
  loadMs?: number | null | undefined;
  /** Keep the input text of recent decisions. */
  keepText?: boolean | undefined;
  /** Cost of one language-model call, for the money-saved figure. */
  costPerCall?: number | null | undefined;
  /** Latency of one language-model call in milliseconds, for the time-saved figure. */
  llmLatencyMs?: number | null | undefined;
  /** Wall clock in milliseconds since the epoch (tests may fix it). */
  now?: (() => number) | undefined;
  /** The process's memory; `Deno.memoryUsage` by default. */
  memoryUsage?: (() => Deno.MemoryUsage) | undefined;
}

/** One bundle question's counts and the wall time its drift alarm was first seen. */
interface QuestionCounter {
  counts: AnswerCounts;
  /** Wall time the current drift alarm was first seen; null while quiet. */
  alarmSince: number | null;
}

/** Counters of a running service. */
export class ServiceStats {
  #table: Table;
  #state: TableState;
  #monitor: DriftMonitor;
  #bundlePath: string;
  #loadMs: number | null;
  readonly #keepText: boolean;
  readonly #costPerCall: number | null;
  readonly #llmLatencyMs: number | null;
  readonly #now: () => number;
  readonly #memoryUsage: () => Deno.MemoryUsage;
  readonly #startedAt: number;

  readonly #totals = new AnswerCounts();
  /** Answers of the bundle served now, since it began serving. */
  #bundleTotals = new AnswerCounts();
  readonly #reloads: ReloadLog;
  readonly #descriptors = new DescriptorProbe();
  #playground = 0;
  #feedbackRefused = 0;
  /** Feedback items that were no label, per reason. */
  readonly #notLabels = new Map<string, number>();
  /** Answers flagged drift, per rule that withheld them (out of scope, novelty, the alarm, the live audits). */
  readonly #driftRules = new Map<string, number>();
  /** The decision routes, in the order they are reported. */
  readonly #decisionRoutes: readonly string[];
  /** Decision requests answered, per route (in `#decisionRoutes` order). */
  readonly #requests: Float64Array;
  readonly #responses: ResponseCounts;
  /** The served table's questions, by position, since it began serving. */
  #bySlot: QuestionCounter[] = [];
  readonly #latency = new LatencyHistogram();
  readonly #recentLatency = new WindowedLatency(RATE_WINDOW_S);
  readonly #rate = new RequestRate(RATE_WINDOW_S);
  readonly #recent = new RecentDecisions();
  /** Accept failures of the listener and per-client refusals. */
  readonly transport = new TransportCounters();

  /** Starts counting now. */
  constructor(options: StatsOptions) {
    this.#table = options.table;
    this.#state = options.state;
    this.#monitor = options.monitor;
    this.#bundlePath = options.bundlePath;
    this.#loadMs = options.loadMs ?? null;
    this.#keepText = options.keepText ?? false;
    this.#costPerCall = options.costPerCall ?? null;
    this.#llmLatencyMs = options.llmLatencyMs ?? null;
    this.#now = options.now ?? Date.now;
    this.#memoryUsage = options.memoryUsage ?? (() => Deno.memoryUsage());
    this.#startedAt = this.#now();
    this.#decisionRoutes = options.routes.decisions;
    this.#requests = new Float64Array(this.#decisionRoutes.length);
    this.#responses = new ResponseCounts(options.routes.labels);
    this.#reloads = new ReloadLog(bundleIdOf(options.table), this.#startedAt);
    this.serve(options.table, options.state, options.monitor);
  }

  /**
   * Counts answers of `table` (served with `state`, and its drift guard
   * `monitor`) from now on. Another table than the one served is a
   * reload: it is logged, and the bundle's own counts (`bundle_counts`,
   * `per_question`) start afresh.
   */
  serve(
    table: Table,
    state: TableState,
    monitor: DriftMonitor,
    bundlePath = this.#bundlePath,
    loadMs = this.#loadMs,
  ): void {
    if (table !== this.#table) {
      this.#reloads.reload(bundleIdOf(table), this.#now());
      this.#bundleTotals = new AnswerCounts();
    }
    this.#table = table;
    this.#state = state;
    this.#monitor = monitor;
    this.#bundlePath = bundlePath;
    this.#loadMs = loadMs;
    this.#bySlot = table.questions.map(() => ({
      counts: new AnswerCounts(),
      alarmSince: null,
    }));
  }

  /** The reloads since the start, and when the current bundle began serving. */
  get reloads(): ReloadLog {
    return this.#reloads;
  }

  /** Whether recent decisions keep their input text. */
  get keepText(): boolean {
    return this.#keepText;
  }

  /**
   * Records one decision request answered with 200: its answers, its
   * latency and, with `keepText`, its text.
   */
  recordDecision(
    route: string,
    text: string,
    assessments: readonly Assessment[],
    latencyUs: number,
  ): void {
    const now = this.#now();
    this.#requests[this.#decisionRoutes.indexOf(route)]!++;
    this.#latency.record(latencyUs);
    this.#recentLatency.record(now, latencyUs);
    this.#rate.count(now);
    const kept = this.#keepText ? keptText(text) : null;
    for (let i = 0; i < assessments.length; i++) {
      const a = assessments[i]!;
      const { certified, flag } = a.answer;
      this.#totals.count(certified, flag);
      const rule = a.answer.driftRule;
      if (flag === "drift" && rule !== null) {
        this.#driftRules.set(rule, (this.#driftRules.get(rule) ?? 0) + 1);
      }
      this.#bundleTotals.count(certified, flag);
      const counter = a.slot >= 0 ? this.#bySlot[a.slot] : undefined;
      if (counter !== undefined) {
        counter.counts.count(certified, flag);
        const quiet = this.#monitor.isQuiet(a.question);
        if (!quiet && counter.alarmSince === null) counter.alarmSince = now;
        else if (quiet && counter.alarmSince !== null) {
          counter.alarmSince = null;
        }
      }
      this.#recent.record(now, route, a, kept);
    }
  }

  /** Records `n` feedback items refused for naming an option the bundle lacks. */
  recordRefusedFeedback(n: number): void {
    this.#feedbackRefused += n;
  }

  /** Records one feedback item that was no label, under its `reason` (a forged id, another text's, ...). */
  recordNotLabel(reason: string): void {
    this.#notLabels.set(reason, (this.#notLabels.get(reason) ?? 0) + 1);
  }

  /** Records one playground request (never a decision). */
  recordPlayground(): void {
    this.#playground++;
  }

  /** Records the status of any response under its route label; 4xx and 5xx count as errors. */
  recordResponse(label: string, status: number): void {
    this.#responses.count(label, status);
  }

  /** Decision requests answered, per decision route, in the order given. */
  requestsByRoute(): ReadonlyMap<string, number> {
    return new Map(
      this.#decisionRoutes.map((r, i) => [r, this.#requests[i]!]),
    );
  }

  /** Responses as route label, status code and count. */
  responses(): [string, number, number][] {
    return this.#responses.entries();
  }

  /** The latency histogram of decision requests. */
  get latency(): LatencyHistogram {
    return this.#latency;
  }

  /** Seconds since the service started. */
  uptimeSeconds(): number {
    return (this.#now() - this.#startedAt) / 1000;
  }

  /** Wall time the service started, in milliseconds since the epoch. */
  get startedAt(): number {
    return this.#startedAt;
  }

  /** Decision requests per second over the last `RATE_WINDOW_S` seconds. */
  requestsPerSecond(): number {
    return this.#rate.perSecond(this.#now(), this.uptimeSeconds());
  }

  /** The `/v1/stats` document but its `live` section. */
  snapshot(): StatsSnapshot {
    const now = this.#now();
    const table = this.#table;
    const state = this.#state;
    const requests = this.#requests.reduce((a, b) => a + b, 0);
    const totals = this.#totals;
    const bundleTotals = this.#bundleTotals;
    const certified = totals.certified;
    const perQuestion = record<QuestionCounts>(
      table.questions.map((q, i) => {
        const c = this.#bySlot[i]!.counts;
        return [q.name, {
          answers: c.answers,
          certified: c.certified,
          share_answered: share(c.certified, c.answers),
          flags: record(c.flagCounts()),
        }];
      }),
    );
    const drift = record(
      table.questions.map((q, i) => {
        const since = this.#bySlot[i]!.alarmSince;
        const state = this.#monitor.state(q.name);
        return [q.name, {
          ...state,
          since: state.status === "alarmed" && since !== null
            ? new Date(since).toISOString()
            : null,
        }];
      }),
    );
    return {
      started_at: new Date(this.#startedAt).toISOString(),
      uptime_s: Math.round(this.uptimeSeconds() * 1000) / 1000,
      bundle: {
        id: bundleIdOf(table),
        path: this.#bundlePath,
        load_ms: this.#loadMs === null ? null : round1(this.#loadMs),
        loaded_at: new Date(this.#reloads.loadedAt).toISOString(),
        questions: table.questions.map((q) => ({
          name: q.name,
          kind: q.kind,
          options: [...q.options],
          threshold: thresholdInForce(table, state, q.name),
          alpha: q.calibration.alpha,
        })),
      },
      keep_text: this.#keepText,
      counts: {
        requests,
        answers: totals.answers,
        certified,
        deferred: totals.answers - certified,
        errors: this.#responses.errors,
        playground: this.#playground,
        feedback_refused: this.#feedbackRefused,
        feedback_not_labels: Object.fromEntries(this.#notLabels),
      },
      share_answered: share(certified, totals.answers),
      bundle_counts: {
        answers: bundleTotals.answers,
        certified: bundleTotals.certified,
        deferred: bundleTotals.answers - bundleTotals.certified,
        share_answered: share(bundleTotals.certified, bundleTotals.answers),
        deferral_reasons: record(bundleTotals.flagCounts()),
      },
      reloads: {
        count: this.#reloads.count,
        recent: this.#reloads.recent.map((r) => ({
          at: new Date(r.at).toISOString(),
          bundle_id: r.bundleId,
          previous_bundle_id: r.previousBundleId,
        })),
      },
      per_question: perQuestion,
      deferral_reasons: record(totals.flagCounts()),
      drift_rules: Object.fromEntries(this.#driftRules),
      latency_us: this.#latency.summary(),
      latency_us_recent: this.#recentLatency.summary(now),
      rate: { requests_per_s: this.requestsPerSecond() },
      savings: {
        llm_latency_ms: this.#llmLatencyMs,
        cost_per_call: this.#costPerCall,
        calls_saved: certified,
        time_saved_s: this.#llmLatencyMs === null
          ? null
          : (certified * this.#llmLatencyMs) / 1000,
        money_saved: this.#costPerCall === null
          ? null
          : certified * this.#costPerCall,
      },
      drift,
      recent: this.#recent.list(),
      descriptors: this.#descriptors.read(),
      transport: this.transport.snapshot(),
      memory: {
        ...processMemory(this.#memoryUsage()),
        word_cache_words: state.words.size,
        word_cache_bytes: state.words.bytes,
        word_cache_budget_bytes: state.words.budgetBytes,
      },
    };
  }
}

function processMemory(m: Deno.MemoryUsage): {
  rss_bytes: number;
  heap_used_bytes: number;
  heap_total_bytes: number;
  external_bytes: number;
} {
  return {
    rss_bytes: m.rss,
    heap_used_bytes: m.heapUsed,
    heap_total_bytes: m.heapTotal,
    external_bytes: m.external,
  };
}
