/**
 * HTTP/1.1 message syntax for the server (RFC 9112): finding the end of a
 * request head in bytes, parsing it strictly (anything that could frame a
 * request two ways is refused), and writing a response head (chunked bodies:
 * `chunked.ts`). Pure: no sockets, no clock.
 *
 * @module
 */

/** A request head, checked. */
export interface RequestHead {
  /** The method, as sent (methods are case-sensitive). */
  method: string;
  /** The request target as sent. */
  target: string;
  /** The path of the target (before any `?`). */
  path: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  /** Header fields in order, names in lower case. */
  headers: [string, string][];
  /** The declared body length, or -1 when none is declared. */
  contentLength: number;
  /** True when the body comes in chunks (`Transfer-Encoding: chunked`). */
  chunked: boolean;
  /** True when the client asks to keep the connection open after the reply. */
  keepAlive: boolean;
  /** True when the client waits for `100 Continue` before sending its body. */
  expectContinue: boolean;
}

/** A request the server refuses before it reaches a route; `status` says how. */
export class RequestError extends Error {
  override name = "RequestError";
  /** The status to answer with (400, 408, 413, 417 or 431). */
  readonly status: number;

  /** An error answered with `status` and `message`. */
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Reason phrases of the statuses this service answers. */
export const STATUS_TEXT: Readonly<Record<number, string>> = {
  100: "Continue",
  200: "OK",
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  413: "Content Too Large",
  417: "Expectation Failed",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/**
 * Where the head that starts at `start` ends: the index just past its empty
 * line, or -1 when `buf[start, end)` does not hold it yet. Lines may end in
 * CRLF or a bare LF. Empty lines before a request are skipped by the parser,
 * not here: a head of only line breaks ends at its first empty line.
 */
export function findHeadEnd(
  buf: Uint8Array,
  start: number,
  end: number,
): number {
  // An LF followed by LF, or by CR LF, ends the head.
  for (let i = start; i < end; i++) {
    if (buf[i] !== 10) continue;
    if (i + 1 < end && buf[i + 1] === 10) return i + 2;
    if (i + 2 < end && buf[i + 1] === 13 && buf[i + 2] === 10) return i + 3;
  }
  return -1;
}

/** True when `buf[start, end)` holds a byte of 0x80 or more. */
export function hasHighBytes(
  buf: Uint8Array,
  start: number,
  end: number,
): boolean {
  for (let i = start; i < end; i++) if (buf[i]! >= 0x80) return true;
  return false;
}

/** Bytes as ISO-8859-1 text, one character per byte (header values are bytes). */
export function latin1(buf: Uint8Array, start: number, end: number): string {
  let s = "";
  for (let i = start; i < end; i += 4096) {
    s += String.fromCharCode(...buf.subarray(i, Math.min(end, i + 4096)));
  }
  return s;
}

/** `TOKEN_CHAR[c]` is 1 for the characters of an RFC 9110 token. */
const TOKEN_CHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789") TOKEN_CHAR[c.charCodeAt(0)] = 1;
for (let c = 65; c <= 90; c++) TOKEN_CHAR[c] = TOKEN_CHAR[c + 32] = 1;

function isToken(s: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || TOKEN_CHAR[c] === 0) return false;
  }
  return true;
}

/** True when `s[from, to)` holds a control character other than tab (not allowed in a field value). */
function hasControl(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if ((c < 32 && c !== 9) || c === 127) return true;
  }
  return false;
}

/** The end of the line starting at `from` (its LF, or the text's end), and where its content ends. */
function lineEnd(text: string, from: number): number {
  const lf = text.indexOf("\n", from);
  return lf < 0 ? text.length : lf;
}

/** `text[from, lf)` without a CR before the LF. */
function contentEnd(text: string, from: number, lf: number): number {
  return lf > from && text.charCodeAt(lf - 1) === 13 ? lf - 1 : lf;
}

