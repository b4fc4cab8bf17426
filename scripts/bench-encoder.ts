/**
 * The sentence encoder's cost in Deno: model load time, milliseconds per
 * text alone and in batches of 32 (one thread, then the worker pool), and
 * resident memory, on BANKING77 texts from `../shared/data`.
 *
 *     deno run --allow-read --allow-env --allow-sys scripts/bench-encoder.ts [--texts 1000] [--workers 2]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { parse } from "csv-parse/sync";
import {
  EncoderPool,
  loadEncoder,
  readThisEncoder,
} from "../src/encoder/mod.ts";

const { values } = parseArgs({
  options: {
    texts: { type: "string", default: "1000" },
    workers: { type: "string", default: "2" },
  },
});
const count = Number(values.texts);
const workers = Number(values.workers);
const path = new URL("../../shared/data/banking77/train.csv", import.meta.url);
let rows: { text: string }[];
try {
  rows = parse(await Deno.readTextFile(path), { columns: true });
} catch {
  console.log(`ignore: ${path.pathname} is absent`);
  Deno.exit(0);
}
const texts = rows.slice(0, count).map((r) => r.text);
const mb = (b: number) => (b / 1048576).toFixed(1);
const rss0 = Deno.memoryUsage().rss;

let t = performance.now();
const files = await readThisEncoder();
const read = performance.now() - t;
t = performance.now();
const encoder = await loadEncoder(files);
const load = performance.now() - t;
console.log(
  `read and hash the files ${read.toFixed(0)} ms, build the model ${
    load.toFixed(0)
  } ms; rss ${mb(Deno.memoryUsage().rss)} MB (before ${mb(rss0)} MB)`,
);
await encoder.embed(texts.slice(0, 32)); // warm up

const single = Math.min(200, texts.length);
t = performance.now();
for (const text of texts.slice(0, single)) await encoder.embed([text]);
const perSingle = (performance.now() - t) / single;
t = performance.now();
for (let i = 0; i < texts.length; i += 32) {
  await encoder.embed(texts.slice(i, i + 32));
}
const perBatched = (performance.now() - t) / texts.length;
console.log(
  `one thread: ${perSingle.toFixed(2)} ms a text alone (${single} texts), ${
    perBatched.toFixed(2)
  } ms a text in batches of 32 (${texts.length} texts): batched/single ${
    (perBatched / perSingle).toFixed(2)
  }x; rss ${mb(Deno.memoryUsage().rss)} MB`,
);

t = performance.now();
const pool = await EncoderPool.start(files, { workers });
const poolLoad = performance.now() - t;
await pool.embedAll(texts.slice(0, 32 * workers));
t = performance.now();
await pool.embedAll(texts);
const perPool = (performance.now() - t) / texts.length;
pool.close();
console.log(
  `pool of ${workers} workers: started in ${poolLoad.toFixed(0)} ms, ${
    perPool.toFixed(2)
  } ms a text (wall) in batches of 32: pool/one thread ${
    (perPool / perBatched).toFixed(2)
  }x; rss ${mb(Deno.memoryUsage().rss)} MB`,
);
