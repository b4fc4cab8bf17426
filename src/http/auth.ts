/**
 * The access-token check, shared by the Hono app and the fast path of the
 * decision routes.
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

import type { TokenSource } from "./token.ts";

/** Options of `tokenCheck`. */
export interface TokenCheckOptions {
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
} satisfies Omit<TokenCheckOptions, "source">;

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

/** Reads a request header by its lower-case name; null when absent. */
export type HeaderReader = (name: string) => string | null;

/** The credentials a request presents, in the three accepted forms. */
export function presentedTokens(header: HeaderReader): string[] {
  const found: string[] = [];
  const given = header("x-service-token");
  if (given !== null) found.push(given.trim());
  const auth = header("authorization");
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

/** Why a request was refused: a 401 with its message and challenge. */
export interface Refusal {
  status: 401;
  message: string;
  /** The `WWW-Authenticate` challenge. */
  challenge: string;
}

/** Decides whether a request may pass: null when it may, else the refusal. */
export type TokenCheck = (
  method: string,
  path: string,
  header: HeaderReader,
) => Refusal | null | Promise<Refusal | null>;

/**
 * A check refusing requests that lack the configured token. It answers
 * synchronously unless the token source reads a file.
 */
export function tokenCheck(options: TokenCheckOptions): TokenCheck {
  const { source } = options;
  const isOpen = options.isOpen ?? DEFAULTS.isOpen;
  const isBrowser = options.isBrowser ?? DEFAULTS.isBrowser;
  const realm = options.realm ?? DEFAULTS.realm;
  const judge = (
    token: string,
    method: string,
    path: string,
    header: HeaderReader,
  ): Refusal | null => {
    const expected = encoder.encode(token);
    let ok = false;
    for (const presented of presentedTokens(header)) {
      // Every credential is compared, so timing does not say which one matched.
      ok = constantTimeEqual(encoder.encode(presented), expected) || ok;
    }
    if (ok && token !== "") return null;
    return {
      status: 401,
      message:
        "Missing or wrong access token: send it as X-Service-Token: <token>, Authorization: Bearer <token>, or as the password of a Basic login",
      challenge: isBrowser(method, path)
        ? `Basic realm="${realm}", charset="UTF-8"`
        : `Bearer realm="${realm}"`,
    };
  };
  return (method, path, header) => {
    if (!source.configured || isOpen(method, path)) return null;
    const current = source.current();
    return typeof current === "string"
      ? judge(current, method, path, header)
      : current.then((token) => judge(token, method, path, header));
  };
}
