/**
 * The service's contract as an OpenAPI 3.1 document: every route, its
 * request and response bodies (schemas in `openapi_schemas.ts`), the error
 * bodies, the three ways to send the access token, and example requests.
 *
 * The app serves it at `GET /v1/openapi.json`; `deno task openapi` writes
 * the same bytes to `docs/openapi.json`, which is committed, and a test
 * keeps the two equal. The version comes from `src/version.ts`.
 *
 * To document a new route, add an entry to `PATHS` made with `jsonRoute()`
 * or `getRoute()`, and its body schemas to `SCHEMAS`. `tests/openapi_test.ts`
 * then checks that the app has the route, sends every example request to a
 * real server, and validates each reply against the documented schema.
 *
 * @example
 * ```ts
 * import { OPENAPI_JSON, openApiDocument } from "./src/http/openapi.ts";
 *
 * const doc = openApiDocument();
 * console.log(Object.keys(doc.paths)); // ["/v1/decide", "/v1/decisions", ...]
 * await Deno.writeTextFile("openapi.json", OPENAPI_JSON);
 * ```
 *
 * @module
 */

import { INTERFACE_VERSION, TOOL_VERSION } from "../version.ts";
import { MAX_BODY_BYTES } from "./body.ts";
import {
  type JsonSchema,
  type SchemaName,
  schemaRef,
  SCHEMAS,
} from "./openapi_schemas.ts";

export {
  type JsonSchema,
  type SchemaName,
  SCHEMAS,
} from "./openapi_schemas.ts";

/** A named example body. */
export interface Example {
  summary: string;
  value: unknown;
}

/** An OpenAPI operation object (the fields this document uses). */
export interface Operation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security?: Record<string, string[]>[];
  requestBody?: {
    required: boolean;
    content: Record<
      string,
      { schema: JsonSchema; examples: Record<string, Example> }
    >;
  };
  responses: Record<string, unknown>;
}

/** The OpenAPI document (the fields this document uses). */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: Record<string, unknown>;
  servers: { url: string; description: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
  };
}

/** Error statuses an operation can answer, each with a shared response. */
export const ERROR_RESPONSES = {
  400: "BadRequest",
  401: "Unauthorized",
  404: "NotFound",
  405: "MethodNotAllowed",
  413: "PayloadTooLarge",
} as const;

/** An error status of `ERROR_RESPONSES`. */
export type ErrorStatus = keyof typeof ERROR_RESPONSES;

const errorBody = {
  "application/json": { schema: schemaRef("Error") },
};

const RESPONSES = {
  BadRequest: {
    description:
      "The body is not JSON, or not of the route's shape; the message says what was wrong and ends with the body the route needs.",
    content: errorBody,
  },
  Unauthorized: {
    description:
      "A token is configured and the request did not present it. On the routes a person opens in a browser (/, /v1/stats, /metrics) the challenge is Basic, which brings up a login prompt; elsewhere it is Bearer.",
    headers: {
      "WWW-Authenticate": {
        description:
          'Basic realm="decision tables", charset="UTF-8" or Bearer realm="decision tables"',
        schema: { type: "string" },
      },
    },
    content: errorBody,
  },
  NotFound: {
    description:
      "No such route (any path not in this document), or, on /v1/playground, a question the bundle does not have (the message names its questions).",
    content: errorBody,
  },
  MethodNotAllowed: {
    description:
      "A route of this document asked with another method; HEAD works wherever GET does.",
    headers: {
      Allow: {
        description: "The methods the route answers.",
        schema: { type: "string" },
      },
    },
    content: errorBody,
  },
  PayloadTooLarge: {
    description:
      `The body is over ${MAX_BODY_BYTES} bytes (1 MiB): refused from Content-Length before the body is read, or as soon as a body sent without a length passes the limit.`,
    content: errorBody,
  },
} satisfies Record<(typeof ERROR_RESPONSES)[ErrorStatus], unknown>;

function errorResponses(statuses: readonly ErrorStatus[]) {
  return Object.fromEntries(
    statuses.map((s) => [
      String(s),
      { $ref: `#/components/responses/${ERROR_RESPONSES[s]}` },
    ]),
  );
}

/** What a POST route with JSON bodies takes and gives. */
export interface JsonRouteSpec {
  operationId: string;
  summary: string;
  description: string;
  tag: Tag;
  /** The request body's schema. */
  request: SchemaName;
  /** Example requests: each is valid and gets a 200 from the demo bundle. */
  examples: Record<string, Example>;
  /** The 200 reply's schema. */
  response: SchemaName;
  /** An example 200 reply. */
  responseExample: unknown;
  /** Error statuses besides 401 (every route but health needs the token). */
  errors: readonly ErrorStatus[];
}

