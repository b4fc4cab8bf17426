/**
 * A client for the proxy side of the service: asks `/v1/decide`, calls the
 * caller's model for every answer the table does not certify and for every
 * certified answer picked for audit, reports what the model said to
 * `/v1/feedback` (which keeps the live certificate honest), and returns one
 * answer per question with its source.
 *
 * Uses `fetch` only (no Deno APIs), so it runs in Deno, Node 18+, Bun and
 * browsers.
 *
 * @example
 * ```ts
 * import { DecisionClient } from "./mod.ts";
 * const client = new DecisionClient({
 *   url: "http://127.0.0.1:8010",
 *   model: ({ question, state }) => Promise.resolve(question === "topic" ? "billing" : false),
 * });
 * const answers = await client.decide("my invoice was overcharged");
 * answers.topic; // { answer: "billing", source: "table", certified: true, ... }
 * ```
 *
 * A refusal of the service is a `DecisionServiceError` carrying its status
 * and reply, so a caller can tell a missing token (401) from a busy or
 * draining service (503):
 *
 * ```ts
 * import { DecisionClient, DecisionServiceError } from "./mod.ts";
 * declare const client: DecisionClient;
 * try {
 *   await client.decide("my invoice was overcharged");
 * } catch (e) {
 *   if (!(e instanceof DecisionServiceError) || e.status !== 503) throw e;
 *   // busy or draining: ask again later, or ask the model alone
 * }
 * ```
 *
 * @module
 */

/** What the model is asked: one question about one state. */
export interface ModelAsk {
  question: string;
  /** The state as given to `decide`. */
  state: string | Record<string, unknown>;
  /** The options offered for a choice question (absent: all). */
  criteria?: readonly string[] | undefined;
  /** Why the model is asked: the table did not certify, or an audit. */
  reason: "uncertified" | "audit";
}

/** The caller's model: an option for a choice question, true or false for a yes/no one. */
export type ModelFunction = (
  ask: ModelAsk,
) => Promise<string | boolean> | string | boolean;

/** Options of `DecisionClient`. */
export interface ClientOptions {
  /** The service, e.g. `http://127.0.0.1:8010`. */
  url: string;
  /** The access token, sent as `X-Service-Token`, when the service has one. */
  token?: string | undefined;
  /**
   * The feedback token, sent as `X-Service-Token` with feedback instead of
   * `token`, when the service has one (`serve --feedback-token-file`).
   * Absent: feedback is sent with `token`.
   */
  feedbackToken?: string | undefined;
  /** The reference model. */
  model: ModelFunction;
  /** The `fetch` to use (the global one by default). */
  fetch?: typeof fetch | undefined;
  /**
   * Told of every feedback item that was lost, one call per item (the
   * answers are returned anyway): refused by the service (an option the
   * bundle lacks, such as a label ending in a carriage return), an audit
   * id it could not count, or a request that failed (`FeedbackError`,
   * with the item and the reason); `console.warn` by default.
   * `feedbackCounts` keeps the tally.
   */
  onFeedbackError?: ((error: FeedbackError) => void) | undefined;
}

/** Feedback items sent, counted by the service, and lost (see `DecisionClient.feedbackCounts`). */
export interface FeedbackCounts {
  /** Items sent to `/v1/feedback`. */
  sent: number;
  /** Of them, taken by the service (counted or kept as traces). */
  accepted: number;
  /** Refused by the service: an option the bundle lacks. */
  refused: number;
  /** Taken, but their audit id could not be counted (expired, unknown...). */
  missedAudits: number;
  /** Lost with a request that failed (network, 4xx, 5xx). */
  failed: number;
}

/** One question's final answer. */
export interface ClientAnswer {
  /** The answer: an option, or true / false. */
  answer: string | boolean;
  /** `table`: the table's certified answer; `model`: the model's. */
  source: "table" | "model";
  /** Whether the table certified its answer. */
  certified: boolean;
  /** Whether the table's answer was picked for audit (the model was asked too). */
  audited: boolean;
  /** The table's flag (why it did not certify), or null. */
  flag: string | null;
  /** The table's own answer, when it had one (null for a question it does not know). */
  table: string | boolean | null;
}

/** A question to ask, with optional `criteria` (choice questions). */
export type Questions = Record<string, { criteria?: readonly string[] } | null>;

interface ServiceAnswer {
  choice?: string;
  answer?: boolean;
  certified: boolean;
  flag: string | null;
  audit?: string;
  /** An uncertified answer's decision id, sent back with the model's answer. */
  feedback_id?: string;
}

/** One feedback item: what the model said about a question of a state. */
export interface FeedbackItem {
  question: string;
  state: string | Record<string, unknown>;
  answer: string | boolean;
  audit?: string;
  feedback_id?: string;
}

