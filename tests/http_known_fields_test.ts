/**
 * Unknown fields: a 400 naming the field, the known ones and the one meant
 * in the service's own formats (`/v1/decide`, `/v1/playground`,
 * `/v1/feedback`) and inside the decision-model shapes' question objects;
 * the decision-model shapes' own top levels still accept fields of their
 * clients.
 */

import assert from "node:assert/strict";
import { createApp } from "../src/http/app.ts";
import { smallTable } from "./_fixtures.ts";

type Json = Record<string, unknown>;

const app = createApp({ table: smallTable().table, bundlePath: "t/bundle" });

async function post(path: string, body: unknown) {
  const res = await app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() as Json };
}

async function refused(path: string, body: unknown): Promise<string> {
  const { status, json } = await post(path, body);
  assert.equal(status, 400, JSON.stringify(json));
  return json.error as string;
}

Deno.test("/v1/decide refuses the other shape's choices with a did-you-mean criteria", async () => {
  const error = await refused("/v1/decide", {
    state: "my invoice",
    questions: { topic: { choices: ["billing", "shipping"] } },
  });
  assert.match(error, /Unknown field "questions\.topic\.choices"/);
  assert.match(error, /did you mean "criteria"\?/);
  assert.match(error, /The fields of "questions\.topic" are: criteria/);
});

Deno.test("/v1/decide refuses an unknown top-level field, naming the known ones", async () => {
  const typo = await refused("/v1/decide", { state: "x", exposd: true });
  assert.match(typo, /Unknown field "exposd"; did you mean "exposed"\?/);
  assert.match(typo, /are: state, questions, exposed/);
  const other = await refused("/v1/decide", { input: "x" });
  assert.match(other, /did you mean "state"\?/);
  const far = await refused("/v1/decide", { state: "x", colour: 1 });
  assert.match(far, /Unknown field "colour"\. The fields of the body/);
});

Deno.test("/v1/decide still answers its known fields", async () => {
  const { status } = await post("/v1/decide", {
    state: "my invoice",
    questions: { topic: { criteria: ["billing"] }, coin: null },
    exposed: false,
  });
  assert.equal(status, 200);
});

Deno.test("/v1/playground refuses an unknown field with a did-you-mean", async () => {
  const error = await refused("/v1/playground", {
    question: "topic",
    state: "my invoice",
  });
  assert.match(error, /Unknown field "state"; did you mean "text"\?/);
});

Deno.test("/v1/feedback refuses an unknown field in any item, naming the item", async () => {
  const error = await refused("/v1/feedback", [
    { question: "topic", state: "a", answer: "billing" },
    { question: "topic", state: "b", answr: "billing" },
  ]);
  assert.match(error, /Unknown field "\[1\]\.answr"; did you mean "answer"\?/);
});

Deno.test("the decision-model shapes accept unknown top-level fields but not unknown keys in a question", async () => {
  const ok = await post("/v1/decisions", {
    model: "m",
    input: "my invoice",
    temperature: 0,
    questions: [{ type: "choice", name: "topic" }],
  });
  assert.equal(ok.status, 200);
  const decisions = await refused("/v1/decisions", {
    input: "my invoice",
    questions: [{ type: "choice", name: "topic", criteria: ["billing"] }],
  });
  assert.match(
    decisions,
    /Unknown field "questions\[0\]\.criteria"; did you mean "choices"\?/,
  );
  const altOk = await post("/v1/altdecisions", {
    state: "my invoice",
    stream: false,
    questions: { topic: { type: "choice" } },
  });
  assert.equal(altOk.status, 200);
  const alt = await refused("/v1/altdecisions", {
    state: "my invoice",
    questions: { topic: { type: "choice", choices: [{ value: "billing" }] } },
  });
  assert.match(
    alt,
    /Unknown field "questions\.topic\.choices"; did you mean "criteria"\?/,
  );
});
