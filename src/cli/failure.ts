/**
 * How a command's failure ends the program. Input it cannot use (flags,
 * files, traces, bundles, a port) is the user's to fix: one line on stderr
 * and exit code 2. Anything else is a bug: its stack on stderr and exit
 * code 1, so that a script or a service manager can tell them apart.
 *
 * @module
 */

import { BundleError } from "../bundle/mod.ts";
import { FeedbackLogError } from "../serve/mod.ts";
import { TrainingError } from "../train/mod.ts";
import { oneLine, UsageError } from "./common.ts";

/** Exit code of a command that could not use its input. */
export const EXIT_INPUT = 2;
/** Exit code of an unexpected failure: a bug. */
export const EXIT_BUG = 1;

const SYSTEM_ERRORS: readonly (abstract new (...args: never[]) => Error)[] =
  Object.values(Deno.errors);

/**
 * Whether `e` says the input was wrong rather than the program: the classes
 * the commands word input failures with (`UsageError`, `BundleError`,
 * `TrainingError`, `FeedbackLogError`); `RangeError` and `SyntaxError`, which the readers and
 * option checks throw for a value out of range and for text that does not
 * parse; and what the operating system refused (a `Deno.errors` class, or
 * an error with an `E...` code such as `ENOSPC`). A `TypeError`, a
 * `ReferenceError`, a plain `Error` or a thrown non-error is none of these.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isInputError } from "./failure.ts";
 * assert.equal(isInputError(new RangeError("--alpha must be in (0, 1)")), true);
 * assert.equal(isInputError(new Deno.errors.NotFound("traces.jsonl")), true);
 * assert.equal(isInputError(new TypeError("x is not a function")), false);
 * ```
 */
export function isInputError(e: unknown): boolean {
  if (
    e instanceof UsageError || e instanceof BundleError ||
    e instanceof TrainingError || e instanceof FeedbackLogError ||
    e instanceof RangeError ||
    e instanceof SyntaxError
  ) {
    return true;
  }
  if (SYSTEM_ERRORS.some((Class) => e instanceof Class)) return true;
  const code = (e as { code?: unknown } | null)?.code;
  return e instanceof Error && typeof code === "string" &&
    /^E[A-Z0-9]+$/.test(code);
}

/**
 * Prints why a command failed on `print` (stderr by default) and returns the
 * exit code: `error: MESSAGE` on one line and 2 for an input error
 * (`isInputError`); for anything else, a line saying it is a bug followed
 * by the error's stack, and 1.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UsageError } from "./common.ts";
 * import { reportFailure } from "./failure.ts";
 * const lines: string[] = [];
 * assert.equal(reportFailure(new UsageError("train needs --traces FILE"), (l) => lines.push(l)), 2);
 * assert.deepEqual(lines, ["error: train needs --traces FILE"]);
 * ```
 */
export function reportFailure(
  e: unknown,
  print: (text: string) => void = console.error,
): number {
  if (isInputError(e)) {
    print(`error: ${oneLine(e)}`);
    return EXIT_INPUT;
  }
  const stack = e instanceof Error
    ? e.stack ?? `${e.name}: ${e.message}`
    : `thrown: ${String(e)}`;
  print(
    `error: an unexpected failure, a bug in decision-tables (please report it with what follows)\n${stack}`,
  );
  return EXIT_BUG;
}