/** Why a feedback item was lost. */
export type FeedbackLoss = "refused" | "missed_audit" | "failed";

/**
 * A feedback item that was lost: `kind` says how (`refused` by the
 * service, its audit id `missed`, or its request `failed`), `reason` the
 * service's word for it (`unknown_option`, `expired`, a status...), and
 * the message says it in full.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FeedbackError } from "./mod.ts";
 * const e = new FeedbackError(
 *   { question: "topic", state: "hi", answer: "billing\r" },
 *   "refused",
 *   "unknown_option",
 *   "billing",
 * );
 * assert.match(e.message, /"billing\\r" is not an option of the bundle; it ends in a carriage return.*did you mean "billing"/);
 * ```
 */
export class FeedbackError extends Error {
  override name = "FeedbackError";
  /** The item lost. */
  readonly item: FeedbackItem;
  readonly kind: FeedbackLoss;
  /** The service's reason (`unknown_option`; an audit miss such as `expired`; the failure's message). */
  readonly reason: string;

  /** The error for `item`, lost as `kind` for `reason` (`meant`: the option the service suggests). */
  constructor(
    item: FeedbackItem,
    kind: FeedbackLoss,
    reason: string,
    meant?: string,
    cause?: unknown,
  ) {
    const answer = JSON.stringify(item.answer);
    const about = `feedback on "${item.question}" (answer ${answer})`;
    const trailing = typeof item.answer === "string" &&
        /\s$/.test(item.answer)
      ? `; it ends in ${
        item.answer.endsWith("\r") ? "a carriage return" : "white space"
      }`
      : "";
    super(
      kind === "refused"
        ? `${about} refused: ${answer} is not an option of the bundle${trailing}${
          meant === undefined ? "" : `; did you mean ${JSON.stringify(meant)}?`
        }`
        : kind === "missed_audit"
        ? `${about}: its audit id was not counted (${reason})`
        : `${about} not sent: ${reason}`,
      cause === undefined ? undefined : { cause },
    );
    this.item = item;
    this.kind = kind;
    this.reason = reason;
  }
}

/** The parts of the `/v1/feedback` reply the client reads. */
interface FeedbackReply {
  /** Items written to the feedback log as labels (what the next training reads). */
  kept?: number;
  /** Items that were no label (a forged id, one given for another text). */
  not_labels?: number;
  missed_audits?: { audit: string; reason: string }[];
  refused?: { index: number; reason: string; did_you_mean?: string }[];
}

/**
 * The service refused a request or could not answer it (any status but 2xx):
 * 400 for a body it cannot read, 401 without the right token, 503 while it
 * is busy or draining, and so on. Network failures are not this: they are
 * `fetch`'s own `TypeError`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DecisionServiceError } from "./mod.ts";
 * const e = new DecisionServiceError("/v1/decide", 401, { error: "A valid token is needed" });
 * assert.equal(e.status, 401);
 * assert.equal(e.message, "/v1/decide answered 401: A valid token is needed");
 * ```
 */
export class DecisionServiceError extends Error {
  override name = "DecisionServiceError";
  /** The route asked, such as `/v1/decide`. */
  readonly path: string;
  /** The HTTP status of the reply. */
  readonly status: number;
  /** The reply, parsed as JSON (the service's `{ "error": ... }`), or its text when it was not JSON. */
  readonly reply: unknown;

  /** The error for `path` answering `status` with `reply`; the message is the reply's `error` when it has one. */
  constructor(path: string, status: number, reply: unknown) {
    const said = typeof reply === "object" && reply !== null &&
        typeof (reply as { error?: unknown }).error === "string"
      ? (reply as { error: string }).error
      : typeof reply === "string"
      ? reply
      : JSON.stringify(reply);
    super(`${path} answered ${status}: ${said}`);
    this.path = path;
    this.status = status;
    this.reply = reply;
  }
}

