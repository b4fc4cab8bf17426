/**
 * The service behind every route: the served table (read once per request,
 * replaced whole by `swap`), the statistics, the access token, the live
 * certificate, and the decision routes as one function from body text to
 * reply bytes (and batches of them as another). The Hono app (`app.ts`) answers decisions through
 * `decide`.
 *
 * The engine decides every answer and flag; this module only reads bodies,
 * asks the table and hands the verdicts to the reply writers.
 *
 * @module
 */

import { prepareText } from "../engine/answer.ts";
import type { DriftMonitor } from "../engine/drift.ts";
import type { TableState } from "../engine/state.ts";
import type { Table } from "../engine/table.ts";
import { LiveController, type LiveOptions } from "../live/controller.ts";
import { dashboardHtml as defaultDashboard } from "../../static/mod.ts";
import { BATCH_BODY, parseBatch } from "./batch.ts";
import { parseJsonBody } from "./body.ts";
import { assessRequest, type DecisionShape } from "./decision_request.ts";
import type { JsonWriter } from "./json_writer.ts";
import type { DecisionRouteSpec } from "./routes.ts";
import { type ServedTable, serveTable } from "./served.ts";
import { round1 } from "./stats/latency.ts";
import { ServiceStats } from "./stats/service_stats.ts";
import { NO_TOKEN, type TokenSource } from "./token.ts";

/** What the service serves and how. */
export interface AppDeps {
  /** The loaded table. */
  table: Table;
  /** Its serving state (word cache, thresholds in force); a new one with the default word cache by default. */
  state?: TableState | undefined;
  /** The bundle folder, as shown in statistics. */
  bundlePath: string;
  /** Milliseconds the bundle took to load, shown in statistics. */
  loadMs?: number | null | undefined;
  /** The access token; none by default (every route open). */
  token?: TokenSource | undefined;
  /** The feedback token (`serve --feedback-token-file`): when set, `/v1/feedback` needs it instead of the access token. None by default. */
  feedbackToken?: TokenSource | undefined;
  /** The drift guard of the decision routes; a new one from the bundle settings by default. */
  monitor?: DriftMonitor | undefined;
  /** Keep the input text of recent decisions in statistics. */
  keepText?: boolean | undefined;
  /** Cost of one language-model call, for the money-saved figure. */
  costPerCall?: number | null | undefined;
  /** Latency of one language-model call in milliseconds, for the time-saved figure. */
  llmLatencyMs?: number | null | undefined;
  /** The dashboard page served at `GET /`; the one of `static/mod.ts` by default. */
  dashboardHtml?: string | undefined;
  /** Where unexpected errors and token-file problems are reported; stderr by default. */
  log?: ((message: string) => void) | undefined;
  /**
   * The live certificate: audit rate and seed. Off (audit rate 0) by
   * default here; `serve` turns it on at `DEFAULT_AUDIT_RATE`.
   */
  live?: LiveOptions | undefined;
  /**
   * Where feedback is kept as trace lines (`serve --feedback-log`); called
   * before anything is counted, so a failure loses nothing.
   */
  feedbackLog?: FeedbackSink | undefined;
  /**
   * Take feedback naming an option the bundle lacks (`serve
   * --accept-new-options`); by default such an item is refused, neither
   * logged nor counted.
   */
  acceptNewOptions?: boolean | undefined;
}

/** Appends feedback trace lines (JSON text, one per line, newline-terminated) somewhere durable. */
export type FeedbackSink = (lines: string) => Promise<void>;

/** A running service: what every route reads and records. */
export class Service {
  #served: ServedTable;
  /** Counters, latency and recent decisions. */
  readonly stats: ServiceStats;
  /** Where the access token comes from (`NO_TOKEN`: every route is open). */
  readonly token: TokenSource;
  /** Where the feedback token comes from (`NO_TOKEN`: feedback takes the access token). */
  readonly feedbackToken: TokenSource;
  /** The dashboard page. */
  readonly dashboardHtml: string;
  /** Where unexpected errors are reported. */
  readonly log: (message: string) => void;
  /** The live certificate: audit sampling, pending audits, per-question certificates. */
  readonly live: LiveController;
  /** Where feedback is kept as traces; null when nowhere. */
  readonly feedbackLog: FeedbackSink | null;
  /** Feedback may name options the bundle lacks. */
  readonly acceptNewOptions: boolean;

