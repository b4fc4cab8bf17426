/**
 * The one writer of the Prometheus text exposition format (0.0.4) that
 * `/metrics` is written with: families (`# HELP`, `# TYPE`) and samples
 * with escaped label values and Prometheus's spelling of special numbers
 * (`NaN`, `+Inf`, `-Inf`).
 *
 * @module
 */

/** Content type of the text exposition format. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The type of a metric family. */
export type MetricType = "counter" | "gauge" | "histogram";

/** Escapes a label value as the exposition format requires. */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(
    /\n/g,
    "\\n",
  );
}

/** A sample value as the exposition format spells it. */
export function sampleValue(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+Inf";
  if (x === -Infinity) return "-Inf";
  return String(x);
}

/**
 * Exposition text being written, family by family.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Exposition } from "./exposition.ts";
 * const e = new Exposition();
 * e.family("dtable_answers_total", "counter", "Answers given.");
 * e.sample("dtable_answers_total", 3, { question: 'say "hi"' });
 * assert.equal(
 *   e.text(),
 *   '# HELP dtable_answers_total Answers given.\n# TYPE dtable_answers_total counter\ndtable_answers_total{question="say \\"hi\\""} 3\n',
 * );
 * ```
 */
export class Exposition {
  readonly #lines: string[] = [];

  /** Starts a family: its help text and type. */
  family(name: string, type: MetricType, help: string): this {
    this.#lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    return this;
  }

  /** One sample of `name` (the family's name, or a histogram's `_bucket`, `_sum`, `_count`), with its labels in the order given. */
  sample(
    name: string,
    value: number,
    labels: Readonly<Record<string, string>> = {},
  ): this {
    let set = "";
    for (const key in labels) {
      set += `${set === "" ? "" : ","}${key}="${escapeLabel(labels[key]!)}"`;
    }
    this.#lines.push(
      `${name}${set === "" ? "" : `{${set}}`} ${sampleValue(value)}`,
    );
    return this;
  }

  /** A family of one sample without labels: `family` then `sample`. */
  single(name: string, type: MetricType, help: string, value: number): this {
    return this.family(name, type, help).sample(name, value);
  }

  /** The text written so far, newline-terminated. */
  text(): string {
    return this.#lines.join("\n") + "\n";
  }
}
