/**
 * Replacing a bundle so that its path is never absent, and cleaning up what
 * a killed replacement left.
 *
 * A folder cannot be renamed over a folder that holds files, so `DIR` is a
 * symbolic link to a version folder beside it, `DIR.v-ID`: a new version is
 * written in full to `DIR.tmp-ID`, renamed to `DIR.v-ID`, and a new link is
 * renamed over `DIR` (one atomic rename: a reader sees the old bundle or
 * the new one, never none). Only after that rename are versions beyond the
 * newest `keep` (by the time their folder was written; the one `DIR` points
 * to always counts as kept) removed, so earlier versions stay to roll back
 * to (`pointTo`, the same one rename) and to compare. A `DIR` that is still
 * a plain folder (written before, or by `writeBundleAtomically`) is turned
 * into a version once, with two renames, the only moment it is absent.
 * Where links cannot be made, the two renames are used every time and no
 * earlier version is kept.
 *
 * What a killed run leaves is cleaned up by the next: `DIR.tmp-*` and
 * `DIR.link-*` older than `LEFTOVER_AGE_MS`; and a `DIR.old-*` or `DIR.v-*`
 * put aside while `DIR` was absent is renamed back to `DIR`. A `DIR.v-*`
 * that a killed run wrote but never pointed to is a complete bundle: it
 * stays, as a version, until `keep` prunes it.
 *
 * @module
 */

import { basename, dirname, resolve } from "node:path";

/** Age past which a temporary or old sibling is a leftover, not another run's work in progress: 10 minutes. */
export const LEFTOVER_AGE_MS = 10 * 60 * 1000;

