/**
 * `startServer` (`src/http/server.ts`) in process: it serves a Hono app on
 * `Deno.serve`, and `shutdown()` drains the app's request gate within its
 * deadline.
 */

import assert from "node:assert/strict";
import { Hono } from "hono";
import { RequestGate } from "../src/http/gate.ts";
import { startServer } from "../src/http/server.ts";

/** An app whose `GET /slow` waits for `release()`, through `gate`. */
function slowApp(gate: RequestGate) {
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  let entered: () => void = () => {};
  const inside = new Promise<void>((r) => (entered = r));
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (gate.enter() !== "admitted") return c.text("busy", 503);
    try {
      await next();
    } finally {
      gate.leave();
    }
  });
  app.get("/slow", async (c) => {
    entered();
    await released;
    return c.text("done");
  });
  return { app, release, inside };
}

Deno.test("startServer() answers through the app and shutdown() waits for the request in flight", async () => {
  const gate = new RequestGate(4);
  const { app, release, inside } = slowApp(gate);
  const server = startServer(
    { hostname: "127.0.0.1", port: 0, gate, onListen: () => {} },
    app,
  );
  const url = `http://127.0.0.1:${server.addr.port}/slow`;
  const reply = fetch(url).then((r) => r.text());
  await inside;
  const stopped = server.shutdown();
  assert.equal(gate.draining, true);
  release();
  assert.equal(await reply, "done");
  assert.equal(await stopped, true);
  await server.finished;
});

Deno.test("shutdown() gives up after drainMs and says so", async () => {
  const gate = new RequestGate(4);
  const { app, release, inside } = slowApp(gate);
  const server = startServer(
    { hostname: "127.0.0.1", port: 0, gate, drainMs: 50, onListen: () => {} },
    app,
  );
  const reply = fetch(`http://127.0.0.1:${server.addr.port}/slow`);
  await inside;
  assert.equal(await server.shutdown(), false);
  await server.finished;
  // Let the request end so that nothing is left open.
  release();
  await (await reply).text();
  assert.throws(
    () => startServer({ hostname: "127.0.0.1", port: 0, drainMs: 0 }, app),
    /drainMs must be a positive integer: got 0/,
  );
});
