/**
 * The version in one place: `deno.json` holds it, `--version`, the banner,
 * `/v1/health` and trained bundles show it, next to the HTTP interface
 * release the program implements.
 */

import assert from "node:assert/strict";
import { INTERFACE_VERSION, TOOL_VERSION } from "../src/version.ts";
import { runCli } from "./_fixtures.ts";
import { specOrSkip } from "./_tools.ts";

const ROOT = new URL("../", import.meta.url);
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

Deno.test("TOOL_VERSION is the version written in deno.json", async () => {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("deno.json", ROOT)),
  );
  assert.equal(TOOL_VERSION, config.version);
  assert.match(TOOL_VERSION, SEMVER);
});

Deno.test("no source file other than deno.json spells the tool version out", async () => {
  // A second copy would drift; src/version.ts reads deno.json instead.
  const pattern = new RegExp(
    `["'\`]${TOOL_VERSION.replaceAll(".", "\\.")}["'\`]`,
  );
  const found: string[] = [];
  const walk = async (dir: URL) => {
    for await (const entry of Deno.readDir(dir)) {
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
      if (entry.isDirectory) await walk(url);
      else if (/\.(ts|js)$/.test(entry.name)) {
        if (pattern.test(await Deno.readTextFile(url))) found.push(url.href);
      }
    }
  };
  await walk(new URL("src/", ROOT));
  await walk(new URL("static/", ROOT));
  if (pattern.test(await Deno.readTextFile(new URL("main.ts", ROOT)))) {
    found.push("main.ts");
  }
  assert.deepEqual(found, []);
});

const spec = await specOrSkip("version_test");

Deno.test({
  name: "INTERFACE_VERSION is the newest release in the interface's history",
  ignore: spec === null,
}, () => {
  const section = spec!.slice(spec!.indexOf("## Versioning"));
  const releases = [...section.matchAll(/^\| (\d+\.\d+\.\d+) \|/gm)].map((
    m,
  ) => m[1]!);
  assert.ok(releases.length > 0, "the spec lists its releases");
  assert.equal(INTERFACE_VERSION, releases.at(-1));
});

Deno.test("main.ts --version names the tool version and the interface release", async () => {
  const run = await runCli(["--version"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(
    run.stdout.trim(),
    `decision-tables ${TOOL_VERSION} (HTTP interface ${INTERFACE_VERSION})`,
  );
});
