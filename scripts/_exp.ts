import { parseTraces } from "../src/train/traces.ts";
import { featurize, DEFAULT_FEATURIZER } from "../src/engine/features.ts";
import { toSparse } from "../src/train/sparse.ts";
import { trainSoftmax, logitsOf } from "../src/train/softmax_sgd.ts";
const tr = parseTraces("train.csv", Deno.readTextFileSync("/work/shared/data/banking77/train.csv"));
const te = parseTraces("test.csv", Deno.readTextFileSync("/work/shared/data/banking77/test.csv"));
const q = tr.questions[0]!; const qt = te.questions[0]!;
const settings = { ...DEFAULT_FEATURIZER, char_ngram_min: Number(Deno.args[0] ?? 3), char_ngram_max: Number(Deno.args[1] ?? 5) };
let t0 = performance.now();
const cache = new Map();
const ftr = tr.texts.map((t) => featurize(t, settings, cache));
const fte = te.texts.map((t) => featurize(t, settings, cache));
const rowOf = new Int32Array(1 << settings.buckets_log2).fill(-1); let rows = 0;
for (const f of ftr) { for (const b of f.wordBuckets) for (const x of b) if (rowOf[x] < 0) rowOf[x] = rows++; for (const x of f.bigramBuckets) if (rowOf[x] < 0) rowOf[x] = rows++; }
const Xtr = toSparse(ftr, rowOf), Xte = toSparse(fte, rowOf);
console.log("featurize ms", performance.now() - t0, "rows", rows, "nnz/text", Xtr.rows.length / tr.texts.length);
const map = qt.options.map((o) => q.options.indexOf(o));
const K = q.options.length;
for (const l2 of (Deno.args[2] ?? "1e-4").split(",").map(Number)) for (const lr of (Deno.args[3] ?? "0.2").split(",").map(Number)) {
  t0 = performance.now();
  const ex = Array.from(tr.texts, (_, i) => i);
  trainSoftmax(Xtr, q.labels, ex, K, rows, { epochs: Number(Deno.env.get("EP") ?? 12), l2, learningRate: lr, seed: 1 }, (ep, m) => {
    const out = new Float64Array(K); let right = 0;
    for (let i = 0; i < te.texts.length; i++) { logitsOf(m, K, Xte, i, out); let b = 0; for (let j = 1; j < K; j++) if (out[j] > out[b]) b = j; if (b === map[qt.labels[i]]) right++; }
    if (ep % 3 === 0) console.log(`l2=${l2} lr=${lr} ep=${ep} acc=${(right / te.texts.length).toFixed(4)} t=${((performance.now() - t0) / 1000).toFixed(1)}s`);
  });
}
