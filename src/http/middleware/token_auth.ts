/**
 * Middleware refusing a request that needs the access token and does not
 * present it (see `../auth.ts` for the accepted forms): 401 with a JSON
 * error, written by `app.onError`. On routes a person opens in a browser
 * the 401 carries a Basic challenge, so the browser asks for a login;
 * elsewhere a Bearer challenge (no prompt).
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { presentsToken } from "../auth.ts";
import { needsToken, opensInBrowser } from "../routes.ts";
import type { TokenSource } from "../token.ts";

/** Options of `tokenAuth`. */
export interface TokenAuthOptions {
  /** Where the token comes from; read on every request that needs it. A source that is not `configured` lets every request through. */
  source: TokenSource;
  /** Whether a request to `path` needs the token. Default: the route table's rule (`needsToken`: every path but an unguarded route's). */
  isGuarded?: (path: string) => boolean;
  /** Whether a person opens the request in a browser, so its 401 asks for a Basic login. Default: the route table's browser routes. */
  isBrowser?: (method: string, path: string) => boolean;
  /** The realm named in the challenge. Default `decision tables`. */
  realm?: string;
}

const DEFAULTS = {
  isGuarded: needsToken,
  isBrowser: opensInBrowser,
  realm: "decision tables",
} satisfies Omit<Required<TokenAuthOptions>, "source">;

/** The message of every 401. */
export const UNAUTHORIZED_MESSAGE =
  "Missing or wrong access token: send it as X-Service-Token: <token>, Authorization: Bearer <token>, or as the password of a Basic login";

/**
 * Lets a request through when it needs no token or presents it; else
 * throws a 401 `HTTPException` carrying the challenge.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { fixedToken } from "../token.ts";
 * import { tokenAuth } from "./token_auth.ts";
 * const app = new Hono();
 * app.use(tokenAuth({ source: fixedToken("s3cret", "example") }));
 * ```
 */
export function tokenAuth(options: TokenAuthOptions): MiddlewareHandler {
  const { source } = options;
  const isGuarded = options.isGuarded ?? DEFAULTS.isGuarded;
  const isBrowser = options.isBrowser ?? DEFAULTS.isBrowser;
  const realm = options.realm ?? DEFAULTS.realm;
  // Made once and thrown on every refusal, so refusing costs no more than
  // answering; `app.onError` reads their message and the headers of their
  // `res`.
  const challenge = (value: string) =>
    new HTTPException(401, {
      message: UNAUTHORIZED_MESSAGE,
      res: new Response(null, { headers: { "WWW-Authenticate": value } }),
    });
  const basic = challenge(`Basic realm="${realm}", charset="UTF-8"`);
  const bearer = challenge(`Bearer realm="${realm}"`);
  return async function tokenAuth(c, next) {
    const path = c.req.path;
    if (source.configured && isGuarded(path)) {
      const token = await source.current();
      const headers = c.req.raw.headers;
      if (!presentsToken(token, (name) => headers.get(name))) {
        throw isBrowser(c.req.method, path) ? basic : bearer;
      }
    }
    await next();
  };
}
