/**
 * The deployment recipes: `Dockerfile` and `deploy/decision-tables.service`
 * run `serve` under the same permissions as the locked-down command of
 * docs/operations.md (the network on the listen address, reading only the bundle and
 * the token file, the one token variable), and each recipe's command starts
 * and serves locally under exactly its flags. The image is not built here
 * (no container engine): what it copies is checked against what `serve`
 * loads. The unit passes `systemd-analyze verify` where systemd is
 * installed.
 */

import assert from "node:assert/strict";
import { tempDir } from "./_fixtures.ts";
import { freePort } from "./_http_helpers.ts";
import { missingTool } from "./_tools.ts";
import { SERVE_V8_FLAGS } from "../src/cli/serve.ts";
import { refusedPath } from "../src/serve/mod.ts";

const ROOT = new URL("../", import.meta.url);
const ROOT_PATH = ROOT.pathname.replace(/\/$/, "");
const DEMO_BUNDLE = new URL("demo/bundle", ROOT).pathname;
const read = (path: string) => Deno.readTextFile(new URL(path, ROOT));

/** A `deno run` command: its flags before the script, and serve's flags. */
interface RunCommand {
  /** Flags of `deno run` before the script name. */
  denoFlags: string[];
  /** The script and its arguments. */
  script: string[];
}

function splitRun(words: string[], what: string): RunCommand {
  const run = words.indexOf("run");
  const main = words.indexOf("main.ts");
  assert.ok(run >= 0 && main > run, `${what} runs deno run ... main.ts`);
  return { denoFlags: words.slice(run + 1, main), script: words.slice(main) };
}

/** The reference's locked-down command (the first block of "## Locked-down run" in docs/operations.md). */
async function documentedCommand(): Promise<RunCommand> {
  const doc = await read("docs/operations.md");
  const at = doc.indexOf("## Locked-down run");
  assert.ok(at >= 0, "docs/operations.md has a locked-down run");
  const block = doc.slice(at).match(/```sh\n([\s\S]*?)```/)?.[1];
  assert.ok(block, "docs/operations.md shows the locked-down command");
  return splitRun(
    block.replace(/\\\n/g, " ").trim().split(/\s+/),
    "the documented locked-down command",
  );
}

/** The Dockerfile's instructions (continuation lines joined). */
async function dockerfile(): Promise<[string, string][]> {
  const text = (await read("Dockerfile")).replace(/\\\n/g, " ");
  return text.split("\n")
    .filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"))
    .map((l) => {
      const [instruction, ...rest] = l.trim().split(/\s+/);
      return [instruction!.toUpperCase(), rest.join(" ")];
    });
}

/** ENTRYPOINT followed by CMD, both in JSON (exec) form. */
async function dockerCommand(): Promise<string[]> {
  const lines = await dockerfile();
  const json = (name: string) => {
    const found = lines.filter(([i]) => i === name);
    assert.equal(found.length, 1, `one ${name}`);
    return JSON.parse(found[0]![1]) as string[];
  };
  return [...json("ENTRYPOINT"), ...json("CMD")];
}

/** A unit file's settings (continuation lines joined), by `Section.Key`. */
async function unitSettings(
  path = "deploy/decision-tables.service",
): Promise<Map<string, string[]>> {
  const text = (await read(path)).replace(/\\\n/g, " ");
  const settings = new Map<string, string[]>();
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const header = line.match(/^\[(.+)\]$/);
    if (header) {
      section = header[1]!;
      continue;
    }
    const eq = line.indexOf("=");
    const key = `${section}.${line.slice(0, eq)}`;
    settings.set(key, [...(settings.get(key) ?? []), line.slice(eq + 1)]);
  }
  return settings;
}

function one(settings: Map<string, string[]>, key: string): string {
  const values = settings.get(key);
  assert.equal(values?.length, 1, `the unit sets ${key} once`);
  return values[0]!;
}

/** The value of `--flag VALUE` or `--flag=VALUE` among `words`. */
function flag(words: string[], name: string): string | undefined {
  for (let i = 0; i < words.length; i++) {
    if (words[i] === name) return words[i + 1];
    if (words[i]!.startsWith(`${name}=`)) {
      return words[i]!.slice(name.length + 1);
    }
  }
  return undefined;
}

/**
 * Checks that a command's permissions are exactly what its `serve` flags
 * need: the network on the listen address, reading the bundle and the token
 * file, the token variable, nothing else.
 */
