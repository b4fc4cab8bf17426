/**
 * JSON Schema of the `learn` section of `/v1/stats`, sent by a learning
 * service (`serve --learn DIR`), and its type.
 *
 * @module
 */

import { type Static, Type } from "@sinclair/typebox";
import { count, nullable } from "../wire/mod.ts";

/** One retrain. */
const Retrain = Type.Object({
  started: Type.String({ format: "date-time" }),
  ended: Type.String({ format: "date-time" }),
  labels: count,
  seconds: Type.Number({ minimum: 0 }),
  swapped: Type.Boolean({
    description:
      "True when the new bundle was written to DIR/bundle and swapped in.",
  }),
  reason: Type.String({ description: "Why it was or was not, in words." }),
  test_answers: count,
  certified_before: nullable(count),
  certified_after: nullable(count),
  calibrated: count,
  questions: count,
  error: Type.Optional(Type.String()),
}, {
  description:
    "One retrain: when, on how many labels, and the held-out answers (the new split's test part) each bundle certifies rightly, the one in force (before) and the new one (after).",
});

/** One stretch of traffic. */
const Stretch = Type.Object({
  from: Type.String({ format: "date-time" }),
  to: Type.String({ format: "date-time" }),
  decisions: count,
  certified: count,
  calls: Type.Integer({
    minimum: 0,
    description:
      "Model calls the decisions cost: uncertified answers and audits.",
  }),
});

/** The `learn` section of `/v1/stats`. */
export const LearnStats = Type.Object({
  dir: Type.String(),
  labels: Type.Integer({
    minimum: 0,
    description:
      "Labels counted: feedback items written to the log since the start, and at the start those the last retrain had.",
  }),
  next_retrain_at: Type.Integer({
    minimum: 0,
    description: "The labels at which the next retrain is due.",
  }),
  running: Type.Boolean(),
  retrains: count,
  swaps: count,
  held: Type.Array(Type.String(), {
    description:
      "Questions not certified while the model answers options their bundle has not learned yet.",
  }),
  unlearned: Type.Array(Type.String(), {
    description:
      "Questions feedback has shown that the bundle has not learned yet (answered uncertified, flag uncalibrated).",
  }),
  history: Type.Array(Retrain, {
    description: "The last retrains, oldest first.",
  }),
  series: Type.Array(Stretch, {
    description:
      "The traffic per stretch since the start (older stretches merged in pairs past 500): decisions, certified answers, model calls.",
  }),
});

/** The `learn` section of `/v1/stats`. */
export type LearnStats = Static<typeof LearnStats>;
