/**
 * What a request presents as the access token, and whether it is the
 * token. A request may present it as `X-Service-Token: <token>`,
 * `Authorization: Bearer <token>`, or as the password of
 * `Authorization: Basic` (any user name). Comparison takes time independent
 * of where the bytes differ. The middleware that refuses requests without
 * it is `middleware/token_auth.ts`.
 *
 * @module
 */

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

/**
 * True when the request presents `token` in one of the accepted forms. The
 * empty token is never presented (an empty or unreadable token file
 * refuses every request). Every credential is compared, so the time taken
 * does not say which one matched.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { presentsToken } from "./auth.ts";
 * const headers = new Headers({ authorization: "Bearer s3cret" });
 * assert.ok(presentsToken("s3cret", (name) => headers.get(name)));
 * ```
 */
export function presentsToken(token: string, header: HeaderReader): boolean {
  const expected = encoder.encode(token);
  let ok = false;
  for (const presented of presentedTokens(header)) {
    ok = constantTimeEqual(encoder.encode(presented), expected) || ok;
  }
  return ok && token !== "";
}
