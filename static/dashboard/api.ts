/**
 * The page's requests to its own server.
 *
 * @module
 */

/**
 * The absolute URL of a route on this server, without credentials. Opened
 * as `http://user:token@host/`, the page's own URL holds the credentials,
 * relative URLs inherit them, and `fetch()` refuses any URL that holds
 * credentials; the origin never does, and the browser still sends the
 * login it used for the page.
 */
export function apiUrl(path: string): string {
  return new URL(path, location.origin).href;
}

/** What a JSON request came back with: the status and the parsed body, null when it was not JSON. */
export interface JsonReply {
  status: number;
  ok: boolean;
  body: unknown;
}

/**
 * `GET` (no `body`) or `POST` (a JSON `body`) to `path` on this server,
 * with the page's login; rejects only when the server cannot be reached
 * or `signal` aborts.
 */
export async function requestJson(
  path: string,
  options: { body?: unknown; signal?: AbortSignal } = {},
): Promise<JsonReply> {
  const post = "body" in options;
  const res = await fetch(apiUrl(path), {
    method: post ? "POST" : "GET",
    credentials: "same-origin",
    cache: "no-store",
    headers: post
      ? { "content-type": "application/json", accept: "application/json" }
      : { accept: "application/json" },
    ...(post ? { body: JSON.stringify(options.body) } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  return { status: res.status, ok: res.ok, body };
}
