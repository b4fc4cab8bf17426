/**
 * OpenAPI operation objects of the service, built from short route
 * descriptions (`route_docs.ts`) and whether the route needs the token
 * (the route table, `../routes.ts`): a POST with JSON bodies and example
 * requests, or a GET; the shared error replies (every error body is
 * `{"error": "..."}`) and the tags.
 *
 * @module
 */

import { componentRef, type JsonSchema, MAX_BODY_BYTES } from "../wire/mod.ts";
import type { SchemaName } from "./schemas.ts";

/** A reference to the component schema `name`, a name the document has. */
export function schemaRef(name: SchemaName): JsonSchema {
  return componentRef(name);
}

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

/** The shared error replies, by name. */
export const RESPONSES = {
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
  /** Error statuses besides 401 (which `guarded` adds). */
  errors: readonly ErrorStatus[];
}

/**
 * A POST operation with a JSON request and a JSON reply; `guarded` routes
 * need the token (the document's global security, and a 401), others
 * none.
 */
export function jsonRoute(spec: JsonRouteSpec, guarded: boolean): Operation {
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: [spec.tag],
    ...(guarded ? {} : { security: [] }),
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
      ...errorResponses(
        [...spec.errors, ...(guarded ? [401 as const] : [])].sort(),
      ),
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
  /** When the route answers 503 with a reply of the same schema: what that says. */
  unavailable?: string;
}

/** A GET operation; `guarded` as for `jsonRoute`. */
export function getRoute(spec: GetRouteSpec, guarded: boolean): Operation {
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: [spec.tag],
    ...(guarded ? {} : { security: [] }),
    responses: {
      "200": {
        description: "Success.",
        content: { [spec.mediaType]: { schema: spec.schema } },
      },
      ...(spec.unavailable === undefined ? {} : {
        "503": {
          description: spec.unavailable,
          content: { [spec.mediaType]: { schema: spec.schema } },
        },
      }),
      ...(guarded ? errorResponses([401]) : {}),
    },
  };
}

/** The tags of the document, with what they group. */
export const TAGS = {
  decisions: "Answers from the table, each with its certified verdict.",
  operations: "What the table thinks, how the service is doing, its contract.",
} as const;

/** A tag of this document. */
export type Tag = keyof typeof TAGS;
