/**
 * Middleware refusing a request that needs the access token and does not
 * present it (see `../auth.ts` for the accepted forms): 401 with a JSON
 * error, written by `app.onError`. With a feedback token configured
 * (`serve --feedback-token-file`), the routes that move thresholds (the
 * feedback route, and the live reset, which undoes what feedback did)
 * need it instead: the access token does not post feedback nor reset, and
 * the feedback token opens no other route. On routes a person opens in a browser
 * the 401 carries a Basic challenge, so the browser asks for a login;
 * elsewhere a Bearer challenge (no prompt).
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { presentsToken } from "../auth.ts";
import { needsToken, opensInBrowser, takesFeedbackToken } from "../routes.ts";
import { NO_TOKEN, type TokenSource } from "../token.ts";

/** Options of `tokenAuth`. */
export interface TokenAuthOptions {
  /** Where the token comes from; read on every request that needs it. A source that is not `configured` lets every request through. */
  source: TokenSource;
  /** The feedback token; when `configured`, the feedback-token routes (feedback, live reset) need it instead of `source`. Default: none. */
  feedback?: TokenSource;
  /** Whether a request to `path` takes the feedback token. Default: the route table's rule (`takesFeedbackToken`). */
  isFeedback?: (path: string) => boolean;
  /** Whether a request to `path` needs the token. Default: the route table's rule (`needsToken`: every path but an unguarded route's). */
  isGuarded?: (path: string) => boolean;
  /** Whether a person opens the request in a browser, so its 401 asks for a Basic login. Default: the route table's browser routes. */
  isBrowser?: (method: string, path: string) => boolean;
  /** The realm named in the challenge. Default `decision tables`. */
  realm?: string;
}

const DEFAULTS = {
  feedback: NO_TOKEN,
  isFeedback: takesFeedbackToken,
  isGuarded: needsToken,
  isBrowser: opensInBrowser,
  realm: "decision tables",
} satisfies Omit<Required<TokenAuthOptions>, "source">;

/** The message of every 401. */
export const UNAUTHORIZED_MESSAGE =
  "Missing or wrong access token: send it as X-Service-Token: <token>, Authorization: Bearer <token>, or as the password of a Basic login";

/** The message of a 401 on a feedback-token route (feedback, live reset) when a feedback token is configured. */
export const FEEDBACK_UNAUTHORIZED_MESSAGE =
  "Missing or wrong feedback token (this service takes feedback and live resets only with the token of --feedback-token-file, not the access token): send it as X-Service-Token: <token> or Authorization: Bearer <token>";

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
  const feedback = options.feedback ?? DEFAULTS.feedback;
  const isFeedback = options.isFeedback ?? DEFAULTS.isFeedback;
  const isGuarded = options.isGuarded ?? DEFAULTS.isGuarded;
  const isBrowser = options.isBrowser ?? DEFAULTS.isBrowser;
  const realm = options.realm ?? DEFAULTS.realm;
  // Made once and thrown on every refusal, so refusing costs no more than
  // answering; `app.onError` reads their message and the headers of their
  // `res`.
  const challenge = (value: string, message = UNAUTHORIZED_MESSAGE) =>
    new HTTPException(401, {
      message,
      res: new Response(null, { headers: { "WWW-Authenticate": value } }),
    });
  const basic = challenge(`Basic realm="${realm}", charset="UTF-8"`);
  const bearer = challenge(`Bearer realm="${realm}"`);
  const feedbackBearer = challenge(
    `Bearer realm="${realm} feedback"`,
    FEEDBACK_UNAUTHORIZED_MESSAGE,
  );
  return async function tokenAuth(c, next) {
    const path = c.req.path;
    const headers = c.req.raw.headers;
    if (feedback.configured && isFeedback(path)) {
      const token = await feedback.current();
      if (!presentsToken(token, (name) => headers.get(name))) {
        throw feedbackBearer;
      }
    } else if (source.configured && isGuarded(path)) {
      const token = await source.current();
      if (!presentsToken(token, (name) => headers.get(name))) {
        throw isBrowser(c.req.method, path) ? basic : bearer;
      }
    }
    await next();
  };
}