  /** A service for `deps`, counting from now. */
  constructor(deps: AppDeps) {
    this.#served = serveTable(deps.table, deps.monitor, deps.state);
    this.log = deps.log ?? ((m: string) => console.error(m));
    this.dashboardHtml = deps.dashboardHtml ?? defaultDashboard;
    this.live = new LiveController(deps.live ?? { auditRate: 0 });
    this.live.serve(deps.table, this.#served.state);
    this.feedbackLog = deps.feedbackLog ?? null;
    this.acceptNewOptions = deps.acceptNewOptions ?? false;
    this.stats = new ServiceStats({
      table: deps.table,
      state: this.#served.state,
      monitor: this.#served.monitor,
      bundlePath: deps.bundlePath,
      loadMs: deps.loadMs,
      keepText: deps.keepText,
      costPerCall: deps.costPerCall,
      llmLatencyMs: deps.llmLatencyMs,
    });
    this.token = deps.token ?? NO_TOKEN;
    this.feedbackToken = deps.feedbackToken ?? NO_TOKEN;
  }

  /** The table served now; a request reads it once, at its start. */
  get served(): ServedTable {
    return this.#served;
  }

  /**
   * Serves `table` from the next request on (with a new drift guard from
   * its settings unless `monitor` is given; `loadMs`, when given, is what
   * `/v1/stats` shows as its load time; `state`, its serving state, new by
   * default). Requests already answering finish with the table they
   * started with; none is dropped.
   */
  swap(
    table: Table,
    monitor?: DriftMonitor,
    loadMs?: number,
    state?: TableState,
  ): ServedTable {
    const next = serveTable(table, monitor, state);
    this.#served = next;
    this.live.serve(table, next.state);
    this.stats.serve(table, next.state, next.monitor, undefined, loadMs);
    return next;
  }

  /**
   * Answers a decision `route`: parses `body`, asks the table, records the
   * decision and writes the JSON reply into `w`. Throws `HTTPException`
   * (400) for a body of the wrong shape, having recorded nothing;
   * `app.onError` writes that reply. `latency_us` runs from here (the body
   * received as text) to the answers ready.
   */
  decide(route: DecisionRouteSpec, body: string, w: JsonWriter): void {
    const served = this.#served;
    const start = performance.now();
    const shape: DecisionShape = route.decision;
    const request = shape.parse(parseJsonBody(body, shape.needed));
    const { table, state, monitor } = served;
    const answers = assessRequest(
      table,
      state,
      prepareText(table, state, request.text),
      request,
      monitor,
    );
    const audits = this.live.recordDecisions(table, answers, request.text);
    const latencyUs = round1((performance.now() - start) * 1000);
    this.stats.recordDecision(route.path, request.text, answers, latencyUs);
    shape.write(w, served, request, answers, latencyUs, audits);
  }

  /**
   * Answers a batch `route` (`batch.ts`): checks every item first (a 400
   * naming the bad item's index, with nothing recorded), then answers,
   * records and writes each item as `decide` would, in order: each item
   * is one decision for the statistics, the drift guard and the audits.
   * An item's `latency_us` is its own time plus an equal share of reading
   * the batch; the batch's runs from the body received to its last item.
   */
  decideBatch(route: DecisionRouteSpec, body: string, w: JsonWriter): void {
    const served = this.#served;
    const start = performance.now();
    const shape: DecisionShape = route.decision;
    const requests = parseBatch(
      parseJsonBody(body, BATCH_BODY.needed),
      shape,
    );
    const { table, state, monitor } = served;
    const shareMs = requests.length === 0
      ? 0
      : (performance.now() - start) / requests.length;
    w.ascii('{"items":[');
    for (let i = 0; i < requests.length; i++) {
      const itemStart = performance.now();
      const request = requests[i]!;
      const answers = assessRequest(
        table,
        state,
        prepareText(table, state, request.text),
        request,
        monitor,
      );
      const audits = this.live.recordDecisions(table, answers, request.text);
      const latencyUs = round1(
        (performance.now() - itemStart + shareMs) * 1000,
      );
      this.stats.recordDecision(route.path, request.text, answers, latencyUs);
      if (i > 0) w.ascii(",");
      shape.write(w, served, request, answers, latencyUs, audits);
    }
    w.ascii('],"latency_us":').number(
      round1((performance.now() - start) * 1000),
    ).ascii("}");
  }
}
