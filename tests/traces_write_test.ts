import assert from "node:assert/strict";
import { parseJsonlTraces, traceLine } from "../src/traces/mod.ts";

Deno.test("traceLine() writes what JSON.stringify writes, one line, newline-terminated", () => {
  const time = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 6));
  assert.equal(
    traceLine({
      text: 'a "quoted"\nline é',
      answers: [["topic", "billing"], ["urgent", false]],
      time,
    }),
    JSON.stringify({
      text: 'a "quoted"\nline é',
      answers: { topic: "billing", urgent: false },
      time: time.toISOString(),
    }) + "\n",
  );
});

Deno.test("traceLine() lines read back as the traces they were: any question name, times included", () => {
  const time = new Date(Date.UTC(2025, 5, 1));
  const content = traceLine({
    text: "card not here",
    answers: [["__proto__", "x"]],
    time,
  }) +
    traceLine({ text: "is it urgent", answers: [["urgent", true]], time });
  const set = parseJsonlTraces("feedback.jsonl", content);
  assert.deepEqual(set.texts, ["card not here", "is it urgent"]);
  assert.deepEqual(set.questions.map((q) => q.name), ["__proto__", "urgent"]);
  assert.deepEqual([...set.questions[0]!.labels], [0, -1]);
  assert.equal(set.questions[1]!.kind, "yes_no");
  assert.deepEqual([...set.times!], [
    time.getTime() / 1000,
    time.getTime() / 1000,
  ]);
});
