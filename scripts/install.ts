/**
 * `deno task install`: installs the command `dtable` so that it keeps
 * working in a new shell, after npm's cache is cleaned and after the clone
 * is moved or deleted.
 *
 * Everything `dtable` runs is copied under one prefix (`$HOME/.dtable` by
 * default, or `--prefix DIR`, or `DTABLE_HOME`):
 *
 * - `lib/ID/deno`: the Deno running this script (the one `npx --yes
 *   deno@VERSION` fetched into npm's cache), copied;
 * - `lib/ID/app/`: the files the program loads (as `deploy/install.sh` and
 *   the Dockerfile copy them), with their packages cached in
 *   `lib/ID/deno-dir/`;
 * - `bin/dtable`: a shell script naming those absolute paths, with the
 *   permissions the tasks have (files, the network, the token variable).
 *
 * A new install goes to a new `lib/ID` and the shim is replaced in one
 * rename, so a `dtable` started during the install runs the old copy or the
 * new one; the copy before it is kept (a server started from it still loads
 * modules on demand) and older ones are removed. Only `PREFIX/bin` goes on
 * PATH, never the copied Deno.
 *
 * Usage: deno task install [--prefix DIR]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { TOOL_VERSION } from "../src/version.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The files the program loads (the Dockerfile's COPY lines, `deploy/install.sh`'s SERVING). */
export const PROGRAM_FILES = [
  "deno.json",
  "deno.lock",
  "main.ts",
  "src",
  "static",
] as const;

/**
 * The flags every `dtable` run gets: the permissions the tasks have (files,
 * the network, the token variable) and the young-generation cap `serve`
 * runs with.
 */
export const SHIM_FLAGS = [
  "--v8-flags=--max-semi-space-size=4,--expose-gc",
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-env=SERVICE_PROXY_TOKEN",
] as const;

/** The line the README tells a user to add to their shell's profile (default prefix). */
export const PROFILE_LINE = 'export PATH="$HOME/.dtable/bin:$PATH"';

/** Usage text of the install task. */
export const INSTALL_USAGE = `Usage: deno task install [--prefix DIR]

Installs the command dtable in DIR/bin (default: $DTABLE_HOME, else
$HOME/.dtable), with a copy of this Deno and of the program in DIR/lib, so that
it keeps working when npm's cache is cleaned or the clone is moved or deleted.
Run it again to update. Then put DIR/bin on PATH (in your shell's profile):

  ${PROFILE_LINE}

Options:
  --prefix DIR   where to install (default $DTABLE_HOME, else $HOME/.dtable)
  --help         this text`;

/** A path in single quotes for a POSIX shell. */
export function shellQuote(path: string): string {
  return `'${path.replaceAll("'", `'\\''`)}'`;
}

/**
 * The text of the `dtable` shim for a copy installed in `lib` (holding
 * `deno`, `app/` and `deno-dir/`): it names absolute paths only, so it
 * depends on no PATH, no clone and no npm cache.
 */
export function shimText(lib: string): string {
  const q = (p: string) => shellQuote(`${lib}/${p}`);
  return [
    "#!/bin/sh",
    `# dtable ${TOOL_VERSION}, written by deno task install: runs the copy of`,
    "# Deno and of the program beside it (nothing from the clone or npm's cache).",
    `DENO_DIR=${q("deno-dir")}`,
    "DENO_NO_UPDATE_CHECK=1",
    "export DENO_DIR DENO_NO_UPDATE_CHECK",
    `exec ${q("deno")} run --cached-only --frozen ${
      SHIM_FLAGS.join(" ")
    } --config ${q("app/deno.json")} ${q("app/main.ts")} "$@"`,
    "",
  ].join("\n");
}

/** Copies the file or folder `from` to `to` (a new path). */
async function copyTree(from: string, to: string): Promise<void> {
  const info = await Deno.stat(from);
  if (!info.isDirectory) {
    await Deno.copyFile(from, to);
    return;
  }
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    await copyTree(`${from}/${e.name}`, `${to}/${e.name}`);
  }
}

/** Where the install goes: `--prefix`, else `DTABLE_HOME`, else `$HOME/.dtable`. */
function prefixOf(flag: string | undefined): string {
  const chosen = flag ?? Deno.env.get("DTABLE_HOME");
  if (chosen !== undefined && chosen.trim() !== "") {
    // A relative prefix is taken from where the task was typed.
    return resolve(Deno.env.get("INIT_CWD") ?? Deno.cwd(), chosen);
  }
  const home = Deno.env.get("HOME");
  if (home === undefined || home === "") {
    throw new Error("HOME is not set: give --prefix DIR (or DTABLE_HOME)");
  }
  return `${home}/.dtable`;
}

