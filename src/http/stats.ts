/**
 * What the service has done since it started: counters, latency, recent
 * decisions and drift state, updated on the request path at near-zero cost
 * and turned into the `/v1/stats` document (and `/metrics`) on demand.
 *
 * Recent decisions keep no input text unless the operator asks for it at
 * startup (`keepText`).
 *
 * @module
 */

import type { Assessment } from "../engine/answer.ts";
import type { DriftMonitor, DriftState } from "../engine/drift.ts";
import type { QuestionKind, Table } from "../engine/table.ts";
import { setKey } from "./fields.ts";
import { LatencyHistogram, type LatencySummary, round1 } from "./latency.ts";

/** The routes that answer decisions. */
export type DecisionRoute = "/v1/decide" | "/v1/decisions" | "/v1/altdecisions";

/** The decision routes, in the order they are reported. */
export const DECISION_ROUTES: readonly DecisionRoute[] = [
  "/v1/decide",
  "/v1/decisions",
  "/v1/altdecisions",
];

/** How many recent decisions are kept. */
export const RECENT_LIMIT = 50;
/** Longest input text kept per recent decision (with `keepText`), in UTF-16 units. */
export const RECENT_TEXT_LIMIT = 2000;
/** Seconds over which the request rate is measured. */
export const RATE_WINDOW_S = 10;

/** Options of `ServiceStats`. */
export interface StatsOptions {
  /** The served table. */
  table: Table;
  /** The bundle folder as given on the command line. */
  bundlePath: string;
  /** Milliseconds the bundle took to load, when known. */
  loadMs?: number | null | undefined;
  /** The drift guard of the decision routes. */
  monitor: DriftMonitor;
  /** Keep the input text of recent decisions. */
  keepText?: boolean | undefined;
  /** Cost of one language-model call, for the money-saved figure. */
  costPerCall?: number | null | undefined;
  /** Latency of one language-model call in milliseconds, for the time-saved figure. */
  llmLatencyMs?: number | null | undefined;
  /** Wall clock in milliseconds since the epoch (tests may fix it). */
  now?: (() => number) | undefined;
}

/** One recent decision as `/v1/stats` lists it. */
export interface RecentDecision {
  at: string;
  route: DecisionRoute;
  question: string;
  answer: string | boolean | null;
  confidence: number;
  certified: boolean;
  flag: string | null;
  radius: number | null;
  text?: string;
}

/** A question of the bundle as `/v1/stats` describes it. */
export interface QuestionSummary {
  name: string;
  kind: QuestionKind;
  options: string[];
  threshold: number | null;
  alpha: number | null;
}

/** Per-question counts. */
export interface QuestionCounts {
  answers: number;
  certified: number;
  share_answered: number | null;
  flags: Record<string, number>;
}

/** The `/v1/stats` document. */
export interface StatsDocument {
  started_at: string;
  uptime_s: number;
  bundle: {
    path: string;
    load_ms: number | null;
    questions: QuestionSummary[];
  };
  keep_text: boolean;
  counts: {
    requests: number;
    answers: number;
    certified: number;
    deferred: number;
    errors: number;
    playground: number;
  };
  share_answered: number | null;
  per_question: Record<string, QuestionCounts>;
  deferral_reasons: Record<string, number>;
  latency_us: LatencySummary;
  /** The same over the last 10 to 20 seconds (the running window and the one before). */
  latency_us_recent: LatencySummary;
  rate: { requests_per_s: number };
  savings: {
    llm_latency_ms: number | null;
    cost_per_call: number | null;
    calls_saved: number;
    time_saved_s: number | null;
    money_saved: number | null;
  };
  drift: Record<string, DriftState & { since: string | null }>;
  recent: RecentDecision[];
}

/** A recent decision as kept: the time as a number, the text or null. */
type RecentSlot = Omit<RecentDecision, "at" | "text"> & {
  at: number;
  text: string | null;
};

interface QuestionCounter {
  answers: number;
  certified: number;
  flags: Map<string, number>;
  /** Wall time the current drift alarm was first seen; null while quiet. */
  alarmSince: number | null;
}

