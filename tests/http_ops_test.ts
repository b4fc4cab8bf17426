/**
 * What an operator reads: the build and the bundle served in `/metrics`,
 * reloads marked (time, bundle ids) in `/v1/stats` and counted, the
 * bundle's own counters restarting with a reload while the process totals
 * run on, process memory and descriptors, all passing `promtool check
 * metrics`; and the Grafana dashboard beside the recipes names only
 * metrics the service exports.
 */

import assert from "node:assert/strict";
import { appFor } from "../src/http/app.ts";
import { Service } from "../src/http/service.ts";
import type { Table } from "../src/engine/mod.ts";
import { bundleIdOf } from "../src/live/mod.ts";
import { DescriptorProbe, softLimit } from "../src/metrics/descriptors.ts";
import { OPS_METRICS } from "../src/metrics/ops_metrics.ts";
import { ReloadLog, RELOADS_KEPT } from "../src/metrics/reloads.ts";
import { TOOL_VERSION } from "../src/version.ts";
import { smallTable } from "./_fixtures.ts";
import { missingTool, promtoolCheck } from "./_tools.ts";

type Json = Record<string, unknown>;

const fresh = (): Table => ({ ...smallTable().table });

function running() {
  const service = new Service({
    table: fresh(),
    bundlePath: "t/bundle",
    live: { auditRate: 1, auditSeed: 1 },
  });
  const app = appFor(service);
  const decide = async (state: string) => {
    const res = await app.request("/v1/decide", {
      method: "POST",
      body: JSON.stringify({ state }),
    });
    assert.equal(res.status, 200);
    return (await res.json()) as Json;
  };
  const stats = async () =>
    (await (await app.request("/v1/stats")).json()) as Json;
  const metrics = async () => await (await app.request("/metrics")).text();
  return { service, app, decide, stats, metrics };
}

Deno.test("/metrics names the build, the bundle served and when it loaded", async () => {
  const { service, metrics } = running();
  const text = await metrics();
  const id = bundleIdOf(service.served.table);
  assert.match(
    text,
    new RegExp(
      `^dtable_build_info\\{version="${
        TOOL_VERSION.replaceAll(".", "\\.")
      }",interface_version="[^"]+",deno="[^"]+"\\} 1$`,
      "m",
    ),
  );
  assert.match(
    text,
    new RegExp(
      `^dtable_bundle_info\\{bundle_id="${id}",path="t/bundle"\\} 1$`,
      "m",
    ),
  );
  assert.match(text, /^dtable_bundle_loaded_time_seconds \d+(\.\d+)?$/m);
  assert.match(text, /^dtable_reloads_total 0$/m);
  assert.match(text, /^process_resident_memory_bytes \d+$/m);
  assert.match(text, /^process_start_time_seconds \d/m);
});

Deno.test("a reload is marked in /v1/stats and /metrics, and the bundle's counters restart", async (t) => {
  const { service, decide, stats, metrics } = running();
  const before = bundleIdOf(service.served.table);
  await decide("my invoice was overcharged");
  await decide("where is my parcel");
  const first = await stats();
  // Three questions per decision.
  assert.equal((first.bundle_counts as Json).answers, 6);
  assert.deepEqual(first.reloads, { count: 0, recent: [] });

  service.swap(fresh());
  const after = bundleIdOf(service.served.table);
  assert.notEqual(after, before);
  await decide("my invoice was overcharged");

  await t.step(
    "/v1/stats says when and from which bundle to which",
    async () => {
      const st = await stats();
      const reloads = st.reloads as { count: number; recent: Json[] };
      assert.equal(reloads.count, 1);
      assert.equal(reloads.recent[0]!.bundle_id, after);
      assert.equal(reloads.recent[0]!.previous_bundle_id, before);
      assert.equal(
        reloads.recent[0]!.at,
        (st.bundle as Json).loaded_at,
        "the bundle began serving at the reload",
      );
      // Process totals run on; the bundle's own counts start afresh.
      assert.equal((st.counts as Json).answers, 9);
      assert.equal((st.bundle_counts as Json).answers, 3);
      const perQuestion = st.per_question as Record<string, Json>;
      assert.equal(perQuestion.topic!.answers, 1);
    },
  );

  await t.step(
    "/metrics counts the reload and labels the bundle's counters with its id",
    async () => {
      const text = await metrics();
      assert.match(text, /^dtable_reloads_total 1$/m);
      assert.match(
        text,
        new RegExp(
          `^dtable_bundle_answers_total\\{bundle_id="${after}"\\} 3$`,
          "m",
        ),
      );
      assert.doesNotMatch(text, new RegExp(before));
      assert.match(text, /^dtable_answers_total 9$/m);
    },
  );
});

Deno.test("ReloadLog keeps the last reloads and counts them all", () => {
  const log = new ReloadLog("a", 0);
  for (let i = 1; i <= RELOADS_KEPT + 5; i++) log.reload(`b${i}`, i * 1000);
  assert.equal(log.count, RELOADS_KEPT + 5);
  assert.equal(log.recent.length, RELOADS_KEPT);
  assert.equal(log.recent.at(-1)!.bundleId, `b${RELOADS_KEPT + 5}`);
  assert.equal(log.loadedAt, (RELOADS_KEPT + 5) * 1000);
});

