/**
 * `train --out DIR` replacing a bundle: the path is never absent (DIR is a
 * link to a version folder, swapped in one rename), a run killed at any
 * moment leaves a bundle that loads, and what a killed run left (a
 * temporary folder, a folder put aside with DIR absent, as the earlier
 * two-rename replacement left it) is cleaned up by the next run. `serve
 * --watch` reloads when the link is replaced.
 */

import assert from "node:assert/strict";
import { loadBundle, writeBundleVersioned } from "../src/bundle/files.ts";
import { cleanLeftovers, LEFTOVER_AGE_MS } from "../src/bundle/swap.ts";
import {
  bundleFiles,
  runCli,
  smallTable,
  syntheticTraces,
  tempDir,
  toJsonl,
} from "./_fixtures.ts";
import {
  postJson,
  replaceUntilReloaded,
  startWatching,
} from "./_http_helpers.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

Deno.test("writeBundleVersioned() swaps versions so the path never goes missing", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/bundle`;
  const files = await bundleFiles(smallTable());
  await writeBundleVersioned(dir, files);
  let missing = 0;
  let reads = 0;
  let stop = false;
  const watcher = (async () => {
    while (!stop) {
      try {
        await Deno.stat(`${dir}/manifest.json`);
        reads++;
      } catch {
        missing++;
      }
    }
  })();
  for (let i = 0; i < 20; i++) await writeBundleVersioned(dir, files);
  stop = true;
  await watcher;
  assert.equal(missing, 0, `absent in ${missing} of ${missing + reads} looks`);
  assert.ok((await Deno.lstat(dir)).isSymlink);
  // The link and the versions kept (3 by default).
  const left = await names(tmp.path);
  assert.equal(left.length, 4, left.join(" "));
  for (const v of left.slice(1)) assert.match(v, /^bundle\.v-[0-9a-f]{8}$/);
  await loadBundle(dir);
});

Deno.test("writeBundleVersioned() turns a plain bundle folder into a version once", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/bundle`;
  const files = await bundleFiles(smallTable());
  await Deno.mkdir(dir);
  for (const [name, bytes] of files) {
    await Deno.writeFile(`${dir}/${name}`, bytes);
  }
  await writeBundleVersioned(dir, files);
  assert.ok((await Deno.lstat(dir)).isSymlink);
  // The link, the new version and the plain folder, now a version kept.
  assert.equal((await names(tmp.path)).length, 3);
  await loadBundle(dir);
});

Deno.test("cleanLeftovers() restores a bundle put aside by a killed run and removes stale temporaries", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/bundle`;
  const files = await bundleFiles(smallTable());
  // What the two-rename replacement left when killed between its renames:
  // the old bundle aside, the new one still temporary, DIR absent.
  await writeBundleVersioned(`${tmp.path}/x`, files);
  await Deno.rename(
    await Deno.realPath(`${tmp.path}/x`),
    `${dir}.old-1234abcd`,
  );
  await Deno.remove(`${tmp.path}/x`);
  await Deno.mkdir(`${dir}.tmp-5678abcd`);
  await Deno.writeTextFile(`${dir}.tmp-5678abcd/weights.bin`, "half");
  const fresh = `${dir}.tmp-9999abcd`;
  await Deno.mkdir(fresh);
  // A user's own folder whose name merely looks like ours, old.
  const mine = `${dir}.v-final`;
  await Deno.mkdir(mine);
  const old = new Date(Date.now() - LEFTOVER_AGE_MS - 60_000);
  await Deno.utime(`${dir}.tmp-5678abcd`, old, old);
  await Deno.utime(mine, old, old);
  const done = await cleanLeftovers(dir);
  assert.deepEqual(done.map((l) => l.split(" ")[0]), ["restored", "removed"]);
  await loadBundle(dir);
  // Another run's temporary folder, fresh, is left alone; so is the user's.
  assert.deepEqual(await names(tmp.path), [
    "bundle",
    "bundle.tmp-9999abcd",
    "bundle.v-final",
  ]);
});

Deno.test("train killed with SIGKILL at any moment leaves a bundle at --out that loads", async () => {
  await using tmp = await tempDir();
  const traces = `${tmp.path}/t.jsonl`;
  await Deno.writeTextFile(
    traces,
    toJsonl(syntheticTraces({ count: 1500, seed: 3 })),
  );
  const out = `${tmp.path}/out`;
  const first = await runCli([
    "train",
    "--traces",
    traces,
    "--out",
    out,
    "--quiet",
    "--allow-uncalibrated",
    "--semantic",
    "off",
  ]);
  assert.equal(first.code, 0, first.stderr);
  for (let round = 0; round < 6; round++) {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        MAIN,
        "train",
        "--traces",
        traces,
        "--out",
        out,
        "--quiet",
        "--allow-uncalibrated",
        "--semantic",
        "off",
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    await new Promise((r) => setTimeout(r, 300 + round * 250));
    try {
      child.kill("SIGKILL");
    } catch {
      // finished already
    }
    await child.status;
    await loadBundle(out);
  }
  const last = await runCli([
    "train",
    "--traces",
    traces,
    "--out",
    out,
    "--quiet",
    "--allow-uncalibrated",
    "--semantic",
    "off",
  ]);
  assert.equal(last.code, 0, last.stderr);
  await loadBundle(out);
});

Deno.test("serve --watch reloads when train --out replaces the link", async () => {
  await using tmp = await tempDir();
  const bundle = `${tmp.path}/bundle`;
  const files = await bundleFiles(smallTable());
  await writeBundleVersioned(bundle, files);
  const s = await startWatching(bundle, tmp.path);
  try {
    await replaceUntilReloaded(s, () => writeBundleVersioned(bundle, files));
    assert.match(s.output().stderr, /reloaded bundle/);
    const after = await postJson(s.base, "/v1/decide", { state: "hello" });
    assert.equal(after.status, 200);
  } finally {
    const end = await s.stop();
    assert.equal(end.code, 0, end.stderr);
  }
});
