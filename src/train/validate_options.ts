/**
 * Checking training options before any work: every number in its range,
 * every mode one training knows. `train()` calls `validateTrainOptions`, so
 * a script that calls it directly gets the same checks as the `train`
 * command, which only maps its flags to options.
 *
 * @module
 */

import {
  type DriftSettings,
  SCOPE_SCORES,
  type TableSettings,
} from "../engine/mod.ts";
import { DEFAULT_TRAIN_OPTIONS, type TrainOptions } from "./options.ts";
import { SEMANTIC_MODES } from "./semantic.ts";
import { SPLIT_MODES } from "./split.ts";

/**
 * A training option out of range or of the wrong kind. A `RangeError`, so
 * a command reports it as bad input (exit 2); `options` names the option or
 * options at fault (`settings.min_radius` for a nested one), `value` is
 * what was given and `expected` says what would do, in words.
 */
export class TrainOptionError extends RangeError {
  override name = "TrainOptionError";
  constructor(
    readonly options: readonly string[],
    readonly value: unknown,
    readonly expected: string,
  ) {
    super(
      `training option ${options.join(" plus ")} must be ${expected}: got ${
        shown(value)
      }`,
    );
  }
}

/** Some of `T`'s keys, each possibly `undefined` (taken as left out). */
type Some<T> = { [K in keyof T]?: T[K] | undefined };

/** Training options as a caller may give them: any left out take their default. */
export type TrainOptionsInput =
  & Some<Omit<TrainOptions, "settings">>
  & {
    settings?:
      & Some<Omit<TableSettings, "drift">>
      & { drift?: Some<DriftSettings> };
  };

/**
 * The defaults (`DEFAULT_TRAIN_OPTIONS`) with `partial` over them (keys
 * given as `undefined` keep their default; `settings` and its `drift` are
 * merged key by key), checked by `validateTrainOptions`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { trainOptions } from "./validate_options.ts";
 * assert.equal(trainOptions({ alpha: 0.1 }).alpha, 0.1);
 * assert.throws(() => trainOptions({ alpha: 2 }), RangeError);
 * ```
 */
export function trainOptions(partial: TrainOptionsInput = {}): TrainOptions {
  const d = DEFAULT_TRAIN_OPTIONS;
  const given = defined(partial);
  const settings = defined(partial.settings ?? {});
  const options = {
    ...d,
    ...given,
    settings: {
      ...d.settings,
      ...settings,
      drift: { ...d.settings.drift, ...defined(partial.settings?.drift ?? {}) },
    },
  } as TrainOptions;
  return validateTrainOptions(options);
}

/**
 * Returns `options` unchanged when every option is in range; otherwise
 * throws `TrainOptionError` (a `RangeError`) naming the first one that is
 * not, with its value. The order is the `train` command's flags' order.
 */
