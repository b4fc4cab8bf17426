/**
 * Memory under two faults, read from `/proc/PID/status` (VmRSS) of a real
 * `main.ts serve` child with the flags `deno task serve` gives:
 *
 * - `long`: 300 texts of about 1 MB (low confidence, so each answer is
 *   remembered for feedback) among 3,000 normal ones; RSS before, after,
 *   and the growth against the target of 250 MB (aim 100 MB).
 * - `reloads`: 30 SIGHUP reloads with 300 decisions between; RSS after
 *   each, and the growth against the target of 60 MB.
 *
 * Usage: deno task bench:faults [--bundle DIR] [--case long|reloads|both]
 *        [--main PATH] [--serve-args "--audit-rate 0 ..."] [--data DIR]
 *
 * Without `--bundle`, trains one from `../shared/data/banking77/train.csv`
 * into a temporary folder; without that file, prints why and exits 0.
 *
 * `--main` runs another checkout's `main.ts` (the same command on the code
 * before a change gives the side-by-side figure). Only 127.0.0.1 is used.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { rssMb, type ServeProcess, startServe } from "./processes.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    bundle: { type: "string" },
    case: { type: "string", default: "both" },
    "serve-args": { type: "string", default: "" },
    data: {
      type: "string",
      default: new URL("../../shared/data/", import.meta.url).pathname,
    },
    main: {
      type: "string",
      default: new URL("../main.ts", import.meta.url).pathname,
    },
  },
});
const work = await Deno.makeTempDir({ prefix: "dtable-bench-faults-" });
let bundle = values.bundle ?? `${work}/banking77`;
if (values.bundle === undefined) {
  const csv = `${values.data.replace(/\/$/, "")}/banking77/train.csv`;
  try {
    await Deno.stat(csv);
  } catch {
    console.log(
      `skipped: no BANKING77 data at ${csv} (pass --data DIR or --bundle DIR)`,
    );
    Deno.exit(0);
  }
  const trained = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      values.main,
      "train",
      "--traces",
      csv,
      "--out",
      bundle,
      "--quiet",
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!trained.success) {
    throw new Error(
      `training failed: ${new TextDecoder().decode(trained.stderr)}`,
    );
  }
  bundle = await Deno.realPath(bundle);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The server under test: this checkout's, or `--main`'s. */
function startServer(): Promise<ServeProcess> {
  return startServe(
    bundle,
    values["serve-args"].split(" ").filter((a) => a !== ""),
    { main: values.main },
  );
}

const NORMAL = [
  "my card has not arrived yet",
  "how do I top up with a bank transfer",
  "I was charged twice for the same purchase",
  "can I change my PIN at an ATM",
  "the exchange rate on my payment looks wrong",
  "why was my transfer declined",
];

async function decide(base: string, text: string): Promise<string[]> {
  const res = await fetch(`${base}/v1/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ state: text }),
  });
  if (!res.ok) throw new Error(`status ${res.status}: ${await res.text()}`);
  const body = await res.json();
  return Object.values(body.answers).map((a) =>
    String((a as { flag: string | null }).flag)
  );
}

/** About `bytes` of text, the `i`-th of its kind: one low-confidence sentence repeated (no drift). */
function longText(i: number, bytes: number): string {
  const sentence = "my card has not arrived yet and I was charged twice ";
  return sentence.repeat(Math.ceil(bytes / sentence.length) + i);
}

async function longCase(): Promise<void> {
  const s = await startServer();
  try {
    for (let i = 0; i < 600; i++) await decide(s.base, NORMAL[i % 6]!);
    await sleep(500);
    const before = await rssMb(s.child.pid);
    const flags = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      for (const f of await decide(s.base, longText(i, 1_000_000))) {
        flags.set(f, (flags.get(f) ?? 0) + 1);
      }
      for (let j = 0; j < 10; j++) await decide(s.base, NORMAL[j % 6]!);
    }
    await sleep(1000);
    const after = await rssMb(s.child.pid);
    console.log(
      `long: 300 texts of ~1 MB among 3,000 normal ones (their flags: ${
        JSON.stringify(Object.fromEntries(flags))
      })`,
    );
    console.log(
      `long: RSS ${before.toFixed(0)} MB -> ${after.toFixed(0)} MB, grew ${
        (after - before).toFixed(0)
      } MB (target < 250, aim < 100)`,
    );
  } finally {
    await s.stop();
  }
}

async function reloadsCase(): Promise<void> {
  const s = await startServer();
  try {
    for (let i = 0; i < 300; i++) await decide(s.base, NORMAL[i % 6]!);
    await sleep(500);
    const before = await rssMb(s.child.pid);
    const seen: number[] = [];
    for (let r = 1; r <= 30; r++) {
      for (let i = 0; i < 300; i++) {
        // Half of them low confidence: remembered for feedback.
        await decide(
          s.base,
          i % 2 === 0 ? NORMAL[i % 6]! : longText(i + r, 200),
        );
      }
      const reloads = s.stderr().split("reloaded bundle").length;
      Deno.kill(s.child.pid, "SIGHUP");
      while (s.stderr().split("reloaded bundle").length === reloads) {
        await sleep(20);
      }
      seen.push(await rssMb(s.child.pid));
    }
    await sleep(1000);
    const after = await rssMb(s.child.pid);
    console.log(
      `reloads: RSS after each of 30 reloads (300 decisions between): ${
        seen.map((m) => m.toFixed(0)).join(" ")
      }`,
    );
    console.log(
      `reloads: RSS ${before.toFixed(0)} MB -> ${after.toFixed(0)} MB, grew ${
        (after - before).toFixed(0)
      } MB (target < 60)`,
    );
  } finally {
    await s.stop();
  }
}

try {
  if (values.case === "long" || values.case === "both") await longCase();
  if (values.case === "reloads" || values.case === "both") await reloadsCase();
} finally {
  await Deno.remove(work, { recursive: true });
}
