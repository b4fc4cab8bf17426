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

import {
  type AnsweringTier,
  type Assessment,
  type DriftMonitor,
  hasSecondTier,
  questionThresholds,
  type SecondTierAsk,
  type Table,
  type TableState,
  type TierContext,
} from "../engine/mod.ts";
import type { LearnStats, PlaygroundResponse } from "../openapi/mod.ts";
import { playgroundResponse } from "./playground.ts";
import {
  assessRequest,
  BATCH_BODY,
  type DecisionRequest,
  type DecisionShape,
  JsonWriter,
  parseBatch,
  type PlaygroundRequest,
  type ServiceTable,
  serviceTable,
  type UnlearnedQuestions,
} from "../wire/mod.ts";
import { LiveController, type LiveOptions } from "../live/mod.ts";
import type { FeedbackSink, RefusedSink } from "../serve/mod.ts";
import { dashboardHtml as defaultDashboard } from "../../static/mod.ts";
import { parseJsonBody } from "./body.ts";
import {
  DEFAULT_ENCODER_QUEUE,
  EncoderQueue,
  type EncoderQueueOptions,
} from "../encoder/mod.ts";
import {
  DECISION_ROUTES,
  type DecisionRouteSpec,
  ROUTE_LABELS,
} from "./routes.ts";
import { round1, ServiceStats, TierStats } from "../metrics/mod.ts";
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
   * Where feedback items that are no label go (a forged id, one given for
   * another text: the log's capped side file); nowhere when absent.
   */
  refusedLog?: RefusedSink | undefined;
  /**
   * Take feedback naming an option the bundle lacks (`serve
   * --accept-new-options`); by default such an item is refused, neither
   * logged nor counted.
   */
  acceptNewOptions?: boolean | undefined;
  /**
   * The encoder's queue, when `table` has a second tier (`serve` starts it
   * then, and only then); without it a format-4 bundle is served by its
   * table alone, against the table's own threshold.
   */
  encoderQueue?: EncoderQueue | null | undefined;
  /** The learner of a learning service (`serve --learn`); absent otherwise. */
  learning?: Learning | undefined;
}

/**
 * A learning service's learner as the routes use it (`Learner` of
 * `src/learn/`): the questions feedback has shown that the table lacks,
 * and each label counted.
 */
export interface Learning {
  readonly registry: UnlearnedQuestions;
  /**
   * Counts one label (a feedback item written to the log) answered for
   * `table`; `backed` false for an item carrying no id the service signed
   * for its text.
   */
  observe(
    question: string,
    answer: string | boolean,
    table: Table,
    backed?: boolean,
  ): void;
  /** The `learn` section of `/v1/stats`. */
  stats(): LearnStats;
}

/** Counts each answer under the tier that gave it, and the latency under each tier present. */
function recordTiers(
  stats: TierStats,
  answers: readonly Assessment[],
  tiers: readonly AnsweringTier[],
  latencyUs: number,
): void {
  let table = false;
  let semantic = false;
  for (let i = 0; i < answers.length; i++) {
    const tier = tiers[i]!;
    stats.recordAnswer(tier, answers[i]!.answer.certified);
    if (tier === "table") table = true;
    else semantic = true;
  }
  stats.recordLatency(table, semantic, latencyUs);
}

/** One decision on its way: its request, its answers so far, what it asks of the second tier. */
interface PendingDecision {
  request: DecisionRequest;
  answers: Assessment[];
  ask: SecondTierAsk | null;
  /** Per answer the tier that gave it; undefined when no second tier is served. */
  tiers: AnsweringTier[] | undefined;
  /** Milliseconds of its latency so far. */
  ms: number;
}

/** A running service: what every route reads and records. */
export class Service {
  #served: ServiceTable;
  #encoder: EncoderQueue | null;
  /** Counts by tier, kept once the encoder's queue runs (across reloads). */
  #tierStats: TierStats | null;
  readonly #subscribers: ((served: ServiceTable, loadMs?: number) => void)[] =
    [];
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
  /** Where feedback items that are no label go; null when nowhere. */
  readonly refusedLog: RefusedSink | null;
  /** Feedback may name options the bundle lacks. */
  readonly acceptNewOptions: boolean;
  /** The learner of a learning service; null otherwise. */
  readonly learning: Learning | null;