export function validateTrainOptions(options: TrainOptions): TrainOptions {
  const o = options;
  const unit = (n: number) => n > 0 && n < 1;
  const int = (min: number, max = Number.MAX_SAFE_INTEGER) => (n: number) =>
    Number.isInteger(n) && n >= min && n <= max;
  check("alpha", o.alpha, unit, "in (0, 1)");
  check("delta", o.delta, unit, "in (0, 1)");
  check("seed", o.seed, Number.isSafeInteger, "an integer");
  check("calibrationShare", o.calibrationShare, unit, "in (0, 1)");
  check("testShare", o.testShare, unit, "in (0, 1)");
  check("maxEpochs", o.maxEpochs, int(1), "a positive integer");
  check("workers", o.workers, int(1, 64), "an integer from 1 to 64");
  const s = o.settings;
  if (typeof s !== "object" || s === null) {
    throw new TrainOptionError(["settings"], s, "an object");
  }
  check("settings.min_radius", s.min_radius, int(1), "a positive integer");
  if (typeof s.serve_new_options !== "boolean") {
    throw new TrainOptionError(
      ["settings.serve_new_options"],
      s.serve_new_options,
      "true or false",
    );
  }
  for (const [q, t] of Object.entries(s.force_thresholds ?? {})) {
    check(
      `settings.force_thresholds.${q}`,
      t,
      (n) => n >= 0 && n <= 1,
      "in [0, 1]",
    );
  }
  const dr = s.drift;
  check("settings.drift.delta", dr?.delta, unit, "in (0, 1)");
  check(
    "settings.drift.rearm_window",
    dr?.rearm_window,
    int(1),
    "a positive integer",
  );
  const below1 = (n: number) => n >= 0 && n < 1;
  const upTo1 = (n: number) => n >= 0 && n <= 1;
  check("settings.drift.single_p", dr?.single_p, below1, "in [0, 1)");
  check("settings.drift.max_novelty", dr?.max_novelty, upTo1, "in [0, 1]");
  check("settings.drift.min_novelty", dr?.min_novelty, upTo1, "in [0, 1]");
  check("settings.drift.scope_p", dr?.scope_p, below1, "in [0, 1)");
  oneOf("semantic", o.semantic, SEMANTIC_MODES);
  oneOf("split", o.split, SPLIT_MODES);
  check("similarity", o.similarity, (n) => n > 0 && n <= 1, "in (0, 1]");
  if (o.calibrationShare + o.testShare > 0.9 - 1e-9) {
    throw new TrainOptionError(
      ["calibrationShare", "testShare"],
      o.calibrationShare + o.testShare,
      "leave at least 10% of traces to train on",
    );
  }
  check("validationShare", o.validationShare, unit, "in (0, 1)");
  check(
    "twinSimilarity",
    o.twinSimilarity,
    (n) => n > 0 && n <= 1,
    "in (0, 1]",
  );
  oneOf("scopeScore", o.scopeScore, SCOPE_SCORES);
  if (!Array.isArray(o.l2Grid) || o.l2Grid.length === 0) {
    throw new TrainOptionError(["l2Grid"], o.l2Grid, "a list of numbers >= 0");
  }
  for (const l2 of o.l2Grid) {
    check(
      "l2Grid",
      l2,
      (n) => n >= 0 && n < Infinity,
      "a list of numbers >= 0",
    );
  }
  check("patience", o.patience, int(0), "an integer >= 0");
  check("visitBudget", o.visitBudget, int(1), "a positive integer");
  check("refitBelow", o.refitBelow, (n) => n >= 0, "a number >= 0");
  check(
    "learningRate",
    o.learningRate,
    (n) => n > 0 && n < Infinity,
    "a number > 0",
  );
  check("wordDropout", o.wordDropout, below1, "in [0, 1)");
  check(
    "minGradient",
    o.minGradient,
    (n) => n >= 0 && n < Infinity,
    "a number >= 0",
  );
  check("candidates", o.candidates, int(1), "a positive integer");
  check("ensemble", o.ensemble, int(1), "a positive integer");
  return options;
}

/** Throws `TrainOptionError` unless `value` is a number `accepts` takes. */
function check(
  option: string,
  value: unknown,
  accepts: (n: number) => boolean,
  expected: string,
): void {
  if (typeof value !== "number" || Number.isNaN(value) || !accepts(value)) {
    throw new TrainOptionError([option], value, expected);
  }
}

/** Throws `TrainOptionError` unless `value` is one of `allowed`. */
function oneOf(
  option: string,
  value: unknown,
  allowed: readonly string[],
): void {
  if (!allowed.includes(value as string)) {
    throw new TrainOptionError([option], value, `one of ${allowed.join(", ")}`);
  }
}

/** `value` as an error message shows it. */
function shown(value: unknown): string {
  if (typeof value === "number") return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `record` without its keys whose value is `undefined`. */
function defined<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(record).filter(([, v]) => v !== undefined),
  ) as Partial<T>;
}
