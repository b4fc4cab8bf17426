/**
 * Child processes the benchmarks (and the fleet test) start: a `main.ts
 * serve` on a free loopback port, a throw-away Redis server, and whether a
 * program is installed at all.
 *
 * @module
 */

import { SERVE_V8_FLAGS } from "../src/cli/serve.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** A loopback port that was free a moment ago. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}

/** True when `command --version` runs (the program is on PATH). */
export async function hasCommand(command: string): Promise<boolean> {
  try {
    await new Deno.Command(command, {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).output();
    return true;
  } catch {
    return false;
  }
}

/** A running `main.ts serve`. */
export interface ServeProcess {
  /** `http://127.0.0.1:PORT`. */
  base: string;
  port: number;
  child: Deno.ChildProcess;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** Options of `startServe`. */
export interface ServeProcessOptions {
  /** `--allow-read` of the child (default: the bundle folder). */
  read?: string;
  /** The program's `main.ts` (default: this checkout's; another checkout's for a before-and-after run). */
  main?: string;
  /** The child's working folder, whose `deno.json` it reads (default: this process's). */
  cwd?: string;
  /** The child's permission flags, instead of the narrow ones. */
  permissions?: readonly string[];
}

/**
 * Starts `main.ts serve --bundle BUNDLE` (no `--bundle` for null: a
 * learning service's `--learn DIR` in `args`) on a free loopback port with
 * `args` after it, under the narrow permissions the README gives (or
 * `o.permissions`), and resolves once its banner says it listens.
 */
export async function startServe(
  bundle: string | null,
  args: readonly string[],
  o: ServeProcessOptions = {},
): Promise<ServeProcess> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      `--v8-flags=${SERVE_V8_FLAGS}`,
      ...(o.permissions ?? [
        "--allow-net=127.0.0.1",
        `--allow-read=${o.read ?? bundle}`,
        "--allow-env=SERVICE_PROXY_TOKEN",
      ]),
      o.main ?? MAIN,
      "serve",
      ...(bundle === null ? [] : ["--bundle", bundle]),
      "--port",
      String(port),
      ...args,
    ],
    env: { SERVICE_PROXY_TOKEN: "" },
    ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let err = "";
  (async () => {
    for await (
      const chunk of child.stderr.pipeThrough(new TextDecoderStream())
    ) {
      err += chunk;
    }
  })().catch(() => {});
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let banner = "";
  while (!banner.includes("listening on")) {
    const { done, value } = await out.read();
    if (done) throw new Error(`serve ended: ${banner}${err}`);
    banner += value;
  }
  (async () => {
    while (!(await out.read()).done) { /* drain */ }
  })().catch(() => {});
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    child,
    stderr: () => err,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/**
 * The resident memory of process `pid` in MB (VmRSS of `/proc/PID/status`,
 * read through `cat`: Deno lets a program read `/proc` only with
 * `--allow-all`).
 */
export async function rssMb(pid: number): Promise<number> {
  const mb = await rssMbOrNull(pid);
  if (mb === null) throw new Error(`no VmRSS for process ${pid}`);
  return mb;
}

/** As `rssMb`, but null where `/proc` does not show it (the process gone, or not Linux). */
export async function rssMbOrNull(pid: number): Promise<number | null> {
  const out = await new Deno.Command("cat", {
    args: [`/proc/${pid}/status`],
    stdout: "piped",
    stderr: "null",
  }).output();
  const m = new TextDecoder().decode(out.stdout).match(/VmRSS:\s+(\d+) kB/);
  return m === null ? null : Number(m[1]) / 1024;
}

/** A running `redis-server`. */
export interface RedisProcess {
  /** `redis://127.0.0.1:PORT`. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts `redis-server` on loopback port `port` (a free one by default)
 * and resolves once it accepts connections (throws after 10 s): without
 * persistence, or with `dir` with an append-only file there (fsync every
 * write), so that a server started again on `dir` has the data of the one
 * stopped.
 */
export async function startRedis(
  port: number = freePort(),
  dir?: string,
): Promise<RedisProcess> {
  const persistence = dir === undefined
    ? ["--appendonly", "no"]
    : ["--appendonly", "yes", "--appendfsync", "always", "--dir", dir];
  const child = new Deno.Command("redis-server", {
    args: [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      ...persistence,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const end = Date.now() + 10_000;
  for (;;) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      break;
    } catch {
      if (Date.now() > end) {
        child.kill("SIGKILL");
        await child.status;
        throw new Error("redis-server did not start within 10 s");
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/** A running nginx in front of replicas. */
export interface NginxProcess {
  /** `http://127.0.0.1:PORT`. */
  base: string;
  stop(): Promise<void>;
}

/**
 * Starts nginx with `deploy/nginx.conf` pointed at the replicas on `ports`
 * (round robin, at most three), listening on a free loopback port, its
 * pid, logs and temporary files in `dir`; resolves once it answers
 * `/v1/health` (throws after 10 s, or when `nginx -t` refuses the file).
 */
export async function startNginx(
  dir: string,
  ports: readonly number[],
): Promise<NginxProcess> {
  const listen = freePort();
  let conf = await Deno.readTextFile(
    new URL("../deploy/nginx.conf", import.meta.url),
  );
  const replace = (from: RegExp, to: string) => {
    if (!from.test(conf)) throw new Error(`deploy/nginx.conf lacks ${from}`);
    conf = conf.replace(from, to);
  };
  ports.forEach((p, i) =>
    replace(new RegExp(`127\\.0\\.0\\.1:801${i + 1}`), `127.0.0.1:${p}`)
  );
  // Fewer replicas than the file names: the rest go.
  for (let i = ports.length; i < 3; i++) {
    replace(new RegExp(`\\s*server 127\\.0\\.0\\.1:801${i + 1}[^;]*;`), "");
  }
  replace(/listen 127\.0\.0\.1:8010;/, `listen 127.0.0.1:${listen};`);
  replace(/pid \S+;/, `pid ${dir}/nginx.pid;`);
  replace(/error_log \S+ warn;/, `error_log ${dir}/error.log warn;`);
  replace(/worker_processes auto;/, "worker_processes 1;");
  const path = `${dir}/nginx.conf`;
  await Deno.writeTextFile(path, conf);
  const base = ["-e", `${dir}/error.log`, "-p", dir, "-c", path];
  const check = await new Deno.Command("nginx", {
    args: ["-t", ...base],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (check.code !== 0) {
    throw new Error(
      `nginx -t refused ${path}: ${new TextDecoder().decode(check.stderr)}`,
    );
  }
  const child = new Deno.Command("nginx", {
    args: [...base, "-g", "daemon off;"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `http://127.0.0.1:${listen}`;
  const end = Date.now() + 10_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/v1/health`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) {
      child.kill("SIGKILL");
      await child.status;
      throw new Error("nginx did not start within 10 s");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base: url,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}
