/**
 * Replacing a bundle so that its path is never absent, and cleaning up what
 * a killed replacement left.
 *
 * A folder cannot be renamed over a folder that holds files, so `DIR` is a
 * symbolic link to a version folder beside it, `DIR.v-ID`: a new version is
 * written in full to `DIR.tmp-ID`, renamed to `DIR.v-ID`, and a new link is
 * renamed over `DIR` (one atomic rename: a reader sees the old bundle or
 * the new one, never none), after which the old version is removed. A `DIR`
 * that is still a plain folder (written before, or by `writeBundleAtomically`)
 * is turned into a version once, with two renames, the only moment it is
 * absent. Where links cannot be made, the two renames are used every time.
 *
 * What a killed run leaves is cleaned up by the next: `DIR.tmp-*`,
 * `DIR.link-*` and `DIR.v-*` (other than the one `DIR` points to) older than
 * `LEFTOVER_AGE_MS`; and a `DIR.old-*` or `DIR.v-*` put aside while `DIR` was
 * absent is renamed back to `DIR`.
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
    const path = `${parent}/${e.name}`;
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
    if (resolve(s.path) === target) continue;
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

/**
 * Puts the complete bundle folder `ready` (a sibling of `dir`) in place as
 * `dir`, replacing what is there (see the module doc).
 */
export async function swapInto(dir: string, ready: string): Promise<void> {
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
  const before = await kindOf(dir);
  const oldTarget = before === "link"
    ? resolve(dirname(dir), await Deno.readLink(dir))
    : null;
  if (before === "folder") {
    // Once: the plain folder becomes a version (absent until the next rename).
    const aside = `${dir}.v-${crypto.randomUUID().slice(0, 8)}`;
    await Deno.rename(dir, aside);
    await Deno.rename(link, dir);
    await Deno.remove(aside, { recursive: true });
    return;
  }
  await Deno.rename(link, dir);
  if (
    oldTarget !== null && basename(oldTarget).startsWith(`${basename(dir)}.v-`)
  ) {
    await Deno.remove(oldTarget, { recursive: true }).catch(() => {});
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
