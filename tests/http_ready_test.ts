/**
 * `GET /v1/ready`: 200 once the bundle is loaded and, with a live store,
 * once the store has answered; 503 with the reason before that. It needs
 * the token like every route but `/v1/health`, which stays as the
 * interface fixes it.
 */

import assert from "node:assert/strict";
import { appFor, createApp } from "../src/http/app.ts";
import { Service } from "../src/http/service.ts";
import { fixedToken } from "../src/http/token.ts";
import { AuditKeyFile } from "../src/live/audit_key.ts";
import { bundleIdOf } from "../src/live/bundle_id.ts";
import { MemoryStore } from "../src/live/store.ts";
import { smallTable, tempDir } from "./_fixtures.ts";

Deno.test("GET /v1/ready answers 200 with the bundle id once the bundle is loaded", async () => {
  const table = smallTable().table;
  const app = createApp({ table, bundlePath: "b" });
  const res = await app.request("/v1/ready");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.deepEqual(await res.json(), {
    ready: true,
    bundle_id: bundleIdOf(table),
  });
  const head = await app.request("/v1/ready", { method: "POST" });
  assert.equal(head.status, 405);
});

Deno.test("GET /v1/ready needs the token; /v1/health still does not, and keeps its fields", async () => {
  const table = smallTable().table;
  const app = createApp({
    table,
    bundlePath: "b",
    token: fixedToken("s3cret-token", "test"),
  });
  assert.equal((await app.request("/v1/ready")).status, 401);
  const ok = await app.request("/v1/ready", {
    headers: { "x-service-token": "s3cret-token" },
  });
  assert.equal(ok.status, 200);
  const health = await app.request("/v1/health");
  assert.equal(health.status, 200);
  assert.deepEqual(Object.keys(await health.json()).sort(), [
    "bundle_id",
    "interface_version",
    "ok",
    "questions",
    "version",
  ]);
});

Deno.test("GET /v1/ready is 503 until the live store has answered, then 200, and stays 200 when the store is lost", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(
    `${dir.path}/audit.key`,
    "a shared secret of the fleet",
  );
  const keys = await AuditKeyFile.open(`${dir.path}/audit.key`, {
    rereadMs: 0,
  });
  const store = new MemoryStore();
  store.down = true;
  const table = smallTable().table;
  const service = new Service({
    table,
    bundlePath: "b",
    live: {
      auditRate: 0.5,
      auditKeys: keys,
      fleet: { store, replica: "r1", syncMs: 20, log: () => {} },
    },
  });
  const app = appFor(service);
  try {
    const before = await app.request("/v1/ready");
    assert.equal(before.status, 503);
    const doc = await before.json();
    assert.equal(doc.ready, false);
    assert.match(
      doc.reason,
      /^live store memory not reached yet \(connecting\): certification is withheld until it answers$/,
    );
    await service.live.fleet!.sync();
    const failed = await (await app.request("/v1/ready")).json();
    assert.match(failed.reason, /\(unreachable, \d+ failed tr(y|ies)\)/);
    store.down = false;
    await service.live.fleet!.sync();
    const after = await app.request("/v1/ready");
    assert.equal(after.status, 200);
    assert.deepEqual(await after.json(), {
      ready: true,
      bundle_id: bundleIdOf(table),
    });
    store.down = true;
    await service.live.fleet!.sync();
    assert.equal(service.live.fleet!.link, "unreachable");
    assert.equal((await app.request("/v1/ready")).status, 200);
  } finally {
    await service.live.fleet!.stop().catch(() => {});
    keys.close();
  }
});
