/**
 * Batches of decision bodies, `POST /v1/decide/batch`: a body
 * `{"items": [<body>, ...]}` (or the array alone) of at most
 * `MAX_BATCH_ITEMS` bodies of one decision shape (`/v1/decide`'s), checked
 * all before any is answered: a bad item is a 400 naming its index, and
 * nothing of the batch is answered or counted. The reply is
 * `{"items": [<reply>, ...], "latency_us": n}`, each item's reply exactly
 * what the shape's own route would answer, in order.
 *
 * @module
 */

import { HTTPException } from "hono/http-exception";
import type { DecisionRequest, DecisionShape } from "./decision_request.ts";
import { Type } from "@sinclair/typebox";
import { BodySpec, ObjectSpec, PARCEL } from "./body_spec.ts";
import { DECIDE_BODY } from "./decide.ts";
import { ref } from "./schema_parts.ts";

/** Most bodies one batch may carry (more gets 400); the 1 MiB body limit holds too. */
export const MAX_BATCH_ITEMS = 256;

const items = Type.Array(ref("DecideRequest", DECIDE_BODY.schema), {
  maxItems: MAX_BATCH_ITEMS,
});

/** The object form of a batch body. */
export const BATCH_OBJECT = new ObjectSpec(
  {
    items: {
      schema: items,
      words: "[<a /v1/decide body>, ...]",
      aka: ["requests", "inputs", "bodies", "batch"],
    },
  },
  true,
  { additionalProperties: false },
);

/** The body of `/v1/decide/batch`: what it needs (for error messages), its schema, its examples. */
export const BATCH_BODY = new BodySpec(
  `a JSON object ${BATCH_OBJECT.words} (or the array alone), at most ${MAX_BATCH_ITEMS} items`,
  Type.Union([BATCH_OBJECT.schema, items], {
    description:
      `Up to ${MAX_BATCH_ITEMS} /v1/decide bodies, as {"items": [...]} or the array alone; the whole body stays under the 1 MiB limit.`,
  }),
  {
    items: {
      summary: "Two texts, the second with only the best two options",
      value: {
        items: [
          { state: PARCEL, questions: { topic: null } },
          {
            state: "I was charged twice this month",
            questions: { topic: null },
            top: 2,
          },
        ],
      },
    },
    array: {
      summary: "The array alone",
      value: [{ state: PARCEL, questions: { wants_human: null } }],
    },
  },
);

/**
 * Checks a batch body and every item in it with `shape`; throws a 400
 * naming what is wrong (for an item, its index: `In "items[3]": ...`).
 * An empty batch is no error: its reply has no items.
 */
export function parseBatch<R extends DecisionRequest>(
  body: unknown,
  shape: DecisionShape<R>,
): R[] {
  let list: unknown;
  if (Array.isArray(body)) list = body;
  else {
    const o = BATCH_BODY.object(body);
    BATCH_OBJECT.check(BATCH_BODY, o);
    if (o.items === undefined) throw BATCH_BODY.fail('"items" is missing');
    list = o.items;
  }
  const items = BATCH_BODY.array(list, "items");
  BATCH_BODY.atMost(items.length, MAX_BATCH_ITEMS, "items");
  const out: R[] = [];
  for (let i = 0; i < items.length; i++) {
    try {
      out.push(shape.parse(items[i]));
    } catch (e) {
      if (!(e instanceof HTTPException)) throw e;
      throw new HTTPException(e.status, {
        message: `In "items[${i}]": ${e.message}`,
      });
    }
  }
  return out;
}