function assertLockedDown(c: RunCommand, what: string): void {
  const permissions = c.denoFlags.filter((f) =>
    /^--allow-|^-A$|^--unstable/.test(f)
  );
  assert.deepEqual(
    permissions.map((p) => p.split("=")[0]).sort(),
    ["--allow-env", "--allow-net", "--allow-read"],
    `${what}: only net, read and env are allowed`,
  );
  assert.equal(c.script[1], "serve", `${what} runs serve`);
  const host = flag(c.script, "--host") ?? "127.0.0.1";
  const port = flag(c.script, "--port") ?? "8010";
  assert.equal(flag(c.denoFlags, "--allow-net"), `${host}:${port}`, what);
  const readable = flag(c.denoFlags, "--allow-read")!.split(",").sort();
  const needed = [flag(c.script, "--bundle"), flag(c.script, "--token-file")];
  assert.ok(
    needed.every((p) => p !== undefined),
    `${what}: bundle and token file`,
  );
  assert.deepEqual(readable, (needed as string[]).sort(), what);
  assert.equal(
    flag(c.denoFlags, "--allow-env"),
    flag(c.script, "--token-env") ?? "SERVICE_PROXY_TOKEN",
    what,
  );
}

Deno.test("the documented locked-down command, the Dockerfile and the unit grant the same narrow permissions", async () => {
  const documented = await documentedCommand();
  const docker = splitRun(await dockerCommand(), "the Dockerfile");
  const unit = splitRun(
    one(await unitSettings(), "Service.ExecStart").split(/\s+/),
    "the unit",
  );
  assertLockedDown(documented, "docs/operations.md");
  assertLockedDown(docker, "Dockerfile");
  assertLockedDown(unit, "unit");
  // Deployed copies reach the network only to listen: no download at run time.
  for (const c of [docker, unit]) {
    assert.ok(c.denoFlags.includes("--cached-only"));
    assert.ok(c.denoFlags.includes("--frozen"));
  }
  // Both listen on every interface, so both need the token.
  for (const c of [docker, unit]) {
    assert.equal(flag(c.script, "--host"), "0.0.0.0");
  }
});

Deno.test("the Dockerfile builds on Deno's image of the pinned version and runs as its non-root user", async () => {
  const lines = await dockerfile();
  const ci = await read(".ci/run");
  const pinned = ci.match(/^DENO_VERSION=(\S+)$/m)?.[1];
  assert.ok(pinned, ".ci/run pins a Deno version");
  assert.equal(lines[0]![0], "FROM");
  assert.equal(lines[0]![1], `denoland/deno:${pinned}`);
  const users = lines.filter(([i]) => i === "USER").map(([, u]) => u);
  assert.deepEqual(users, ["deno"]);
  const userAt = lines.findIndex(([i]) => i === "USER");
  const cacheAt = lines.findIndex(([i, a]) =>
    i === "RUN" && a.startsWith("deno cache")
  );
  assert.ok(userAt < cacheAt, "the cache is filled as the user that reads it");
});

Deno.test("the image holds every file serve loads, and .dockerignore lets exactly those in", async () => {
  const lines = await dockerfile();
  const copied = lines.filter(([i]) => i === "COPY").flatMap(([, a]) => {
    const words = a.split(/\s+/);
    return words.slice(0, -1).map((w) => w.replace(/\/$/, ""));
  });
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout));
  const local = (graph.modules as { specifier: string }[])
    .map((m) => m.specifier)
    .filter((s) => s.startsWith(ROOT.href))
    .map((s) => s.slice(ROOT.href.length));
  assert.ok(local.length > 20, "main.ts loads the project's modules");
  for (const file of [...local, "deno.json", "deno.lock"]) {
    assert.ok(
      copied.some((c) => file === c || file.startsWith(`${c}/`)),
      `the image lacks ${file}`,
    );
  }
  const ignore = (await read(".dockerignore")).split("\n")
    .map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
  assert.equal(ignore[0], "*", ".dockerignore starts by excluding everything");
  assert.deepEqual(
    ignore.slice(1).map((l) => l.replace(/^!/, "").replace(/\/$/, "")).sort(),
    [...copied].sort(),
  );
});

