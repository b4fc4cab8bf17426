/**
 * Starts a server for the browser test: the real one (`main.ts serve` on
 * the demo bundle) in a child process, or, while the project does not have
 * a `serve` command or a demo bundle yet, the in-process stand-in of
 * `_browser_fake_server.ts`.
 *
 * @module
 */

import { startFakeServer } from "./_browser_fake_server.ts";

const ROOT = new URL("../", import.meta.url);
const BUNDLE = "demo/bundle";

/** A running server the test can talk to. */
export interface TestServer {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  base: string;
  /** Whether this is the real `main.ts serve` (false: the stand-in). */
  real: boolean;
  /** Stops the server and waits until it is gone. */
  close(): Promise<void>;
}

function exists(rel: string): boolean {
  try {
    Deno.statSync(new URL(rel, ROOT));
    return true;
  } catch {
    return false;
  }
}

/** Whether the real server can be started from this checkout. */
export function realServerAvailable(): boolean {
  return exists("main.ts") && exists("src/cli/serve.ts") &&
    exists(`${BUNDLE}/manifest.json`);
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

async function waitForHealth(
  base: string,
  child: Deno.ChildProcess,
  log: () => string,
): Promise<void> {
  let exited = false;
  child.status.then(() => (exited = true));
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (exited) {
      throw new Error(`The server exited before it answered:\n${log()}`);
    }
    try {
      const res = await fetch(`${base}/v1/health`);
      await res.body?.cancel();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `The server did not answer /v1/health within 20 s:\n${log()}`,
  );
}

/**
 * Starts a server on a free port; `token`, when given, is set as
 * `SERVICE_PROXY_TOKEN` so every route but health asks for it, and `flags`
 * are added to the `serve` command line (the stand-in understands
 * `--keep-text` and, as a pair with fixed values, the savings flags).
 */
export async function startServer(
  opts: { token?: string; flags?: string[] } = {},
): Promise<TestServer> {
  const flags = opts.flags ?? [];
  if (!realServerAvailable()) {
    const server = startFakeServer({
      ...(opts.token ? { token: opts.token } : {}),
      keepText: flags.includes("--keep-text"),
      savings: flags.includes("--llm-latency-ms"),
    });
    return {
      base: `http://127.0.0.1:${server.addr.port}`,
      real: false,
      close: () => server.shutdown(),
    };
  }
  const port = freePort();
  // The child gets this process's environment, with the token as asked
  // (and none at all when not asked, whatever the caller's shell has set).
  const env = Deno.env.toObject();
  delete env.SERVICE_PROXY_TOKEN;
  if (opts.token) env.SERVICE_PROXY_TOKEN = opts.token;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-read",
      "--allow-env",
      "main.ts",
      "serve",
      "--bundle",
      BUNDLE,
      "--port",
      String(port),
      ...flags,
    ],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) {
      output += decoder.decode(chunk, { stream: true });
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const base = `http://127.0.0.1:${port}`;
  const close = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
    await child.status;
    await drained;
  };
  try {
    await waitForHealth(base, child, () => output);
  } catch (err) {
    await close();
    throw err;
  }
  return { base, real: true, close };
}
