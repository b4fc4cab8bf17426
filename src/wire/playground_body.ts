/**
 * The body of `POST /v1/playground`: a text and the question to ask of it
 * (which a one-question bundle lets the caller leave out), described once
 * and checked here.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { Type } from "@sinclair/typebox";
import { BodySpec, ObjectSpec, PARCEL } from "./body_spec.ts";
import { nullable } from "./schema_parts.ts";

/** A checked playground body. */
export interface PlaygroundRequest {
  question: string;
  text: string;
}

/** The fields of a playground body. */
export const PLAYGROUND_OBJECT = new ObjectSpec({
  question: {
    schema: Type.Optional(nullable(Type.String(), {
      description:
        "A question of the bundle; may be left out when the bundle has exactly one.",
    })),
    words: "string (may be left out when the bundle has one question)",
    plain: true,
    aka: ["name"],
  },
  text: { schema: Type.String(), words: "string", aka: ["state", "input"] },
}, true);

/** The body of `/v1/playground`: what it needs (for error messages), its schema, its examples. */
export const PLAYGROUND_BODY = new BodySpec(
  `a JSON object ${PLAYGROUND_OBJECT.words}`,
  PLAYGROUND_OBJECT.schema,
  {
    topic: {
      summary: "One question of the demo bundle",
      value: { question: "topic", text: PARCEL },
    },
  },
);

/**
 * Checks a playground body against `table`: a missing `question` is the
 * only question of a one-question bundle, else a 400.
 */
export function parsePlayground(
  body: unknown,
  table: Table,
): PlaygroundRequest {
  const shape = PLAYGROUND_BODY;
  const o = shape.object(body);
  PLAYGROUND_OBJECT.check(shape, o);
  if (o.text === undefined) throw shape.fail('"text" is missing');
  const text = shape.string(o.text, "text");
  let question = shape.optionalString(o.question, "question");
  if (question === undefined) {
    if (table.questions.length !== 1) {
      throw shape.fail(
        `"question" is missing and the bundle has ${table.questions.length} questions (${
          names(table)
        })`,
      );
    }
    question = table.questions[0]!.name;
  }
  return { question, text };
}

function names(table: Table): string {
  return table.questions.map((q) => q.name).join(", ");
}
