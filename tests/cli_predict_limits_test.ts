/**
 * `predict` reads its input in bounded chunks: a line over 1 MiB gets an
 * error naming its line number and is never held whole, and the lines after
 * it are answered.
 */

import assert from "node:assert/strict";
import { linesOf, MAX_LINE_BYTES } from "../src/cli/predict_input.ts";
import { tempDir } from "./_fixtures.ts";
import { writeTestBundle } from "./_http_helpers.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const encoder = new TextEncoder();

/** `parts` as a stream of byte chunks of at most `size` bytes. */
function chunked(parts: string[], size: number): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(parts.join(""));
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>, max: number) {
  const out = [];
  for await (const lines of linesOf(stream, max)) out.push(...lines);
  return out;
}

Deno.test("linesOf() splits bytes into lines whatever the chunks, and counts the bytes of a line over the bound without keeping it", async () => {
  const input = [
    "héllo\r\n",
    "x".repeat(25),
    "\n",
    "\n",
    "ünïcode line",
    "\n",
    "y".repeat(11),
    "\n",
    "last",
  ];
  for (const size of [1, 2, 3, 7, 64, 1000]) {
    assert.deepEqual(await all(chunked(input, size), 12), [
      "héllo",
      { tooLong: 25 },
      "",
      { tooLong: 14 }, // "ünïcode line" is 12 characters and 14 bytes
      "yyyyyyyyyyy",
      "last",
    ], `chunks of ${size}`);
  }
  assert.deepEqual(await all(chunked(["z".repeat(20)], 5), 12), [{
    tooLong: 20,
  }]);
  assert.deepEqual(await all(chunked([""], 5), 12), []);
});

Deno.test("predict answers an over-long line with an error naming it and goes on with the next lines", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "predict", "--bundle", bundle],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const long = MAX_LINE_BYTES + 10;
  const writer = child.stdin.getWriter();
  await writer.write(encoder.encode("my invoice was overcharged\n"));
  // The long line arrives in pieces, as a pipe gives it.
  const piece = encoder.encode("w".repeat(65536));
  let sent = 0;
  while (sent < long) {
    const n = Math.min(piece.length, long - sent);
    await writer.write(piece.subarray(0, n));
    sent += n;
  }
  await writer.write(encoder.encode("\nthe parcel never arrived\n"));
  await writer.close();
  const out = await child.output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2, stderr);
  const lines = stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 3);
  assert.ok(lines[0].answers.topic);
  assert.match(
    lines[1].error,
    /^line 2: 1,048,586 bytes, longer than the 1,048,576 bytes \(1 MiB\) one line may hold/,
  );
  assert.ok(lines[2].answers.topic);
  assert.match(stderr, /^error: line 2: 1,048,586 bytes/m);
});