Deno.test("the unit runs as a throw-away user that can write nowhere, with the token as a credential", async () => {
  const s = await unitSettings();
  const exec = one(s, "Service.ExecStart").split(/\s+/);
  const bundle = flag(exec, "--bundle")!;
  const tokenFile = flag(exec, "--token-file")!;
  assert.equal(one(s, "Service.DynamicUser"), "yes");
  assert.equal(one(s, "Service.ProtectSystem"), "strict");
  const readOnly = one(s, "Service.ReadOnlyPaths").split(/\s+/);
  assert.ok(readOnly.includes(bundle), "the bundle is read-only");
  assert.ok(readOnly.includes(one(s, "Service.WorkingDirectory")));
  assert.equal(tokenFile, "%d/token", "the token comes from a credential");
  assert.match(one(s, "Service.LoadCredential"), /^token:\//);
  assert.equal(one(s, "Service.CapabilityBoundingSet"), "");
  assert.ok(!s.has("Service.MemoryDenyWriteExecute"), "V8 needs W+X pages");
  // Restarted after any failure: a process that ran out of descriptors
  // exited 2, so exit 2 must not stop restarts; a limit that would not make
  // a thousand connections its end.
  assert.equal(one(s, "Service.Restart"), "on-failure");
  assert.ok(!s.has("Service.RestartPreventExitStatus"));
  assert.equal(one(s, "Service.LimitNOFILE"), "65536");
  assert.equal(one(s, "Service.ExecReload"), "/bin/kill -HUP $MAINPID");
  assert.ok(Number(one(s, "Unit.StartLimitBurst")) > 0, "restarts end");
});

Deno.test("the image, the unit and the compose replicas pass serve's memory flag to V8", async () => {
  const wanted = `--v8-flags=${SERVE_V8_FLAGS}`;
  const docker = splitRun(await dockerCommand(), "the Dockerfile");
  const unit = splitRun(
    one(await unitSettings(), "Service.ExecStart").split(/\s+/),
    "the unit",
  );
  for (const c of [docker, unit]) assert.ok(c.denoFlags.includes(wanted));
  const compose = await read("deploy/compose.yaml");
  assert.match(compose, /"--v8-flags=--max-semi-space-size=4,--expose-gc",/);
});

const noSystemdAnalyze = missingTool(
  "deploy_test",
  "systemd-analyze",
  "apt-get install systemd",
);

Deno.test({
  name: "systemd-analyze verify accepts the unit",
  ignore: noSystemdAnalyze !== null,
}, async () => {
  await using dir = await tempDir();
  // The unit names /usr/local/bin/deno, which verify requires to exist:
  // this machine's Deno stands in for it.
  const unit = (await read("deploy/decision-tables.service"))
    .replace("/usr/local/bin/deno", Deno.execPath());
  const path = `${dir.path}/decision-tables.service`;
  await Deno.writeTextFile(path, unit);
  const out = await new Deno.Command("systemd-analyze", {
    args: ["verify", path],
    stdout: "piped",
    stderr: "piped",
    env: { SYSTEMD_LOG_COLOR: "0" },
  }).output();
  const report = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, report);
  assert.equal(report.trim(), "", report);
});

/**
 * Rewrites the recipe's paths and port to local ones, value by value
 * (comma-separated permission lists included), and checks that each
 * mapping was used.
 */
function localize(words: string[], map: Record<string, string>): string[] {
  const used = new Set<string>();
  const swap = (v: string) => {
    if (v in map) {
      used.add(v);
      return map[v]!;
    }
    return v;
  };
  const out = words.map((w) => {
    const eq = w.indexOf("=");
    if (w.startsWith("--") && eq > 0) {
      return `${w.slice(0, eq)}=${
        w.slice(eq + 1).split(",").map(swap).join(",")
      }`;
    }
    return swap(w);
  });
  assert.deepEqual([...used].sort(), Object.keys(map).sort());
  return out;
}

/** The variables that tell Deno where its cache is, as this process has them. */
function cacheEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * Starts `argv` (a deno command) in the project folder with `env` added;
 * checks it serves with the token from `tokenSource`, then stops it with
 * SIGTERM.
 */
