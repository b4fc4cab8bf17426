/**
 * Kept versions of a bundle: `train --out DIR --keep N` keeps the newest N
 * versions (older ones removed only after the swap), `versions` lists them
 * with their figures, `rollback` points the link back at one by one rename
 * (a server with `--watch` follows), and `eval` compares bundles side by
 * side on the same traces.
 */

import assert from "node:assert/strict";
import { loadBundle, writeBundleVersioned } from "../src/bundle/files.ts";
import { listVersions, pointTo, pruneVersions } from "../src/bundle/swap.ts";
import { chooseVersion } from "../src/cli/versions.ts";
import {
  bundleFiles,
  runCli,
  smallTable,
  syntheticTraces,
  tempDir,
  toJsonl,
} from "./_fixtures.ts";
import { startWatching } from "./_http_helpers.ts";

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

/** Sets a folder's modification time `minutes` ago (versions are ordered by it). */
async function age(path: string, minutes: number): Promise<void> {
  const t = new Date(Date.now() - minutes * 60_000);
  await Deno.utime(path, t, t);
}

Deno.test("writeBundleVersioned() keeps the newest `keep` versions and the one in force", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/bundle`;
  const files = await bundleFiles(smallTable());
  for (let i = 0; i < 5; i++) await writeBundleVersioned(dir, files, 3);
  const versions = await listVersions(dir);
  assert.equal(versions.length, 3);
  assert.equal(versions[0]!.current, true, "the newest is in force");
  assert.equal((await names(tmp.path)).length, 4, "the link and 3 versions");
  await writeBundleVersioned(dir, files, 1);
  assert.equal((await listVersions(dir)).length, 1);
  await assert.rejects(
    () => writeBundleVersioned(dir, files, 0),
    /keep must be a whole number >= 1: got 0/,
  );
});

Deno.test("pruneVersions() never removes the version in force, even the oldest", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/bundle`;
  const files = await bundleFiles(smallTable());
  for (let i = 0; i < 3; i++) await writeBundleVersioned(dir, files, 5);
  const [, , oldest] = await listVersions(dir);
  await age(oldest!.path, 60);
  await pointTo(dir, oldest!.path);
  await pruneVersions(dir, 1);
  const left = await listVersions(dir);
  assert.deepEqual(left.map((v) => v.path), [oldest!.path]);
  await loadBundle(dir);
});

Deno.test("pointTo() refuses a folder that is not a version of the link, and a plain bundle folder", async () => {
  await using tmp = await tempDir();
  const dir = `${tmp.path}/bundle`;
  const files = await bundleFiles(smallTable());
  await writeBundleVersioned(dir, files);
  await Deno.mkdir(`${tmp.path}/other.v-12345678`);
  await assert.rejects(
    () => pointTo(dir, `${tmp.path}/other.v-12345678`),
    /other\.v-12345678 is not a version of .*bundle$/,
  );
  await Deno.mkdir(`${tmp.path}/plain`);
  await assert.rejects(
    () => pointTo(`${tmp.path}/plain`, `${tmp.path}/plain.v-12345678`),
    /plain is not a link to versions \(train --out .*plain makes it one\)/,
  );
});

Deno.test("chooseVersion() takes an id or a unique beginning, else the version before the one in force", () => {
  const v = (id: string, current = false) => ({
    id,
    path: `b.v-${id}`,
    written: 0,
    current,
  });
  const list = [v("aa11aa11"), v("ab22ab22", true), v("cc33cc33")];
  assert.equal(chooseVersion(list, undefined).id, "cc33cc33");
  assert.equal(chooseVersion(list, "aa").id, "aa11aa11");
  assert.equal(chooseVersion(list, "C").id, "cc33cc33");
  assert.throws(
    () => chooseVersion(list, "a"),
    /--to a names more than one version \(aa11aa11, ab22ab22\)/,
  );
  assert.throws(
    () => chooseVersion(list, "zz"),
    /no kept version "zz" \(versions: aa11aa11, ab22ab22, cc33cc33\)/,
  );
  assert.throws(
    () => chooseVersion([v("aa11aa11"), v("cc33cc33", true)], undefined),
    /no version older than the one in force/,
  );
});

