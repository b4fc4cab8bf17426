/**
 * The files a release carries besides the code: `LICENSE` (MIT) and
 * `CHANGELOG.md` in the form of Keep a Changelog, in step with the version
 * in `deno.json`.
 */

import assert from "node:assert/strict";
import { TOOL_VERSION } from "../src/version.ts";

const ROOT = new URL("../", import.meta.url);
const read = (path: string) => Deno.readTextFile(new URL(path, ROOT));

/** Compares two `major.minor.patch` versions. */
function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).slice(0, 3).map(Number);
  const pb = b.split(/[.-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) {
    if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  }
  return 0;
}

Deno.test("LICENSE is the MIT license", async () => {
  const license = await read("LICENSE");
  assert.match(license, /^MIT License\n\nCopyright \(c\) \d{4} \S/);
  assert.match(license, /Permission is hereby granted, free of charge/);
  assert.match(license, /THE SOFTWARE IS PROVIDED "AS IS"/);
});

Deno.test("CHANGELOG.md keeps an Unreleased section and dated releases, newest first, up to the current version", async () => {
  const changelog = await read("CHANGELOG.md");
  const headings = [...changelog.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
  assert.equal(headings[0], "[Unreleased]");
  const releases = headings.slice(1).map((h) => {
    const m = h.match(/^\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$/);
    assert.ok(m, `"## ${h}" is "## [x.y.z] - YYYY-MM-DD"`);
    assert.ok(!Number.isNaN(Date.parse(m[2]!)), `${m[2]} is a date`);
    return m[1]!;
  });
  assert.ok(releases.length >= 1, "at least one release");
  for (let i = 1; i < releases.length; i++) {
    assert.ok(
      compareVersions(releases[i - 1]!, releases[i]!) > 0,
      "newest first",
    );
  }
  // Every section says what changed, under Keep a Changelog's headings.
  const sections = changelog.split(/^## /m).slice(1);
  for (const section of sections) {
    const kinds = [...section.matchAll(/^### (.+)$/gm)].map((m) => m[1]!);
    assert.ok(kinds.length > 0, `## ${section.split("\n")[0]} lists changes`);
    for (const kind of kinds) {
      assert.ok(
        ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]
          .includes(kind),
        `### ${kind} is a Keep a Changelog heading`,
      );
    }
  }
  const newest = releases[0]!;
  const order = compareVersions(TOOL_VERSION, newest);
  assert.ok(
    order >= 0,
    `deno.json's ${TOOL_VERSION} is not older than ${newest}`,
  );
  if (order > 0) {
    assert.match(
      sections[0]!,
      new RegExp(`\\b${TOOL_VERSION.replaceAll(".", "\\.")}\\b`),
      `the Unreleased section names the coming ${TOOL_VERSION}`,
    );
  }
});