async function assertServes(
  argv: string[],
  port: number,
  token: string,
  tokenSource: RegExp = /access token: set, from file/,
  env: Record<string, string> = {},
  more: {
    /** The folder to start in (the project's by default). */
    cwd?: string;
    /** Run against the server (its base URL) before it is stopped. */
    then?: (base: string) => Promise<void>;
  } = {},
) {
  const child = new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    cwd: more.cwd ?? ROOT_PATH,
    // Nothing of this environment but where Deno keeps its cache.
    env: { NO_COLOR: "1", ...cacheEnv(), ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  let exited = false;
  child.status.then(() => (exited = true));
  try {
    const base = `http://127.0.0.1:${port}`;
    let health: Response | null = null;
    const deadline = Date.now() + 30_000;
    while (health === null && !exited && Date.now() < deadline) {
      try {
        health = await fetch(`${base}/v1/health`);
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.ok(health, "the server answered /v1/health");
    assert.equal(health.status, 200);
    await health.body?.cancel();
    const denied = await fetch(`${base}/v1/stats`);
    await denied.body?.cancel();
    assert.equal(denied.status, 401, "the token is required");
    const decide = await fetch(`${base}/v1/decide`, {
      method: "POST",
      headers: { "x-service-token": token },
      body: JSON.stringify({ state: "where is my parcel?" }),
    });
    assert.equal(decide.status, 200);
    assert.ok((await decide.json()).answers.topic);
    await more.then?.(base);
  } finally {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
    const out = await output;
    const text = new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    assert.match(text, tokenSource);
    assert.doesNotMatch(text, /NotCapable|PermissionDenied|Requires .* access/);
  }
}

Deno.test("the Dockerfile's command serves locally under exactly its permissions", async () => {
  await using dir = await tempDir();
  const token = `tok-${crypto.randomUUID()}`;
  await Deno.writeTextFile(`${dir.path}/token`, token);
  const port = String(freePort());
  const argv = localize(await dockerCommand(), {
    deno: Deno.execPath(),
    "/bundle": DEMO_BUNDLE,
    "/run/secrets/token": `${dir.path}/token`,
    "0.0.0.0:8010": `0.0.0.0:${port}`,
    "8010": port,
  });
  await assertServes(argv, Number(port), token);
});

Deno.test("the image with the token in a variable, as docs/operations.md shows, serves locally too", async () => {
  const doc = await read("docs/operations.md");
  const shown = doc.match(
    /`docker run \.\.\. -e SERVICE_PROXY_TOKEN decision-tables (serve [^`]+)`/,
  )?.[1];
  assert.ok(
    shown,
    "docs/operations.md shows the command with the token variable",
  );
  const command = await dockerCommand();
  const entrypoint = command.slice(0, command.indexOf("main.ts") + 1);
  const token = `tok-${crypto.randomUUID()}`;
  const port = String(freePort());
  const argv = localize([...entrypoint, ...shown.split(/\s+/)], {
    deno: Deno.execPath(),
    "/bundle": DEMO_BUNDLE,
    "0.0.0.0:8010": `0.0.0.0:${port}`,
  });
  argv.push("--port", port);
  await assertServes(
    argv,
    Number(port),
    token,
    /access token: set, from environment variable SERVICE_PROXY_TOKEN/,
    { SERVICE_PROXY_TOKEN: token },
  );
});

Deno.test("the unit's ExecStart serves locally under exactly its permissions", async () => {
  await using dir = await tempDir();
  const token = `tok-${crypto.randomUUID()}`;
  // systemd's credentials folder (%d) holds the token.
  await Deno.writeTextFile(`${dir.path}/token`, token);
  const settings = await unitSettings();
  const exec = one(settings, "Service.ExecStart").split(/\s+/);
  const bundle = flag(exec, "--bundle")!;
  const port = String(freePort());
  const argv = localize(exec, {
    "/usr/local/bin/deno": Deno.execPath(),
    [bundle]: DEMO_BUNDLE,
    "%d/token": `${dir.path}/token`,
    "0.0.0.0:8010": `0.0.0.0:${port}`,
    "8010": port,
  });
  await assertServes(argv, Number(port), token);
});

/** The last ExecStart of a unit or drop-in (a drop-in first clears the unit's). */
function lastExecStart(settings: Map<string, string[]>): string[] {
  const values = settings.get("Service.ExecStart") ?? [];
  return values.at(-1)!.trim().split(/\s+/);
}

/**
 * Checks the permissions of a command run with `--feedback-log` and
 * `--watch`: the locked-down set, but the folder holding the bundle
 * readable (what `--watch` watches) and the log file, alone, writable.
 */
function assertLoggedAndWatched(c: RunCommand, what: string): void {
  const permissions = c.denoFlags.filter((f) =>
    /^--allow-|^-A$|^--unstable/.test(f)
  );
  assert.deepEqual(
    permissions.map((p) => p.split("=")[0]).sort(),
    ["--allow-env", "--allow-net", "--allow-read", "--allow-write"],
    what,
  );
  assert.ok(c.denoFlags.includes(`--v8-flags=${SERVE_V8_FLAGS}`), what);
  assert.ok(c.script.includes("--watch"), `${what} watches the bundle`);
  const bundle = flag(c.script, "--bundle")!;
  const log = flag(c.script, "--feedback-log");
  assert.ok(log, `${what} keeps a feedback log`);
  // The log and its side file (feedback that is no label), alone.
  assert.equal(
    flag(c.denoFlags, "--allow-write"),
    `${log},${refusedPath(log)}`,
    what,
  );
  const readable = flag(c.denoFlags, "--allow-read")!.split(",").sort();
  const parent = bundle.slice(0, bundle.lastIndexOf("/"));
  // The log is readable too: at start the server cuts off a line a crash
  // left torn.
  assert.deepEqual(
    readable,
    [parent, flag(c.script, "--token-file")!, log, refusedPath(log)].sort(),
    what,
  );
  assert.equal(flag(c.denoFlags, "--allow-env"), "SERVICE_PROXY_TOKEN", what);
}

/** A folder holding a copy of the demo bundle at `name`. */
async function bundleFolder(dir: string, name: string): Promise<string> {
  const target = `${dir}/${name}`;
  await Deno.mkdir(target, { recursive: true });
  for await (const e of Deno.readDir(DEMO_BUNDLE)) {
    if (e.isFile) {
      await Deno.copyFile(`${DEMO_BUNDLE}/${e.name}`, `${target}/${e.name}`);
    }
  }
  return target;
}

/** Sends one feedback item the demo bundle knows and checks `log` holds its line. */
function feedbackLands(token: string, log: string) {
  return async (base: string) => {
    const headers = { "x-service-token": token };
    const state = "where is my parcel?";
    const decided = await (await fetch(`${base}/v1/decide`, {
      method: "POST",
      headers,
      body: JSON.stringify({ state }),
    })).json();
    const answer = decided.answers.topic.choice;
    const res = await fetch(`${base}/v1/feedback`, {
      method: "POST",
      headers,
      body: JSON.stringify({ question: "topic", state, answer }),
    });
    assert.equal(res.status, 200, await res.text());
    const lines = (await Deno.readTextFile(log)).trim().split("\n");
    assert.equal(JSON.parse(lines.at(-1)!).answers.topic, answer);
  };
}

Deno.test("the unit's drop-in for a feedback log and --watch grants exactly what they need, and serves locally", async () => {
  const dropIn = await unitSettings(
    "deploy/decision-tables.service.d/feedback-and-watch.conf",
  );
  assert.deepEqual(
    dropIn.get("Service.ExecStart")?.[0],
    "",
    "it clears ExecStart",
  );
  const exec = lastExecStart(dropIn);
  const c = splitRun(exec, "the drop-in");
  assertLoggedAndWatched(c, "the drop-in");
  const log = flag(c.script, "--feedback-log")!;
  const state = one(dropIn, "Service.StateDirectory");
  assert.ok(
    log.startsWith(`/var/lib/${state}/`),
    "the log is in the state folder",
  );

  await using dir = await tempDir();
  const token = `tok-${crypto.randomUUID()}`;
  await Deno.writeTextFile(`${dir.path}/token`, token);
  const bundle = flag(c.script, "--bundle")!;
  const parent = bundle.slice(0, bundle.lastIndexOf("/"));
  const local = await bundleFolder(`${dir.path}/srv`, "bundle");
  const port = String(freePort());
  const argv = localize(exec, {
    "/usr/local/bin/deno": Deno.execPath(),
    [parent]: `${dir.path}/srv`,
    [bundle]: local,
    "%d/token": `${dir.path}/token`,
    [log]: `${dir.path}/feedback.jsonl`,
    [refusedPath(log)]: `${dir.path}/feedback.refused.jsonl`,
    "0.0.0.0:8010": `0.0.0.0:${port}`,
    "8010": port,
  });
  await assertServes(argv, Number(port), token, undefined, {}, {
    then: feedbackLands(token, `${dir.path}/feedback.jsonl`),
  });
});

Deno.test("the Dockerfile's command with a feedback log and --watch grants exactly what they need, and serves locally", async () => {
  const text = await read("Dockerfile");
  const shown = text.replace(/\\\n#\s*/g, " ").match(
    /--entrypoint deno decision-tables (run [^\n]+)/,
  )?.[1];
  assert.ok(shown, "the Dockerfile shows the command");
  const words = ["deno", ...shown.trim().split(/\s+/)];
  const c = splitRun(words, "the Dockerfile's logged command");
  assertLoggedAndWatched(c, "the Dockerfile's logged command");
  await using dir = await tempDir();
  const token = `tok-${crypto.randomUUID()}`;
  await Deno.writeTextFile(`${dir.path}/token`, token);
  const local = await bundleFolder(`${dir.path}/bundles`, "current");
  const port = String(freePort());
  const argv = localize(words, {
    deno: Deno.execPath(),
    "/bundles": `${dir.path}/bundles`,
    "/bundles/current": local,
    "/run/secrets/token": `${dir.path}/token`,
    "/logs/feedback.jsonl": `${dir.path}/feedback.jsonl`,
    "/logs/feedback.refused.jsonl": `${dir.path}/feedback.refused.jsonl`,
    "0.0.0.0:8010": `0.0.0.0:${port}`,
    "8010": port,
  });
  await assertServes(argv, Number(port), token, undefined, {}, {
    then: feedbackLands(token, `${dir.path}/feedback.jsonl`),
  });
});

Deno.test("deploy/install.sh copies only what serve loads, with its packages cached, and the unit's command serves from there", async () => {
  const script = await read("deploy/install.sh");
  const ci = await read(".ci/run");
  assert.equal(
    script.match(/^DENO_VERSION=(\S+)$/m)?.[1],
    ci.match(/^DENO_VERSION=(\S+)$/m)?.[1],
    "the script pins the Deno the tests use",
  );
  await using dir = await tempDir();
  const prefix = `${dir.path}/opt`;
  const out = await new Deno.Command("sh", {
    args: ["deploy/install.sh"],
    cwd: ROOT_PATH,
    env: {
      PREFIX: prefix,
      DENO: Deno.execPath(),
      UNIT_DIR: `${dir.path}/units`,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const said = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, said);
  const installed: string[] = [];
  for await (const e of Deno.readDir(prefix)) installed.push(e.name);
  const copied = (await dockerfile()).filter(([i]) => i === "COPY")
    .flatMap(([, a]) => a.split(/\s+/).slice(0, -1))
    .map((w) => w.replace(/\/$/, ""));
  assert.deepEqual(installed.sort(), [...copied, "deno-dir"].sort());
  assert.equal(
    await Deno.readTextFile(`${dir.path}/units/decision-tables.service`),
    await read("deploy/decision-tables.service"),
  );

  // The unit's command, run in the installed folder with its cache only.
  const token = `tok-${crypto.randomUUID()}`;
  await Deno.writeTextFile(`${dir.path}/token`, token);
  const settings = await unitSettings();
  assert.equal(
    one(settings, "Service.WorkingDirectory"),
    "/opt/decision-tables",
  );
  const exec = lastExecStart(settings);
  const port = String(freePort());
  const argv = localize(exec, {
    "/usr/local/bin/deno": Deno.execPath(),
    [flag(exec, "--bundle")!]: DEMO_BUNDLE,
    "%d/token": `${dir.path}/token`,
    "0.0.0.0:8010": `0.0.0.0:${port}`,
    "8010": port,
  });
  await assertServes(argv, Number(port), token, undefined, {
    DENO_DIR: `${prefix}/deno-dir`,
  }, { cwd: prefix });
});

Deno.test("deploy/install.sh without a unit folder says how to serve instead of systemctl, and that command runs", async () => {
  await using dir = await tempDir();
  const prefix = `${dir.path}/opt`;
  const out = await new Deno.Command("sh", {
    args: ["deploy/install.sh"],
    cwd: ROOT_PATH,
    env: { PREFIX: prefix, DENO: Deno.execPath(), UNIT_DIR: "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const said = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, said);
  assert.doesNotMatch(said, /systemctl/, said);
  assert.match(said, /no unit: UNIT_DIR is empty/);
  const command = said.split("\n").find((l) => /^ {2}cd /.test(l));
  assert.ok(command, said);
  const help = await new Deno.Command("sh", {
    args: ["-c", command.replace("serve --bundle BUNDLE", "serve --help")],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(help.code, 0, new TextDecoder().decode(help.stderr));
  assert.match(new TextDecoder().decode(help.stdout), /^Usage: serve /);
});
