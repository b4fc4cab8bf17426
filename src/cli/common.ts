/**
 * What the commands share: usage errors, flag parsing, number flags, paths
 * as the user typed them, one-line failures.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { closestName, type DriftSettings } from "../engine/mod.ts";

/** A mistake in how a command was called or in what it was given; printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The flags a command accepts, as `node:util` `parseArgs` takes them. */
export type FlagOptions = NonNullable<ParseArgsConfig["options"]>;

const NEGATIVE_NUMBER = /^-(?:\d|\.\d)/;

/**
 * Parses a command's flags strictly (no positional arguments). A negative
 * number may follow its flag (`--alpha -0.1`: the flag's own check then
 * judges it). Every mistake becomes a one-line `UsageError` that says what to
 * do, naming `command --help`. With `allowPositionals`, arguments that
 * are not flags are kept (`positionals`), as `predict`'s files.
 *
 * @example
 * ```ts
 * const { values } = parseFlags("eval", ["--bundle", "b", "--json"], {
 *   bundle: { type: "string" },
 *   json: { type: "boolean", default: false },
 * });
 * ```
 */
export function parseFlags<T extends FlagOptions>(
  command: string,
  args: readonly string[],
  options: T,
  allowPositionals = false,
) {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const option = arg.startsWith("--") ? options[arg.slice(2)] : undefined;
    if (
      option?.type === "string" && next !== undefined &&
      NEGATIVE_NUMBER.test(next)
    ) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  try {
    return parseArgs({
      args: joined,
      options,
      strict: true,
      allowPositionals,
    });
  } catch (e) {
    throw new UsageError(flagMistake(command, e, Object.keys(options)));
  }
}

/**
 * What `parseArgs` refused, in one line with its remedy: an unknown flag
 * names the known one it most likely meant (`did you mean --alpha?`).
 */
function flagMistake(command: string, e: unknown, known: string[]): string {
  const message = e instanceof Error ? e.message : String(e);
  const help = `(see ${command} --help)`;
  const flag = /'(-[^' ]+)/.exec(message)?.[1] ?? "";
  const code = (e as { code?: string }).code;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const meant = flag.startsWith("--")
      ? closestName(flag.slice(2).split("=")[0]!, known)
      : null;
    return `unknown flag ${flag}${
      meant === null ? "" : ` (did you mean --${meant}?)`
    } ${help}`;
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    const arg = /argument '([^']*)'/.exec(message)?.[1] ?? "";
    return `unexpected argument "${arg}": every value follows its flag ${help}`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    if (message.includes("argument is ambiguous")) {
      return `${flag} needs a value; to give one that starts with "-", write ${flag}=-VALUE`;
    }
    if (message.includes("argument missing")) {
      return `${flag} needs a value ${help}`;
    }
    if (message.includes("does not take an argument")) {
      return `${flag} takes no value ${help}`;
    }
  }
  return `${oneLine(message)} ${help}`;
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

/**
 * An error's message as one line (line breaks become spaces), for one-line
 * failure reports; Deno's "Requires read access to X, run again with the
 * --allow-read flag" becomes the hint the commands give elsewhere, naming
 * the flag's value (see `permissionHint`).
 */
export function oneLine(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return permissionHint(message.trim().replace(/\s*\n\s*/g, " "));
}

const DENO_PERMISSION =
  /Requires (\w+) access to "([^"]*)", run again with the --allow-(read|write|net|env|run|sys|ffi|import) flag/g;

/**
 * A message with Deno's missing-permission wording replaced by the hint
 * the commands give for their own files: what access is missing to what,
 * and `allow it with --allow-read=PATH` (the narrowest flag that works).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { permissionHint } from "./common.ts";
 * assert.equal(
 *   permissionHint('Cannot load bundle b: Requires read access to "b", run again with the --allow-read flag'),
 *   'Cannot load bundle b: no read access to "b"; allow it with --allow-read=b',
 * );
 * ```
 */