function increment(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function share(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

/** An object from entries, any key (`__proto__` included) an own property. */
function record<T>(entries: Iterable<[string, T]>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of entries) setKey(out, k, v);
  return out;
}

/** Counters of a running service. */
export class ServiceStats {
  readonly #table: Table;
  readonly #bundlePath: string;
  readonly #loadMs: number | null;
  readonly #monitor: DriftMonitor;
  readonly #keepText: boolean;
  readonly #costPerCall: number | null;
  readonly #llmLatencyMs: number | null;
  readonly #now: () => number;
  readonly #startedAt: number;

  #answers = 0;
  #certified = 0;
  #errors = 0;
  #playground = 0;
  readonly #requestsByRoute = new Map<DecisionRoute, number>();
  readonly #byQuestion = new Map<string, QuestionCounter>();
  readonly #flags = new Map<string, number>();
  /** Responses by route label and status code. */
  readonly #responses = new Map<string, Map<number, number>>();
  readonly #latency = new LatencyHistogram();
  /** Latency of the running window and of the one before it (`RATE_WINDOW_S` each). */
  #windowLatency = new LatencyHistogram();
  #previousWindowLatency = new LatencyHistogram();
  #windowStart = -Infinity;
  readonly #recent: (RecentSlot | undefined)[] = new Array(RECENT_LIMIT);
  #recentNext = 0;
  /** Decision requests per wall-clock second, for the last `RATE_WINDOW_S` seconds. */
  readonly #rateSeconds = new Float64Array(RATE_WINDOW_S).fill(-1);
  readonly #rateCounts = new Float64Array(RATE_WINDOW_S);

  /** Starts counting now. */
  constructor(options: StatsOptions) {
    this.#table = options.table;
    this.#bundlePath = options.bundlePath;
    this.#loadMs = options.loadMs ?? null;
    this.#monitor = options.monitor;
    this.#keepText = options.keepText ?? false;
    this.#costPerCall = options.costPerCall ?? null;
    this.#llmLatencyMs = options.llmLatencyMs ?? null;
    this.#now = options.now ?? Date.now;
    this.#startedAt = this.#now();
    for (const q of this.#table.questions) {
      this.#byQuestion.set(q.name, {
        answers: 0,
        certified: 0,
        flags: new Map(),
        alarmSince: null,
      });
    }
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
    route: DecisionRoute,
    text: string,
    assessments: readonly Assessment[],
    latencyUs: number,
  ): void {
    const now = this.#now();
    this.#requestsByRoute.set(
      route,
      (this.#requestsByRoute.get(route) ?? 0) + 1,
    );
    this.#latency.record(latencyUs);
    this.#rollWindow(now);
    this.#windowLatency.record(latencyUs);
    const second = Math.floor(now / 1000);
    const slot = second % RATE_WINDOW_S;
    if (this.#rateSeconds[slot] !== second) {
      this.#rateSeconds[slot] = second;
      this.#rateCounts[slot] = 0;
    }
    this.#rateCounts[slot]!++;
    const kept = this.#keepText ? text.slice(0, RECENT_TEXT_LIMIT) : null;
    for (const a of assessments) {
      const { answer } = a;
      this.#answers++;
      if (answer.certified) this.#certified++;
      else if (answer.flag !== null) increment(this.#flags, answer.flag);
      const counter = this.#byQuestion.get(a.question);
      if (counter !== undefined) {
        counter.answers++;
        if (answer.certified) counter.certified++;
        else if (answer.flag !== null) increment(counter.flags, answer.flag);
        const quiet = this.#monitor.isQuiet(a.question);
        if (!quiet && counter.alarmSince === null) counter.alarmSince = now;
        else if (quiet && counter.alarmSince !== null) {
          counter.alarmSince = null;
        }
      }
      this.#recent[this.#recentNext] = {
        at: now,
        route,
        question: a.question,
        answer: answer.choice ?? answer.answer ?? null,
        confidence: answer.confidence,
        certified: answer.certified,
        flag: answer.flag,
        radius: answer.radius,
        text: kept,
      };
      this.#recentNext = (this.#recentNext + 1) % RECENT_LIMIT;
    }
  }

  /** Records one playground request (never a decision). */
  recordPlayground(): void {
    this.#playground++;
  }

  /** Records the status of any response; 4xx and 5xx count as errors. */
  recordResponse(route: string, status: number): void {
    if (status >= 400) this.#errors++;
    let byStatus = this.#responses.get(route);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.#responses.set(route, byStatus);
    }
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }

  /** Decision requests answered, per route. */
  requestsByRoute(): ReadonlyMap<DecisionRoute, number> {
    return this.#requestsByRoute;
  }

  /** Responses per route label and status code. */
  responses(): ReadonlyMap<string, ReadonlyMap<number, number>> {
    return this.#responses;
  }

  #recentLatency(): LatencySummary {
    this.#rollWindow(this.#now());
    return LatencyHistogram.merged(
      this.#previousWindowLatency,
      this.#windowLatency,
    ).summary();
  }

  /** Starts a new latency window when the running one is `RATE_WINDOW_S` old. */
  #rollWindow(now: number): void {
    if (now - this.#windowStart < RATE_WINDOW_S * 1000) return;
    const stale = now - this.#windowStart >= 2 * RATE_WINDOW_S * 1000;
    this.#previousWindowLatency = stale
      ? new LatencyHistogram()
      : this.#windowLatency;
    this.#windowLatency = new LatencyHistogram();
    this.#windowStart = now;
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
    const now = this.#now();
    const second = Math.floor(now / 1000);
    let n = 0;
    for (let i = 0; i < RATE_WINDOW_S; i++) {
      const s = this.#rateSeconds[i]!;
      if (s > second - RATE_WINDOW_S && s <= second) n += this.#rateCounts[i]!;
    }
    // The window is the last full seconds plus the running one, no longer than the uptime.
    const windowS = Math.min(
      (RATE_WINDOW_S - 1) + (now % 1000) / 1000,
      this.uptimeSeconds(),
    );
    return windowS <= 0 ? 0 : Math.round((n / windowS) * 1000) / 1000;
  }

  /** The `/v1/stats` document. */
  snapshot(): StatsDocument {
    const requests = [...this.#requestsByRoute.values()].reduce(
      (a, b) => a + b,
      0,
    );
    const certified = this.#certified;
    const perQuestion = record<QuestionCounts>(
      [...this.#byQuestion].map(([name, c]) => [name, {
        answers: c.answers,
        certified: c.certified,
        share_answered: share(c.certified, c.answers),
        flags: record(c.flags),
      }]),
    );
    const drift = record(
      this.#table.questions.map((q) => {
        const since = this.#byQuestion.get(q.name)?.alarmSince ?? null;
        const state = this.#monitor.state(q.name);
        return [q.name, {
          ...state,
          since: state.status === "alarmed" && since !== null
            ? new Date(since).toISOString()
            : null,
        }];
      }),
    );
    const recent: RecentDecision[] = [];
    for (let i = 1; i <= RECENT_LIMIT; i++) {
      const slot =
        this.#recent[(this.#recentNext - i + RECENT_LIMIT) % RECENT_LIMIT];
      if (slot === undefined) break;
      const { at, text, ...rest } = slot;
      recent.push(
        text === null ? { at: new Date(at).toISOString(), ...rest } : {
          at: new Date(at).toISOString(),
          ...rest,
          text,
        },
      );
    }
    return {
      started_at: new Date(this.#startedAt).toISOString(),
      uptime_s: Math.round(this.uptimeSeconds() * 1000) / 1000,
      bundle: {
        path: this.#bundlePath,
        load_ms: this.#loadMs === null ? null : round1(this.#loadMs),
        questions: this.#table.questions.map((q) => ({
          name: q.name,
          kind: q.kind,
          options: [...q.options],
          threshold: q.calibration.threshold,
          alpha: q.calibration.alpha,
        })),
      },
      keep_text: this.#keepText,
      counts: {
        requests,
        answers: this.#answers,
        certified,
        deferred: this.#answers - certified,
        errors: this.#errors,
        playground: this.#playground,
      },
      share_answered: share(certified, this.#answers),
      per_question: perQuestion,
      deferral_reasons: record(this.#flags),
      latency_us: this.#latency.summary(),
      latency_us_recent: this.#recentLatency(),
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
      recent,
    };
  }
}
