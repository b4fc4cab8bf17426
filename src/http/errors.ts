/**
 * Every error reply of the service is written here: `{"error":
 * "<message>"}` with the status of the `HTTPException` thrown (and the
 * headers of its `res`, such as `Allow`, `WWW-Authenticate` or
 * `Retry-After`), by `app.onError`; 500 for anything unexpected (logged,
 * never shown to the client). Handlers and middleware throw, the route
 * answering 405 too; only Hono's not-found handler, which returns a reply
 * rather than throwing, writes its 404 with `errorReply` directly.
 *
 * @module
 */

import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The error reply `{"error": message}` with `status`, and `headers` when given. */
export function errorReply(
  c: Context,
  status: ContentfulStatusCode,
  message: string,
  headers?: Headers,
): Response {
  const res = c.json({ error: message }, status);
  headers?.forEach((value, name) => res.headers.set(name, value));
  return res;
}

/** The JSON error response for `error` (`app.onError`); `log` is told about unexpected errors. */
export function errorResponse(
  error: Error,
  c: Context,
  log: (message: string) => void = console.error,
): Response {
  if (error instanceof HTTPException) {
    return errorReply(
      c,
      error.status as ContentfulStatusCode,
      error.message,
      error.res?.headers,
    );
  }
  log(
    `Internal error on ${c.req.method} ${c.req.path}: ${
      error.stack ?? error.message
    }`,
  );
  return errorReply(c, 500, "Internal server error");
}

/** The 404 for a path no route serves (`app.notFound`). */
export function notFound(c: Context): Response {
  return errorReply(c, 404, `No route ${c.req.method} ${c.req.path}`);
}

/** A handler answering 405 (with `Allow`) for a path served only with the `allowed` methods. */
export function methodNotAllowed(
  allowed: readonly string[],
): (c: Context) => never {
  const allow = allowed.includes("GET")
    ? [...allowed, "HEAD"].join(", ")
    : allowed.join(", ");
  const res = new Response(null, { headers: { Allow: allow } });
  return (c) => {
    throw new HTTPException(405, {
      message: `${c.req.path} accepts ${allow}, not ${c.req.method}`,
      res,
    });
  };
}
