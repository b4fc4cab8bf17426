/**
 * `prepareText` side by side with the engine of another commit: the same
 * table, the same texts (BANKING77's test set, or the demo traces when the
 * data is absent), rounds interleaved, each version with its own warm
 * `TableState`. Prints the best CPU time per text of each and their ratio
 * (CPU time, not wall time: a busy machine slows both alike only in CPU
 * time). The engine is pure, so the other commit's `src/engine/` (with the
 * pure files it imports, `src/guarantee/` and `src/format.ts` since issue 38:
 * the commit's whole `src/` is written out) runs on a table this tree loads,
 * as long as the table's shape is the same.
 *
 * Usage: deno run --allow-read --allow-write --allow-run --allow-env
 *   scripts/bench-prepare.ts [--ref COMMIT] [--rounds N]
 *
 * @module
 */

import process from "node:process";
import { parseArgs } from "node:util";
import { parse } from "csv-parse/sync";
import { loadBundle } from "../src/bundle/mod.ts";
import * as ours from "../src/engine/mod.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const DATA = new URL("../../shared/data/banking77/test.csv", import.meta.url)
  .pathname;
const { values } = parseArgs({
  args: Deno.args,
  options: {
    ref: { type: "string", default: "HEAD" },
    rounds: { type: "string", default: "40" },
  },
});
const rounds = Number(values.rounds);
if (!(Number.isInteger(rounds) && rounds > 0)) {
  throw new RangeError(`--rounds must be a positive integer: got ${rounds}`);
}

/** The texts to prepare: BANKING77's test set, else the demo's traces. */
async function texts(): Promise<string[]> {
  try {
    const rows = parse(await Deno.readTextFile(DATA), { columns: true });
    return (rows as { text: string }[]).map((r) => r.text);
  } catch {
    const lines = await Deno.readTextFile(`${ROOT}demo/traces.jsonl`);
    return lines.trim().split("\n").map((l) => JSON.parse(l).text as string);
  }
}

/** `src/engine/` of `ref` (its `src/` written to a temporary folder), imported. */
async function engineAt(ref: string): Promise<typeof ours> {
  const dir = await Deno.makeTempDir({ prefix: "dtable-engine-" });
  const archive = await new Deno.Command("git", {
    args: ["-C", ROOT, "archive", ref, "src"],
    stdout: "piped",
  }).output();
  if (!archive.success) throw new Error(`git archive ${ref} failed`);
  const tar = new Deno.Command("tar", {
    args: ["-x", "-C", dir],
    stdin: "piped",
  }).spawn();
  const writer = tar.stdin.getWriter();
  await writer.write(archive.stdout);
  await writer.close();
  if (!(await tar.status).success) throw new Error("tar failed");
  globalThis.addEventListener(
    "unload",
    () => Deno.removeSync(dir, { recursive: true }),
  );
  return await import(`file://${dir}/src/engine/mod.ts`);
}

const table = await loadBundle(`${ROOT}demo/bundle`);
const all = await texts();
const theirs = await engineAt(values.ref);
const versions = {
  [values.ref]: {
    prepare: theirs.prepareText,
    state: new theirs.TableState(table),
  },
  "this tree": { prepare: ours.prepareText, state: new ours.TableState(table) },
};
const names = Object.keys(versions);
const best = new Map(names.map((n) => [n, Infinity]));
let sink = 0;
for (let r = 0; r < rounds; r++) {
  for (const name of r % 2 === 0 ? names : [...names].reverse()) {
    const { prepare, state } = versions[name]!;
    const start = process.cpuUsage();
    for (const text of all) sink += prepare(table, state, text).words.length;
    const used = process.cpuUsage(start);
    best.set(
      name,
      Math.min(best.get(name)!, (used.user + used.system) / all.length),
    );
  }
}
const [a, b] = names.map((n) => best.get(n)!);
console.log(
  `prepareText, best CPU time per text of ${rounds} rounds over ${all.length} texts (warm word cache): ${
    names.map((n) => `${n} ${best.get(n)!.toFixed(2)} us`).join(", ")
  }; this tree / ${values.ref} ${(b! / a!).toFixed(3)}`,
);
