/**
 * HTTP/1.1 message syntax of the server, without sockets: heads found and
 * parsed strictly, chunked bodies decoded piece by piece.
 */

import assert from "node:assert/strict";
import { chunksDone, chunkState, decodeChunks } from "../src/http/chunked.ts";
import { findHeadEnd, parseHead, RequestError } from "../src/http/http1.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("findHeadEnd() finds the empty line after CRLF or bare LF lines, only once it has arrived", () => {
  const head = "POST /x HTTP/1.1\r\nHost: a\r\n\r\nbody";
  const b = bytes(head);
  assert.equal(findHeadEnd(b, 0, b.length), head.indexOf("body"));
  assert.equal(findHeadEnd(b, 0, head.indexOf("\r\n\r\n") + 3), -1);
  const lf = bytes("GET / HTTP/1.1\nHost: a\n\nrest");
  assert.equal(
    findHeadEnd(lf, 0, lf.length),
    "GET / HTTP/1.1\nHost: a\n\n".length,
  );
});

Deno.test("parseHead() reads the request line, fields, length, framing and keep-alive", () => {
  const h = parseHead(
    "POST /v1/decide?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n",
  );
  assert.equal(h.method, "POST");
  assert.equal(h.path, "/v1/decide");
  assert.equal(h.target, "/v1/decide?x=1");
  assert.equal(h.contentLength, 12);
  assert.equal(h.keepAlive, true);
  assert.deepEqual(h.headers[1], ["content-type", "application/json"]);
  const old = parseHead("\r\nGET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
  assert.equal(old.minor, 0);
  assert.equal(old.keepAlive, true);
  assert.equal(parseHead("GET / HTTP/1.0\r\n\r\n").keepAlive, false);
  assert.equal(
    parseHead("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keepAlive,
    false,
  );
  const chunked = parseHead(
    "POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\nExpect: 100-Continue\r\n\r\n",
  );
  assert.equal(chunked.chunked, true);
  assert.equal(chunked.expectContinue, true);
  assert.equal(
    parseHead("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n").contentLength,
    5,
  );
  assert.equal(
    parseHead("GET http://a.b/v1/health?x HTTP/1.1\r\n\r\n").path,
    "/v1/health",
  );
});

Deno.test("parseHead() refuses what could be framed two ways, or is malformed, with the status that says why", () => {
  const cases: [string, number, RegExp][] = [
    ["GET /x HTTP/1.1 extra\r\n\r\n", 400, /request line/],
    ["GET  /x HTTP/1.1\r\n\r\n", 400, /request line/],
    ["G(T /x HTTP/1.1\r\n\r\n", 400, /not a token/],
    ["GET /x HTTP/2.0\r\n\r\n", 400, /Only HTTP\/1\.1 and HTTP\/1\.0/],
    ["GET x HTTP/1.1\r\n\r\n", 400, /must start with "\/"/],
    ["GET /x HTTP/1.1\r\n folded\r\n\r\n", 400, /folded/],
    ["GET /x HTTP/1.1\r\nBad Name: 1\r\n\r\n", 400, /Bad header line/],
    ["GET /x HTTP/1.1\r\nX: a\u0001b\r\n\r\n", 400, /control character/],
    [
      "POST /x HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
      400,
      /non-negative integer/,
    ],
    [
      "POST /x HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n",
      400,
      /different values/,
    ],
    [
      "POST /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
      400,
      /different values/,
    ],
    [
      "POST /x HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
      400,
      /both/,
    ],
    [
      "POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
      400,
      /only chunked/,
    ],
    [
      "POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
      400,
      /only chunked, on HTTP\/1\.1/,
    ],
    ["GET /x HTTP/1.1\r\nExpect: 200-ok\r\n\r\n", 417, /only 100-continue/],
    [
      "GET /x HTTP/1.1\r\n" +
      Array.from({ length: 101 }, (_, i) => `X-${i}: 1\r\n`).join("") +
      "\r\n",
      431,
      /More than 100 header fields/,
    ],
  ];
  for (const [head, status, message] of cases) {
    assert.throws(
      () => parseHead(head),
      (e: unknown) =>
        e instanceof RequestError && e.status === status &&
        message.test(e.message),
      JSON.stringify(head),
    );
  }
});

Deno.test("decodeChunks() decodes a chunked body arriving in any pieces, with extensions and trailers", () => {
  const body = "hello, chunked world";
  const wire = bytes(
    `5;x=1\r\nhello\r\nf\r\n, chunked world\r\n0\r\nX-T: 1\r\n\r\nNEXT`,
  );
  for (let cut = 0; cut <= wire.length; cut++) {
    const state = chunkState();
    const out: number[] = [];
    const append = (d: Uint8Array) => out.push(...d);
    let at = decodeChunks(wire, 0, cut, state, 1000, 1000, append);
    at = decodeChunks(wire, at, wire.length, state, 1000, 1000, append);
    assert.ok(chunksDone(state), `cut ${cut}`);
    assert.equal(new TextDecoder().decode(new Uint8Array(out)), body);
    assert.equal(new TextDecoder().decode(wire.subarray(at)), "NEXT");
  }
});

Deno.test("decodeChunks() refuses a body over the limit as soon as a chunk size says so, and malformed chunks", () => {
  const big = bytes("ffffff\r\nabc");
  assert.throws(
    () =>
      decodeChunks(big, 0, big.length, chunkState(), 1_048_576, 1000, () => {}),
    (e: unknown) => e instanceof RequestError && e.status === 413,
  );
  for (const bad of ["zz\r\n", "5\r\nhelloX\r\n", "123456789\r\n"]) {
    const b = bytes(bad);
    assert.throws(
      () =>
        decodeChunks(b, 0, b.length, chunkState(), 1_048_576, 1000, () => {}),
      (e: unknown) => e instanceof RequestError && e.status === 400,
      bad,
    );
  }
});
