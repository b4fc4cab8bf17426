/**
 * What the OpenAPI document says of each route: what it does, its bodies,
 * its errors and an example reply; its example requests (each answered by
 * the demo bundle) come from the body's description, kept with its route.
 * The route table (`../routes.ts`) gives each route its description from
 * here; to document a new route, add its description here, describe its
 * body beside its parser (`../body_spec.ts`) and list the schemas in
 * `schemas.ts`.
 *
 * @module
 */

import {
  type GetRouteSpec,
  type JsonRouteSpec,
  schemaRef,
} from "./operations.ts";
import {
  ALT_BODY,
  BATCH_BODY,
  DECIDE_BODY,
  DECISIONS_BODY,
  FEEDBACK_BODY,
  LIVE_RESET_BODY,
  MAX_BATCH_ITEMS,
  PLAYGROUND_BODY,
} from "../wire/mod.ts";
import { ReadyDocument } from "./ready_schema.ts";

/** The demo bundle's answer to `topic` for the parcel text, in the examples of both decide routes. */
const PARCEL_TOPIC = {
  choice: "delivery",
  confidence: 0.9882,
  certified: true,
  flag: null,
  radius: 2,
  probabilities: {
    billing: 0.007,
    returns: 0.0014,
    technical: 0.0017,
    delivery: 0.9882,
    account: 0.0017,
  },
};

/** `POST /v1/decide`. */
export const DECIDE_DOC: JsonRouteSpec = {
  operationId: "decide",
  summary: "Answer questions about a text (the service's own shape)",
  description:
    "Answers the questions asked (all of the bundle's when questions is absent). A question the bundle does not have is answered, not an error: confidence 0, certified false, flag unsupported, radius null, and no answer fields. Narrowing by criteria never raises certification: it is judged on the answer over all options. With top, a choice answer prints only its top most probable options, the answer first (the answer and its certification are unchanged). A field the body does not define (at the top or in a question entry) is a 400 naming it, the fields known there and the one it most likely meant (choices -> criteria).",
  tag: "decisions",
  request: "DecideRequest",
  examples: DECIDE_BODY.examples,
  response: "DecideResponse",
  responseExample: {
    answers: {
      topic: PARCEL_TOPIC,
      wants_human: {
        answer: false,
        confidence: 0.994,
        certified: true,
        flag: null,
        radius: 1,
        probability: 0.006,
      },
    },
    latency_us: 14.2,
  },
  errors: [400, 413],
};

/** `POST /v1/decide/batch`. */
export const DECIDE_BATCH_DOC: JsonRouteSpec = {
  operationId: "decideBatch",
  summary: "Answer many /v1/decide bodies in one request",
  description:
    `Up to ${MAX_BATCH_ITEMS} /v1/decide bodies, as {"items": [...]} or the array alone, under the same 1 MiB body limit and token. Every item is checked before any is answered: a bad item is a 400 whose message begins with its index (In "items[3]": ...), and nothing of the batch is answered or counted. Otherwise the reply holds, in order, for each item exactly the reply /v1/decide gives that body, and each item counts as one decision (statistics, metrics, the drift guard, audits) under this route. An empty batch gets an empty items array.`,
  tag: "decisions",
  request: "DecideBatchRequest",
  examples: BATCH_BODY.examples,
  response: "DecideBatchResponse",
  responseExample: {
    items: [
      {
        answers: {
          topic: PARCEL_TOPIC,
        },
        latency_us: 9.1,
      },
      {
        answers: {
          topic: {
            choice: "billing",
            confidence: 0.9001,
            certified: true,
            flag: null,
            radius: 2,
            probabilities: { billing: 0.90006, delivery: 0.0319182 },
          },
        },
        latency_us: 6.4,
      },
    ],
    latency_us: 21.7,
  },
  errors: [400, 413],
};

