/**
 * Reading and writing bundle folders. Writing is atomic: the files go to a
 * temporary sibling folder that is renamed into place only when complete.
 *
 * @module
 */

import {
  BundleError,
  decodeTable,
  MANIFEST_FILE,
  parseManifest,
  REPORT_FILE,
  verifyFile,
  verifyManifest,
  WEIGHTS_FILE,
} from "./codec.ts";
import type { Table } from "../engine/mod.ts";
import { cleanLeftovers, DEFAULT_KEEP, swapInto } from "./swap.ts";

export { BundleError };
import { SEMANTIC_FILE, SEMANTIC_VERSION } from "./semantic_part.ts";

/**
 * A whole file, read on this thread into a buffer made here. `Deno.readFile`
 * and asynchronous reads fill a buffer made on a worker thread, whose malloc
 * arena keeps the memory once it is freed, so every reload would keep
 * another copy of the weights (docs/benchmarks.md). The synchronous reads
 * block this thread while a bundle loads (at start and on a reload, never on
 * a request).
 */
async function readWhole(path: string): Promise<Uint8Array> {
  using file = await Deno.open(path);
  // The size from a seek: `stat` on an open file checks read access on its
  // real path, which a bundle reached through a symlink is not allowed.
  const size = await file.seek(0, Deno.SeekMode.End);
  await file.seek(0, Deno.SeekMode.Start);
  const out = new Uint8Array(size);
  let at = 0;
  while (at < size) {
    const n = file.readSync(out.subarray(at));
    if (n === null) break;
    at += n;
  }
  // A file cut short while read: its checksum then fails.
  return at === size ? out : out.subarray(0, at);
}

async function readPart(dir: string, name: string): Promise<Uint8Array> {
  try {
    return await readWhole(`${dir}/${name}`);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new BundleError(`Cannot load bundle ${dir}: ${name} is missing`);
    }
    throw new BundleError(
      `Cannot load bundle ${dir}: ${name}: ${
        (e as Error).message.split("\n")[0]
      }`,
    );
  }
}

/**
 * Loads and verifies a bundle folder: format, version and every checksum.
 * Throws `BundleError` (one-line message) for a missing, damaged or foreign bundle.
 */
export async function loadBundle(dir: string): Promise<Table> {
  try {
    const stat = await Deno.stat(dir);
    if (!stat.isDirectory) {
      throw new BundleError(`Cannot load bundle ${dir}: not a folder`);
    }
  } catch (e) {
    if (e instanceof BundleError) throw e;
    if (e instanceof Deno.errors.NotFound) {
      throw new BundleError(`Cannot load bundle ${dir}: no such folder`);
    }
    throw new BundleError(
      `Cannot load bundle ${dir}: ${(e as Error).message.split("\n")[0]}`,
    );
  }
  try {
    const manifest = parseManifest(await readPart(dir, MANIFEST_FILE));
    await verifyManifest(manifest);
    const weights = await readPart(dir, WEIGHTS_FILE);
    await verifyFile(manifest, WEIGHTS_FILE, weights);
    const reportBytes = await readPart(dir, REPORT_FILE);
    await verifyFile(manifest, REPORT_FILE, reportBytes);
    const report = JSON.parse(new TextDecoder().decode(reportBytes));
    let semantic: Uint8Array | undefined;
    if (manifest.format_version >= SEMANTIC_VERSION) {
      semantic = await readPart(dir, SEMANTIC_FILE);
      await verifyFile(manifest, SEMANTIC_FILE, semantic);
    }
    return decodeTable(manifest, weights, report, semantic);
  } catch (e) {
    if (
      e instanceof BundleError && e.message.startsWith("Cannot load bundle")
    ) throw e;
    throw new BundleError(`Cannot load bundle ${dir}: ${(e as Error).message}`);
  }
}

/**
 * Checks, before any work, that a bundle can be written to `dir`: its
 * parent is a folder, and `dir` is absent, empty or a bundle. Throws
 * `BundleError` (one line, naming the path) otherwise.
 */