function isWhite(c: number): boolean {
  return c === 32 || c === 9;
}

/** A non-negative integer of at most 15 digits, else -1. */
function digitsValue(s: string): number {
  if (s.length === 0 || s.length > 15) return -1;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

function bad(message: string): RequestError {
  return new RequestError(400, message);
}

/**
 * Parses a request head (the text up to and including its empty line).
 * Throws `RequestError` for anything malformed: a bad request line, a
 * version other than HTTP/1.0 and 1.1, a bad header line or obsolete line
 * folding, a `Content-Length` that is not one non-negative integer, both a
 * length and chunked framing, a transfer coding other than chunked (all
 * 400: a malformed request is never answered with a 5xx), more than
 * `maxFields` fields (431), and an `Expect` other than `100-continue` (417).
 */
export function parseHead(text: string, maxFields = 100): RequestHead {
  let pos = 0;
  // A client may send empty lines before a request (RFC 9112, 2.2).
  for (;;) {
    const c = text.charCodeAt(pos);
    if (c === 10) pos++;
    else if (c === 13 && text.charCodeAt(pos + 1) === 10) pos += 2;
    else break;
  }
  let lf = lineEnd(text, pos);
  const lineStop = contentEnd(text, pos, lf);
  const sp1 = text.indexOf(" ", pos);
  const sp2 = sp1 < 0 ? -1 : text.indexOf(" ", sp1 + 1);
  if (
    sp1 <= pos || sp2 <= sp1 + 1 || sp2 >= lineStop ||
    text.indexOf(" ", sp2 + 1) < lineStop && text.indexOf(" ", sp2 + 1) >= 0
  ) {
    throw bad(
      `The request line must be METHOD TARGET HTTP/1.1, got ${
        JSON.stringify(text.slice(pos, Math.min(lineStop, pos + 100)))
      }`,
    );
  }
  if (!isToken(text, pos, sp1)) {
    throw bad(
      `The method ${JSON.stringify(text.slice(pos, sp1))} is not a token`,
    );
  }
  const method = text.slice(pos, sp1);
  const target = text.slice(sp1 + 1, sp2);
  const version = text.slice(sp2 + 1, lineStop);
  let minor: 0 | 1;
  if (version === "HTTP/1.1") minor = 1;
  else if (version === "HTTP/1.0") minor = 0;
  else if (/^HTTP\/\d\.\d$/.test(version)) {
    throw new RequestError(
      400,
      `Only HTTP/1.1 and HTTP/1.0 are served, not ${version}`,
    );
  } else {
    throw bad(
      `The request line ends in ${
        JSON.stringify(version.slice(0, 20))
      }, not HTTP/1.1`,
    );
  }
  if (hasControl(target, 0, target.length)) {
    throw bad("The request target holds a control character");
  }
  let path: string;
  if (target.charCodeAt(0) === 47) {
    const q = target.indexOf("?");
    path = q < 0 ? target : target.slice(0, q);
  } else if (/^https?:\/\//i.test(target)) {
    // Absolute form (RFC 9112, 3.2.2): the path is what routes.
    try {
      path = new URL(target).pathname;
    } catch {
      throw bad(
        `The request target ${
          JSON.stringify(target.slice(0, 100))
        } is not a URL`,
      );
    }
  } else if (target === "*" && method === "OPTIONS") path = "*";
  else {
    throw bad(
      `The request target must start with "/", got ${
        JSON.stringify(target.slice(0, 100))
      }`,
    );
  }

  const headers: [string, string][] = [];
  let contentLength = -1;
  let transferEncoding: string | null = null;
  let connection: string | null = null;
  let expect: string | null = null;
  for (;;) {
    pos = lf + 1;
    if (pos >= text.length) break;
    lf = lineEnd(text, pos);
    const stop = contentEnd(text, pos, lf);
    if (stop === pos) break;
    if (isWhite(text.charCodeAt(pos))) {
      throw bad(
        "Header lines must not be folded (a line starts with white space)",
      );
    }
    const colon = text.indexOf(":", pos);
    if (colon < 0 || colon >= stop || !isToken(text, pos, colon)) {
      throw bad(
        `Bad header line ${
          JSON.stringify(text.slice(pos, Math.min(stop, pos + 100)))
        }`,
      );
    }
    let from = colon + 1;
    let to = stop;
    while (from < to && isWhite(text.charCodeAt(from))) from++;
    while (to > from && isWhite(text.charCodeAt(to - 1))) to--;
    if (hasControl(text, from, to)) {
      throw bad(
        `The header ${text.slice(pos, colon)} holds a control character`,
      );
    }
    if (headers.length >= maxFields) {
      throw new RequestError(431, `More than ${maxFields} header fields`);
    }
    const name = text.slice(pos, colon).toLowerCase();
    const value = text.slice(from, to);
    headers.push([name, value]);
    if (name === "content-length") {
      let n = digitsValue(value);
      if (n < 0) {
        // A list of equal values is one length (RFC 9110, 8.6).
        for (const part of value.split(",")) {
          const v = digitsValue(part.trim());
          if (v < 0) {
            throw bad(
              `Content-Length must be a non-negative integer, got ${
                JSON.stringify(value.slice(0, 40))
              }`,
            );
          }
          if (n >= 0 && v !== n) {
            throw bad("Content-Length is given twice with different values");
          }
          n = v;
        }
      }
      if (contentLength >= 0 && n !== contentLength) {
        throw bad("Content-Length is given twice with different values");
      }
      contentLength = n;
    } else if (name === "transfer-encoding") {
      transferEncoding = transferEncoding === null
        ? value
        : `${transferEncoding}, ${value}`;
    } else if (name === "connection") {
      connection = connection === null ? value : `${connection},${value}`;
    } else if (name === "expect") expect = value.toLowerCase();
  }
  let chunked = false;
  if (transferEncoding !== null) {
    if (contentLength >= 0) {
      throw bad(
        "A request must not have both Content-Length and Transfer-Encoding",
      );
    }
    if (transferEncoding.trim().toLowerCase() !== "chunked" || minor === 0) {
      throw new RequestError(
        400,
        `Transfer-Encoding ${
          JSON.stringify(transferEncoding.slice(0, 40))
        } is not served (only chunked, on HTTP/1.1)`,
      );
    }
    chunked = true;
  }
  if (expect !== null && expect !== "100-continue") {
    throw new RequestError(
      417,
      `Expect ${
        JSON.stringify(expect.slice(0, 40))
      } is not served (only 100-continue)`,
    );
  }
  let keepAlive = minor === 1;
  if (connection !== null) {
    const tokens = connection.toLowerCase().split(",").map((t) => t.trim());
    keepAlive = minor === 1
      ? !tokens.includes("close")
      : tokens.includes("keep-alive");
  }
  return {
    method,
    target,
    path,
    minor,
    headers,
    contentLength,
    chunked,
    keepAlive,
    expectContinue: expect !== null && minor === 1,
  };
}

/** One response header field. */
export type HeaderField = readonly [string, string];

/**
 * The head of a response: status line, `fields`, `content-length`, `date`,
 * and `connection: close` when `close` (or `connection: keep-alive` for a
 * kept HTTP/1.0 connection), then the empty line.
 */
export function responseHead(
  status: number,
  fields: readonly HeaderField[],
  contentLength: number,
  date: string,
  close: boolean,
  minor: 0 | 1,
): string {
  let head = `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Unknown"}\r\n`;
  for (let i = 0; i < fields.length; i++) {
    head += `${fields[i]![0]}: ${fields[i]![1]}\r\n`;
  }
  head += `content-length: ${contentLength}\r\ndate: ${date}\r\n`;
  if (close) head += "connection: close\r\n";
  else if (minor === 0) head += "connection: keep-alive\r\n";
  return head + "\r\n";
}
