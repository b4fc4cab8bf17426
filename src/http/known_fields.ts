/**
 * Unknown fields in bodies whose format is the service's own
 * (`/v1/decide`, `/v1/decide/batch`, `/v1/playground`, `/v1/feedback`) and inside the question
 * objects of the decision-model shapes: a 400 naming the field, the fields
 * known there, and the one it most likely meant (a slip of a letter or
 * two, or the other shape's word for it: `choices` where `criteria` is
 * meant). The decision-model shapes' top levels are not checked: their
 * clients send fields of their own there.
 *
 * Each parser checks keys with a `switch` over the known names while it
 * reads the object, so a body without unknown fields costs no allocation;
 * this module is reached only to build the error.
 *
 * @module
 */

import type { HTTPException } from "hono/http-exception";
import { closestName } from "../engine/suggest.ts";
import type { BodyShape } from "./fields.ts";

/** Words other formats use for a known field: the other word, then the field it stands for. */
export type Synonyms = Readonly<Record<string, string>>;

/** What the body of `/v1/decide` and its question entries know. */
export const DECIDE_FIELDS = ["state", "questions", "exposed", "top"] as const;
/** The fields of a `/v1/decide` question entry. */
export const DECIDE_QUESTION_FIELDS = ["criteria"] as const;
/** The fields of a `/v1/decide/batch` body. */
export const BATCH_FIELDS = ["items"] as const;
/** The fields of a `/v1/playground` body. */
export const PLAYGROUND_FIELDS = ["question", "text"] as const;
/** The fields of a `/v1/feedback` item. */
export const FEEDBACK_FIELDS = [
  "question",
  "state",
  "answer",
  "audit",
] as const;
/** The fields of a question object of `/v1/decisions`. */
export const DECISIONS_QUESTION_FIELDS = [
  "type",
  "name",
  "instructions",
  "choices",
] as const;
/** The fields of a question object of `/v1/altdecisions`. */
export const ALT_QUESTION_FIELDS = [
  "type",
  "instructions",
  "criteria",
] as const;

/** Other formats' words for the text. */
const STATE_WORDS: Synonyms = { input: "state", text: "state" };
/** Other formats' words for the options of a `criteria` field. */
const CRITERIA_WORDS: Synonyms = { choices: "criteria", options: "criteria" };

/** Other tools' words for `top` (fastText's `-k`, `top_k` elsewhere). */
const TOP_WORDS: Synonyms = { k: "top", top_k: "top", topk: "top" };

/** The other words each checked object understands, by its known fields. */
export const SYNONYMS = {
  decide: { ...STATE_WORDS, ...TOP_WORDS },
  decideQuestion: CRITERIA_WORDS,
  batch: {
    requests: "items",
    inputs: "items",
    bodies: "items",
    batch: "items",
  },
  playground: { state: "text", input: "text", name: "question" },
  feedback: {
    ...STATE_WORDS,
    choice: "answer",
    label: "answer",
    audit_id: "audit",
  },
  decisionsQuestion: { criteria: "choices", options: "choices" },
  altQuestion: CRITERIA_WORDS,
} as const satisfies Record<string, Synonyms>;

/**
 * The field of `known` that `key` most likely meant: the one `synonyms`
 * maps it to, else a close spelling (see `closestName`); null when none.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { meantField } from "./known_fields.ts";
 * assert.equal(meantField("choices", ["criteria"], { choices: "criteria" }), "criteria");
 * assert.equal(meantField("exposd", ["state", "exposed"], {}), "exposed");
 * ```
 */
export function meantField(
  key: string,
  known: readonly string[],
  synonyms: Synonyms,
): string | null {
  const other = Object.hasOwn(synonyms, key) ? synonyms[key] : undefined;
  if (other !== undefined && known.includes(other)) return other;
  return closestName(key, known);
}

/**
 * The 400 for the unknown field `key` of the object at `at` (`""` for the
 * body itself, else a path such as `questions.intent`): it names the
 * field, the one it most likely meant, and the fields `known` there.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { BodyShape } from "./fields.ts";
 * import { unknownField } from "./known_fields.ts";
 * const e = unknownField(new BodyShape("{}"), "questions.intent", "choices", ["criteria"], { choices: "criteria" });
 * assert.equal(e.status, 400);
 * assert.match(e.message, /Unknown field "questions\.intent\.choices"; did you mean "criteria"\?/);
 * ```
 */
export function unknownField(
  shape: BodyShape,
  at: string,
  key: string,
  known: readonly string[],
  synonyms: Synonyms,
): HTTPException {
  const field = at === "" ? key : `${at}.${key}`;
  const meant = meantField(key, known, synonyms);
  const guess = meant === null
    ? "."
    : `; did you mean ${JSON.stringify(meant)}?`;
  const where = at === "" ? "the body" : `"${at}"`;
  return shape.fail(
    `Unknown field ${
      JSON.stringify(field)
    }${guess} The fields of ${where} are: ${known.join(", ")}`,
  );
}