/** The proxy side of the service (see the module doc). */
export class DecisionClient {
  readonly #base: string;
  readonly #headers: Record<string, string>;
  readonly #feedbackHeaders: Record<string, string>;
  readonly #model: ModelFunction;
  readonly #fetch: typeof fetch;
  readonly #onFeedbackError: (error: FeedbackError) => void;
  readonly #counts: FeedbackCounts = {
    sent: 0,
    accepted: 0,
    refused: 0,
    missedAudits: 0,
    failed: 0,
  };

  /** A client for the service at `options.url`. */
  constructor(options: ClientOptions) {
    this.#base = options.url.replace(/\/+$/, "");
    this.#headers = { "content-type": "application/json" };
    if (options.token) this.#headers["x-service-token"] = options.token;
    this.#feedbackHeaders = options.feedbackToken
      ? { ...this.#headers, "x-service-token": options.feedbackToken }
      : this.#headers;
    this.#model = options.model;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#onFeedbackError = options.onFeedbackError ??
      ((e) => console.warn(`decision tables feedback: ${e.message}`));
  }

  /**
   * Answers `questions` (all of the table's when absent) about `state`:
   * the table's answer where it is certified and not audited, the model's
   * otherwise. Feedback is sent before it returns. Throws
   * `DecisionServiceError` when the service refuses (its status and reply),
   * and what the model or `fetch` throws when they fail.
   */
  decide(
    state: string | Record<string, unknown>,
  ): Promise<Record<string, ClientAnswer>>;
  /** The same for the named questions: one answer for each of them. */
  decide<Q extends Questions>(
    state: string | Record<string, unknown>,
    questions: Q,
  ): Promise<{ [K in keyof Q]: ClientAnswer }>;
  async decide(
    state: string | Record<string, unknown>,
    questions?: Questions,
  ): Promise<Record<string, ClientAnswer>> {
    const body: Record<string, unknown> = { state };
    if (questions !== undefined) body.questions = questions;
    const reply = await this.#post("/v1/decide", body) as {
      answers: Record<string, ServiceAnswer>;
    };
    const results = await Promise.all(
      Object.entries(reply.answers).map((entry) =>
        this.#resolve(entry[0], entry[1], state, questions)
      ),
    );
    const out: Record<string, ClientAnswer> = {};
    const feedback: FeedbackItem[] = [];
    for (const [question, answer, item] of results) {
      out[question] = answer;
      if (item !== null) feedback.push(item);
    }
    if (feedback.length > 0) await this.#sendFeedback(feedback);
    return out;
  }

  /**
   * How many feedback items were sent, taken, refused, missed as audits
   * or lost with a failed request, since the client was made (a copy).
   */
  get feedbackCounts(): FeedbackCounts {
    return { ...this.#counts };
  }

  /** Sends `items` as one feedback request; tells `onFeedbackError` of each one lost. */
  async #sendFeedback(items: FeedbackItem[]): Promise<void> {
    this.#counts.sent += items.length;
    let reply: FeedbackReply;
    try {
      reply = await this.#post(
        "/v1/feedback",
        items,
        this.#feedbackHeaders,
      ) as FeedbackReply;
    } catch (e) {
      this.#counts.failed += items.length;
      const reason = e instanceof Error ? e.message : String(e);
      for (const item of items) {
        this.#onFeedbackError(
          new FeedbackError(item, "failed", reason, undefined, e),
        );
      }
      return;
    }
    const refused = reply.refused ?? [];
    this.#counts.refused += refused.length;
    this.#counts.accepted += items.length - refused.length;
    for (const r of refused) {
      const item = items[r.index];
      if (item === undefined) continue;
      this.#onFeedbackError(
        new FeedbackError(item, "refused", r.reason, r.did_you_mean),
      );
    }
    for (const m of reply.missed_audits ?? []) {
      const item = items.find((i) => i.audit === m.audit);
      if (item === undefined) continue;
      this.#counts.missedAudits++;
      this.#onFeedbackError(new FeedbackError(item, "missed_audit", m.reason));
    }
  }

  /** One question's final answer, and the feedback to send on it (null for none). */
  async #resolve(
    question: string,
    a: ServiceAnswer,
    state: string | Record<string, unknown>,
    questions: Questions | undefined,
  ): Promise<[string, ClientAnswer, FeedbackItem | null]> {
    const table = a.choice ?? a.answer ?? null;
    const audit = a.audit;
    if (a.certified && audit === undefined) {
      return [question, {
        answer: table!,
        source: "table",
        certified: true,
        audited: false,
        flag: null,
        table,
      }, null];
    }
    const answer = await this.#model({
      question,
      state,
      criteria: questions?.[question]?.criteria ?? undefined,
      reason: audit === undefined ? "uncertified" : "audit",
    });
    const result: ClientAnswer = {
      answer,
      source: "model",
      certified: a.certified,
      audited: audit !== undefined,
      flag: a.flag,
      table,
    };
    // A question the table does not know has no answer: nothing to report.
    if (table === null) return [question, result, null];
    return [
      question,
      result,
      audit !== undefined
        ? { question, state, answer, audit }
        : a.feedback_id !== undefined
        ? { question, state, answer, feedback_id: a.feedback_id }
        : { question, state, answer },
    ];
  }

  async #post(
    path: string,
    body: unknown,
    headers = this.#headers,
  ): Promise<unknown> {
    const res = await this.#fetch(`${this.#base}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      let reply: unknown = text;
      try {
        reply = JSON.parse(text);
      } catch {
        // not JSON: the text is the reply
      }
      throw new DecisionServiceError(path, res.status, reply);
    }
    return JSON.parse(text);
  }
}
