/**
 * Unknown fields in bodies whose format is the service's own
 * (`/v1/decide`, `/v1/decide/batch`, `/v1/playground`, `/v1/feedback`) and inside the question
 * objects of the decision-model shapes: a 400 naming the field, the fields
 * known there, and the one it most likely meant (a slip of a letter or
 * two, or the other shape's word for it: `choices` where `criteria` is
 * meant). The decision-model shapes' top levels are not checked: their
 * clients send fields of their own there.
 *
 * The known fields and their other words come from each body's
 * description (`body_spec.ts`, kept with its route); this module is
 * reached only to build the error.
 *
 * @module
 */

import type { HTTPException } from "hono/http-exception";
import { closestName } from "../engine/mod.ts";
import type { BodyShape } from "./fields.ts";

/** Words other formats use for a known field: the other word, then the field it stands for. */
export type Synonyms = Readonly<Record<string, string>>;

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
