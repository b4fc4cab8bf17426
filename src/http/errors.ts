/**
 * Turning failures into JSON responses: `{"error": "<message>"}` with the
 * status of the `HTTPException` thrown, 404 for an unknown route, 405 (with
 * `Allow`) for a known route asked with another method, 500 for anything
 * unexpected (logged, never shown to the client).
 *
 * @module
 */

import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The JSON error response for `error`; `log` is told about unexpected errors. */
export function errorResponse(
  error: Error,
  c: Context,
  log: (message: string) => void = console.error,
): Response {
  if (error instanceof HTTPException) {
    const res = c.json(
      { error: error.message },
      error.status as ContentfulStatusCode,
    );
    error.res?.headers.forEach((value, name) => res.headers.set(name, value));
    return res;
  }
  log(
    `Internal error on ${c.req.method} ${c.req.path}: ${
      error.stack ?? error.message
    }`,
  );
  return c.json({ error: "Internal server error" }, 500);
}

/** The 404 for a path no route serves. */
export function notFound(c: Context): Response {
  return c.json({ error: `No route ${c.req.method} ${c.req.path}` }, 404);
}

/** A handler answering 405 for a path served only with the `allowed` methods. */
export function methodNotAllowed(
  allowed: readonly string[],
): (c: Context) => Response {
  const allow = allowed.includes("GET")
    ? [...allowed, "HEAD"].join(", ")
    : allowed.join(", ");
  return (c) => {
    const res = c.json({
      error: `${c.req.path} accepts ${allow}, not ${c.req.method}`,
    }, 405);
    res.headers.set("Allow", allow);
    return res;
  };
}