export function permissionHint(message: string): string {
  return message.replace(
    DENO_PERMISSION,
    (_, kind: string, what: string, flag: string) => {
      // A name a run makes beside its destination (DIR.tmp-1a2b3c4d): the
      // flag must name the folder that holds it.
      const scratch = /^(.*)[\/\\][^\/\\]+\.(?:tmp|link|old|v)-[0-9a-f]{8}$/
        .exec(what);
      const allow = scratch === null ? what : scratch[1] || "/";
      return `no ${kind} access to "${what}"; allow it with --allow-${flag}=${allow}`;
    },
  );
}

/**
 * The folder the user typed the command in: `INIT_CWD` when set and readable
 * (`deno task` sets it and runs from the project's folder; reading it needs
 * `--allow-env=INIT_CWD`), else undefined (the working folder is the user's).
 */
export function userFolder(): string | undefined {
  const query = { name: "env", variable: "INIT_CWD" } as const;
  if (Deno.permissions.querySync(query).state !== "granted") return undefined;
  const folder = Deno.env.get("INIT_CWD");
  return folder === undefined || folder === "" ? undefined : folder;
}

/**
 * A path flag's value as the user meant it: a relative path is resolved from
 * `userFolder()` when there is one; `-` (standard input), absolute paths and
 * undefined (a flag not given) are kept.
 *
 * @example
 * ```ts
 * // under `deno task train --traces logs/a.jsonl`, typed in /home/me
 * userPath("logs/a.jsonl"); // "/home/me/logs/a.jsonl"
 * ```
 */
export function userPath<P extends string | undefined>(path: P): P {
  if (path === undefined || path === "-" || path === "" || isAbsolute(path)) {
    return path;
  }
  const folder = userFolder();
  return (folder === undefined ? path : resolve(folder, path)) as P;
}

/** The drift-guard flags `train` sets in the bundle and `serve` may override (`--drift-*`). */
export const DRIFT_FLAGS = {
  "drift-delta": { type: "string" },
  "drift-window": { type: "string" },
  "drift-single-p": { type: "string" },
  "drift-max-novelty": { type: "string" },
  "drift-min-novelty": { type: "string" },
  "drift-scope-p": { type: "string" },
} as const satisfies FlagOptions;

/** A drift flag: the setting it sets, what it accepts and how that is said. */
type DriftRule = [
  setting: keyof DriftSettings,
  accepts: (n: number) => boolean,
  expected: string,
];

const DRIFT_RULES: Record<keyof typeof DRIFT_FLAGS, DriftRule> = {
  "drift-delta": ["delta", (n) => n > 0 && n < 1, "in (0, 1)"],
  "drift-window": [
    "rearm_window",
    (n) => Number.isInteger(n) && n >= 1,
    "a positive integer",
  ],
  "drift-single-p": ["single_p", (n) => n >= 0 && n < 1, "in [0, 1)"],
  "drift-max-novelty": ["max_novelty", (n) => n >= 0 && n <= 1, "in [0, 1]"],
  "drift-min-novelty": ["min_novelty", (n) => n >= 0 && n <= 1, "in [0, 1]"],
  "drift-scope-p": ["scope_p", (n) => n >= 0 && n < 1, "in [0, 1)"],
};

/**
 * The drift settings the `--drift-*` flags among `values` give (only those
 * given), checked by the one set of rules `train` and `serve` share; throws
 * `UsageError` naming the first flag out of range.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { driftFlagSettings } from "./common.ts";
 * assert.deepEqual(driftFlagSettings({ "drift-window": "50" }), { rearm_window: 50 });
 * ```
 */
export function driftFlagSettings(
  values: Partial<Record<keyof typeof DRIFT_FLAGS, string>>,
): Partial<DriftSettings> {
  const out: Partial<DriftSettings> = {};
  for (
    const [flag, [setting, accepts, expected]] of Object.entries(DRIFT_RULES)
  ) {
    const raw = values[flag as keyof typeof DRIFT_FLAGS];
    if (raw !== undefined) {
      out[setting] = numberFlag(flag, raw, 0, accepts, expected);
    }
  }
  return out;
}
