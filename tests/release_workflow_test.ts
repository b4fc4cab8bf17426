/**
 * What a release produces and how a fleet probes readiness, checked where
 * they cannot run: `.github/workflows/release.yml` parses, builds a binary
 * for every platform the README names with a `--target` Deno accepts, the
 * container image of the Dockerfile and SHA-256 checksums; the compose
 * example's readiness probe, run here with this machine's Deno, passes for
 * a ready replica and fails for one whose live store never answered.
 */

import assert from "node:assert/strict";
import { parse } from "yaml";
import { freePort, startServer } from "./_http_helpers.ts";
import { tempDir } from "./_fixtures.ts";

const ROOT = new URL("../", import.meta.url);
const DEMO_BUNDLE = new URL("demo/bundle", ROOT).pathname;
const read = (path: string) => Deno.readTextFile(new URL(path, ROOT));

// deno-lint-ignore no-explicit-any
type Json = any;

/** The targets `deno compile --target` accepts, from its own refusal of a wrong one. */
async function acceptedTargets(): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["compile", "--target", "no-such-target", "main.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.notEqual(out.code, 0);
  const said = new TextDecoder().decode(out.stderr);
  const list = said.match(/possible values: ([^\n]+)/)?.[1];
  assert.ok(list, said);
  return list.split(",").map((t) => t.trim()).filter((t) => t !== "");
}

Deno.test("the release workflow parses and builds every platform with a target Deno accepts, the image and checksums", async () => {
  const workflow: Json = parse(await read(".github/workflows/release.yml"));
  assert.deepEqual(workflow.on.push.tags, ["v[0-9]+.[0-9]+.[0-9]+"]);
  const ci = await read(".ci/run");
  assert.equal(
    workflow.env.DENO_VERSION,
    ci.match(/^DENO_VERSION=(\S+)$/m)?.[1],
    "the Deno the tests use",
  );
  const { binaries, image, release } = workflow.jobs;
  const targets: string[] = binaries.strategy.matrix.include.map((
    m: Json,
  ) => m.target);
  assert.deepEqual(targets.sort(), [
    "aarch64-apple-darwin",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "x86_64-pc-windows-msvc",
    "x86_64-unknown-linux-gnu",
  ]);
  const accepted = await acceptedTargets();
  // Every --target written out in a step, too.
  const runs: string[] = Object.values(workflow.jobs).flatMap((j: Json) =>
    j.steps.map((s: Json) => s.run ?? "")
  );
  const named = runs.flatMap((r) =>
    [...r.matchAll(/--target ([^\s$]+)/g)].map((m) => m[1]!)
  );
  for (const t of [...targets, ...named]) {
    assert.ok(accepted.includes(t), `deno compile refuses --target ${t}`);
  }
  assert.ok(
    runs.some((r) =>
      /deno task compile --target \$\{\{ matrix\.target \}\}/.test(r)
    ),
    "the binaries come from deno task compile",
  );
  const build = image.steps.find((s: Json) =>
    String(s.uses).startsWith("docker/build-push-action")
  );
  assert.equal(build.with.context, ".", "the image is the Dockerfile's");
  assert.deepEqual(release.needs, ["binaries", "image"]);
  const releaseRuns = release.steps.map((s: Json) => s.run ?? "").join("\n");
  assert.match(releaseRuns, /sha256sum -- \* > SHA256SUMS/);
  assert.match(releaseRuns, /gh release create "\$GITHUB_REF_NAME" dist\/\*/);
});

Deno.test("the README says what a release produces", async () => {
  const readme = await read("README.md");
  assert.match(
    readme,
    /Each release also publishes `dtable` as one binary for Linux and macOS/,
  );
});

Deno.test("the compose replicas' readiness probe passes for a ready replica and fails before its live store answers", async () => {
  const compose: Json = parse(await read("deploy/compose.yaml"), {
    merge: true,
  });
  const probes = ["replica1", "replica2", "replica3"].map((r) =>
    compose.services[r].healthcheck?.test
  );
  for (const p of probes) assert.deepEqual(p, probes[0]);
  const [cmd, deno, evalWord, script] = probes[0] as string[];
  assert.deepEqual([cmd, deno, evalWord], ["CMD", "deno", "eval"]);
  assert.deepEqual(compose.services.nginx.depends_on, {
    replica1: { condition: "service_healthy" },
    replica2: { condition: "service_healthy" },
    replica3: { condition: "service_healthy" },
  });

  await using dir = await tempDir();
  const token = `tok-${crypto.randomUUID()}`;
  await Deno.writeTextFile(`${dir.path}/token`, `${token}\n`);
  await Deno.writeTextFile(`${dir.path}/audit.key`, "a shared secret key");
  const probe = async (base: string) => {
    const local = script!
      .replace("http://127.0.0.1:8010", base)
      .replace("/run/secrets/token", `${dir.path}/token`);
    assert.notEqual(local, script, "the probe names the port and the token");
    return (await new Deno.Command(Deno.execPath(), {
      args: ["eval", local],
      stdout: "null",
      stderr: "null",
    }).output()).code;
  };
  const ready = await startServer({
    bundle: DEMO_BUNDLE,
    args: ["--token-file", `${dir.path}/token`],
    read: [dir.path],
  });
  try {
    assert.equal(await probe(ready.base), 0);
  } finally {
    await ready.stop();
  }
  const waiting = await startServer({
    bundle: DEMO_BUNDLE,
    args: [
      "--token-file",
      `${dir.path}/token`,
      "--audit-key-file",
      `${dir.path}/audit.key`,
      "--live-store",
      `redis://127.0.0.1:${freePort()}`,
    ],
    read: [dir.path],
  });
  try {
    assert.equal(await probe(waiting.base), 1);
  } finally {
    const end = await waiting.stop();
    assert.equal(end.code, 0, end.stderr);
  }
});
