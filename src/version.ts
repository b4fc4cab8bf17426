/**
 * The program's version and the release of the HTTP interface it
 * implements.
 *
 * The version is written in one place, the `version` field of `deno.json`;
 * this module reads it through a static JSON import, so `deno compile`
 * embeds it and serving needs no file access for it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { INTERFACE_VERSION, TOOL_VERSION } from "./version.ts";
 *
 * assert.match(TOOL_VERSION, /^\d+\.\d+\.\d+/);
 * console.log(`decision-tables ${TOOL_VERSION}, HTTP interface ${INTERFACE_VERSION}`);
 * ```
 *
 * @module
 */

import config from "../deno.json" with { type: "json" };

/**
 * This program's version (semantic versioning), from `deno.json`. Shown by
 * `--version` and `GET /v1/health`, and written into every bundle it trains
 * as `tool_version`.
 */
export const TOOL_VERSION: string = config.version;

/**
 * The release of the HTTP interface this program implements: its routes,
 * fields and rules (the interface's own release history ends at 0.3.3).
 */
export const INTERFACE_VERSION = "0.3.3";
