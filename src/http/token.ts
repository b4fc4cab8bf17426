/**
 * Where the access token comes from: nowhere (no authentication), a value
 * fixed at startup (an environment variable), or a file read again on every
 * request.
 *
 * @module
 */

/** The source of the access token. */
export interface TokenSource {
  /** Whether a token is configured at all; false means no authentication. */
  readonly configured: boolean;
  /** Where the token comes from, in words, for the startup banner. */
  readonly description: string;
  /**
   * The token now. An empty string refuses every request (fail closed); it
   * is what an emptied or unreadable token file gives.
   */
  current(): Promise<string>;
}

const NONE = Promise.resolve("");

/**
 * Why `token` cannot be a token, or null when it can: it must be printable
 * ASCII (space to `~`). An HTTP header value is a byte string, so a client
 * cannot send other characters as `X-Service-Token` or `Bearer` the way the
 * browser's login (UTF-8 in Basic) does: such a token would work one way
 * out of three, so it is refused.
 *
 * @example
 * ```ts
 * import { tokenProblem } from "./token.ts";
 * import assert from "node:assert/strict";
 * assert.equal(tokenProblem("s3cret"), null);
 * assert.equal(tokenProblem("s3crét"), 'character 5 ("é", U+00E9) is not printable ASCII: HTTP headers carry X-Service-Token and Bearer tokens as bytes, so use letters, digits and ASCII punctuation');
 * ```
 */
export function tokenProblem(token: string): string | null {
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) {
      const ch = String.fromCodePoint(token.codePointAt(i)!);
      const code = token.codePointAt(i)!.toString(16).toUpperCase()
        .padStart(4, "0");
      return `character ${i + 1} (${
        JSON.stringify(ch)
      }, U+${code}) is not printable ASCII: HTTP headers carry X-Service-Token and Bearer tokens as bytes, so use letters, digits and ASCII punctuation`;
    }
  }
  return null;
}

/** No token: every route is open. */
export const NO_TOKEN: TokenSource = {
  configured: false,
  description: "not set",
  current: () => NONE,
};

/** A token fixed at startup, such as the value of an environment variable. */
export function fixedToken(token: string, description: string): TokenSource {
  const current = Promise.resolve(token);
  return { configured: true, description, current: () => current };
}

/** Options of `fileToken`. */
export interface FileTokenOptions {
  /** Reads the file; `Deno.readTextFile` unless replaced. */
  read?: (path: string) => Promise<string>;
  /** Told once each time the file turns empty or unreadable. */
  warn?: (message: string) => void;
}

/**
 * A token read from `path` on every request, surrounding white space
 * trimmed. An empty or unreadable file, or one holding a token that is not
 * printable ASCII (`tokenProblem`), gives the empty token, which refuses
 * every request.
 */
export function fileToken(
  path: string,
  options: FileTokenOptions = {},
): TokenSource {
  const read = options.read ?? Deno.readTextFile;
  const warn = options.warn ?? (() => {});
  let failing = false;
  const problem = (message: string): string => {
    if (!failing) warn(message);
    failing = true;
    return "";
  };
  return {
    configured: true,
    description: `from file ${path} (read on every request)`,
    async current() {
      let token: string;
      try {
        token = (await read(path)).trim();
      } catch (e) {
        return problem(
          `Cannot read token file ${path} (${
            (e as Error).message
          }): refusing every guarded request`,
        );
      }
      if (token === "") {
        return problem(
          `Token file ${path} is empty: refusing every guarded request`,
        );
      }
      const bad = tokenProblem(token);
      if (bad !== null) {
        return problem(
          `Token file ${path}: ${bad}; refusing every guarded request`,
        );
      }
      failing = false;
      return token;
    },
  };
}
