/**
 * The OpenAPI document (`src/openapi/document.ts`, committed as
 * `docs/openapi.json`, served at `GET /v1/openapi.json`): a valid OpenAPI
 * 3.1 document that documents exactly the app's routes with the
 * interface's field names; every example validates against its schema;
 * and a real server on the demo bundle answers every example request, and
 * every documented error, with a body of the documented shape.
 */

import assert from "node:assert/strict";
import { ROUTE_TABLE } from "../src/http/routes.ts";
import { MAX_BODY_BYTES } from "../src/wire/fields.ts";
import { documentJson, openApiDocument } from "../src/openapi/document.ts";
import { ERROR_RESPONSES, type Operation } from "../src/openapi/operations.ts";
import { FLAGS } from "../src/wire/schema_parts.ts";

import { freePort, startServer } from "./_http_helpers.ts";
import { tempDir } from "./_fixtures.ts";
import { checkOpenApi31, SchemaValidator } from "./_openapi_validation.ts";
import { specOrSkip } from "./_tools.ts";

type Json = Record<string, unknown>;

const ROOT = new URL("../", import.meta.url);
const DEMO_BUNDLE = new URL("demo/bundle", ROOT).pathname;
const doc = openApiDocument(ROUTE_TABLE);
const OPENAPI_JSON = documentJson(ROUTE_TABLE);
const validator = new SchemaValidator(doc);

/** Every operation of the document, with its path and method. */
function operations(): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op }))
  );
}

/** The schema and media type of an operation's reply with `status`. */
function replySchema(
  op: Operation,
  status: string,
): { mediaType: string; schema: unknown } {
  let response = op.responses[status] as Json | undefined;
  assert.ok(response, `${op.operationId} documents no ${status} reply`);
  if (typeof response.$ref === "string") {
    const name = response.$ref.replace("#/components/responses/", "");
    response = doc.components.responses[name] as Json;
  }
  const [mediaType, media] = Object.entries(response.content as Json)[0]!;
  return { mediaType, schema: (media as Json).schema };
}

function assertValid(schema: unknown, value: unknown, what: string): void {
  const verdict = validator.check(schema, value);
  assert.equal(verdict, null, `${what}: ${verdict}\n${JSON.stringify(value)}`);
}

Deno.test("docs/openapi.json is the document src/openapi/document.ts builds (deno task openapi writes it)", async () => {
  const committed = await Deno.readTextFile(
    new URL("docs/openapi.json", ROOT),
  );
  assert.ok(
    committed === OPENAPI_JSON,
    "docs/openapi.json is out of date: run deno task openapi",
  );
});

Deno.test("the document is valid OpenAPI 3.1 and every schema in it compiles in strict mode", async () => {
  assert.equal(await checkOpenApi31(doc), null);
  for (const name of Object.keys(doc.components.schemas)) {
    validator.compile({ $ref: `#/components/schemas/${name}` });
  }
  for (const { op } of operations()) {
    for (const status of Object.keys(op.responses)) {
      validator.compile(replySchema(op, status).schema);
    }
  }
});

Deno.test("the document describes exactly the routes and methods the app serves", () => {
  const documented = Object.fromEntries(
    Object.entries(doc.paths).map((
      [path, item],
    ) => [path, Object.keys(item).map((m) => m.toUpperCase()).sort()]),
  );
  const served: Record<string, string[]> = {};
  for (const route of ROUTE_TABLE) {
    (served[route.path] ??= []).push(route.method);
  }
  assert.deepEqual(documented, served);
  const ids = operations().map(({ op }) => op.operationId);
  assert.equal(new Set(ids).size, ids.length, "operationIds are unique");
});

Deno.test("every route but health needs the token; health needs none", () => {
  assert.deepEqual(
    ROUTE_TABLE.filter((r) => !r.guarded).map((r) => r.path),
    ["/v1/health"],
  );
  for (const { path, op } of operations()) {
    if (path === "/v1/health") {
      assert.deepEqual(op.security, []);
      assert.equal(op.responses["401"], undefined);
    } else {
      assert.equal(op.security, undefined, `${path} uses the global security`);
      assert.ok(op.responses["401"], `${path} documents its 401`);
    }
  }
  assert.deepEqual(
    Object.values(doc.components.securitySchemes).map((s) =>
      JSON.stringify(s).match(/X-Service-Token|bearer|basic/)?.[0]
    ),
    ["X-Service-Token", "bearer", "basic"],
  );
});

