/**
 * playwright-core, loaded so that it runs under the test suite's permission
 * flags (no `--allow-all`).
 *
 * At load time playwright-core probes `/proc/sys/fs/binfmt_misc/WSLInterop`
 * with `fs.existsSync` to detect WSL. Deno counts `/proc/sys` as a privileged
 * path that only `--allow-all` may read, and its `existsSync` throws
 * `NotCapable` instead of answering false. This module makes `existsSync`
 * answer false for paths it may not read, then loads playwright-core.
 *
 * @module
 */

import fs from "node:fs";

const existsSync = fs.existsSync;
fs.existsSync = ((path: fs.PathLike) => {
  try {
    return existsSync(path);
  } catch (err) {
    if (
      err instanceof Deno.errors.NotCapable ||
      err instanceof Deno.errors.PermissionDenied
    ) return false;
    throw err;
  }
}) as typeof fs.existsSync;

/** playwright-core's Chromium launcher. */
export const { chromium } = await import("playwright-core");
export type { BrowserContext, Page } from "playwright-core";
