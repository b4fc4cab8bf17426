/**
 * Parse benchmark: nanoseconds to parse (JSON.parse and the route's body
 * check) a typical body of each decision route, best of 7 rounds of
 * 300,000, in CPU time of this process (on a shared machine wall time
 * counts the other jobs' turns, and moved ratios by 30% between runs). With `--before DIR` (another checkout of the project, such as
 * `git archive <commit> | tar -x -C DIR`), the same for that checkout's
 * parsers in the same process, and the ratio after/before: how much a
 * change to the body checks costs on the request path.
 *
 * Usage: deno run --allow-read scripts/bench-parse.ts [--before DIR]
 *
 * @module
 */

import { cpuUsage } from "node:process";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: { before: { type: "string" } },
});

type Parse = (body: unknown) => unknown;

const BODIES: Record<string, string> = {
  "/v1/decide":
    '{"state":"I still have not received my new card, I ordered over a week ago","questions":{"category":{"criteria":["card_arrival","card_delivery_estimate","lost_or_stolen_card"]}},"exposed":false}',
  "/v1/decisions":
    '{"model":"m","input":"I still have not received my new card","questions":[{"type":"choice","name":"category","instructions":"pick","choices":[{"value":"card_arrival"},{"value":"lost_or_stolen_card"}]}]}',
  "/v1/altdecisions":
    '{"model":"m","state":"I still have not received my new card","questions":{"category":{"type":"choice","instructions":"pick","criteria":{"card_arrival":"a","lost_or_stolen_card":"b"}}}}',
};

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

/** The three parsers of the project rooted at `root` (a file URL ending in `/`). */
async function parsers(root: string): Promise<Record<string, Parse>> {
  const decide = await importFirst(root, [
    "src/wire/decide.ts",
    "src/http/decide.ts",
  ]);
  const decisions = await importFirst(root, [
    "src/wire/decisions.ts",
    "src/http/decisions.ts",
  ]);
  const alt = await importFirst(root, [
    "src/wire/altdecisions.ts",
    "src/http/altdecisions.ts",
  ]);
  return {
    "/v1/decide": decide.parseDecide,
    "/v1/decisions": decisions.parseDecisions,
    "/v1/altdecisions": alt.parseAltDecisions,
  };
}

/** Best CPU nanoseconds per JSON.parse and `parse` of `text`. */
function ns(parse: Parse, text: string): number {
  const n = 300_000;
  let best = Infinity;
  for (let round = 0; round < 7; round++) {
    const start = cpuUsage();
    for (let i = 0; i < n; i++) parse(JSON.parse(text));
    const used = cpuUsage(start);
    best = Math.min(best, (used.user + used.system) * 1e3 / n);
  }
  return best;
}

const now = await parsers(new URL("../", import.meta.url).href);
const before = values.before === undefined ? null : await parsers(
  new URL(`${Deno.realPathSync(values.before)}/`, "file:///").href,
);
for (const [route, text] of Object.entries(BODIES)) {
  const after = ns(now[route]!, text);
  if (before === null) {
    console.log(`${route}: ${after.toFixed(0)} ns per body`);
    continue;
  }
  // Alternating, twice each, so that neither side gets the warmer machine.
  const was = Math.min(ns(before[route]!, text), ns(before[route]!, text));
  const is = Math.min(after, ns(now[route]!, text));
  console.log(
    `${route}: before ${was.toFixed(0)} ns, now ${
      is.toFixed(0)
    } ns per body (ratio now/before ${(is / was).toFixed(3)})`,
  );
}
