/**
 * Validating bodies against the schemas of the OpenAPI document with Ajv
 * (JSON Schema draft 2020-12, the dialect of OpenAPI 3.1, strict mode, with
 * formats).
 *
 * @module
 */

import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020";
import formats from "ajv-formats";
import type { OpenApiDocument } from "../src/openapi/document.ts";

type Json = Record<string, unknown>;

/** The id under which the document's component schemas are registered. */
const COMPONENTS_ID = "urn:dtable:openapi-components";

/** Rewrites `#/components/schemas/X` references to the registered components. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (typeof value !== "object" || value === null) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === "$ref" && typeof v === "string"
      ? v.replace("#/components/schemas/", `${COMPONENTS_ID}#/$defs/`)
      : rewriteRefs(v);
  }
  return out;
}

/** The outcome of one validation: null when valid, else Ajv's errors in words. */
export type Verdict = string | null;

/** Validates bodies against schemas of one OpenAPI document. */
export class SchemaValidator {
  readonly #ajv: InstanceType<typeof Ajv2020>;

  constructor(doc: OpenApiDocument) {
    // Strict, except that a union of types ("type": ["string", "null"]) is
    // how JSON Schema 2020-12 spells a nullable field.
    this.#ajv = new Ajv2020({
      strict: true,
      allowUnionTypes: true,
      allErrors: true,
    });
    formats.default(this.#ajv);
    this.#ajv.addSchema({
      $id: COMPONENTS_ID,
      $defs: rewriteRefs(doc.components.schemas) as Json,
    });
  }

  /** Compiles a schema of the document (a `$ref` or inline); throws on a bad schema. */
  compile(schema: unknown): (value: unknown) => Verdict {
    const validate = this.#ajv.compile(rewriteRefs(schema) as Json);
    return (value) =>
      validate(value) ? null : this.#ajv.errorsText(validate.errors, {
        separator: "; ",
      });
  }

  /** Validates `value` against `schema`: null when valid, else why not. */
  check(schema: unknown, value: unknown): Verdict {
    return this.compile(schema)(value);
  }
}

/**
 * Validates a whole document against the official OpenAPI 3.1 schema:
 * null when valid, else the errors. (That schema checks the document's
 * structure; the schemas inside it are checked by compiling them with
 * `SchemaValidator`.)
 */
export async function checkOpenApi31(doc: unknown): Promise<Verdict> {
  const result = await new Validator().validate(doc as Json);
  if (result.valid) return null;
  return JSON.stringify(result.errors);
}
