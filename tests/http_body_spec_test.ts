/**
 * One description per request body: the sentence of what a route needs,
 * the known fields and their did-you-mean, and the JSON Schema all come
 * from the description kept with the route, and say what the parsers do.
 */

import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020";
import { Type } from "@sinclair/typebox";
import {
  ALT_BODY,
  ALT_OBJECT,
  ALT_QUESTION,
  parseAltDecisions,
} from "../src/wire/altdecisions.ts";
import { BATCH_BODY, BATCH_OBJECT } from "../src/wire/batch.ts";
import { BodyShape } from "../src/wire/fields.ts";
import { ObjectSpec } from "../src/wire/body_spec.ts";
import {
  DECIDE_BODY,
  DECIDE_OBJECT,
  DECIDE_QUESTION,
  parseDecide,
} from "../src/wire/decide.ts";
import {
  DECISIONS_BODY,
  DECISIONS_OBJECT,
  DECISIONS_QUESTION,
  parseDecisions,
} from "../src/wire/decisions.ts";
import { FEEDBACK_BODY, FEEDBACK_ITEM } from "../src/wire/feedback_body.ts";
import {
  LIVE_RESET_BODY,
  LIVE_RESET_OBJECT,
} from "../src/wire/live_reset_body.ts";
import {
  PLAYGROUND_BODY,
  PLAYGROUND_OBJECT,
} from "../src/wire/playground_body.ts";
import { documentJson } from "../src/openapi/document.ts";
import { ROUTE_TABLE } from "../src/http/routes.ts";

Deno.test("an object's description gives its known fields, other words, sentence and schema", () => {
  const spec = new ObjectSpec({
    a: { schema: Type.String(), words: "string", aka: ["alpha"] },
    b: { schema: Type.Optional(Type.Boolean()), words: "boolean" },
    c: {
      schema: Type.Optional(Type.String()),
      words: "string (or not)",
      plain: true,
    },
    d: { schema: Type.Optional(Type.Integer()), words: null },
  }, true);
  assert.deepEqual(spec.known, ["a", "b", "c", "d"]);
  assert.deepEqual(spec.synonyms, { alpha: "a" });
  assert.equal(
    spec.words,
    '{"a": string, "b"?: boolean, "c": string (or not)}',
  );
  assert.deepEqual(spec.schema.required, ["a"]);
  assert.deepEqual(Object.keys(spec.schema.properties), ["a", "b", "c", "d"]);
  const shape = new BodyShape("a thing");
  assert.equal(spec.unknownKey({ a: "x", d: 1 }), null);
  assert.equal(spec.unknownKey({ a: "x", alpha: 1 }), "alpha");
  assert.throws(
    () => spec.check(shape, { alpha: "x" }, "in"),
    /Unknown field "in\.alpha"; did you mean "a"\? The fields of "in" are: a, b, c, d/,
  );
});

Deno.test("the compiled field check knows only its own names, whatever the key", () => {
  const spec = new ObjectSpec(
    { x: { schema: Type.String(), words: "string" } },
    true,
  );
  for (
    const key of [
      "__proto__",
      "constructor",
      "toString",
      "",
      "x ",
      "X",
      '"',
      "\\",
      "case",
    ]
  ) {
    const o = JSON.parse(`{${JSON.stringify(key)}: 1}`);
    assert.equal(spec.unknownKey(o), key, JSON.stringify(key));
  }
  assert.equal(spec.unknownKey({}), null);
  const none = new ObjectSpec({}, true);
  assert.equal(none.unknownKey({ y: 1 }), "y");
  const open = new ObjectSpec({}, false);
  assert.equal(open.unknownKey({ y: 1 }), null);
  open.check(new BodyShape("x"), { y: 1 });
});

Deno.test("each route's sentence of what it needs is built from its description", () => {
  assert.equal(
    DECIDE_BODY.needed,
    'a JSON object {"state": string or object, "questions"?: {"<question>": {"criteria"?: ["<option>", ...]}}, "exposed"?: boolean, "top"?: integer >= 1}',
  );
  assert.equal(
    DECISIONS_BODY.needed,
    'a JSON object {"model"?: string, "input": string, "questions": [{"type": "choice" | "predicate" | "noul", "name": string, "instructions"?: string, "choices"?: [{"value": string}, ...]}, ...]}',
  );
  assert.equal(
    ALT_BODY.needed,
    'a JSON object {"model"?: string, "state": string, "questions": {"<name>": {"type": "choice" | "predicate" | "noul", "instructions"?: string, "criteria"?: {"<option>": "<description>", ...}}, ...}}',
  );
  assert.equal(
    PLAYGROUND_BODY.needed,
    'a JSON object {"question": string (may be left out when the bundle has one question), "text": string}',
  );
  assert.equal(
    FEEDBACK_BODY.needed,
    'a JSON object {"question": string, "state": string or object, "answer": "<option>" or true or false, "audit"?: string, "feedback_id"?: string}, or an array of at most 1000 of them',
  );
  assert.equal(
    LIVE_RESET_BODY.needed,
    'a JSON object {"question"?: string} (no question: every question)',
  );
  assert.equal(
    BATCH_BODY.needed,
    'a JSON object {"items": [<a /v1/decide body>, ...]} (or the array alone), at most 256 items',
  );
});

