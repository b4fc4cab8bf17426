/**
 * How `predict` reads one very long input line, before and after it read in
 * bounded chunks. Part 1, in process: the old splitter (the tail joined to
 * every chunk and split again) against `linesOf` on the same chunks (64 KiB,
 * as a pipe gives them), one line of 2 to 32 MB, with the ratio. Part 2:
 * `main.ts predict` on a pipe carrying one line of 200 MB between two short
 * ones: wall time and peak resident memory (`/usr/bin/time`). Also the
 * ordinary case, 500,000 short lines, before and after.
 *
 *   deno run --allow-read --allow-write --allow-run --allow-env scripts/bench-long-line.ts
 */

import { linesOf } from "../src/cli/predict_input.ts";

const CHUNK = 65536;
const MB = 1024 * 1024;
const chunk = new Uint8Array(CHUNK).fill(0x61);

/** One line of `bytes` bytes and its newline, in chunks of 64 KiB. */
function line(bytes: number): ReadableStream<Uint8Array> {
  let left = bytes;
  let ended = false;
  return new ReadableStream({
    pull(c) {
      if (left > 0) {
        const n = Math.min(CHUNK, left);
        c.enqueue(chunk.slice(0, n));
        left -= n;
      } else if (!ended) {
        ended = true;
        c.enqueue(new Uint8Array([0x0a]));
      } else c.close();
    },
  });
}

/** The splitter `predict` used before: the tail joined to each chunk and split again. */
async function* oldLinesOf(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<string[]> {
  let rest = "";
  for await (const c of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + c).split("\n");
    rest = parts.pop()!;
    yield parts;
  }
  if (rest !== "") yield [rest];
}

async function time(run: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await run();
  return (performance.now() - t) / 1000;
}

console.log("one line of N MB, read in 64 KiB chunks (seconds)");
console.log("   MB   before    after   before/after");
for (const mb of [2, 8, 32]) {
  const before = await time(async () => {
    for await (const _ of oldLinesOf(line(mb * MB))) { /* drain */ }
  });
  const after = await time(async () => {
    for await (const _ of linesOf(line(mb * MB))) { /* drain */ }
  });
  console.log(
    `${String(mb).padStart(5)} ${before.toFixed(3).padStart(8)} ${
      after.toFixed(3).padStart(8)
    } ${(before / after).toFixed(1).padStart(10)}x`,
  );
}

/** `n` lines of 60 bytes, in chunks of 64 KiB. */
function shortLines(n: number): ReadableStream<Uint8Array> {
  const text = new TextEncoder().encode(
    Array.from({ length: n }, (_, i) => `${i} `.padEnd(59, "x")).join("\n") +
      "\n",
  );
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= text.length) return c.close();
      c.enqueue(text.slice(at, at + CHUNK));
      at += CHUNK;
    },
  });
}

for (let round = 0; round < 2; round++) {
  const before = await time(async () => {
    for await (const _ of oldLinesOf(shortLines(500_000))) { /* drain */ }
  });
  const after = await time(async () => {
    for await (const _ of linesOf(shortLines(500_000))) { /* drain */ }
  });
  console.log(
    `500,000 lines of 60 bytes (round ${round + 1}): before ${
      before.toFixed(3)
    } s, after ${after.toFixed(3)} s, before/after ${
      (before / after).toFixed(2)
    }x`,
  );
}

const dir = await Deno.makeTempDir();
try {
  const bundle = `${dir}/bundle`;
  const train = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      new URL("../main.ts", import.meta.url).pathname,
      "train",
      "--traces",
      new URL("../demo/traces.jsonl", import.meta.url).pathname,
      "--out",
      bundle,
    ],
    stdout: "null",
    stderr: "null",
  }).output();
  if (train.code !== 0 && train.code !== 3) throw new Error("train failed");
  const child = new Deno.Command("/usr/bin/time", {
    args: [
      "-f",
      "%e s, %M KB",
      Deno.execPath(),
      "run",
      "-A",
      "--quiet",
      new URL("../main.ts", import.meta.url).pathname,
      "predict",
      "--bundle",
      bundle,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode("where is my card\n"));
  const big = new Uint8Array(MB).fill(0x61);
  for (let i = 0; i < 200; i++) await w.write(big);
  await w.write(new TextEncoder().encode("\nwhere is my card\n"));
  await w.close();
  const out = await child.output();
  const stdout = new TextDecoder().decode(out.stdout).trim().split("\n");
  const stderr = new TextDecoder().decode(out.stderr).trim().split("\n");
  console.log(
    `\npredict, one line of 200 MB between two short ones: ${
      stderr[stderr.length - 1]
    } (wall time, peak resident memory); ${stdout.length} output lines, exit ${out.code}`,
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}
