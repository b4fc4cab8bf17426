/**
 * Access-token middleware.
 *
 * With a token configured, a request passes when it presents the token as
 * `X-Service-Token: <token>`, `Authorization: Bearer <token>`, or as the
 * password of `Authorization: Basic` (any user name). Comparison takes time
 * independent of where the bytes differ. A missing or wrong token gets 401
 * with a JSON error; on browser routes the 401 carries a Basic challenge so
 * the browser asks for a login, elsewhere a Bearer challenge (no prompt).
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { TokenSource } from "./token.ts";

/** Options of `tokenGuard`. */
export interface TokenGuardOptions {
  /** Where the token comes from; consulted on every guarded request. */
  source: TokenSource;
  /** Requests that need no token. */
  isOpen?: (method: string, path: string) => boolean;
  /** Requests a person opens in a browser: their 401 asks for a Basic login. */
  isBrowser?: (method: string, path: string) => boolean;
  /** Realm named in the challenge. */
  realm?: string;
}

const DEFAULTS = {
  isOpen: () => false,
  isBrowser: () => false,
  realm: "decision tables",
} satisfies Omit<TokenGuardOptions, "source">;

const encoder = new TextEncoder();

/**
 * True when `a` and `b` hold the same bytes. The time taken depends only on
 * the longer length, not on where the bytes differ.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** The credentials a request presents, in the three accepted forms. */
export function presentedTokens(headers: Headers): string[] {
  const found: string[] = [];
  const header = headers.get("x-service-token");
  if (header !== null) found.push(header.trim());
  const auth = headers.get("authorization");
  if (auth !== null) {
    const space = auth.indexOf(" ");
    const scheme = (space < 0 ? auth : auth.slice(0, space)).toLowerCase();
    const value = space < 0 ? "" : auth.slice(space + 1).trim();
    if (scheme === "bearer") found.push(value);
    else if (scheme === "basic") {
      const password = basicPassword(value);
      if (password !== null) found.push(password);
    }
  }
  return found;
}

/** The password of a Basic credential (`base64(user:password)`), or null. */
export function basicPassword(encoded: string): string | null {
  let decoded: string;
  try {
    const binary = atob(encoded);
    decoded = new TextDecoder().decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  return colon < 0 ? null : decoded.slice(colon + 1);
}

/** Middleware refusing requests that lack the configured token. */
export function tokenGuard(options: TokenGuardOptions): MiddlewareHandler {
  const { source } = options;
  const isOpen = options.isOpen ?? DEFAULTS.isOpen;
  const isBrowser = options.isBrowser ?? DEFAULTS.isBrowser;
  const realm = options.realm ?? DEFAULTS.realm;
  return async (c, next) => {
    if (!source.configured || isOpen(c.req.method, c.req.path)) return next();
    const current = source.current();
    const token = typeof current === "string" ? current : await current;
    const expected = encoder.encode(token);
    let ok = false;
    for (const presented of presentedTokens(c.req.raw.headers)) {
      // Every credential is compared, so timing does not say which one matched.
      ok = constantTimeEqual(encoder.encode(presented), expected) || ok;
    }
    if (ok && token !== "") return next();
    const challenge = isBrowser(c.req.method, c.req.path)
      ? `Basic realm="${realm}", charset="UTF-8"`
      : `Bearer realm="${realm}"`;
    throw new HTTPException(401, {
      message:
        "Missing or wrong access token: send it as X-Service-Token: <token>, Authorization: Bearer <token>, or as the password of a Basic login",
      res: new Response(null, {
        headers: { "WWW-Authenticate": challenge },
      }),
    });
  };
}