Deno.test("every other word a description gives is the did-you-mean of the route's 400", () => {
  const cases: [ObjectSpec, (key: string) => unknown][] = [
    [DECIDE_OBJECT, (k) => parseDecide({ state: "x", [k]: 1 })],
    [
      DECIDE_QUESTION,
      (k) => parseDecide({ state: "x", questions: { q: { [k]: [] } } }),
    ],
    [
      DECISIONS_QUESTION,
      (k) =>
        parseDecisions({
          input: "x",
          questions: [{ type: "choice", name: "q", [k]: [] }],
        }),
    ],
    [
      ALT_QUESTION,
      (k) =>
        parseAltDecisions({
          state: "x",
          questions: { q: { type: "choice", [k]: [] } },
        }),
    ],
  ];
  for (const [spec, parse] of cases) {
    for (const [other, field] of Object.entries(spec.synonyms)) {
      assert.throws(
        () => parse(other),
        new RegExp(`did you mean "${field}"\\?.*are: ${spec.known.join(", ")}`),
        other,
      );
    }
  }
  // The objects the parsers need a table for are described the same way.
  assert.deepEqual(PLAYGROUND_OBJECT.synonyms, {
    name: "question",
    state: "text",
    input: "text",
  });
  assert.equal(FEEDBACK_ITEM.synonyms.audit_id, "audit");
  assert.equal(BATCH_OBJECT.synonyms.requests, "items");
  assert.deepEqual(LIVE_RESET_OBJECT.synonyms, { name: "question" });
});

Deno.test("the document's request schemas are the descriptions' and accept their examples", () => {
  const doc = JSON.parse(documentJson(ROUTE_TABLE));
  const bodies = {
    DecideRequest: DECIDE_BODY,
    DecideBatchRequest: BATCH_BODY,
    DecisionsRequest: DECISIONS_BODY,
    AltDecisionsRequest: ALT_BODY,
    PlaygroundRequest: PLAYGROUND_BODY,
    FeedbackRequest: FEEDBACK_BODY,
    LiveResetRequest: LIVE_RESET_BODY,
  };
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ ...doc, $id: "doc" }, "doc");
  for (const [name, body] of Object.entries(bodies)) {
    assert.deepEqual(
      doc.components.schemas[name],
      JSON.parse(JSON.stringify(body.schema)),
      name,
    );
    const validate = ajv.getSchema(`doc#/components/schemas/${name}`)!;
    for (const [example, { value }] of Object.entries(body.examples)) {
      assert.ok(
        validate(value),
        `${name} ${example}: ${ajv.errorsText(validate.errors)}`,
      );
    }
  }
});

Deno.test("a parser needs exactly the fields its description's schema requires", () => {
  const question = (body: Record<string, unknown>) =>
    Object.values(
      body.questions as Record<string, Record<string, unknown>>,
    )[0]!;
  const cases: {
    spec: ObjectSpec;
    body: () => Record<string, unknown>;
    object: (body: Record<string, unknown>) => Record<string, unknown>;
    parse: (body: unknown) => unknown;
  }[] = [
    {
      spec: DECIDE_OBJECT,
      body: () => ({
        state: "x",
        questions: { q: { criteria: ["a"] } },
        exposed: true,
        top: 1,
      }),
      object: (b) => b,
      parse: parseDecide,
    },
    {
      spec: DECIDE_QUESTION,
      body: () => ({ state: "x", questions: { q: { criteria: ["a"] } } }),
      object: question,
      parse: parseDecide,
    },
    {
      spec: DECISIONS_QUESTION,
      body: () => ({
        input: "x",
        questions: [{
          type: "choice",
          name: "q",
          instructions: "i",
          choices: ["a"],
        }],
      }),
      object: question,
      parse: parseDecisions,
    },
    {
      spec: DECISIONS_OBJECT,
      body: () => ({
        model: "m",
        input: "x",
        questions: [{ type: "choice", name: "q" }],
        exposed: true,
        top: 2,
      }),
      object: (b) => b,
      parse: parseDecisions,
    },
    {
      spec: ALT_OBJECT,
      body: () => ({
        model: "m",
        state: "x",
        questions: { q: { type: "choice" } },
        exposed: true,
        top: 2,
      }),
      object: (b) => b,
      parse: parseAltDecisions,
    },
    {
      spec: ALT_QUESTION,
      body: () => ({
        state: "x",
        questions: {
          q: { type: "choice", instructions: "i", criteria: ["a"] },
        },
      }),
      object: question,
      parse: parseAltDecisions,
    },
  ];
  for (const { spec, body, object, parse } of cases) {
    parse(body());
    const required = new Set(spec.schema.required ?? []);
    for (const field of spec.known) {
      const b = body();
      delete object(b)[field];
      if (required.has(field)) {
        assert.throws(
          () => parse(b),
          new RegExp(`${field}" is missing`),
          field,
        );
      } else parse(b);
    }
  }
});
