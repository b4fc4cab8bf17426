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

/** Where the tests find Chromium (Debian's `chromium`). */
export const CHROMIUM = "/usr/bin/chromium";

/** Opens `url` in a headless Chromium, runs `check` on the page, and closes the browser whatever happens. */
export async function withPage(
  url: string,
  check: (page: import("playwright-core").Page) => Promise<void>,
): Promise<void> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await check(page);
  } finally {
    await browser.close();
  }
}