  /** A service for `deps`, counting from now. */
  constructor(deps: AppDeps) {
    this.#encoder = deps.encoderQueue ?? null;
    this.#tierStats = this.#encoder === null ? null : new TierStats();
    this.#served = serviceTable(
      deps.table,
      deps.monitor,
      deps.state,
      this.#encoder,
    );
    this.log = deps.log ?? ((m: string) => console.error(m));
    this.dashboardHtml = deps.dashboardHtml ?? defaultDashboard;
    this.live = new LiveController({
      ...deps.live ?? { auditRate: 0 },
      warn: deps.live?.warn ?? ((line) => this.log(`warning: ${line}`)),
    });
    this.live.serve(
      deps.table,
      this.#served.state,
      this.#served.second !== null,
    );
    this.feedbackLog = deps.feedbackLog ?? null;
    this.refusedLog = deps.refusedLog ?? null;
    this.learning = deps.learning ?? null;
    // A learning service learns the options its model adds.
    this.acceptNewOptions = (deps.acceptNewOptions ?? false) ||
      this.learning !== null;
    this.stats = new ServiceStats({
      routes: { decisions: DECISION_ROUTES, labels: ROUTE_LABELS },
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
    // What is served now has one owner, this service: a reload publishes
    // the new served object and each part that keeps something of it
    // follows.
    this.subscribe((next) =>
      this.live.serve(next.table, next.state, next.second !== null)
    );
    this.subscribe((next, loadMs) =>
      this.stats.serve(
        next.table,
        next.state,
        next.monitor,
        undefined,
        loadMs,
      )
    );
  }

  /**
   * Calls `listener` with every served object published from now on (each
   * reload), with its load time when known.
   */
  subscribe(listener: (served: ServiceTable, loadMs?: number) => void): void {
    this.#subscribers.push(listener);
  }

  /** The encoder's queue; null when none was started. */
  get encoderQueue(): EncoderQueue | null {
    return this.#encoder;
  }

  /**
   * The counts by tier while the table served now has its second tier
   * served (the `tiers` block of `/v1/stats` and its `/metrics` families);
   * null otherwise.
   */
  get tierStats(): TierStats | null {
    return this.#served.second === null ? null : this.#tierStats;
  }

  /**
   * Gets ready to serve `table`: starts the encoder's queue (with
   * `options`) when the table has a second tier, none runs yet and
   * `options.workers` is above 0; a table-only bundle starts nothing.
   */
  async prepare(
    table: Table,
    options: EncoderQueueOptions = DEFAULT_ENCODER_QUEUE,
  ): Promise<void> {
    if (
      this.#encoder === null && hasSecondTier(table) && options.workers > 0
    ) {
      this.#encoder = await EncoderQueue.start(options);
      this.#tierStats ??= new TierStats();
    }
  }

  /** Stops the encoder's workers (at shutdown). */
  close(): void {
    this.#encoder?.close();
  }

  /** The table served now; a request reads it once, at its start. */
  get served(): ServiceTable {
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
  ): ServiceTable {
    const next = serviceTable(table, monitor, state, this.#encoder);
    this.#served = next;
    for (const listener of this.#subscribers) listener(next, loadMs);
    return next;
  }

  /**
   * Answers a decision `route`: parses `body`, asks the table, records the
   * decision and writes the JSON reply into `w`. Throws `HTTPException`
   * (400) for a body of the wrong shape, having recorded nothing;
   * `app.onError` writes that reply. `latency_us` runs from here (the body
   * received as text) to the answers ready. A decision the second tier is
   * asked for finishes later, in a writer of its own (the promise).
   */
  decide(
    route: DecisionRouteSpec,
    body: string,
    w: JsonWriter,
  ): Promise<JsonWriter> | undefined {
    const served = this.#served;
    const start = performance.now();
    const shape: DecisionShape = route.decision;
    const request = shape.parse(parseJsonBody(body, shape.needed));
    const item = this.#assess(served, request, start);
    const later = this.#askSecondTier(served, [item]);
    if (later !== undefined) {
      return later.then(() => {
        const out = new JsonWriter(4096);
        this.#finish(route, served, item, out);
        return out;
      });
    }
    this.#finish(route, served, item, w);
    return undefined;
  }

  /**
   * One request answered by the table (its answers taken in order, feeding
   * the drift guard), with what it asks of the second tier, its latency
   * clock started at `start` plus `shareMs` (its share of reading a batch).
   */
  #assess(
    served: ServiceTable,
    request: DecisionRequest,
    start: number,
    shareMs = 0,
  ): PendingDecision {
    const { answerer } = served;
    const prepared = answerer.prepare(request.text);
    const answers = assessRequest(
      answerer.table,
      answerer.state,
      prepared,
      request,
      answerer.monitor,
      this.learning?.registry,
    );
    // What the second tier reads is taken now: the prepared text is the
    // state's scratch, reused by the next text.
    const ask = served.second === null
      ? null
      : answerer.secondTierAsk(answers, prepared, request.exposed);
    return {
      request,
      answers,
      ask,
      tiers: served.second === null
        ? undefined
        : answers.map((): AnsweringTier => "table"),
      ms: performance.now() - start + shareMs,
    };
  }

  /**
   * Sends the texts of `items` that ask the second tier to the encoder as
   * one batch, through its bounded queue: undefined when none asks it (or
   * the queue is full: each is then shed, its table answers standing), else
   * a promise that resolves once each asked answer is given by the
   * two-tier rule (a failed embedding leaves the table's, counted as
   * failed). The wait is added to each waiting item's latency.
   */
  #askSecondTier(
    served: ServiceTable,
    items: readonly PendingDecision[],
  ): Promise<void> | undefined {
    const second = served.second;
    if (second === null) return undefined;
    const waiting = items.filter((d) => d.ask !== null);
    if (waiting.length === 0) return undefined;
    const stats = this.#tierStats!;
    const texts = [...new Set(waiting.map((d) => d.request.text))];
    const embedding = second.encoder.tryEmbed(texts);
    if (embedding === null) {
      stats.shed += waiting.length;
      return undefined;
    }
    const sent = performance.now();
    return embedding.then(
      (vectors) => this.#secondTierAnswers(served, waiting, texts, vectors),
      (e) => {
        stats.failed += waiting.length;
        this.log(
          `The second tier failed; the table's answers went back: ${
            e instanceof Error ? e.message : String(e)
          }`,
        );
      },
    ).finally(() => {
      const waited = performance.now() - sent;
      for (const d of waiting) d.ms += waited;
    });
  }

  /** Each waiting item's asked answers, given by the two-tier rule on its text's embedding. */
  #secondTierAnswers(
    served: ServiceTable,
    waiting: readonly PendingDecision[],
    texts: readonly string[],
    vectors: readonly Float32Array[],
  ): void {
    const { answerer, table } = served;
    const stats = this.#tierStats!;
    const at = new Map(texts.map((t, i) => [t, i]));
    for (const d of waiting) {
      const r = answerer.answerAsked(
        d.answers,
        d.ask,
        vectors[at.get(d.request.text)!] ?? null,
        (slot, l) => this.live.semanticThreshold(table, slot, l),
      );
      stats.asked += r.asked;
      stats.novel += r.novel;
      d.tiers = r.tiers;
    }
  }