/** `POST /v1/decisions`. */
export const DECISIONS_DOC: JsonRouteSpec = {
  operationId: "decisions",
  summary: "Answer questions about a text (decisions-API shape)",
  description:
    "Answers in question order. A question is answered by the table only when its type fits the bundle question: choice for a choice question, predicate or noul for a yes/no question; any other type (score included), an unknown name, or a type that does not fit comes back with service.flag unsupported. Fields of the top level this shape does not define are accepted and ignored (clients of such APIs send their own); a key a question object does not define is a 400 naming it, the known keys and the one it most likely meant.",
  tag: "decisions",
  request: "DecisionsRequest",
  examples: DECISIONS_BODY.examples,
  response: "DecisionsResponse",
  responseExample: {
    object: "decision",
    model: "gpt-x",
    answers: [
      {
        type: "choice",
        name: "topic",
        choice: "delivery",
        confidence: 0.9985,
        probabilities: [
          { value: "returns", probability: 0.0015 },
          { value: "delivery", probability: 0.9985 },
        ],
        service: { source: "table", certified: true, flag: null },
      },
      {
        type: "noul",
        name: "wants_human",
        confidence: 0.994,
        probability: 0.006,
        noul: 0.006,
        answer: false,
        service: { source: "table", certified: true, flag: null },
      },
    ],
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    service: { latency_us: 15.1, source: "table" },
  },
  errors: [400, 413],
};

/** `POST /v1/altdecisions`. */
export const ALT_DECISIONS_DOC: JsonRouteSpec = {
  operationId: "altDecisions",
  summary: "Answer questions about a text (alternate decision-model shape)",
  description:
    "Answers keyed by question name. The same type rules as /v1/decisions: a question whose type does not fit the bundle question, or an unknown name, comes back with service.flag unsupported. Fields of the top level this shape does not define are accepted and ignored (clients of such APIs send their own); a key a question object does not define is a 400 naming it, the known keys and the one it most likely meant.",
  tag: "decisions",
  request: "AltDecisionsRequest",
  examples: ALT_BODY.examples,
  response: "AltDecisionsResponse",
  responseExample: {
    model: "m",
    answers: {
      topic: {
        type: "choice",
        choice: "delivery",
        confidence: 0.9985,
        probabilities: { returns: 0.0015, delivery: 0.9985 },
        service: { source: "table", certified: true, flag: null },
      },
      wants_human: {
        type: "predicate",
        confidence: 0.994,
        probability: 0.006,
        service: { source: "table", certified: true, flag: null },
      },
    },
    latency_ms: 0.0151,
    service: { latency_us: 15.1, source: "table" },
  },
  errors: [400, 413],
};

/** `POST /v1/playground`. */
export const PLAYGROUND_DOC: JsonRouteSpec = {
  operationId: "playground",
  summary: "What the table thinks of a text, not counted as a decision",
  description:
    "The answer, its confidence against the threshold, alpha, the verdict and its reason in words, and the top three options. It reads the drift guard without feeding it. A missing question with more than one bundle question is a 400; an unknown question is answered with flag unsupported, the bundle's questions named in the reason (with a suggestion for a near miss). A field other than question and text is a 400 naming it, with the one it most likely meant.",
  tag: "operations",
  request: "PlaygroundRequest",
  examples: PLAYGROUND_BODY.examples,
  response: "PlaygroundResponse",
  responseExample: {
    question: "topic",
    answer: "delivery",
    confidence: 0.988,
    threshold: 0.4396,
    alpha: 0.05,
    certified: true,
    flag: null,
    reason:
      "Certified: confidence 98.8% reaches the threshold 44.0% (certified answers disagree with the model at most 5.0% of the time).",
    radius: 2,
    top: [
      { option: "delivery", probability: 0.988 },
      { option: "billing", probability: 0.007 },
      { option: "account", probability: 0.0017 },
    ],
  },
  errors: [400, 413],
};

/** `POST /v1/feedback`. */
export const FEEDBACK_DOC: JsonRouteSpec = {
  operationId: "feedback",
  summary: "What the reference model answered (audits and traces)",
  description:
    "One item or an array of at most 1000. With an audit id the service gave, the item is an audit of that certified answer (its answer and confidence are the ones kept under the id); the live certificate counts it once. Without one, it is a trace: counted as feedback when the table's answer is uncertified only because of its threshold, else kept as a trace only. Unknown, expired or already answered ids are listed in missed_audits, never counted. A field an item does not define is a 400 naming it (nothing of the request is counted or logged). An item whose answer names an option the bundle lacks is listed in refused (reason unknown_option, with the bundle's options and the one it most likely meant) and neither logged nor counted, unless serve --accept-new-options. With serve --feedback-log every other item is appended to that file as a trace line first (503, nothing counted, when it cannot be written), with a feedback object saying where it came from (source audit, uncertified or trace; an audit's sampling_probability) and the bundle id it answered. With serve --feedback-token-file this route takes that feedback token (in any of the three forms) instead of the access token, which then does not post feedback (nor reset the live evidence: /v1/live/reset takes the same token).",
  tag: "decisions",
  request: "FeedbackRequest",
  examples: FEEDBACK_BODY.examples,
  response: "FeedbackResponse",
  responseExample: {
    received: 2,
    kept: 1,
    not_labels: 1,
    audits: 0,
    feedback: 0,
    traces_only: 1,
    missed_audits: [{ audit: "5f0c2a91-1k", reason: "unknown" }],
    refused: [],
  },
  errors: [400, 413],
};