Deno.test("train --keep, versions, rollback and eval with two bundles, from the command line", async (t) => {
  await using tmp = await tempDir();
  const traces = `${tmp.path}/t.jsonl`;
  const fresh = `${tmp.path}/fresh.jsonl`;
  await Deno.writeTextFile(
    traces,
    toJsonl(syntheticTraces({ count: 1500, seed: 3 })),
  );
  await Deno.writeTextFile(
    fresh,
    toJsonl(syntheticTraces({ count: 300, seed: 99 })),
  );
  const out = `${tmp.path}/b`;
  const trainRun = (seed: number, keep: string) =>
    runCli([
      "train",
      "--traces",
      traces,
      "--out",
      out,
      "--seed",
      String(seed),
      "--keep",
      keep,
      "--quiet",
      "--allow-uncalibrated",
      "--semantic",
      "off",
    ]);

  await t.step(
    "train --keep 2 keeps two versions after three runs",
    async () => {
      for (const seed of [1, 2, 3]) {
        const run = await trainRun(seed, "2");
        assert.equal(run.code, 0, run.stderr);
      }
      const versions = await listVersions(out);
      assert.equal(versions.length, 2);
      const bad = await trainRun(4, "0");
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--keep must be a whole number >= 1: got "0"/);
      assert.equal((await listVersions(out)).length, 2, "nothing written");
    },
  );

  await t.step("versions lists them with their figures", async () => {
    const run = await runCli(["versions", "--bundle", out, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    const doc = JSON.parse(run.stdout);
    assert.equal(doc.versions.length, 2);
    assert.deepEqual(doc.versions.map((v: { current: boolean }) => v.current), [
      true,
      false,
    ]);
    for (const v of doc.versions) {
      assert.match(v.id, /^[0-9a-f]{8}$/);
      assert.match(v.bundle_id, /^[0-9a-f]{64}$/);
      assert.ok(v.questions.topic.test.n > 0);
      assert.equal(typeof v.questions.topic.test.coverage, "number");
    }
    const words = await runCli(["versions", "--out", out]);
    assert.equal(words.code, 0, words.stderr);
    assert.match(words.stdout, /^bundle .*b: 2 versions kept, newest first/);
    assert.match(
      words.stdout,
      /^\* [0-9a-f]{12} {2}written \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}.*b\.v-[0-9a-f]{8}$/m,
    );
    // Each version is shown by its bundle id: the beginning of the one
    // /v1/health and /v1/stats show whole.
    for (const v of doc.versions) {
      assert.ok(
        words.stdout.includes(` ${v.bundle_id.slice(0, 12)}  written`),
        words.stdout,
      );
    }
    assert.match(
      words.stdout,
      /^ {4}topic: threshold (\d\.\d{4}|none \(uncalibrated\)), test \d+\.\d% certified( at | \(so no)/m,
    );
  });

  await t.step(
    "rollback points the link at the earlier version, by id or by default",
    async () => {
      const [newest, earlier] = await listVersions(out);
      const run = await runCli(["rollback", "--bundle", out]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /now points to .*b\.v-[0-9a-f]{8}/);
      assert.equal(
        await Deno.realPath(out),
        await Deno.realPath(earlier!.path),
      );
      const again = await runCli([
        "rollback",
        "--bundle",
        out,
        "--to",
        newest!.id.slice(0, 4),
      ]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(await Deno.realPath(out), await Deno.realPath(newest!.path));
      // By the bundle id versions shows, too.
      const listed = JSON.parse(
        (await runCli(["versions", "--bundle", out, "--json"])).stdout,
      );
      const older = listed.versions.find((v: { current: boolean }) =>
        !v.current
      );
      const byBundleId = await runCli([
        "rollback",
        "--bundle",
        out,
        "--to",
        older.bundle_id.slice(0, 12),
      ]);
      assert.equal(byBundleId.code, 0, byBundleId.stderr);
      assert.equal(await Deno.realPath(out), await Deno.realPath(older.path));
      await runCli(["rollback", "--bundle", out, "--to", newest!.id]);
      assert.equal(await Deno.realPath(out), await Deno.realPath(newest!.path));
      const unknown = await runCli([
        "rollback",
        "--bundle",
        out,
        "--to",
        "zzzz",
      ]);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /no kept version "zzzz" \(versions: /);
    },
  );

  await t.step(
    "rollback refuses a damaged version and leaves the link",
    async () => {
      const [current, earlier] = await listVersions(out);
      await Deno.writeTextFile(`${earlier!.path}/weights.bin`, "damaged");
      const run = await runCli(["rollback", "--bundle", out]);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /^error: Cannot load bundle .*b\.v-/m);
      assert.equal(
        await Deno.realPath(out),
        await Deno.realPath(current!.path),
      );
      const listed = await runCli(["versions", "--bundle", out]);
      assert.match(listed.stdout, /does not load: Cannot load bundle/);
    },
  );

  await t.step(
    "eval compares two bundles side by side on the same traces",
    async () => {
      const other = `${tmp.path}/other`;
      const trained = await runCli([
        "train",
        "--traces",
        traces,
        "--out",
        other,
        "--alpha",
        "0.2",
        "--quiet",
        "--allow-uncalibrated",
        "--semantic",
        "off",
      ]);
      assert.equal(trained.code, 0, trained.stderr);
      /** `eval` of `bundles` on the fresh traces, with `extra` flags. */
      const evalOf = (bundles: string[], ...extra: string[]) =>
        runCli([
          "eval",
          ...bundles.flatMap((b) => ["--bundle", b]),
          "--traces",
          fresh,
          ...extra,
        ]);
      const run = await evalOf([out, other], "--json");
      assert.equal(run.code, 0, run.stderr);
      const doc = JSON.parse(run.stdout);
      assert.deepEqual(doc.bundles.map((b: { label: string }) => b.label), [
        "A",
        "B",
      ]);
      assert.equal(doc.traces, 300);
      const one = await evalOf([other], "--json");
      const alone = JSON.parse(one.stdout).questions.topic;
      const side = doc.questions.topic[1];
      for (const key of ["n", "certified", "disagreements", "accuracy"]) {
        assert.equal(side[key], alone[key], key);
      }
      const words = await evalOf([out, other]);
      assert.equal(words.code, 0, words.stderr);
      assert.match(words.stdout, /^2 bundles on the same 300 traces:$/m);
      assert.match(words.stdout, /^topic +A +B$/m);
      assert.match(
        words.stdout,
        /^ {2}certified +\d+\.\d% \(\d+\) +\d+\.\d% \(\d+\)$/m,
      );
      const refused = await evalOf([out, other], "--stream");
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /--stream takes one --bundle/);
    },
  );
});

Deno.test("serve --watch follows a rollback", async () => {
  await using tmp = await tempDir();
  const bundle = `${tmp.path}/bundle`;
  await writeBundleVersioned(bundle, await bundleFiles(smallTable()));
  await writeBundleVersioned(
    bundle,
    await bundleFiles(smallTable({ seed: 2 })),
  );
  const [newest, earlier] = await listVersions(bundle);
  const s = await startWatching(bundle, tmp.path);
  const servedId = async () =>
    (await (await fetch(`${s.base}/v1/health`)).json()).bundle_id as string;
  try {
    const first = await servedId();
    const run = await runCli(["rollback", "--bundle", bundle]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      await Deno.realPath(bundle),
      await Deno.realPath(earlier!.path),
    );
    let now = first;
    const end = Date.now() + 10_000;
    while (now === first && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 100));
      now = await servedId();
    }
    assert.notEqual(
      now,
      first,
      `still serving ${newest!.id}: ${s.output().stderr}`,
    );
    assert.match(s.output().stderr, /reloaded bundle/);
  } finally {
    const end = await s.stop();
    assert.equal(end.code, 0, end.stderr);
  }
});
