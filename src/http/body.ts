/**
 * Reading a JSON request body with a size limit.
 *
 * A declared `Content-Length` above the limit is refused with 413 before a
 * byte of the body is read; a body without a length (chunked) is read until
 * it passes the limit, then refused the same way. Deno's HTTP server itself
 * answers 400 and closes the connection for a negative, non-numeric or
 * repeated `Content-Length` before this code runs (the framing of the
 * connection is lost); the check here covers requests handed over in
 * process.
 *
 * @module
 */

import { HTTPException } from "hono/http-exception";

/** The largest accepted request body: 1 MiB. */
export const MAX_BODY_BYTES = 1_048_576;

const DIGITS = /^[0-9]+$/;

/**
 * Reads the body of `request` as text. Throws `HTTPException` 413 for a
 * body over `limit` bytes (before reading any of it when the length is
 * declared), 400 for a malformed `Content-Length`.
 */
export async function readBodyText(
  request: Request,
  limit: number = MAX_BODY_BYTES,
): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (!DIGITS.test(declared.trim())) {
      throw new HTTPException(400, {
        message:
          `Content-Length must be a non-negative integer, got "${declared}"`,
      });
    }
    if (Number(declared) > limit) throw tooLarge(limit);
    return await request.text();
  }
  return await readCapped(request, limit);
}

/**
 * Parses a JSON body; throws `HTTPException` 400 for an empty body or
 * invalid JSON, its message ending with `needed`, the body the route
 * expects.
 */
export function parseJsonBody(text: string, needed: string): unknown {
  if (text.trim() === "") throw badBody("The request body is empty", needed);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badBody(
      `The request body is not valid JSON (${(e as Error).message})`,
      needed,
    );
  }
}

/**
 * Reads and parses the JSON body of `request`: `readBodyText`, then
 * `parseJsonBody`.
 */
export async function readJsonBody(
  request: Request,
  needed: string,
  limit: number = MAX_BODY_BYTES,
): Promise<unknown> {
  return parseJsonBody(await readBodyText(request, limit), needed);
}

/** A 400 whose message says what was wrong and what body is needed. */
export function badBody(reason: string, needed: string): HTTPException {
  return new HTTPException(400, { message: `${reason}. Send ${needed}` });
}

/** The 413 for a body over `limit` bytes. */
export function tooLarge(limit: number = MAX_BODY_BYTES): HTTPException {
  return new HTTPException(413, {
    message: `The request body is larger than ${limit} bytes`,
  });
}

/** Reads a body of unknown length, giving up as soon as it passes `limit` bytes. */
async function readCapped(request: Request, limit: number): Promise<string> {
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}