/** A POST operation with a JSON request and a JSON reply. */
export function jsonRoute(spec: JsonRouteSpec): Operation {
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: [spec.tag],
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaRef(spec.request),
          examples: spec.examples,
        },
      },
    },
    responses: {
      "200": {
        description: "Success.",
        content: {
          "application/json": {
            schema: schemaRef(spec.response),
            example: spec.responseExample,
          },
        },
      },
      ...errorResponses([...spec.errors, 401].sort() as ErrorStatus[]),
    },
  };
}

/** What a GET route gives. */
export interface GetRouteSpec {
  operationId: string;
  summary: string;
  description: string;
  tag: Tag;
  /** The reply's media type, as in its Content-Type. */
  mediaType: string;
  /** The reply's schema. */
  schema: JsonSchema;
  /** Whether the route is open without the token. */
  open?: boolean;
}

/** A GET operation. */
export function getRoute(spec: GetRouteSpec): Operation {
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: [spec.tag],
    ...(spec.open ? { security: [] } : {}),
    responses: {
      "200": {
        description: "Success.",
        content: { [spec.mediaType]: { schema: spec.schema } },
      },
      ...(spec.open ? {} : errorResponses([401])),
    },
  };
}

const TAGS = {
  decisions: "Answers from the table, each with its certified verdict.",
  operations: "What the table thinks, how the service is doing, its contract.",
} as const;

/** A tag of this document. */
export type Tag = keyof typeof TAGS;

const PARCEL = "where is my parcel, it has not arrived yet";

