/**
 * The service's contract as an OpenAPI 3.1 document: every route, its
 * request and response bodies, the error bodies, the three ways to send the
 * access token, and example requests.
 *
 * The app serves it at `GET /v1/openapi.json`; `deno task openapi` writes
 * the same bytes to `docs/openapi.json`, which is committed, and a test
 * keeps the two equal. The version comes from `src/version.ts`.
 *
 * Its paths are the rows of the route table it is given (the service's,
 * `src/http/routes.ts`: method, path, whether the token is needed, and the
 * operation each row carries); the parts live beside this file: the reply
 * schemas (`decision_schemas.ts`, `stats_schemas.ts`, `live_schemas.ts`),
 * the operation builders and error replies (`operations.ts`) and what each
 * route does (`route_docs.ts`). A request body's schema and examples come
 * from its description, kept with its parser (`src/wire/body_spec.ts`). A
 * new route is a row of the table with its description, its body described
 * beside its parser, and its schemas listed in `schemas.ts`.
 * `tests/openapi_test.ts` then sends every example request to a real
 * server and validates each reply against the documented schema.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { documentJson, openApiDocument } from "./document.ts";
 * import { ROUTE_TABLE } from "../http/routes.ts";
 *
 * const doc = openApiDocument(ROUTE_TABLE);
 * assert.ok("/v1/decide" in doc.paths);
 * assert.deepEqual(
 *   JSON.parse(documentJson(ROUTE_TABLE)),
 *   JSON.parse(JSON.stringify(doc)),
 * );
 * ```
 *
 * @module
 */

import { INTERFACE_VERSION, TOOL_VERSION } from "../version.ts";
import { type JsonSchema, MAX_BODY_BYTES } from "../wire/mod.ts";
import {
  getRoute,
  type GetRouteSpec,
  jsonRoute,
  type JsonRouteSpec,
  type Operation,
  RESPONSES,
  TAGS,
} from "./operations.ts";
import { SCHEMAS } from "./schemas.ts";

/**
 * What the document reads of a route: its method, its path, whether it
 * needs the token and its operation (a row of the service's route table).
 */
export type DocumentedRoute =
  | {
    readonly method: "POST";
    readonly path: string;
    readonly guarded: boolean;
    readonly operation: JsonRouteSpec;
  }
  | {
    readonly method: "GET";
    readonly path: string;
    readonly guarded: boolean;
    readonly operation: GetRouteSpec;
  };

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

const DESCRIPTION =
  `Answers a language model's small decisions on text from a trained table, each answer with a verdict: certified (serve it) or not (ask the model).

- Request bodies are JSON, whatever their Content-Type, at most ${MAX_BODY_BYTES} bytes. Optional request fields may also be null (the same as absent).
- Every success is 200. Every error body is {"error": "<message>"}: 400 for a body of the wrong shape, 401 without the token, 404 for an unknown route, 405 (with Allow) for a known route asked with another method, 413 for a body over 1 MiB. HEAD works wherever GET does.
- With a token configured, every route but GET /v1/health needs it, sent in one of three ways: X-Service-Token, Authorization: Bearer, or as the password of a Basic login (any user name). A server started without a token needs none.
- Replies may gain fields in later releases; clients should ignore fields they do not know.

This program is decision-tables ${TOOL_VERSION}; it implements release ${INTERFACE_VERSION} of the HTTP interface.`;

/** The OpenAPI operation of `route`. */
function operationOf(route: DocumentedRoute): Operation {
  return route.method === "POST"
    ? jsonRoute(route.operation, route.guarded)
    : getRoute(route.operation, route.guarded);
}

/** The document's paths: every route of the table, path then method. */
function pathsOf(
  routes: readonly DocumentedRoute[],
): Record<string, Record<string, Operation>> {
  const paths: Record<string, Record<string, Operation>> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operationOf(
      route,
    );
  }
  return paths;
}

/** Builds the OpenAPI document of a service answering `routes`. */
export function openApiDocument(
  routes: readonly DocumentedRoute[],
): OpenApiDocument {
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
    paths: pathsOf(routes),
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
 * The document of `routes` as served and committed (`docs/openapi.json`):
 * JSON with two-space indentation and a final newline.
 */
export function documentJson(routes: readonly DocumentedRoute[]): string {
  return JSON.stringify(openApiDocument(routes), null, 2) + "\n";
}
