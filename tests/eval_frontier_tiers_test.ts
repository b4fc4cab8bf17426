/**
 * The frontier of both tiers: at each threshold the table's answer where
 * its confidence reaches it, else the second tier's where its confidence
 * does (the two-tier rule), each counted with its own disagreement.
 */

import assert from "node:assert/strict";
import { frontierOf } from "../src/eval/frontier.ts";

Deno.test("frontierOf() with a second tier certifies by the two-tier rule", () => {
  const answers = {
    total: 5,
    confidences: [0.99, 0.9, 0.6, 0.5, 0.4],
    wrong: [0, 1, 0, 0, 1],
    second: {
      // -1: the second tier's guard withholds the fifth text.
      confidences: [0.2, 0.95, 0.92, 0.5, -1],
      wrong: [1, 0, 1, 0, 0],
    },
  };
  const [t95, t9, t5] = frontierOf(answers, [0.95, 0.9, 0.5], 0.9, 0.05);
  // 0.95: the table's first, the second tier's second.
  assert.equal(t95!.certified, 2);
  assert.equal(t95!.disagreements, 0);
  // 0.9: the table's first two (the second wrong), the second tier's third (wrong).
  assert.equal(t9!.certified, 3);
  assert.equal(t9!.disagreements, 2);
  assert.equal(t9!.in_force, true);
  // 0.5: the table's first four; the fifth nobody certifies.
  assert.equal(t5!.certified, 4);
  assert.equal(t5!.disagreements, 1);
  // Without the second tier: the table alone.
  const alone = frontierOf(
    { ...answers, second: undefined },
    [0.95],
    null,
    0.05,
  );
  assert.equal(alone[0]!.certified, 1);
});