  /**
   * The end of every decision: its answers recorded (audit ids picked,
   * statistics, and with tiers the second tier's counts) and its reply
   * written into `w`.
   */
  #finish(
    route: DecisionRouteSpec,
    served: ServiceTable,
    d: PendingDecision,
    w: JsonWriter,
  ): void {
    const { request, answers, tiers } = d;
    const audits = this.live.recordDecisions(
      served.table,
      answers,
      request.text,
      tiers,
      this.#learnable(served.table, request),
    );
    const latencyUs = round1(d.ms * 1000);
    this.stats.recordDecision(route.path, request.text, answers, latencyUs);
    if (tiers !== undefined) {
      recordTiers(this.#tierStats!, answers, tiers, latencyUs);
    }
    const shape: DecisionShape = route.decision;
    shape.write(w, served, request, answers, latencyUs, audits, tiers);
  }

  /**
   * The playground's answer to `request`: the question answered as a
   * decision would be, both tiers included (the second tier through the
   * same queue), but reading the drift guard without feeding it and
   * counted nowhere (neither decisions, the live certificate nor the
   * tiers' counts). Its reason names the tier that answered and the
   * threshold in force.
   */
  async playground(request: PlaygroundRequest): Promise<PlaygroundResponse> {
    const served = this.#served;
    const { answerer, table, peek, monitor, questionNames } = served;
    const prepared = answerer.prepare(request.text);
    const answers = [answerer.answer(prepared, request.question, {}, peek)];
    const a = answers[0]!;
    const drift = a.slot < 0 ? undefined : monitor.state(a.question);
    if (served.second === null || a.slot < 0) {
      return playgroundResponse(a, drift, questionNames);
    }
    const q = table.questions[a.slot]!;
    const tiers: TierContext = {
      tier: "table",
      tableThreshold: questionThresholds(q).table,
    };
    if (q.semantic === undefined) {
      return playgroundResponse(a, drift, questionNames, tiers);
    }
    const ask = answerer.secondTierAsk(answers, prepared, false);
    if (ask !== null) {
      tiers.tableConfidence = a.fullConfidence;
      const embedding = served.second.encoder.tryEmbed([request.text]);
      let vector: Float32Array | null = null;
      if (embedding === null) tiers.notAnswered = "shed";
      else {
        try {
          vector = (await embedding)[0] ?? null;
        } catch {
          tiers.notAnswered = "failed";
        }
      }
      const r = answerer.answerAsked(
        answers,
        ask,
        vector,
        (slot, l) => this.live.semanticThreshold(table, slot, l),
      );
      tiers.tier = r.tiers[0]!;
      if (r.novel > 0) tiers.notAnswered = "novel";
    }
    return playgroundResponse(answers[0]!, drift, questionNames, tiers);
  }

  /**
   * Answers a batch `route` (`batch.ts`): checks every item first (a 400
   * naming the bad item's index, with nothing recorded), then answers each
   * item by the table in order (feeding the drift guard as single
   * requests would), sends the texts the table withholds for low
   * confidence to the second tier as one batch through the same queue
   * (shed whole when it is full), then records and writes each item as
   * `decide` would: each item is one decision for the statistics, the
   * drift guard and the audits, and its reply is `/v1/decide`'s. An
   * item's `latency_us` is its own time plus an equal share of reading
   * the batch (and the second tier's wait, when it waited); the batch's
   * runs from the body received to its last item. A batch the second tier
   * is asked for finishes later, in a writer of its own (the promise).
   */
  decideBatch(
    route: DecisionRouteSpec,
    body: string,
    w: JsonWriter,
  ): Promise<JsonWriter> | undefined {
    const served = this.#served;
    const start = performance.now();
    const shape: DecisionShape = route.decision;
    const requests = parseBatch(
      parseJsonBody(body, BATCH_BODY.needed),
      shape,
    );
    const shareMs = requests.length === 0
      ? 0
      : (performance.now() - start) / requests.length;
    const items = requests.map((r) =>
      this.#assess(served, r, performance.now(), shareMs)
    );
    const write = (out: JsonWriter) => {
      out.ascii('{"items":[');
      items.forEach((d, i) => {
        if (i > 0) out.ascii(",");
        this.#finish(route, served, d, out);
      });
      out.ascii('],"latency_us":').number(
        round1((performance.now() - start) * 1000),
      ).ascii("}");
      return out;
    };
    const later = this.#askSecondTier(served, items);
    if (later !== undefined) {
      return later.then(() => write(new JsonWriter(16384)));
    }
    write(w);
    return undefined;
  }

  /**
   * For a learning service, which answers of `request` are to questions
   * the table lacks that a decision-model shape asked as a type the
   * service can learn (`choice`, `predicate`, `noul`): unsupported, as the
   * interface has them, yet recorded so that their feedback teaches.
   */
  #learnable(table: Table, request: DecisionRequest): boolean[] | undefined {
    if (this.learning === null || request.asks === null) return undefined;
    let out: boolean[] | undefined;
    request.asks.forEach((a, i) => {
      if (
        a.type !== undefined && !table.byName.has(a.name) &&
        (a.type === "choice" || a.type === "predicate" || a.type === "noul")
      ) {
        (out ??= new Array<boolean>(request.asks!.length).fill(false))[i] =
          true;
      }
    });
    return out;
  }
}
