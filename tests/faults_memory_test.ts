/**
 * Memory bounded in bytes and released on reload: the recent uncertified
 * answers keep a long text by its hash and stay within their byte budget,
 * and no remembered answer or pending audit keeps a table alive once it is
 * no longer served (checked in a child process that can force garbage
 * collection). Before, a 1 MB text was kept whole under each remembered
 * answer, and every entry held its table, so each reload kept the old one.
 */

import assert from "node:assert/strict";
import type { LiveCertificate } from "../src/guarantee/live_certificate.ts";
import type { Table } from "../src/engine/table.ts";
import {
  RECENT_KEY_CHARS,
  RecentAnswers,
  recentKey,
} from "../src/live/recent_answers.ts";
import { tempDir } from "./_fixtures.ts";
import { writeTestBundle } from "./_http_helpers.ts";

const table = {} as Table;
const certificate = {} as LiveCertificate;
const answer = { table, certificate, answer: "billing", confidence: 0.5 };

Deno.test("recentKey() keeps a short text and hashes a long one", () => {
  const short = "x".repeat(RECENT_KEY_CHARS);
  assert.ok(recentKey("q", short).includes(short));
  const long = "y".repeat(1_000_000);
  const key = recentKey("q", long);
  assert.ok(key.length < 100, `key of ${key.length} chars`);
  assert.equal(key, recentKey("q", "y".repeat(1_000_000)));
  assert.notEqual(key, recentKey("q", "y".repeat(999_999) + "z"));
  assert.notEqual(key, recentKey("r", long));
});

Deno.test("RecentAnswers stays within its byte budget, oldest dropped first", () => {
  const recent = new RecentAnswers({
    capacity: 1_000_000,
    budgetBytes: 64_000,
  });
  const textAt = (i: number) => `${i} `.padEnd(RECENT_KEY_CHARS, "w");
  for (let i = 0; i < 1000; i++) recent.remember("q", textAt(i), answer);
  assert.ok(recent.bytes <= 64_000, `${recent.bytes} bytes`);
  assert.ok(recent.size < 1000 && recent.size > 50, `${recent.size} kept`);
  assert.equal(recent.take("q", textAt(0)), undefined, "oldest dropped");
  assert.equal(recent.take("q", textAt(999))?.answer, "billing");
  assert.equal(recent.take("q", textAt(999)), undefined, "taken once");
});

Deno.test("RecentAnswers remembers 1 MB texts in a few hundred bytes each", () => {
  const recent = new RecentAnswers();
  const texts = Array.from({ length: 20 }, (_, i) => `${i} `.repeat(500_000));
  for (const t of texts) recent.remember("q", t, answer);
  assert.ok(recent.bytes < 20 * 400, `${recent.bytes} bytes for 20 texts`);
  assert.equal(recent.take("q", texts[7]!)?.confidence, 0.5);
});

Deno.test("RecentAnswers counts entries against its capacity too", () => {
  const recent = new RecentAnswers({ capacity: 10 });
  for (let i = 0; i < 25; i++) recent.remember("q", `t${i}`, answer);
  assert.equal(recent.size, 10);
});

const CHILD = `
import { loadBundle } from "${
  new URL("../src/bundle/files.ts", import.meta.url).href
}";
import { Service } from "${
  new URL("../src/http/service.ts", import.meta.url).href
}";
import { appFor } from "${new URL("../src/http/app.ts", import.meta.url).href}";
import { setThresholdInForce } from "${
  new URL("../src/engine/state.ts", import.meta.url).href
}";
const bundle = Deno.args[0];
// The first table is referred to only inside this function.
async function serveAndSwap(service) {
  const first = await loadBundle(bundle);
  service.swap(first);
  const app = appFor(service);
  const decide = async (state) => {
    const res = await app.request("/v1/decide", { method: "POST", body: JSON.stringify({ state }) });
    return (await res.json()).answers.topic;
  };
  // A certified answer (picked for audit) and an uncertified one (remembered).
  const certified = await decide("my invoice was overcharged");
  setThresholdInForce(first, service.served.state, "topic", 1);
  const uncertified = await decide("invoice parcel password refund " + "refund ".repeat(1000));
  const weak = new WeakRef(first);
  service.swap(await loadBundle(bundle));
  return { weak, certified, uncertified };
}
const service = new Service({ table: await loadBundle(bundle), bundlePath: bundle, live: { auditRate: 1, auditSeed: 1 } });
const { weak, certified, uncertified } = await serveAndSwap(service);
await new Promise((r) => setTimeout(r, 0));
for (let i = 0; i < 5; i++) {
  globalThis.gc();
  await new Promise((r) => setTimeout(r, 10));
}
console.log(JSON.stringify({
  audited: typeof certified.audit === "string",
  uncertified: uncertified.certified === false,
  freed: weak.deref() === undefined,
}));
`;

Deno.test("no remembered answer or pending audit keeps a table alive after a swap", async () => {
  await using dir = await tempDir();
  const bundle = await writeTestBundle(`${dir.path}/bundle`);
  const script = `${dir.path}/child.js`;
  await Deno.writeTextFile(script, CHILD);
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--config",
      new URL("../deno.json", import.meta.url).pathname,
      "--v8-flags=--expose-gc",
      "-A",
      script,
      bundle,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, stderr);
  const result = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.deepEqual(result, { audited: true, uncertified: true, freed: true });
});
