/**
 * The wire format: the JSON the service reads and the decision replies it
 * writes, apart from any transport. Every request body is described once
 * (`body_spec.ts`: per field its JSON Schema, its words in a 400 and the
 * other names clients use for it) beside its hand-written parser, for the
 * decision routes (`decide.ts`, `decisions.ts`, `altdecisions.ts`,
 * `batch.ts`, sharing `decision_request.ts`) and for feedback, the live
 * reset and the playground; a bad body throws a 400 (`HTTPException`)
 * whose message names the field and the body the route needs. The decision
 * replies are written by hand into one reused `JsonWriter`, a table's
 * names pre-encoded once (`fragments.ts`, `served.ts`). The HTTP service
 * and `predict` both answer through here; the OpenAPI document takes the
 * request schemas and examples from the same descriptions.
 *
 * @example
 * ```ts
 * import { assessRequest, DECIDE_SHAPE, JsonWriter, serviceTable } from "./mod.ts";
 * import { loadBundle } from "../bundle/mod.ts";
 *
 * const served = serviceTable(await loadBundle("demo/bundle"));
 * const request = DECIDE_SHAPE.parse({ text: "my parcel is late" });
 * const { answerer } = served;
 * const answers = assessRequest(
 *   answerer.table,
 *   answerer.state,
 *   answerer.prepare(request.text),
 *   request,
 *   answerer.monitor,
 * );
 * const w = new JsonWriter(1024);
 * DECIDE_SHAPE.write(w, served, request, answers, 0, undefined);
 * console.log(new TextDecoder().decode(w.view()));
 * ```
 *
 * @module
 */

export { ALT_BODY, ALT_QUESTION, ALT_SHAPE } from "./altdecisions.ts";
export { BATCH_BODY, MAX_BATCH_ITEMS, parseBatch } from "./batch.ts";
export { DECIDE_BODY, DECIDE_SHAPE, writeDecideAnswer } from "./decide.ts";
export {
  type Ask,
  assessRequest,
  type DecisionRequest,
  type DecisionShape,
  type UnlearnedQuestions,
} from "./decision_request.ts";
export {
  DECISIONS_BODY,
  DECISIONS_QUESTION,
  DECISIONS_SHAPE,
} from "./decisions.ts";
export {
  FEEDBACK_BODY,
  FEEDBACK_ITEM,
  parseFeedback,
  type RefusedItem,
} from "./feedback_body.ts";
export { badBody, MAX_BODY_BYTES } from "./fields.ts";
export { JsonWriter } from "./json_writer.ts";
export { LIVE_RESET_BODY, parseLiveReset } from "./live_reset_body.ts";
export {
  parsePlayground,
  PLAYGROUND_BODY,
  type PlaygroundRequest,
} from "./playground_body.ts";
export { componentRef, type JsonSchema } from "./refs.ts";
export { writeQuestionKey } from "./reply_parts.ts";
export {
  confidence,
  count,
  Flag,
  nonNegative,
  nullable,
  nullableNumber,
  oneOf,
  probability,
  radius,
  recordOf,
  ref,
} from "./schema_parts.ts";
export { type ServiceTable, serviceTable } from "./service_table.ts";
