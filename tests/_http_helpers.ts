/**
 * Helpers for the HTTP tests: small bundles written to temporary folders,
 * a real `main.ts serve` child process on a free port, and a raw HTTP/1.1
 * client over a TCP socket for what `fetch` hides (framing, keep-alive,
 * malformed headers).
 *
 * @module
 */

import { writeBundleAtomically } from "../src/bundle/files.ts";
import type { TableSettings } from "../src/engine/table.ts";
import { bundleFiles, smallTable } from "./_fixtures.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Writes the shared small synthetic table (`topic` choice, `urgent` yes/no,
 * uncalibrated `coin`) to `dir` as a bundle, with `settings` overriding the
 * trained ones. Returns `dir`.
 */
export async function writeTestBundle(
  dir: string,
  settings: Partial<TableSettings> = {},
): Promise<string> {
  const r = smallTable();
  const table = { ...r.table, settings: { ...r.table.settings, ...settings } };
  await writeBundleAtomically(dir, await bundleFiles({ ...r, table }));
  return dir;
}

/** A port nothing listens on right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** How to start a server. */
export interface ServerOptions {
  /** The bundle to serve; absent for a learning service started without one (`--learn DIR` in `args`). */
  bundle?: string;
  /** Extra `serve` flags. */
  args?: string[];
  /** Environment of the child; `SERVICE_PROXY_TOKEN` is emptied unless given. */
  env?: Record<string, string>;
  /** Permission flags of `deno run`; by default net on the host, read on the bundle and `read`, write on `write` alone, env on the token variable. */
  permissions?: string[];
  /** Further paths the child may read, with the default permissions. */
  read?: string[];
  /** Paths the child may write, with the default permissions (none by default). */
  write?: string[];
  /** Port to ask for; 0 (a free one) by default. */
  port?: number;
  host?: string;
  /** Most open file descriptors of the child (`ulimit -n` in a shell that then runs it); the shell's own by default. */
  openFiles?: number;
}

/** How a server process ended. */
export interface ServerExit {
  code: number;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** A running `main.ts serve` child. */
export interface RunningServer {
  base: string;
  port: number;
  pid: number;
  /** Everything printed so far. */
  output(): { stdout: string; stderr: string };
  /** Sends `signal` (SIGINT by default) and waits for the exit. */
  stop(signal?: Deno.Signal): Promise<ServerExit>;
}

interface Collected {
  text: string;
  done: Promise<void>;
}

function collect(
  stream: ReadableStream<Uint8Array>,
  onText: () => void,
): Collected {
  const c: Collected = { text: "", done: Promise.resolve() };
  c.done = (async () => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      c.text += chunk;
      onText();
    }
  })();
  return c;
}