Deno.test("softLimit() reads the soft limit on open files", () => {
  const limits =
    "Limit                     Soft Limit           Hard Limit           Units\n" +
    "Max cpu time              unlimited            unlimited            seconds\n" +
    "Max open files            1024                 524288               files\n";
  assert.equal(softLimit(limits), 1024);
  assert.equal(softLimit("Max open files  unlimited  unlimited  files"), null);
});

/** Why this process cannot read its descriptors (Deno asks -A for /proc/self), or null. */
function descriptorsUnreadable(): string | null {
  try {
    Deno.readDirSync("/proc/self/fd");
    return null;
  } catch (e) {
    return `cannot read /proc/self/fd here (${
      (e as Error).name
    }; Deno allows it under -A only)`;
  }
}

const unreadable = descriptorsUnreadable();
if (unreadable !== null) console.log(`http_ops_test: skipped: ${unreadable}`);

Deno.test({
  name:
    "descriptors are counted where the process may read /proc/self (Linux, all permissions)",
  ignore: unreadable !== null,
}, async () => {
  const { stats, metrics } = running();
  const d = (await stats()).descriptors as Json;
  assert.ok(typeof d.open === "number" && d.open > 0, JSON.stringify(d));
  assert.match(await metrics(), /^process_open_fds \d+$/m);
  assert.match(await metrics(), /^process_max_fds \d+$/m);
});

/** The metric families of an exposition: names from `# TYPE`, histograms' series too. */
function families(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    out.add(m[1]!);
    if (m[2] === "histogram") {
      for (const s of ["_bucket", "_sum", "_count"]) out.add(m[1]! + s);
    }
  }
  return out;
}

/** Every string under `key` anywhere in `value`. */
function stringsUnder(
  value: unknown,
  key: string,
  out: string[] = [],
): string[] {
  if (Array.isArray(value)) value.forEach((v) => stringsUnder(v, key, out));
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === key && typeof v === "string") out.push(v);
      else stringsUnder(v, key, out);
    }
  }
  return out;
}

Deno.test("the Grafana dashboard parses and names only metrics the service exports", async () => {
  const dashboard = JSON.parse(
    await Deno.readTextFile(
      new URL("../deploy/grafana-dashboard.json", import.meta.url),
    ),
  );
  const { service, app, decide, metrics } = running();
  const answers = (await decide("my invoice was overcharged"))
    .answers as Record<string, Json>;
  await app.request("/v1/feedback", {
    method: "POST",
    body: JSON.stringify({
      question: "topic",
      state: "my invoice was overcharged",
      answer: "billing",
      audit: answers.topic!.audit,
    }),
  });
  service.swap(fresh());
  const exported = families(await metrics());
  const queries = [
    ...stringsUnder(dashboard, "expr"),
    ...stringsUnder(dashboard.templating, "query"),
  ];
  assert.ok(dashboard.panels.length > 5);
  for (const panel of dashboard.panels) {
    assert.ok(panel.targets?.length > 0, `panel "${panel.title}" has a query`);
  }
  const named = new Set<string>();
  for (const q of queries) {
    for (const m of q.matchAll(/\b(?:dtable|process)_[a-z_]+\b/g)) {
      named.add(m[0]);
    }
  }
  assert.ok(named.has("dtable_reloads_total"));
  assert.ok(
    named.has("dtable_bundle_loaded_time_seconds"),
    "reloads are marked",
  );
  // Descriptors are exported only where the process may read them.
  const conditional = new Set(["process_open_fds", "process_max_fds"]);
  for (const name of named) {
    assert.ok(
      exported.has(name) ||
        (conditional.has(name) &&
          (OPS_METRICS as readonly string[]).includes(name)),
      `the dashboard names ${name}, which /metrics lacks`,
    );
  }
});

const noPromtool = missingTool(
  "http_ops_test",
  "promtool",
  "apt-get install prometheus",
);

Deno.test({
  name: "/metrics after a reload passes promtool check metrics",
  ignore: noPromtool !== null,
}, async () => {
  const { service, decide, metrics } = running();
  await decide("my invoice was overcharged");
  service.swap(fresh());
  await decide("where is my parcel");
  const { code, report } = await promtoolCheck(await metrics());
  assert.equal(code, 0, report);
  assert.equal(report.trim(), "", report);
});

Deno.test(
  "where the process may not read /proc/self, descriptors are unknown and /metrics leaves them out",
  {
    ignore: unreadable === null,
  },
  async () => {
    assert.deepEqual(new DescriptorProbe().read(), { open: null, max: null });
    const { stats, metrics } = running();
    assert.deepEqual((await stats()).descriptors, { open: null, max: null });
    assert.doesNotMatch(await metrics(), /process_open_fds/);
  },
);
