/**
 * Reading request bodies (size limit, deadline), the request gate (cap on
 * requests in flight, drain), and the reply writer the decision routes
 * share, in process, without a network.
 */

import assert from "node:assert/strict";
import { HTTPException } from "hono/http-exception";
import { createApp } from "../src/http/app.ts";
import { BodyDeadlines, readBodyText } from "../src/http/body.ts";
import { RequestGate } from "../src/http/gate.ts";
import { smallTable } from "./_fixtures.ts";

const encoder = new TextEncoder();

/** A request whose body (no declared length) sends `chunks`, then waits forever or ends. */
function streamed(
  chunks: Uint8Array[],
  end: boolean,
): { request: Request; pulled: () => number } {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled < chunks.length) {
        controller.enqueue(chunks[pulled++]!);
      } else if (end) controller.close();
      else return new Promise(() => {}); // never more
    },
  });
  return {
    request: new Request("http://x/v1/decide", { method: "POST", body }),
    pulled: () => pulled,
  };
}

Deno.test("readBodyText() answers 408 when a body stops arriving, and then watches nothing", async () => {
  const deadlines = new BodyDeadlines(40);
  const { request } = streamed([encoder.encode('{"sta')], false);
  // The deadlines' timer does not keep a process alive (a server's listener
  // does): this one does, meanwhile.
  const alive = setTimeout(() => {}, 10_000);
  const error = await readBodyText(request, 1000, deadlines).catch((e) => e);
  clearTimeout(alive);
  assert.ok(error instanceof HTTPException);
  assert.equal(error.status, 408);
  assert.equal(error.message, "The request body did not arrive within 40 ms");
  // No header of its own: Deno.serve adds `connection: close` to a reply
  // whose request body was left unread (tests/http_abuse_test.ts).
  assert.equal(error.res?.headers.get("connection") ?? null, null);
  assert.equal(deadlines.pending, 0);
});

Deno.test("readBodyText() refuses a body without a length with 413 as soon as it passes the limit, reading no further", async () => {
  const chunk = new Uint8Array(400);
  const { request, pulled } = streamed(Array(10).fill(chunk), true);
  const error = await readBodyText(request, 1000, new BodyDeadlines(10_000))
    .catch((e) => e);
  assert.ok(error instanceof HTTPException);
  assert.equal(error.status, 413);
  assert.ok(pulled() <= 4, `pulled ${pulled()} of 10 chunks`);
});

Deno.test("readBodyText() reads whole bodies with or without a declared length", async () => {
  const deadlines = new BodyDeadlines(10_000);
  const text = '{"state": "héllo"}';
  const declared = new Request("http://x/", {
    method: "POST",
    body: text,
    headers: { "content-length": String(encoder.encode(text).length) },
  });
  assert.equal(await readBodyText(declared, 1000, deadlines), text);
  const parts = [
    encoder.encode(text.slice(0, 5)),
    encoder.encode(text.slice(5)),
  ];
  assert.equal(
    await readBodyText(streamed(parts, true).request, 1000, deadlines),
    text,
  );
  assert.equal(deadlines.pending, 0);
  assert.throws(() => new BodyDeadlines(0), RangeError);
});

Deno.test("RequestGate admits up to its cap, refuses beyond it and while draining, and says when it is idle", async () => {
  const gate = new RequestGate(2);
  assert.equal(gate.enter(), "admitted");
  assert.equal(gate.enter(), "admitted");
  assert.equal(gate.enter(), "busy");
  let idle = false;
  const waiting = gate.idle().then(() => (idle = true));
  gate.drain();
  assert.equal(gate.enter(), "draining");
  gate.leave();
  await Promise.resolve();
  assert.equal(idle, false);
  gate.leave();
  await waiting;
  assert.equal(gate.inFlight, 0);
  assert.throws(() => gate.leave(), RangeError);
  assert.throws(() => new RequestGate(0), RangeError);
});

Deno.test("a decision reply after a huge one is the same as from a fresh service (the shared reply writer)", async () => {
  const { table } = smallTable();
  const post = async (a: ReturnType<typeof createApp>, body: unknown) => {
    const res = await a.request("/v1/decide", {
      method: "POST",
      body: JSON.stringify(body),
    });
    const json = await res.json();
    delete json.latency_us;
    return { status: res.status, json };
  };
  const small = { state: "my invoice was overcharged" };
  const used = createApp({ table, bundlePath: "b" });
  const huge = await post(used, {
    state: "x",
    questions: Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [`q${i}`, {}]),
    ),
  });
  assert.equal(huge.status, 200);
  assert.ok(JSON.stringify(huge.json).length > 100_000);
  const after = await post(used, small);
  const fresh = await post(createApp({ table, bundlePath: "b" }), small);
  assert.deepEqual(after, fresh);
});

Deno.test("every route with a body keeps the app's body deadline, /v1/feedback and /v1/playground included", async () => {
  const app = createApp({ table: smallTable().table, bundlePath: "x" }, {
    bodyTimeoutMs: 40,
  });
  const alive = setTimeout(() => {}, 10_000);
  try {
    for (const route of ["/v1/decide", "/v1/playground", "/v1/feedback"]) {
      const { request } = streamed([encoder.encode('{"sta')], false);
      const res = await app.request(new Request(`http://x${route}`, request));
      assert.equal(res.status, 408, route);
      // Deno.serve adds `connection: close` (tests/http_abuse_test.ts).
      assert.equal(res.headers.get("connection"), null, route);
      // The app's deadline, not a default one.
      assert.match(await res.text(), /within 40 ms/, route);
    }
  } finally {
    clearTimeout(alive);
  }
});