/** Runs `main.ts serve` with `args` until it exits (for startup failures). */
export async function runServe(
  args: string[],
  permissions: string[] = ["--allow-net", "--allow-read", "--allow-env"],
  env: Record<string, string> = {},
): Promise<ServerExit> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...permissions, MAIN, "serve", ...args],
    env: { SERVICE_PROXY_TOKEN: "", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    signal: out.signal,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

/**
 * Starts `main.ts serve` and resolves once the banner names the address it
 * listens on. Throws (after stopping the child) when it exits or stays
 * silent for 30 s.
 */
export async function startServer(o: ServerOptions): Promise<RunningServer> {
  const host = o.host ?? "127.0.0.1";
  const permissions = o.permissions ?? [
    `--allow-net=${host}`,
    `--allow-read=${
      [...o.bundle === undefined ? [] : [o.bundle], ...o.read ?? []].join(",")
    }`,
    ...(o.write === undefined ? [] : [`--allow-write=${o.write.join(",")}`]),
    "--allow-env=SERVICE_PROXY_TOKEN",
  ];
  const argv = [
    "run",
    "--quiet",
    ...permissions,
    MAIN,
    "serve",
    ...(o.bundle === undefined ? [] : ["--bundle", o.bundle]),
    "--host",
    host,
    "--port",
    String(o.port ?? 0),
    ...(o.args ?? []),
  ];
  // `exec` keeps the pid: the child is the server itself.
  const [command, args] = o.openFiles === undefined
    ? [Deno.execPath(), argv]
    : ["bash", [
      "-c",
      `ulimit -n ${o.openFiles} && exec "$0" "$@"`,
      Deno.execPath(),
      ...argv,
    ]];
  const child = new Deno.Command(command, {
    args,
    env: { SERVICE_PROXY_TOKEN: "", NO_COLOR: "1", ...o.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let wake = () => {};
  const stdout = collect(child.stdout, () => wake());
  const stderr = collect(child.stderr, () => wake());
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    wake();
    return s;
  });
  const finish = async (): Promise<ServerExit> => {
    const s = await status;
    await Promise.all([stdout.done, stderr.done]);
    return {
      code: s.code,
      signal: s.signal,
      stdout: stdout.text,
      stderr: stderr.text,
    };
  };
  const listening = /listening on http:\/\/(\S+?):(\d+)\//;
  const deadline = Date.now() + 30_000;
  let match: RegExpMatchArray | null = null;
  while ((match = stdout.text.match(listening)) === null) {
    if (exited || Date.now() > deadline) {
      if (!exited) child.kill("SIGKILL");
      const end = await finish();
      throw new Error(
        `server did not start (exit ${end.code}): ${end.stderr}${end.stdout}`,
      );
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => resolve(), 100);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  const port = Number(match[2]);
  const shown = match[1]!;
  return {
    base: `http://${
      shown.includes(":") || shown === "0.0.0.0" ? "127.0.0.1" : shown
    }:${port}`,
    port,
    pid: child.pid,
    output: () => ({ stdout: stdout.text, stderr: stderr.text }),
    async stop(signal: Deno.Signal = "SIGINT") {
      if (!exited) {
        try {
          child.kill(signal);
        } catch {
          // already gone
        }
      }
      return await finish();
    },
  };
}

/** A parsed HTTP response read off a raw socket. */
export interface RawResponse {
  status: number;
  headers: Map<string, string>;
  /** The header lines as sent (a repeated header shows twice here). */
  headerLines: string[];
  body: string;
}

function indexOfCrlfCrlf(buf: Uint8Array): number {
  for (let i = 0; i + 3 < buf.length; i++) {
    if (
      buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 &&
      buf[i + 3] === 10
    ) return i;
  }
  return -1;
}

/** A bare HTTP/1.1 client on one TCP connection, to see exactly what goes over the wire. */
export class RawClient {
  #conn: Deno.TcpConn;
  #buf = new Uint8Array(0);
  #eof = false;
  #closed = false;

  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
  }

  /** Connects to 127.0.0.1:`port`. */
  static async open(port: number): Promise<RawClient> {
    return new RawClient(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  /** Writes raw bytes (a string is sent as UTF-8). */
  async send(data: string | Uint8Array): Promise<void> {
    let bytes = typeof data === "string" ? encoder.encode(data) : data;
    while (bytes.length > 0) {
      const n = await this.#conn.write(bytes);
      bytes = bytes.subarray(n);
    }
  }

  /** Reads more bytes; false at end of stream (or a reset), or after `timeoutMs`. */
  async #fill(timeoutMs: number): Promise<boolean> {
    if (this.#eof) return false;
    const chunk = new Uint8Array(65536);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const read = this.#conn.read(chunk).catch(() => null);
    const n = await Promise.race([read, timeout]);
    clearTimeout(timer);
    if (n === "timeout") throw new Error(`no data within ${timeoutMs} ms`);
    if (n === null) {
      this.#eof = true;
      return false;
    }
    const next = new Uint8Array(this.#buf.length + n);
    next.set(this.#buf);
    next.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = next;
    return true;
  }

  /**
   * Reads one whole response (Content-Length or chunked framing); with
   * `noBody`, only its head (the reply to a HEAD request).
   */
  async response(timeoutMs = 10_000, noBody = false): Promise<RawResponse> {
    let end: number;
    while ((end = indexOfCrlfCrlf(this.#buf)) < 0) {
      if (!(await this.#fill(timeoutMs))) {
        throw new Error(
          `connection closed before a response: ${decoder.decode(this.#buf)}`,
        );
      }
    }
    const head = decoder.decode(this.#buf.subarray(0, end)).split("\r\n");
    this.#buf = this.#buf.subarray(end + 4);
    const status = Number(head[0]!.split(" ")[1]);
    const headers = new Map<string, string>();
    for (const line of head.slice(1)) {
      const colon = line.indexOf(":");
      headers.set(
        line.slice(0, colon).trim().toLowerCase(),
        line.slice(colon + 1).trim(),
      );
    }
    // Interim responses (100 Continue) have no body; the real one follows.
    if (status >= 100 && status < 200) {
      return await this.response(timeoutMs, noBody);
    }
    const length = headers.get("content-length");
    let body: Uint8Array;
    if (noBody) body = new Uint8Array(0);
    else if (length !== undefined) {
      const n = Number(length);
      while (this.#buf.length < n) {
        if (!(await this.#fill(timeoutMs))) {
          throw new Error("connection closed inside a body");
        }
      }
      body = this.#buf.subarray(0, n);
      this.#buf = this.#buf.subarray(n);
    } else if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") {
      const parts: Uint8Array[] = [];
      for (;;) {
        let lineEnd: number;
        while ((lineEnd = this.#indexOfCrlf()) < 0) {
          if (!(await this.#fill(timeoutMs))) {
            throw new Error("connection closed inside a chunk");
          }
        }
        const size = parseInt(
          decoder.decode(this.#buf.subarray(0, lineEnd)),
          16,
        );
        while (this.#buf.length < lineEnd + 2 + size + 2) {
          if (!(await this.#fill(timeoutMs))) {
            throw new Error("connection closed inside a chunk");
          }
        }
        parts.push(this.#buf.slice(lineEnd + 2, lineEnd + 2 + size));
        this.#buf = this.#buf.subarray(lineEnd + 2 + size + 2);
        if (size === 0) break;
      }
      body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) {
        body.set(p, at);
        at += p.length;
      }
    } else {
      while (await this.#fill(timeoutMs)) { /* read to the end */ }
      body = this.#buf;
      this.#buf = new Uint8Array(0);
    }
    return {
      status,
      headers,
      headerLines: head.slice(1),
      body: decoder.decode(body),
    };
  }

  #indexOfCrlf(): number {
    for (let i = 0; i + 1 < this.#buf.length; i++) {
      if (this.#buf[i] === 13 && this.#buf[i + 1] === 10) return i;
    }
    return -1;
  }

  /** True when the server closes the connection within `timeoutMs` (nothing else arrives). */
  async closedByServer(timeoutMs = 5_000): Promise<boolean> {
    try {
      while (await this.#fill(timeoutMs)) { /* discard */ }
      return true;
    } catch {
      return false;
    }
  }

  /** Closes the socket. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // already closed
    }
  }
}

/** A raw POST request with a JSON body and keep-alive. */
export function rawPost(path: string, body: string, extraHeaders = ""): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${
      encoder.encode(body).length
    }\r\n${extraHeaders}\r\n${body}`;
}

/** POSTs JSON to a running server; returns status, headers and parsed body. */
export async function postJson(
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<
  { status: number; headers: Headers; json: Record<string, unknown> }
> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

/** GETs a path; returns status, headers and the body text. */
export async function getText(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${base}${path}`, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/**
 * POSTs one feedback item on `question` (`topic`, the test bundle's, by
 * default): the model answered `state` with `answer`, with audit id
 * `audit` when given.
 */
export function postFeedback(
  base: string,
  state: string,
  answer: string,
  audit?: string,
  question = "topic",
): ReturnType<typeof postJson> {
  return postJson(base, "/v1/feedback", { question, state, answer, audit });
}

/** Waits until `test` holds (polling every 50 ms), or fails naming `what()` after `ms`. */
export async function eventually(
  test: () => boolean | Promise<boolean>,
  what: () => string,
  ms = 10_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await test()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Timed out waiting for ${what()}`);
}

/** Starts `serve --watch` of `bundle`, allowed to read `dir` (the folder the bundle, or its versions, are written in). */
export function startWatching(
  bundle: string,
  dir: string,
): Promise<RunningServer> {
  return startServer({
    bundle,
    args: ["--watch"],
    permissions: [
      "--allow-net=127.0.0.1",
      `--allow-read=${dir}`,
      "--allow-env=SERVICE_PROXY_TOKEN",
    ],
  });
}

/**
 * Calls `replace` (which writes a new bundle where `s` watches) until `s`
 * says it reloaded: at most 5 times, waiting 2 s after each, as the watch
 * may take a moment to be in place. Returns either way; the caller asserts.
 */
export async function replaceUntilReloaded(
  s: RunningServer,
  replace: () => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < 5 && !/reloaded bundle/.test(s.output().stderr); i++) {
    await replace();
    await eventually(
      () => /reloaded bundle/.test(s.output().stderr),
      () => `the reload: ${s.output().stderr}`,
      2000,
    ).catch(() => {});
  }
}
