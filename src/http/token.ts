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
 * trimmed. An empty or unreadable file gives the empty token, which refuses
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
      failing = false;
      return token;
    },
  };
}
