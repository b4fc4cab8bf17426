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
import { BodyShape } from "./fields.ts";
import { BATCH_FIELDS, SYNONYMS, unknownField } from "./known_fields.ts";

/** Most bodies one batch may carry (more gets 400); the 1 MiB body limit holds too. */
export const MAX_BATCH_ITEMS = 256;

/** The body `/v1/decide/batch` needs, for error messages. */
export const BATCH_BODY = new BodyShape(
  `a JSON object {"items": [<a /v1/decide body>, ...]} (or the array alone), at most ${MAX_BATCH_ITEMS} items`,
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
    for (const key in o) {
      if (key === "items") continue;
      throw unknownField(BATCH_BODY, "", key, BATCH_FIELDS, SYNONYMS.batch);
    }
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
