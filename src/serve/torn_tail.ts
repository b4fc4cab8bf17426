/**
 * A file of lines whose last line may be torn: a crash (`kill -9`, power
 * loss) in the middle of an append leaves a last line without its newline.
 * Appending after it would glue the next line onto the fragment and lose
 * both, so an appender cuts the fragment off first.
 *
 * @module
 */

/** Bytes read at a time while looking back for the last newline. */
const CHUNK = 64 * 1024;

/** What `cutTornTail` found. */
export interface TornTail {
  /** The file's size once the fragment is cut off. */
  size: number;
  /** Bytes cut off (0 when the file ended with a newline or was empty). */
  cut: number;
}

/**
 * Cuts a last line that has no newline off `file` (opened for reading and
 * writing), so the file ends with a complete line or is empty; returns
 * the size left and the bytes cut.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cutTornTail } from "./torn_tail.ts";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, '{"a":1}\n{"a":');
 * using file = await Deno.open(path, { read: true, write: true });
 * assert.deepEqual(await cutTornTail(file), { size: 8, cut: 5 });
 * ```
 */
export async function cutTornTail(file: Deno.FsFile): Promise<TornTail> {
  const { size } = await file.stat();
  if (size === 0) return { size: 0, cut: 0 };
  const buf = new Uint8Array(CHUNK);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - CHUNK);
    const want = end - start;
    await file.seek(start, Deno.SeekMode.Start);
    let got = 0;
    while (got < want) {
      const n = await file.read(buf.subarray(got, want));
      if (n === null) break;
      got += n;
    }
    const nl = buf.subarray(0, got).lastIndexOf(0x0a);
    if (nl >= 0) {
      const keep = start + nl + 1;
      if (keep < size) await file.truncate(keep);
      return { size: keep, cut: size - keep };
    }
    end = start;
  }
  await file.truncate(0);
  return { size: 0, cut: size };
}
