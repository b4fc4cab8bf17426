/**
 * What the commands share: usage errors, number flags, one-line failures.
 *
 * @module
 */

/** A mistake in how a command was called; printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Parses a number flag; throws `UsageError` naming the flag when it is not a number in range. */
export function numberFlag(
  name: string,
  value: string | undefined,
  fallback: number,
  check: (n: number) => boolean = Number.isFinite,
  expected = "a number",
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || !check(n)) {
    throw new UsageError(`--${name} must be ${expected}: got "${value}"`);
  }
  return n;
}

/** The first line of an error's message, for one-line failure reports. */
export function oneLine(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.split("\n")[0]!;
}

/** Reads a file as text; an operating-system failure becomes a one-line error. */
export async function readTextFile(
  path: string,
  what: string,
): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new UsageError(`Cannot read ${what} ${path}: no such file`);
    }
    if (e instanceof Deno.errors.IsADirectory) {
      throw new UsageError(`Cannot read ${what} ${path}: it is a folder`);
    }
    throw new UsageError(`Cannot read ${what} ${path}: ${oneLine(e)}`);
  }
}

/** Writes progress to stderr with the seconds since `start`. */
export function progressPrinter(quiet: boolean): (line: string) => void {
  const start = performance.now();
  return (line) => {
    if (quiet) return;
    const s = ((performance.now() - start) / 1000).toFixed(1);
    console.error(`[${s.padStart(5)}s] ${line}`);
  };
}
