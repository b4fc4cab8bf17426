/**
 * Batch benchmark: texts per second answered by one `main.ts serve` on a
 * loopback port when a client sends them one `/v1/decide` request each,
 * one after another on a keep-alive connection, and when it sends them in
 * `/v1/decide/batch` requests of 16, 64 and 256; and the reply bytes of a
 * `/v1/decide` with and without `"top": 3`. Best of `--rounds` rounds of
 * 2,048 texts each way, alternating; prints each batch size's ratio to
 * single requests. Texts are BANKING77 test texts when `--bundle` is a
 * BANKING77 bundle and the data is present, else the bundle's own
 * question names repeated.
 *
 * Usage: deno run --allow-read --allow-run --allow-net --allow-env
 *        scripts/bench-batch.ts --bundle DIR [--rounds 3] [--data DIR]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { parse as parseCsv } from "csv-parse/sync";
import { startServe } from "./processes.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    bundle: { type: "string" },
    rounds: { type: "string", default: "3" },
    data: {
      type: "string",
      default: new URL("../../shared/data/", import.meta.url).pathname,
    },
  },
});
if (values.bundle === undefined) {
  console.error("Usage: bench-batch.ts --bundle DIR [--rounds 3] [--data DIR]");
  Deno.exit(2);
}
const ROUNDS = Number(values.rounds);
const TEXTS_PER_ROUND = 2048;
const SIZES = [16, 64, 256] as const;

/** The texts to answer: BANKING77 test texts, or a stand-in. */
async function texts(): Promise<string[]> {
  try {
    const csv = await Deno.readTextFile(
      `${values.data.replace(/\/$/, "")}/banking77/test.csv`,
    );
    const rows = parseCsv(csv, { columns: true }) as { text: string }[];
    return rows.map((r) => r.text);
  } catch {
    return ["where is my parcel, it has not arrived yet"];
  }
}

const all = await texts();
const round = Array.from(
  { length: TEXTS_PER_ROUND },
  (_, i) => all[i % all.length]!,
);
const server = await startServe(values.bundle, []);
try {
  const url = `${server.base}/v1/decide`;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.base}${path}`, {
      method: "POST",
      body: JSON.stringify(body),
    });
    const bytes = await res.arrayBuffer();
    if (res.status !== 200) {
      throw new Error(
        `${path}: ${res.status} ${new TextDecoder().decode(bytes)}`,
      );
    }
    return bytes.byteLength;
  };
  /** Seconds to answer the round's texts in batches of `size` (1: single requests). */
  const timed = async (size: number): Promise<number> => {
    const start = performance.now();
    for (let i = 0; i < round.length; i += size) {
      if (size === 1) await post("/v1/decide", { state: round[i]! });
      else {
        await post("/v1/decide/batch", {
          items: round.slice(i, i + size).map((state) => ({ state })),
        });
      }
    }
    return (performance.now() - start) / 1000;
  };
  // Warm up both paths.
  await timed(1);
  await timed(64);
  const best = new Map<number, number>();
  for (let r = 0; r < ROUNDS; r++) {
    for (const size of [1, ...SIZES]) {
      const s = await timed(size);
      best.set(size, Math.min(best.get(size) ?? Infinity, s));
    }
  }
  const single = TEXTS_PER_ROUND / best.get(1)!;
  console.log(
    `${TEXTS_PER_ROUND} texts per round, best of ${ROUNDS} rounds, one client, keep-alive (${url})`,
  );
  console.log(`single /v1/decide requests: ${single.toFixed(0)} texts/s`);
  for (const size of SIZES) {
    const rate = TEXTS_PER_ROUND / best.get(size)!;
    console.log(
      `batches of ${size}: ${rate.toFixed(0)} texts/s (${
        (rate / single).toFixed(2)
      }x single requests)`,
    );
  }
  const sample = round.slice(0, 50);
  let full = 0;
  let top = 0;
  for (const state of sample) {
    full += await post("/v1/decide", { state });
    top += await post("/v1/decide", { state, top: 3 });
  }
  console.log(
    `reply bytes of /v1/decide, mean of ${sample.length} texts: ${
      (full / sample.length).toFixed(0)
    }; with "top": 3: ${(top / sample.length).toFixed(0)} (${
      (top / full).toFixed(2)
    }x)`,
  );
} finally {
  await server.stop();
}
