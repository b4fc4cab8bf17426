/**
 * `serve --feedback-log FILE`: feedback items appended to `FILE` as trace
 * lines (`{"text", "answers": {question: answer}, "time"}`) that
 * `train --traces FILE` reads. Which items are written is decided by the
 * route (`src/live/feedback_log_items.ts`); this module keeps the file sound:
 *
 * - Each request's lines go in one write, queued, so lines of concurrent
 *   requests never interleave; a request is answered after its lines are
 *   written (see `src/http/live_routes/feedback_body.ts`).
 * - On opening, a torn last line (a crash mid-write) is cut off with a
 *   warning (`torn_tail.ts`), so the next line never glues onto it; a write
 *   that fails half-way is cut back the same way.
 * - With a size bound (`--feedback-log-max-mb`), a write that would take
 *   the file past it first renames the file to its rotated name
 *   (`feedback.jsonl` to `feedback.1.jsonl`, replacing an older one) and
 *   starts a new one: at most twice the bound on disk, plus one request.
 * - A reader in this process that has not finished the rotated file (the
 *   learner's retrain reading the log) holds the log (`hold`): while held,
 *   a rotation that would replace the rotated file waits, and the file
 *   grows past the bound meanwhile, so the reader loses no line.
 *
 * @module
 */

import { cutTornTail } from "./torn_tail.ts";

/** Appends feedback trace lines (JSON text, one per line, newline-terminated) somewhere durable. */
export type FeedbackSink = (lines: string) => Promise<void>;

/**
 * A feedback log that cannot be opened or rotated as asked: the file, why,
 * and the permission to give. Input the operator fixes (a command exits 2).
 */
export class FeedbackLogError extends Error {
  override name = "FeedbackLogError";
}

/** An open feedback log. */
export interface FeedbackLog {
  /** The log's path. */
  readonly path: string;
  /** Appends text (whole lines) once every earlier append is written. */
  append: FeedbackSink;
  /**
   * Holds the log for a reader: until the returned function is called, no
   * rotation replaces the rotated file (a rotation due meanwhile waits for
   * the first write after the last hold ends). Holds nest.
   */
  hold(): () => void;
  /** Closes the file once every append is written. */
  close(): Promise<void>;
}

/** Options of `openFeedbackLog`. */
export interface FeedbackLogOptions {
  /** Most bytes of the file before it is rotated; unbounded when absent. */
  maxBytes?: number | undefined;
  /** Where a cut torn line or a rotation is reported (one line each). */
  warn?: ((message: string) => void) | undefined;
}

/**
 * The name a feedback log is rotated to: `.1` before a `.jsonl` ending,
 * else after the name (either way `train --traces` reads it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rotatedPath } from "./feedback_log.ts";
 * assert.equal(rotatedPath("logs/feedback.jsonl"), "logs/feedback.1.jsonl");
 * ```
 */
export function rotatedPath(path: string): string {
  return path.endsWith(".jsonl")
    ? `${path.slice(0, -".jsonl".length)}.1.jsonl`
    : `${path}.1`;
}

function cannotOpen(path: string, e: unknown): FeedbackLogError {
  const hint = e instanceof Deno.errors.NotCapable ||
      e instanceof Deno.errors.PermissionDenied
    ? `; allow it with --allow-write=${path}`
    : "";
  return new FeedbackLogError(
    `Cannot open feedback log ${path}: ${(e as Error).message}${hint}`,
  );
}

/** An open log: the file, its size, and whether the next write must start a line. */
interface Opened {
  file: Deno.FsFile;
  size: number;
  /** True when the file's end could not be read: the next write starts with a newline. */
  newline: boolean;
}

/**
 * Opens `path` for appending after cutting a torn last line off. Without
 * read access to the file its end cannot be checked: a non-empty file then
 * gets a newline before the next line (a blank line, which trace reading
 * skips), so that line is never glued to a torn one.
 */
