/**
 * Reply benchmark: nanoseconds to write a typical `/v1/decide` reply (the
 * bytes `writeDecideReply` writes for texts already answered) on a
 * bundle, best of 7 rounds, in CPU time of this process (the machine is
 * shared: wall time would count the other jobs' turns). With `--before DIR` (another checkout, such as
 * `git archive <commit> | tar -x -C DIR`), the same with that checkout's
 * writer in the same process, alternating, and the ratio now/before: what
 * a change to the reply writers costs on the request path. Also the reply
 * with `"top": 3`, and its bytes.
 *
 * Usage: deno run --allow-read scripts/bench-reply.ts --bundle DIR
 *        [--before DIR]
 *
 * @module
 */

import { cpuUsage } from "node:process";
import { parseArgs } from "node:util";
import { loadBundle } from "../src/bundle/mod.ts";
import {
  assess,
  type Assessment,
  prepareText,
  QUIET_GUARD,
  TableState,
} from "../src/engine/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { bundle: { type: "string" }, before: { type: "string" } },
});
if (values.bundle === undefined) {
  console.error("Usage: bench-reply.ts --bundle DIR [--before DIR]");
  Deno.exit(2);
}

const TEXTS = [
  "I still have not received my new card, I ordered over a week ago",
  "why was I charged a fee for my transfer",
  "how do I top up my account with a cheque",
  "my card payment was declined at the shop",
];

// deno-lint-ignore no-explicit-any
type Module = any;

/**
 * The first of `paths` that the checkout at `root` (a file URL ending in
 * `/`) has, imported: the wire format moved from `src/http/` to
 * `src/wire/` (issue 38), and a checkout from before has it at the old path.
 */
async function importFirst(
  root: string,
  paths: readonly string[],
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  for (const path of paths.slice(0, -1)) {
    try {
      return await import(`${root}${path}`);
    } catch {
      // not in this checkout: try the next path
    }
  }
  return await import(`${root}${paths[paths.length - 1]}`);
}

/** A checkout's writer pieces, from its root (a file URL ending in `/`). */
async function writerOf(root: string) {
  const decide: Module = await importFirst(root, [
    "src/wire/decide.ts",
    "src/http/decide.ts",
  ]);
  const served: Module = await importFirst(root, [
    "src/wire/service_table.ts",
    "src/http/served.ts",
  ]);
  const json: Module = await importFirst(root, [
    "src/wire/json_writer.ts",
    "src/http/json_writer.ts",
  ]);
  return {
    write: decide.writeDecideReply as (
      w: Module,
      served: Module,
      request: Module,
      answers: readonly Assessment[],
      latencyUs: number,
    ) => void,
    // `serveTable` before issue 38.
    serviceTable: (served.serviceTable ?? served.serveTable) as (
      table: Module,
    ) => Module,
    writer: () => new json.JsonWriter(),
  };
}

const table = await loadBundle(values.bundle);
const s = new TableState(table);
const answered: Assessment[][] = TEXTS.map((text) =>
  table.questions.map((q) =>
    assess(table, s, prepareText(table, s, text), q.name, {}, QUIET_GUARD)
  )
);

/** Best nanoseconds per reply written by `w`'s writer. */
function ns(
  pieces: Awaited<ReturnType<typeof writerOf>>,
  served: Module,
  top: number | null,
): { ns: number; bytes: number } {
  const n = 50_000;
  const w = pieces.writer();
  let best = Infinity;
  let bytes = 0;
  for (let round = 0; round < 7; round++) {
    const start = cpuUsage();
    for (let i = 0; i < n; i++) {
      w.reset();
      const request = {
        text: "",
        asks: null,
        exposed: false,
        model: null,
        top,
      };
      pieces.write(w, served, request, answered[i % answered.length]!, 12.5);
      if (i < answered.length) bytes += w.length;
    }
    const used = cpuUsage(start);
    best = Math.min(best, (used.user + used.system) * 1e3 / n);
  }
  return { ns: best, bytes: bytes / 7 / answered.length };
}

const now = await writerOf(new URL("../", import.meta.url).href);
const nowServed = now.serviceTable(table);
const before = values.before === undefined ? null : await writerOf(
  new URL(`${Deno.realPathSync(values.before)}/`, "file:///").href,
);
const beforeServed = before?.serviceTable(table);
const first = ns(now, nowServed, null);
if (before === null) {
  console.log(
    `/v1/decide reply: ${first.ns.toFixed(0)} ns, ${
      first.bytes.toFixed(0)
    } bytes`,
  );
} else {
  // Alternating, three times each, so that neither side gets the warmer
  // machine.
  let was = Infinity;
  let is = first.ns;
  for (let k = 0; k < 3; k++) {
    was = Math.min(was, ns(before, beforeServed, null).ns);
    is = Math.min(is, ns(now, nowServed, null).ns);
  }
  console.log(
    `/v1/decide reply (${first.bytes.toFixed(0)} bytes): before ${
      was.toFixed(0)
    } ns, now ${is.toFixed(0)} ns (ratio now/before ${(is / was).toFixed(3)})`,
  );
}
const top = ns(now, nowServed, 3);
console.log(
  `/v1/decide reply with "top": 3 (${top.bytes.toFixed(0)} bytes): ${
    top.ns.toFixed(0)
  } ns (${(top.ns / first.ns).toFixed(2)}x the full reply)`,
);