/**
 * Installs `dtable` under `prefix` from the project at `root` with the
 * Deno at `deno`; returns the path of the shim. Throws with one line when a
 * step fails (a half-made copy is removed; the previous install keeps
 * working).
 */
export async function installTo(
  prefix: string,
  root: string = ROOT,
  deno: string = Deno.execPath(),
): Promise<string> {
  const id = `${TOOL_VERSION}-${crypto.randomUUID().slice(0, 8)}`;
  const libs = `${prefix}/lib`;
  const lib = `${libs}/${id}`;
  const bin = `${prefix}/bin`;
  await Deno.mkdir(lib, { recursive: true });
  await Deno.mkdir(bin, { recursive: true });
  try {
    await Deno.copyFile(deno, `${lib}/deno`);
    await Deno.chmod(`${lib}/deno`, 0o755);
    await Deno.mkdir(`${lib}/app`);
    for (const f of PROGRAM_FILES) {
      await copyTree(`${root}/${f}`, `${lib}/app/${f}`);
    }
    const cached = await new Deno.Command(`${lib}/deno`, {
      args: [
        "cache",
        "--frozen",
        "--quiet",
        "--config",
        `${lib}/app/deno.json`,
        `${lib}/app/main.ts`,
      ],
      env: { DENO_DIR: `${lib}/deno-dir`, DENO_NO_UPDATE_CHECK: "1" },
      stdout: "inherit",
      stderr: "piped",
    }).output();
    if (cached.code !== 0) {
      throw new Error(
        `caching the program's packages failed: ${
          new TextDecoder().decode(cached.stderr).trim().split("\n").at(-1)
        }`,
      );
    }
    const next = `${bin}/.dtable-${id}`;
    await Deno.writeTextFile(next, shimText(lib), { mode: 0o755 });
    await Deno.chmod(next, 0o755);
    await Deno.rename(next, `${bin}/dtable`);
  } catch (e) {
    await Deno.remove(lib, { recursive: true }).catch(() => {});
    throw e;
  }
  // The copy before this one stays: a `dtable serve` started from it still
  // loads modules on demand (the OpenAPI document, a training worker).
  const older: { name: string; mtime: number }[] = [];
  for await (const e of Deno.readDir(libs)) {
    if (e.name === id) continue;
    const stat = await Deno.stat(`${libs}/${e.name}`).catch(() => null);
    older.push({ name: e.name, mtime: stat?.mtime?.getTime() ?? 0 });
  }
  older.sort((a, b) => b.mtime - a.mtime);
  for (const e of older.slice(1)) {
    await Deno.remove(`${libs}/${e.name}`, { recursive: true }).catch(() => {});
  }
  return `${bin}/dtable`;
}

/** Runs the install task; returns the exit code. */
export async function main(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        prefix: { type: "string" },
        help: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    console.error(`error: ${(e as Error).message} (see --help)`);
    return 2;
  }
  if (values.help) {
    console.log(INSTALL_USAGE);
    return 0;
  }
  if (Deno.build.os === "windows") {
    console.error(
      "error: the installer writes a POSIX shell script; on Windows, use the release's dtable.exe (see the README)",
    );
    return 2;
  }
  try {
    const prefix = prefixOf(values.prefix);
    const shim = await installTo(prefix);
    console.log(
      `installed dtable ${TOOL_VERSION} as ${shim} (with Deno ${Deno.version.deno} and the program in ${prefix}/lib; the clone and npm's cache are no longer needed)`,
    );
    const bin = `${prefix}/bin`;
    const onPath = (Deno.env.get("PATH") ?? "").split(":").includes(bin);
    if (!onPath) {
      const home = Deno.env.get("HOME");
      const line = home !== undefined && prefix === `${home}/.dtable`
        ? PROFILE_LINE
        : `export PATH=${shellQuote(bin)}:"$PATH"`;
      console.log(
        `put it on PATH: run this line and add it to your shell's profile (~/.profile, ~/.bashrc or ~/.zshrc):\n  ${line}`,
      );
    }
    return 0;
  } catch (e) {
    console.error(`error: ${(e as Error).message.split("\n")[0]}`);
    return 2;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
