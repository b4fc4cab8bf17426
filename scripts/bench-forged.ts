/**
 * What a flood of feedback that is no label costs a service with a feedback
 * log: `serve --bundle demo/bundle --feedback-log FILE` gets `--items`
 * feedback items (1,000,000 by default) in requests of 1,000, each with a
 * forged `feedback_id` (random base64url of an id's length) or, with
 * `--substituted`, a real decision's id under another text. Prints the
 * growth of the feedback log and of its side file, the items a second, the
 * server's resident memory, and what `/v1/stats` counted. With `--before
 * DIR` (another checkout, `git worktree add DIR <commit>`), the same flood
 * against it first, side by side.
 *
 * Usage: deno task bench:forged [--items 1000000] [--substituted] [--before DIR]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { rssMbOrNull, startServe } from "./processes.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    items: { type: "string", default: "1000000" },
    substituted: { type: "boolean", default: false },
    before: { type: "string" },
  },
});
const ITEMS = Number(values.items);
const BATCH = 1000;
const ROOT = new URL("..", import.meta.url).pathname;
const BUNDLE = `${ROOT}demo/bundle`;
const TEXT = "where is my parcel, it has not arrived";

async function size(path: string): Promise<number> {
  return await Deno.stat(path).then((s) => s.size, () => 0);
}

async function post(base: string, path: string, body: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) {
    throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  }
  return json;
}

/** A random id of a format 3 id's length. */
function forgedId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(78));
  return bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

interface Flood {
  logBytes: number;
  sideBytes: number;
  itemsPerS: number;
  rssMb: number | null;
  counted: string;
}

/** Floods a server of checkout `root` (its `main.ts`) with items that are no label. */
async function flood(root: string): Promise<Flood> {
  const dir = await Deno.makeTempDir({ prefix: "dtable-forged-" });
  const log = `${dir}/feedback.jsonl`;
  const server = await startServe(BUNDLE, ["--feedback-log", log], {
    main: `${root}/main.ts`,
    cwd: root,
    permissions: [
      "--allow-net=127.0.0.1",
      `--allow-read=${BUNDLE},${dir}`,
      `--allow-write=${dir}`,
      "--allow-env=SERVICE_PROXY_TOKEN",
    ],
  });
  try {
    // Real ids, for the substituted items: decisions the service made.
    const real: string[] = [];
    if (values.substituted) {
      for (let i = 0; i < 200; i++) {
        const r = await post(server.base, "/v1/decide", {
          state: `${TEXT} ${i} invoice password refund`,
          questions: { topic: {} },
        });
        const id = r.answers.topic.feedback_id ?? r.answers.topic.audit;
        if (id !== undefined) real.push(id);
      }
    }
    const logBefore = await size(log);
    const started = performance.now();
    for (let sent = 0; sent < ITEMS; sent += BATCH) {
      const items = Array.from(
        { length: Math.min(BATCH, ITEMS - sent) },
        (_, i) => ({
          question: "topic",
          state: `${TEXT} ${sent + i}`,
          answer: "delivery",
          feedback_id: values.substituted && real.length > 0
            ? real[(sent + i) % real.length]
            : forgedId(),
        }),
      );
      await post(server.base, "/v1/feedback", items);
    }
    const seconds = (performance.now() - started) / 1000;
    const stats = await (await fetch(`${server.base}/v1/stats`)).json();
    const rssMb = await rssMbOrNull(server.child.pid);
    return {
      logBytes: (await size(log)) - logBefore,
      sideBytes: await size(`${dir}/feedback.refused.jsonl`),
      itemsPerS: ITEMS / seconds,
      rssMb,
      counted: JSON.stringify(stats.counts.feedback_not_labels ?? {}),
    };
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const kind = values.substituted
  ? "substituted (a real id, another text)"
  : "forged";
console.log(
  `${
    ITEMS.toLocaleString("en")
  } ${kind} feedback items, ${BATCH} a request, demo bundle, --feedback-log`,
);
const sides: [string, string][] = [
  ...(values.before === undefined
    ? []
    : [["before", resolve(values.before)] as [string, string]]),
  ["now", ROOT.replace(/\/$/, "")],
];
for (const [name, root] of sides) {
  const f = await flood(root);
  console.log(
    `${name.padEnd(6)} feedback log +${mb(f.logBytes)}, side file ${
      mb(f.sideBytes)
    }, ${Math.round(f.itemsPerS).toLocaleString("en")} items/s, server RSS ${
      f.rssMb === null ? "?" : Math.round(f.rssMb)
    } MB; counted as no label: ${f.counted}`,
  );
}
