/**
 * `deno task compile`: one self-contained binary of the command line (the
 * dashboard and the OpenAPI document are static imports, so they are
 * embedded), written to `dist/dtable` only when `deno compile` succeeds.
 *
 * `deno compile` embeds a Deno runtime (`denort`) that it downloads from
 * dl.deno.land the first time for each Deno version and target, then
 * caches. Offline, that download fails. This wrapper compiles into a
 * temporary folder beside the output and moves the binary into place only
 * on success: a failure leaves nothing behind (no empty `dist/`, no partial
 * binary) and prints one line, with exit code 2.
 *
 * Usage: deno task compile [--output PATH] [--target TRIPLE]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { basename, dirname, join, resolve } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;

/**
 * Flags baked into the binary: the permissions `serve`, `train` and `eval`
 * need, and the V8 young-generation cap that keeps a long-running server's
 * resident memory low (see the README).
 */
export const BINARY_PERMISSIONS = [
  "--v8-flags=--max-semi-space-size=4,--expose-gc",
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
] as const;

/** Usage text of the compile task. */
export const COMPILE_USAGE =
  `Usage: deno task compile [--output PATH] [--target TRIPLE]

Compiles main.ts into one binary with the dashboard embedded (default
output dist/dtable). The first compile for a Deno version and target
downloads its runtime from dl.deno.land; without network it fails with one
line and exit code 2, and writes nothing.

Options:
  --output PATH     where the binary goes (default dist/dtable)
  --target TRIPLE   another platform, e.g. aarch64-unknown-linux-gnu
  --help            this text`;

/** What one `deno compile` run printed and returned. */
export interface CompileRun {
  code: number;
  stderr: string;
}

/** Runs `deno compile ARGS`; swapped in tests. */
export type CompileRunner = (
  args: string[],
  signal: AbortSignal,
) => Promise<CompileRun>;

/** Runs this Deno's own `deno compile` in the project folder. */
export const denoCompile: CompileRunner = async (args, signal) => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["compile", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal,
  }).output();
  return {
    code: out.code,
    stderr: new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr),
  };
};

/**
 * The one line saying why `deno compile` failed, from what it printed: a
 * runtime that could not be downloaded is named as such, with its root
 * cause; any other failure by deno's own first error line.
 */