/** The kind of entry at `path`, not following a link; null when absent. */
async function kindOf(
  path: string,
): Promise<"link" | "folder" | "file" | null> {
  try {
    const s = await Deno.lstat(path);
    return s.isSymlink ? "link" : s.isDirectory ? "folder" : "file";
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/** The siblings of `dir` named `DIR.<kind>-<8 hex digits>`, with their modification time. */
async function siblings(
  dir: string,
): Promise<{ path: string; kind: string; mtime: number }[]> {
  const parent = dirname(dir);
  const prefix = `${basename(dir)}.`;
  const out: { path: string; kind: string; mtime: number }[] = [];
  for await (const e of Deno.readDir(parent)) {
    if (!e.name.startsWith(prefix)) continue;
    // Only the names a run makes (8 hex digits): a user's `DIR.v-final`
    // is not ours to remove.
    const kind = /^(tmp|link|old|v)-[0-9a-f]{8}$/.exec(
      e.name.slice(prefix.length),
    )?.[1];
    if (kind === undefined) continue;
    const path = parent === "." ? e.name : `${parent}/${e.name}`;
    const stat = await Deno.lstat(path).catch(() => null);
    if (stat === null) continue;
    out.push({ path, kind, mtime: stat.mtime?.getTime() ?? 0 });
  }
  return out;
}

/**
 * Cleans up after a killed replacement of `dir` (see the module doc);
 * returns what it did, one line each.
 */
export async function cleanLeftovers(
  dir: string,
  now: number = Date.now(),
): Promise<string[]> {
  const done: string[] = [];
  const found = await siblings(dir);
  let current = await kindOf(dir);
  if (current === null) {
    // Put aside by a run killed before the new one took its place.
    const aside = found
      .filter((s) => s.kind === "old" || s.kind === "v")
      .sort((a, b) => b.mtime - a.mtime)[0];
    if (aside !== undefined) {
      await Deno.rename(aside.path, dir);
      done.push(`restored ${dir} from ${aside.path}`);
      current = "folder";
    }
  }
  const target = current === "link"
    ? resolve(dirname(dir), await Deno.readLink(dir))
    : null;
  for (const s of await siblings(dir)) {
    if (resolve(s.path) === target || s.kind === "v") continue;
    const stale = now - s.mtime > LEFTOVER_AGE_MS;
    if (s.kind !== "old" && !stale) continue;
    await Deno.remove(s.path, { recursive: true }).catch(() => {});
    done.push(`removed ${s.path}`);
  }
  return done;
}

/** True when `e` says links cannot be made here. */
function cannotLink(e: unknown): boolean {
  return e instanceof Deno.errors.NotCapable ||
    e instanceof Deno.errors.PermissionDenied ||
    e instanceof Deno.errors.NotSupported;
}

/** How many versions `swapInto` keeps unless told otherwise (the one in force included). */
export const DEFAULT_KEEP = 3;

/**
 * Puts the complete bundle folder `ready` (a sibling of `dir`) in place as
 * `dir`, replacing what is there, then keeps the newest `keep` versions
 * (see the module doc). Throws `RangeError` for a `keep` below 1.
 */
export async function swapInto(
  dir: string,
  ready: string,
  keep: number = DEFAULT_KEEP,
): Promise<void> {
  if (!Number.isInteger(keep) || keep < 1) {
    throw new RangeError(`keep must be a whole number >= 1: got ${keep}`);
  }
  const id = crypto.randomUUID().slice(0, 8);
  const version = `${dir}.v-${id}`;
  await Deno.rename(ready, version);
  const link = `${dir}.link-${id}`;
  try {
    await Deno.symlink(basename(version), link);
  } catch (e) {
    if (!cannotLink(e)) throw e;
    await replaceByRenames(dir, version);
    return;
  }
  if ((await kindOf(dir)) === "folder") {
    // Once: the plain folder becomes a version (absent until the next rename).
    const aside = `${dir}.v-${crypto.randomUUID().slice(0, 8)}`;
    await Deno.rename(dir, aside);
    await Deno.rename(link, dir);
  } else {
    await Deno.rename(link, dir);
  }
  await pruneVersions(dir, keep);
}

/**
 * Removes the versions of `dir` beyond the newest `keep` (the one `dir`
 * points to always kept); returns the paths removed.
 */
export async function pruneVersions(
  dir: string,
  keep: number,
): Promise<string[]> {
  const current = await currentVersion(dir);
  const others = (await siblings(dir))
    .filter((s) => s.kind === "v" && resolve(s.path) !== current)
    .sort((a, b) => b.mtime - a.mtime);
  const removed: string[] = [];
  for (const s of others.slice(Math.max(0, keep - 1))) {
    await Deno.remove(s.path, { recursive: true }).catch(() => {});
    removed.push(s.path);
  }
  return removed;
}

/** The absolute path of the version folder `dir` links to; null when `dir` is not a link. */
export async function currentVersion(dir: string): Promise<string | null> {
  if ((await kindOf(dir)) !== "link") return null;
  return resolve(dirname(dir), await Deno.readLink(dir));
}

/** A version folder of a bundle: its id (8 hex digits), path and the time it was written. */
export interface VersionFolder {
  readonly id: string;
  readonly path: string;
  /** Milliseconds since the epoch: when its files were written. */
  readonly written: number;
  /** True for the version `dir` points to. */
  readonly current: boolean;
}

/** The version folders of `dir` (`DIR.v-ID`), newest first. */
export async function listVersions(dir: string): Promise<VersionFolder[]> {
  const current = await currentVersion(dir);
  return (await siblings(dir))
    .filter((s) => s.kind === "v")
    .sort((a, b) => b.mtime - a.mtime)
    .map((s) => ({
      id: s.path.slice(s.path.lastIndexOf(".v-") + 3),
      path: s.path,
      written: s.mtime,
      current: resolve(s.path) === current,
    }));
}

/**
 * Points the link `dir` at its version folder `version` (a sibling named
 * `DIR.v-ID`) by one rename, as a new version is swapped in: a reader sees
 * the old bundle or that one, never none. Throws `RangeError` when `dir` is
 * not a link or `version` is not one of its versions.
 */
export async function pointTo(dir: string, version: string): Promise<void> {
  if ((await kindOf(dir)) !== "link") {
    throw new RangeError(
      `${dir} is not a link to versions (train --out ${dir} makes it one)`,
    );
  }
  const prefix = `${basename(dir)}.`;
  const name = basename(version);
  if (
    dirname(resolve(version)) !== dirname(resolve(dir)) ||
    !name.startsWith(prefix) ||
    !/^v-[0-9a-f]{8}$/.test(name.slice(prefix.length))
  ) {
    throw new RangeError(`${version} is not a version of ${dir}`);
  }
  const link = `${dir}.link-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.symlink(basename(version), link);
  try {
    await Deno.rename(link, dir);
  } catch (e) {
    await Deno.remove(link).catch(() => {});
    throw e;
  }
}

/** Without links: the old folder aside, the new one in, the old one removed. */
async function replaceByRenames(dir: string, version: string): Promise<void> {
  if ((await kindOf(dir)) === null) {
    await Deno.rename(version, dir);
    return;
  }
  const old = `${dir}.old-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.rename(dir, old);
  await Deno.rename(version, dir);
  await Deno.remove(old, { recursive: true });
}