/** `POST /v1/live/reset`. */
export const LIVE_RESET_DOC: JsonRouteSpec = {
  operationId: "liveReset",
  summary: "Start a question's live evidence afresh",
  description:
    "Forgets the live evidence of one question (or of every question when none is named): its counts, its threshold in force (the bundle's again) and its feedback alarms. With serve --live-store the store bumps the question's reset generation and every replica starts afresh; the reply comes once this replica has (503, nothing reset, when the store cannot be reached). A restart keeps the evidence; a reset or a new bundle does not. 400 when the live certificate is off (--audit-rate 0) or the question is unknown. A reset undoes what feedback did, so it takes the credential that posts feedback: with serve --feedback-token-file that feedback token (in any of the three forms) and never the access token (401); without one, the access token when one is set.",
  tag: "operations",
  request: "LiveResetRequest",
  examples: LIVE_RESET_BODY.examples,
  response: "LiveResetResponse",
  responseExample: { reset: ["topic"], fleet: false, resets: 1 },
  errors: [400, 413],
};

/** `GET /`. */
export const DASHBOARD_DOC: GetRouteSpec = {
  operationId: "dashboard",
  summary: "The live dashboard",
  description:
    "One HTML page that polls /v1/stats and uses /v1/playground. With a token configured, the browser's login prompt asks for it (any user name, the token as the password).",
  tag: "operations",
  mediaType: "text/html",
  schema: { type: "string" },
};

/** `GET /v1/stats`. */
export const STATS_DOC: GetRouteSpec = {
  operationId: "stats",
  summary: "Statistics since the server started",
  description:
    "Counts, the share answered, deferral reasons, latency, savings, the drift guard, the live certificate (live) and recent decisions (with their text only under --keep-text).",
  tag: "operations",
  mediaType: "application/json",
  schema: schemaRef("StatsDocument"),
};

/** `GET /metrics`. */
export const METRICS_DOC: GetRouteSpec = {
  operationId: "metrics",
  summary: "Prometheus metrics",
  description: "Prometheus text exposition format 0.0.4.",
  tag: "operations",
  mediaType: "text/plain",
  schema: { type: "string" },
};

/** `GET /v1/health`. */
export const HEALTH_DOC: GetRouteSpec = {
  operationId: "health",
  summary: "Health, questions and versions",
  description:
    "The only route that needs no token. Besides ok and the bundle's question names, it names this program's version and the interface release it implements.",
  tag: "operations",
  mediaType: "application/json",
  schema: schemaRef("HealthDocument"),
};

/** `GET /v1/ready`. */
export const READY_DOC: GetRouteSpec = {
  operationId: "ready",
  summary: "Readiness: whether to send this process traffic",
  description:
    "200 once the bundle is loaded and, with a live store configured, the store has answered at least once; 503 with the reason before that. Unlike the health route, it needs the token when one is set.",
  tag: "operations",
  mediaType: "application/json",
  schema: ReadyDocument,
  unavailable:
    "Not ready: the reason says why (for now, a live store not reached yet).",
};

/** `GET /v1/openapi.json`. */
export const OPENAPI_DOC: GetRouteSpec = {
  operationId: "openapi",
  summary: "This document",
  description: "The OpenAPI 3.1 document of the service.",
  tag: "operations",
  mediaType: "application/json",
  schema: {
    type: "object",
    required: ["openapi", "info", "paths"],
    properties: {
      openapi: { const: "3.1.0" },
      info: { type: "object" },
      paths: { type: "object" },
    },
  },
};