Deno.test("every example request and reply in the document matches its schema", () => {
  let examples = 0;
  for (const { path, op } of operations()) {
    for (const [name, media] of Object.entries(op.requestBody?.content ?? {})) {
      assert.equal(name, "application/json");
      for (const [key, example] of Object.entries(media.examples)) {
        assertValid(media.schema, example.value, `${path} example ${key}`);
        examples++;
      }
      assert.ok(Object.keys(media.examples).length > 0, `${path} has examples`);
    }
    const ok = (op.responses["200"] as Json).content as Json;
    for (const media of Object.values(ok) as Json[]) {
      if (media.example !== undefined) {
        assertValid(media.schema, media.example, `${path} reply example`);
      }
    }
  }
  assert.ok(examples >= 8);
});

/**
 * The backquoted names in the first column of the spec's tables under
 * `heading` (up to the next heading), from the line `after` on and up to
 * the line `until`, when given.
 */
function specFields(
  spec: string,
  heading: string,
  after?: string,
  until?: string,
): string[] {
  const start = spec.indexOf(heading);
  assert.ok(start >= 0, `the spec has "${heading}"`);
  let section = spec.slice(start + heading.length);
  const next = section.search(/^#{2,3} /m);
  if (next >= 0) section = section.slice(0, next);
  if (after !== undefined) section = section.slice(section.indexOf(after));
  if (until !== undefined) section = section.slice(0, section.indexOf(until));
  return [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!);
}

const spec = await specOrSkip("openapi_test");

Deno.test({
  name: "the schemas carry the interface's field and flag names",
  ignore: spec === null,
}, () => {
  const props = (name: string) =>
    Object.keys(
      (doc.components.schemas[name] as { properties: Json }).properties,
    );
  const cases: [string, string | undefined, string | undefined, string][] = [
    ["### Answer (own format", undefined, undefined, "Answer"],
    ["### Decisions-shape answer", undefined, undefined, "DecisionsAnswer"],
    ["### Alternate-shape answer", undefined, undefined, "AltAnswer"],
    ["### Health document", undefined, undefined, "HealthDocument"],
    ["### POST /v1/decide", undefined, "Response:", "DecideRequest"],
    ["### POST /v1/decide", "Response:", "Rules:", "DecideResponse"],
    ["### POST /v1/decisions", undefined, "Response:", "DecisionsRequest"],
    ["### POST /v1/decisions", "Response:", undefined, "DecisionsResponse"],
    [
      "### POST /v1/altdecisions",
      undefined,
      "Response:",
      "AltDecisionsRequest",
    ],
    [
      "### POST /v1/altdecisions",
      "Response:",
      undefined,
      "AltDecisionsResponse",
    ],
    ["### POST /v1/playground", undefined, undefined, "PlaygroundRequest"],
  ];
  for (const [heading, after, until, schema] of cases) {
    const fields = specFields(spec!, heading, after, until);
    assert.ok(fields.length > 0, `${heading} ${after ?? ""} lists fields`);
    for (const field of fields) {
      assert.ok(
        props(schema).includes(field),
        `${schema} lacks the spec's field ${field}`,
      );
    }
  }
  assert.deepEqual(
    [...specFields(spec!, "### Flag values")].sort(),
    [...FLAGS].sort(),
  );
});

/** The reply of `GET /v1/ready` from a server whose live store does not answer. */
async function notReady(): Promise<{ res: Response; text: string }> {
  await using dir = await tempDir();
  await Deno.writeTextFile(
    `${dir.path}/audit.key`,
    "a shared secret of the fleet",
  );
  const s = await startServer({
    bundle: DEMO_BUNDLE,
    args: [
      "--audit-key-file",
      `${dir.path}/audit.key`,
      "--live-store",
      `redis://127.0.0.1:${freePort()}`,
    ],
    read: [dir.path],
  });
  try {
    const res = await fetch(`${s.base}/v1/ready`);
    return { res, text: await res.text() };
  } finally {
    await s.stop();
  }
}

Deno.test("a real server answers every documented request and error with the documented body", async (t) => {
  const token = `tok-${crypto.randomUUID()}`;
  const server = await startServer({
    bundle: DEMO_BUNDLE,
    env: { SERVICE_PROXY_TOKEN: token },
  });
  const auth = { "x-service-token": token };
  const exercised = new Set<string>();
  const send = async (
    method: string,
    path: string,
    body: string | null,
    headers: Record<string, string>,
  ) => {
    const res = await fetch(`${server.base}${path}`, {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(body === null ? {} : { body }),
    });
    return { res, text: await res.text() };
  };
  /** Checks a reply against what `op` documents for `status`. */
  const expect = (
    op: Operation,
    status: string,
    reply: { res: Response; text: string },
    what: string,
  ) => {
    assert.equal(reply.res.status, Number(status), `${what}: ${reply.text}`);
    const { mediaType, schema } = replySchema(op, status);
    const type = reply.res.headers.get("content-type") ?? "";
    assert.equal(type.split(";")[0]!.trim(), mediaType, what);
    const value = mediaType === "application/json"
      ? JSON.parse(reply.text)
      : reply.text;
    assertValid(schema, value, what);
    const ref = (op.responses[status] as Json).$ref;
    if (typeof ref === "string") {
      exercised.add(ref.replace("#/components/responses/", ""));
    }
  };
  try {
    for (const { path, method, op } of operations()) {
      await t.step(`${method.toUpperCase()} ${path}`, async () => {
        const examples = Object.entries(
          op.requestBody?.content["application/json"]?.examples ?? {},
        );
        const requests: [string, string | null][] = examples.length === 0
          ? [["no body", null]]
          : examples.map(([k, e]) => [k, JSON.stringify(e.value)]);
        for (const [name, body] of requests) {
          const reply = await send(method.toUpperCase(), path, body, auth);
          expect(op, "200", reply, `${path} ${name}`);
          if (path === "/v1/openapi.json") {
            assert.equal(reply.text, OPENAPI_JSON);
          }
        }
        const [, firstBody] = requests[0]!;
        for (const status of Object.keys(op.responses)) {
          if (status === "200") continue;
          if (status === "503" && path === "/v1/ready") {
            expect(op, status, await notReady(), "a live store not reached");
            continue;
          }
          const m = method.toUpperCase();
          switch (Number(status) as keyof typeof ERROR_RESPONSES) {
            case 401: {
              const reply = await send(m, path, firstBody, {});
              expect(op, status, reply, `${path} without the token`);
              const challenge = reply.res.headers.get("www-authenticate");
              assert.match(
                challenge ?? "",
                ["/", "/v1/stats", "/metrics"].includes(path)
                  ? /^Basic realm=/
                  : /^Bearer realm=/,
              );
              break;
            }
            case 400:
              // null: no route takes it (an empty batch, [], is a batch).
              expect(op, status, await send(m, path, "null", auth), "a 400");
              break;
            case 413:
              expect(
                op,
                status,
                await send(m, path, "x".repeat(MAX_BODY_BYTES + 1), auth),
                "a 413",
              );
              break;
            case 404:
              assert.equal(path, "/v1/playground", "404 is provoked here only");
              expect(
                op,
                status,
                await send(
                  m,
                  path,
                  JSON.stringify({ question: "no-such-question", text: "x" }),
                  auth,
                ),
                "an unknown question",
              );
              break;
            default:
              assert.fail(`no way to provoke ${status} on ${path}`);
          }
        }
        if (op.security !== undefined) {
          // An open route answers without the token.
          const reply = await send(method.toUpperCase(), path, firstBody, {});
          expect(op, "200", reply, `${path} without the token`);
        }
      });
    }

    await t.step("an unknown route gets the documented 404", async () => {
      const reply = await send("GET", "/v1/no-such-route", null, auth);
      assert.equal(reply.res.status, 404);
      assertValid(
        { $ref: "#/components/schemas/Error" },
        JSON.parse(reply.text),
        "404",
      );
      exercised.add(ERROR_RESPONSES[404]);
    });

    await t.step(
      "every route asked with another method gets the documented 405",
      async () => {
        for (const [path, item] of Object.entries(doc.paths)) {
          const reply = await send("DELETE", path, null, auth);
          assert.equal(reply.res.status, 405, path);
          assertValid(
            { $ref: "#/components/schemas/Error" },
            JSON.parse(reply.text),
            `405 on ${path}`,
          );
          const methods = Object.keys(item).map((m) => m.toUpperCase());
          if (methods.includes("GET")) methods.push("HEAD");
          assert.equal(reply.res.headers.get("allow"), methods.join(", "));
        }
        exercised.add(ERROR_RESPONSES[405]);
      },
    );

    assert.deepEqual(
      [...exercised].sort(),
      Object.keys(doc.components.responses).sort(),
      "every documented error reply was seen",
    );
  } finally {
    await server.stop();
  }
});