export async function checkBundleDestination(dir: string): Promise<void> {
  const clean = dir.replace(/\/+$/, "") || dir;
  const slash = clean.lastIndexOf("/");
  const parent = slash < 0 ? "." : slash === 0 ? "/" : clean.slice(0, slash);
  let parentStat: Deno.FileInfo;
  try {
    parentStat = await Deno.stat(parent);
  } catch (e) {
    throw new BundleError(
      `Cannot write bundle ${clean}: ${
        e instanceof Deno.errors.NotFound
          ? `no folder ${parent}`
          : `${parent}: ${(e as Error).message.split("\n")[0]}`
      }`,
    );
  }
  if (!parentStat.isDirectory) {
    throw new BundleError(
      `Cannot write bundle ${clean}: ${parent} is not a folder`,
    );
  }
  await existingBundleFolder(clean);
}

/**
 * True when `clean` is a folder that may be replaced by a bundle (empty, or
 * a bundle), false when nothing is there; throws `BundleError` for a file
 * or a folder that is not a bundle.
 */
async function existingBundleFolder(clean: string): Promise<boolean> {
  let stat: Deno.FileInfo;
  try {
    stat = await Deno.stat(clean);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
  if (!stat.isDirectory) {
    throw new BundleError(
      `Cannot write bundle ${clean}: a file of that name exists`,
    );
  }
  const entries = [];
  for await (const e of Deno.readDir(clean)) entries.push(e.name);
  if (entries.length > 0 && !entries.includes(MANIFEST_FILE)) {
    throw new BundleError(
      `Cannot write bundle ${clean}: the folder exists and is not a bundle`,
    );
  }
  return true;
}

/**
 * Writes a bundle's files to `dir` atomically. An existing bundle at `dir`
 * is replaced; an existing folder that is not a bundle is left alone and
 * the write refused.
 */
export async function writeBundleAtomically(
  dir: string,
  files: Map<string, Uint8Array>,
): Promise<void> {
  const clean = dir.replace(/\/+$/, "") || dir;
  const exists = await existingBundleFolder(clean);
  const suffix = crypto.randomUUID().slice(0, 8);
  const temp = `${clean}.tmp-${suffix}`;
  await Deno.mkdir(temp, { recursive: true });
  try {
    for (const [name, bytes] of files) {
      await Deno.writeFile(`${temp}/${name}`, bytes);
    }
    if (exists) {
      const old = `${clean}.old-${suffix}`;
      await Deno.rename(clean, old);
      await Deno.rename(temp, clean);
      await Deno.remove(old, { recursive: true });
    } else {
      await Deno.rename(temp, clean);
    }
  } catch (e) {
    await Deno.remove(temp, { recursive: true }).catch(() => {});
    throw e;
  }
}

/**
 * Writes a bundle's files to `dir` as `train --out` does: `dir` becomes a
 * link to a complete version folder beside it, swapped in one rename, so
 * the path is never absent (see `swap.ts`); what a killed run left is
 * cleaned up first, and the newest `keep` versions are kept (`swap.ts`).
 * Refuses a `dir` that is a folder but not a bundle, like
 * `writeBundleAtomically`. Returns one line per leftover cleaned up.
 */
export async function writeBundleVersioned(
  dir: string,
  files: Map<string, Uint8Array>,
  keep: number = DEFAULT_KEEP,
): Promise<string[]> {
  const clean = dir.replace(/\/+$/, "") || dir;
  const cleaned = await cleanLeftovers(clean);
  await existingBundleFolder(clean);
  const temp = `${clean}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(temp, { recursive: true });
  try {
    for (const [name, bytes] of files) {
      await Deno.writeFile(`${temp}/${name}`, bytes);
    }
  } catch (e) {
    await Deno.remove(temp, { recursive: true }).catch(() => {});
    throw e;
  }
  await swapInto(clean, temp, keep);
  return cleaned;
}
