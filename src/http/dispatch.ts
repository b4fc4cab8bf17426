/**
 * The handler the HTTP/1.1 server calls: the three decision routes go
 * straight to `Service.decide` (the token check, the decision, the reply
 * written into the connection's buffer, no `Request` or `Response` built);
 * every other request goes to the Hono app as a `Request`.
 *
 * Both ways check the token and count responses the same way, so a client
 * cannot tell them apart.
 *
 * @module
 */

import type { Hono } from "hono";
import type { Refusal } from "./auth.ts";
import type { HeaderField } from "./http1.ts";
import {
  type Handler,
  type IncomingRequest,
  JSON_FIELDS,
  type Reply,
} from "./server.ts";
import { isDecisionRoute, type Service } from "./service.ts";

/** Header fields the server writes itself, or that describe the connection, not the message. */
const HOP_BY_HOP = new Set([
  "connection",
  "content-length",
  "date",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "expect",
]);

const decoder = new TextDecoder();

/** The server's handler for `service`, with `app` answering all but the decision routes. */
export function dispatcher(service: Service, app: Hono): Handler {
  return (request, w) => {
    const { method, path } = request.head;
    if (method !== "POST" || !isDecisionRoute(path)) {
      return viaApp(app, request);
    }
    const checked = service.check(method, path, (n) => request.header(n));
    const decide = (refusal: Refusal | null): Reply => {
      if (refusal !== null) {
        service.stats.recordResponse(path, refusal.status);
        w.ascii('{"error":').string(refusal.message).ascii("}");
        return {
          status: refusal.status,
          headers: [...JSON_FIELDS, ["www-authenticate", refusal.challenge]],
          body: null,
        };
      }
      const status = service.decide(path, decoder.decode(request.body), w);
      service.stats.recordResponse(path, status);
      return { status, headers: JSON_FIELDS, body: null };
    };
    return checked instanceof Promise ? checked.then(decide) : decide(checked);
  };
}

/** Answers a request through the Hono app. */
async function viaApp(app: Hono, request: IncomingRequest): Promise<Reply> {
  const { head, body } = request;
  const headers = new Headers();
  for (const [name, value] of head.headers) {
    if (name !== "transfer-encoding") headers.append(name, value);
  }
  const hasBody = head.method !== "GET" && head.method !== "HEAD" &&
    (body.length > 0 || head.chunked);
  const url = `http://localhost${
    head.target.startsWith("/") ? head.target : head.path
  }`;
  // HEAD is answered as GET (the server leaves the body out), so that its
  // content-length is the one a GET would get.
  const res = await app.fetch(
    new Request(url, {
      method: head.method === "HEAD" ? "GET" : head.method,
      headers,
      ...(hasBody ? { body: body.slice() } : {}),
    }),
  );
  const fields: HeaderField[] = [];
  res.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) fields.push([name, value]);
  });
  const bytes = res.body === null
    ? new Uint8Array(0)
    : new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: fields, body: bytes };
}
