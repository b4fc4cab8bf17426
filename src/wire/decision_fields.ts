/**
 * The fields the decision bodies share (`/v1/decide`, `/v1/decisions`,
 * `/v1/altdecisions`), described once: their JSON Schemas, how the 400
 * messages show them and the other words clients use for them.
 *
 * @module
 */

import { Type } from "@sinclair/typebox";
import type { FieldSpec } from "./body_spec.ts";
import { nullable } from "./schema_parts.ts";

/** The text to decide on: a string, or an object serialised as JSON (`state`). */
export const STATE = {
  schema: Type.Unsafe<string | Record<string, unknown>>({
    type: ["string", "object"],
    description:
      "The text to decide on; an object is serialised with JSON.stringify first.",
  }),
  words: "string or object",
  aka: ["input", "text"],
} as const satisfies FieldSpec;

/** `exposed`: treat the input as adversarial. */
export const EXPOSED = {
  schema: Type.Optional(nullable(Type.Boolean(), {
    description:
      "Treat the input as adversarial: answers that a few inserted words could flip are not certified (flag low_radius). Default false.",
  })),
  words: "boolean",
} as const satisfies FieldSpec;

/** `top`: print only this many of a choice answer's probabilities (fastText's `-k`, `top_k` elsewhere). */
export const TOP = {
  schema: Type.Optional(nullable(Type.Integer({ minimum: 1 }), {
    description:
      "Print only this many of a choice answer's probabilities: the most probable options, the answer first, then the others from the most probable down (ties in option order). Absent or null: every option in option order, as without it. The answer, its confidence and its certification do not change; yes/no answers are not affected.",
    examples: [3],
  })),
  words: "integer >= 1",
  aka: ["k", "top_k", "topk"],
} as const satisfies FieldSpec;

/** `model` of the decision-model shapes: echoed in the reply. */
export const MODEL = {
  schema: Type.Optional(nullable(Type.String(), {
    description: 'Echoed in the response; any value works. Default "table".',
  })),
  words: "string",
} as const satisfies FieldSpec;

/** A question's `type` in the decision-model shapes. */
export const QUESTION_TYPE = {
  schema: Type.String({
    description:
      "choice, predicate or noul. A type that does not fit the bundle question (score included) is answered with flag unsupported.",
    examples: ["choice", "predicate", "noul"],
  }),
  words: '"choice" | "predicate" | "noul"',
} as const satisfies FieldSpec;

/** A question's `instructions` in the decision-model shapes: accepted and ignored. */
export const INSTRUCTIONS = {
  schema: Type.Optional(nullable(Type.String(), {
    description: "Accepted and ignored: the table answers from its traces.",
  })),
  words: "string",
} as const satisfies FieldSpec;