async function openRepaired(
  path: string,
  warn: (message: string) => void,
): Promise<Opened> {
  const readable =
    Deno.permissions.querySync({ name: "read", path }).state === "granted";
  const file = await Deno.open(path, {
    read: readable,
    append: true,
    create: true,
  });
  try {
    if (!readable) {
      // Its size, from a seek: `stat` would need read access too.
      const size = await file.seek(0, Deno.SeekMode.End);
      if (size > 0) {
        warn(
          `feedback log ${path} cannot be read (allow it with --allow-read=${path}), so a torn last line left by a crash cannot be cut off; the next item starts on a line of its own`,
        );
      }
      return { file, size, newline: size > 0 };
    }
    const { size, cut } = await cutTornTail(file);
    if (cut > 0) {
      warn(
        `feedback log ${path} ended with a torn line (${cut} bytes without a newline, as a crash while writing leaves it); cut off so the next item starts a line of its own`,
      );
    }
    return { file, size, newline: false };
  } catch (e) {
    file.close();
    throw e;
  }
}

/**
 * Opens `path` for appending (creating it), cutting a torn last line off
 * (see the module doc). Throws `FeedbackLogError` naming the file and the
 * permission to give when it cannot be opened, or when rotation is asked
 * for and the rotated name may not be written.
 */
export async function openFeedbackLog(
  path: string,
  options: FeedbackLogOptions = {},
): Promise<FeedbackLog> {
  const warn = options.warn ?? ((m: string) => console.error(`warning: ${m}`));
  const maxBytes = options.maxBytes;
  const rotated = rotatedPath(path);
  if (maxBytes !== undefined) {
    // Renaming the log needs read access to it as well as write access to
    // both names: without it every write after the first rotation fails.
    const granted = (name: "read" | "write", p: string) =>
      Deno.permissions.querySync({ name, path: p }).state === "granted";
    if (!granted("write", rotated) || !granted("read", path)) {
      throw new FeedbackLogError(
        `--feedback-log-max-mb rotates ${path} to ${rotated}; allow it with --allow-read=${path} --allow-write=${path},${rotated}`,
      );
    }
  }
  /** The open log; null after a rotation could not open it again (the next write tries). */
  let log: Opened | null;
  try {
    log = await openRepaired(path, warn);
  } catch (e) {
    throw cannotOpen(path, e);
  }
  const encoder = new TextEncoder();

  const rotate = async (full: Opened) => {
    log = null;
    full.file.close();
    // Renamed or not, the log is opened again (a failed rename or open
    // fails this request only, and the next one tries again).
    try {
      await Deno.rename(path, rotated);
    } finally {
      log = await openRepaired(path, warn);
    }
    warn(
      `feedback log ${path} reached --feedback-log-max-mb; moved to ${rotated} (replacing the one before) and started anew`,
    );
  };
  /** Readers holding the log now; a rotation waits while there are any. */
  let holders = 0;
  /** True once a held log has passed its bound (warned once per hold). */
  let deferred = false;
  /** Writes `lines` whole, or cuts the file back to where it was and throws. */
  const writeWhole = async (lines: Uint8Array) => {
    log ??= await openRepaired(path, warn);
    if (
      maxBytes !== undefined && log.size > 0 &&
      log.size + lines.length > maxBytes
    ) {
      if (holders === 0) {
        deferred = false;
        await rotate(log);
      } else if (!deferred) {
        deferred = true;
        warn(
          `feedback log ${path} reached --feedback-log-max-mb while a reader still reads ${rotated}; it grows past the bound until that reader is done, then rotates`,
        );
      }
    }
    const open = log!;
    const bytes = open.newline ? concat(NEWLINE, lines) : lines;
    const { file, size } = open;
    let at = 0;
    try {
      while (at < bytes.length) at += await file.write(bytes.subarray(at));
    } catch (e) {
      if (at > 0) await file.truncate(size).catch(() => {});
      throw e;
    }
    open.size += bytes.length;
    open.newline = false;
  };
  let queue: Promise<void> = Promise.resolve();
  return {
    path,
    hold(): () => void {
      holders++;
      let held = true;
      return () => {
        if (held) holders--;
        held = false;
      };
    },
    append(lines: string): Promise<void> {
      const bytes = encoder.encode(lines);
      const done = queue.then(() => writeWhole(bytes));
      // A failed write fails its own request only; the next ones still run.
      queue = done.catch(() => {});
      return done;
    },
    async close(): Promise<void> {
      await queue;
      log?.file.close();
    },
  };
}

const NEWLINE = new Uint8Array([0x0a]);

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