/** Every route: path, then method, then operation. */
const PATHS: Record<string, Record<string, Operation>> = {
  "/v1/decide": {
    post: jsonRoute({
      operationId: "decide",
      summary: "Answer questions about a text (the service's own shape)",
      description:
        "Answers the questions asked (all of the bundle's when questions is absent). A question the bundle does not have is answered, not an error: confidence 0, certified false, flag unsupported, radius null, and no answer fields. Narrowing by criteria never raises certification: it is judged on the answer over all options.",
      tag: "decisions",
      request: "DecideRequest",
      examples: {
        all: {
          summary: "Every question of the bundle",
          value: { state: PARCEL },
        },
        narrowed: {
          summary: "Two questions, the choice narrowed to two options",
          value: {
            state: PARCEL,
            questions: {
              topic: { criteria: ["delivery", "returns"] },
              wants_human: {},
            },
            exposed: false,
          },
        },
        objectState: {
          summary: "An object state, serialised as JSON",
          value: {
            state: { subject: "refund", body: "I sent the shoes back" },
            questions: { topic: null },
          },
        },
        unknownQuestion: {
          summary: "A question the bundle does not have",
          value: { state: PARCEL, questions: { mood: {} } },
        },
      },
      response: "DecideResponse",
      responseExample: {
        answers: {
          topic: {
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
          },
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
    }),
  },
  "/v1/decisions": {
    post: jsonRoute({
      operationId: "decisions",
      summary: "Answer questions about a text (decisions-API shape)",
      description:
        "Answers in question order. A question is answered by the table only when its type fits the bundle question: choice for a choice question, predicate or noul for a yes/no question; any other type (score included), an unknown name, or a type that does not fit comes back with service.flag unsupported.",
      tag: "decisions",
      request: "DecisionsRequest",
      examples: {
        choiceAndNoul: {
          summary: "A narrowed choice and a noul question",
          value: {
            model: "gpt-x",
            input: PARCEL,
            questions: [
              {
                type: "choice",
                name: "topic",
                instructions: "Which team should handle it?",
                choices: [{ value: "delivery" }, { value: "returns" }],
              },
              {
                type: "noul",
                name: "wants_human",
                instructions: "Does the customer ask for a person?",
              },
            ],
          },
        },
        score: {
          summary: "A score question, which the table does not answer",
          value: {
            input: PARCEL,
            questions: [{ type: "score", name: "urgency" }],
          },
        },
      },
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
    }),
  },
  "/v1/altdecisions": {
    post: jsonRoute({
      operationId: "altDecisions",
      summary: "Answer questions about a text (alternate decision-model shape)",
      description:
        "Answers keyed by question name. The same type rules as /v1/decisions: a question whose type does not fit the bundle question, or an unknown name, comes back with service.flag unsupported.",
      tag: "decisions",
      request: "AltDecisionsRequest",
      examples: {
        choiceAndPredicate: {
          summary: "A narrowed choice and a predicate question",
          value: {
            model: "m",
            state: PARCEL,
            questions: {
              topic: {
                type: "choice",
                instructions: "Which team should handle it?",
                criteria: {
                  delivery: "about shipping",
                  returns: "about returns",
                },
              },
              wants_human: {
                type: "predicate",
                instructions: "Does the customer ask for a person?",
              },
            },
          },
        },
      },
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
    }),
  },
  "/v1/playground": {
    post: jsonRoute({
      operationId: "playground",
      summary: "What the table thinks of a text, not counted as a decision",
      description:
        "The answer, its confidence against the threshold, alpha, the verdict and its reason in words, and the top three options. It reads the drift guard without feeding it. A missing question with more than one bundle question is a 400; an unknown question is a 404.",
      tag: "operations",
      request: "PlaygroundRequest",
      examples: {
        topic: {
          summary: "One question of the demo bundle",
          value: { question: "topic", text: PARCEL },
        },
      },
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
      errors: [400, 404, 413],
    }),
  },
  "/": {
    get: getRoute({
      operationId: "dashboard",
      summary: "The live dashboard",
      description:
        "One HTML page that polls /v1/stats and uses /v1/playground. With a token configured, the browser's login prompt asks for it (any user name, the token as the password).",
      tag: "operations",
      mediaType: "text/html",
      schema: { type: "string" },
    }),
  },
  "/v1/stats": {
    get: getRoute({
      operationId: "stats",
      summary: "Statistics since the server started",
      description:
        "Counts, the share answered, deferral reasons, latency, savings, the drift guard and recent decisions (with their text only under --keep-text).",
      tag: "operations",
      mediaType: "application/json",
      schema: schemaRef("StatsDocument"),
    }),
  },
  "/metrics": {
    get: getRoute({
      operationId: "metrics",
      summary: "Prometheus metrics",
      description: "Prometheus text exposition format 0.0.4.",
      tag: "operations",
      mediaType: "text/plain",
      schema: { type: "string" },
    }),
  },
  "/v1/health": {
    get: getRoute({
      operationId: "health",
      summary: "Health, questions and versions",
      description:
        "The only route that needs no token. Besides ok and the bundle's question names, it names this program's version and the interface release it implements.",
      tag: "operations",
      mediaType: "application/json",
      schema: schemaRef("HealthDocument"),
      open: true,
    }),
  },
  "/v1/openapi.json": {
    get: getRoute({
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
    }),
  },
};

const DESCRIPTION =
  `Answers a language model's small decisions on text from a trained table, each answer with a verdict: certified (serve it) or not (ask the model).

- Request bodies are JSON, whatever their Content-Type, at most ${MAX_BODY_BYTES} bytes. Optional request fields may also be null (the same as absent).
- Every success is 200. Every error body is {"error": "<message>"}: 400 for a body of the wrong shape, 401 without the token, 404 for an unknown route, 405 (with Allow) for a known route asked with another method, 413 for a body over 1 MiB. HEAD works wherever GET does.
- With a token configured, every route but GET /v1/health needs it, sent in one of three ways: X-Service-Token, Authorization: Bearer, or as the password of a Basic login (any user name). A server started without a token needs none.
- Replies may gain fields in later releases; clients should ignore fields they do not know.

This program is decision-tables ${TOOL_VERSION}; it implements release ${INTERFACE_VERSION} of the HTTP interface.`;

/** Builds the OpenAPI document of the service. */
export function openApiDocument(): OpenApiDocument {
  return {
    openapi: "3.1.0",
    info: {
      title: "Decision tables",
      version: TOOL_VERSION,
      summary:
        "A language model's small decisions, served from a table with a certified verdict",
      description: DESCRIPTION,
      license: { name: "MIT", identifier: "MIT" },
      "x-interface-version": INTERFACE_VERSION,
    },
    servers: [{
      url: "http://127.0.0.1:8010",
      description: "serve's default address",
    }],
    security: [{ serviceToken: [] }, { bearerToken: [] }, { basicLogin: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({
      name,
      description,
    })),
    paths: PATHS,
    components: {
      schemas: SCHEMAS,
      responses: RESPONSES,
      securitySchemes: {
        serviceToken: {
          type: "apiKey",
          in: "header",
          name: "X-Service-Token",
          description: "The access token in its own header.",
        },
        bearerToken: {
          type: "http",
          scheme: "bearer",
          description: "Authorization: Bearer <token>.",
        },
        basicLogin: {
          type: "http",
          scheme: "basic",
          description:
            "Any user name, the token as the password; the dashboard's login prompt sends this.",
        },
      },
    },
  };
}

/**
 * The document as served and committed (`docs/openapi.json`): JSON with
 * two-space indentation and a final newline.
 */
export const OPENAPI_JSON: string = JSON.stringify(openApiDocument(), null, 2) +
  "\n";
