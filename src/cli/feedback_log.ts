/**
 * `serve --feedback-log FILE`: every feedback item appended to `FILE` as a
 * trace line (`{"text", "answers": {question: answer}, "time"}`) that
 * `train --traces FILE` reads. Writes are queued, so lines of concurrent
 * requests never interleave; a request is answered after its lines are
 * written (see `src/http/live/feedback.ts`; the line is `traceLine` of
 * `src/traces/write.ts`).
 *
 * @module
 */

import type { FeedbackSink } from "../http/service.ts";
import { UsageError } from "./common.ts";

/** An open feedback log. */
export interface FeedbackLog {
  /** Appends text (whole lines) once every earlier append is written. */
  append: FeedbackSink;
  /** Closes the file once every append is written. */
  close(): Promise<void>;
}

/**
 * Opens `path` for appending (creating it). Throws `UsageError` naming the
 * file and the permission to give when it cannot be opened.
 */
export async function openFeedbackLog(path: string): Promise<FeedbackLog> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { append: true, create: true });
  } catch (e) {
    const hint = e instanceof Deno.errors.NotCapable ||
        e instanceof Deno.errors.PermissionDenied
      ? `; allow it with --allow-write=${path}`
      : "";
    throw new UsageError(
      `Cannot open feedback log ${path}: ${(e as Error).message}${hint}`,
    );
  }
  const encoder = new TextEncoder();
  let queue: Promise<void> = Promise.resolve();
  const writeAll = async (bytes: Uint8Array) => {
    let at = 0;
    while (at < bytes.length) at += await file.write(bytes.subarray(at));
  };
  return {
    append(lines: string): Promise<void> {
      const bytes = encoder.encode(lines);
      const done = queue.then(() => writeAll(bytes));
      // A failed write fails its own request only; the next ones still run.
      queue = done.catch(() => {});
      return done;
    },
    async close(): Promise<void> {
      await queue;
      file.close();
    },
  };
}
