/**
 * Which format a trace source is in: by its name where the name says
 * (`.csv`, `.tsv`, each optionally `.gz`), otherwise by its first bytes: `[`
 * starts a JSON array; anything else in a named file is JSON Lines. Standard
 * input has no name: `{` starts JSON Lines, `[` a JSON array, and anything
 * else is a CSV header, or a TSV header when its first line holds a tab.
 *
 * @module
 */

/** The formats traces come in. */
export type TraceFormat = "jsonl" | "json" | "csv" | "tsv";

/** The name standard input goes by: `-` on the command line. */
export const STDIN = "-";

/** Whether `name` says the source is gzip-compressed. */
export function gzipByName(name: string): boolean {
  return name.toLowerCase().endsWith(".gz");
}

/** The format a name fixes (`.csv`, `.tsv`, with or without `.gz`), or undefined when the content decides. */
export function formatByName(name: string): TraceFormat | undefined {
  const lower = name.toLowerCase().replace(/\.gz$/, "");
  if (lower.endsWith(".csv")) return "csv";
  if (lower.endsWith(".tsv")) return "tsv";
  return undefined;
}

/** How many leading bytes or characters `sniffFormat` wants to see, at most. */
export const SNIFF_LENGTH = 64 * 1024;

/**
 * The format of a source from its first characters (`head`, a BOM allowed),
 * for a source whose name does not fix it. `named` is false for standard
 * input.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sniffFormat } from "./format.ts";
 * assert.equal(sniffFormat('[{"text": "a"', true), "json");
 * assert.equal(sniffFormat("text\tq\n", false), "tsv");
 * ```
 */
export function sniffFormat(head: string, named: boolean): TraceFormat {
  const first = head.replace(/^\ufeff/, "").trimStart()[0];
  if (first === "[") return "json";
  if (named || first === "{" || first === undefined) return "jsonl";
  const nl = head.indexOf("\n");
  const line = nl < 0 ? head : head.slice(0, nl);
  return line.includes("\t") ? "tsv" : "csv";
}

/** Whether bytes start like a gzip stream (1f 8b). */
export function looksGzipped(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}