export function compileFailure(stderr: string): string {
  // deno prints colours even when asked not to in some versions.
  // deno-lint-ignore no-control-regex
  const text = stderr.replace(/\x1b\[[0-9;]*m/g, "")
    // The backtrace numbers its frames like causes, and says nothing useful.
    .split(/^Stack backtrace:/m)[0]!;
  const causes = [...text.matchAll(/^\s*\d+: (.+)$/gm)].map((m) =>
    m[1]!.trim()
  );
  const error = text.match(/^error: (.+)$/m)?.[1]?.trim();
  const url = text.match(/https?:\/\/\S+?denort\S*?\.zip/)?.[0];
  const root = causes.at(-1) ?? error ?? "no error message";
  const local = causes.find((c) => c.startsWith("Could not find denort"));
  if (local !== undefined) {
    return `deno compile could not read the runtime DENORT_BIN names: ${local}: ${root}. Nothing was written`;
  }
  if (url !== undefined || /denort|base binary/i.test(text)) {
    return `deno compile could not get the Deno runtime it embeds${
      url ? ` (${url})` : ""
    }: ${root}. It is downloaded once per Deno version and target, then cached: ` +
      "compile on a machine that reaches dl.deno.land, or set DENORT_BIN to a " +
      `denort binary of Deno ${Deno.version.deno}. Nothing was written`;
  }
  const first = error ??
    text.split("\n").map((l) => l.trim()).find((l) => l !== "") ??
    `exit code unknown`;
  return `deno compile failed: ${first}${
    causes.length > 0 ? ` (${root})` : ""
  }. Nothing was written`;
}

/** The nearest folder at or above `dir` that exists. */
async function nearestExisting(dir: string): Promise<string> {
  for (let d = dir;; d = dirname(d)) {
    try {
      if ((await Deno.stat(d)).isDirectory) return d;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    if (dirname(d) === d) return d;
  }
}

/** What to compile, and where to. */
export interface CompileOptions {
  /** Path of the binary (`.exe` is added when deno compile adds it). */
  output: string;
  /** Target triple; this machine's by default. */
  target?: string | undefined;
  /** Aborting it stops the compile and removes what it wrote. */
  signal?: AbortSignal | undefined;
}

/**
 * Compiles `main.ts` into a temporary folder beside `output` and moves the
 * binary to `output` only when `deno compile` succeeds, replacing any
 * binary there. Returns the path written; throws an `Error` with a one-line
 * message otherwise, having removed everything it created.
 */
export async function compileBinary(
  options: CompileOptions,
  run: CompileRunner = denoCompile,
): Promise<string> {
  const output = resolve(options.output);
  const outDir = dirname(output);
  // Beside the output (same file system, so the move is a rename), in a
  // folder that already exists, so that a failure creates no folder.
  const scratch = await Deno.makeTempDir({
    dir: await nearestExisting(outDir),
    prefix: ".dtable-compile-",
  });
  const controller = new AbortController();
  const stop = () => controller.abort();
  options.signal?.addEventListener("abort", stop);
  try {
    const result = await run([
      ...BINARY_PERMISSIONS,
      ...(options.target ? ["--target", options.target] : []),
      // Training's workers load this module by URL: it must be embedded.
      "--include",
      join(ROOT, "src/train/fit_worker.ts"),
      // So do the encoder's workers (`train --semantic`, and `serve`'s
      // second tier; the model's files and the backend's binaries come
      // with them, imported as bytes).
      "--include",
      join(ROOT, "src/encoder/worker.ts"),
      "--output",
      join(scratch, basename(output)),
      join(ROOT, "main.ts"),
    ], controller.signal);
    if (controller.signal.aborted) throw new Error("compile interrupted");
    if (result.code !== 0) throw new Error(compileFailure(result.stderr));
    const built: string[] = [];
    for await (const entry of Deno.readDir(scratch)) {
      if (entry.isFile) built.push(entry.name);
    }
    if (built.length !== 1) {
      throw new Error(
        `deno compile succeeded but wrote ${built.length} files (${
          built.join(", ")
        }), expected one binary. Nothing was written`,
      );
    }
    const name = built[0]!;
    const target = name.endsWith(".exe") && !output.endsWith(".exe")
      ? `${output}.exe`
      : output;
    await Deno.mkdir(outDir, { recursive: true });
    await Deno.rename(join(scratch, name), target);
    return target;
  } finally {
    options.signal?.removeEventListener("abort", stop);
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}

/** Runs the compile task; returns the exit code. */
export async function main(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        output: { type: "string", default: join(ROOT, "dist", "dtable") },
        target: { type: "string" },
        help: { type: "boolean", default: false },
      },
    }));
  } catch (e) {
    console.error(`error: ${(e as Error).message} (--help lists the flags)`);
    return 2;
  }
  if (values.help) {
    console.log(COMPILE_USAGE);
    return 0;
  }
  const interrupted = new AbortController();
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  const onSignal = () => interrupted.abort();
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  console.log(
    "compiling main.ts (the first compile for a Deno version downloads its runtime)",
  );
  try {
    const path = await compileBinary({
      output: values.output,
      target: values.target,
      signal: interrupted.signal,
    });
    const size = (await Deno.stat(path)).size / 1024 / 1024;
    console.log(`wrote ${path} (${size.toFixed(1)} MB)`);
    return 0;
  } catch (e) {
    if (interrupted.signal.aborted) {
      console.error("error: compile interrupted. Nothing was written");
      return 130;
    }
    console.error(`error: ${(e as Error).message.split("\n")[0]}`);
    return 2;
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
