/**
 * The flags of `serve`, parsed and checked into the settings of one run
 * (`ServeSettings`); every mistake is a one-line `UsageError`.
 *
 * @module
 */

import {
  DEFAULT_ENCODER_QUEUE,
  type EncoderQueueOptions,
} from "../encoder/mod.ts";
import { DEFAULT_WORD_CACHE_BYTES, type DriftSettings } from "../engine/mod.ts";
import {
  DEFAULT_REQUEST_LIMITS,
  DRAIN_MS,
  type RequestLimits,
} from "../http/mod.ts";
import {
  DEFAULT_AUDIT_RATE,
  journalBeside,
  type LiveOptions,
  parseStoreUrl,
} from "../live/mod.ts";
import {
  DRIFT_FLAGS,
  driftFlagSettings,
  numberFlag,
  oneLine,
  parseFlags,
  UsageError,
  userPath,
} from "./common.ts";

/** How a learning service learns (`serve --learn DIR`). */
export interface LearnSettings {
  /** Its folder: the feedback log, its ledger, the bundle versions, the retrain history. */
  dir: string;
  /** Seed trace files read at every retrain (`--traces`). */
  seeds: string[];
  /** The second tier at each retrain (`--semantic`). */
  semantic: "auto" | "on" | "off";
  /** The bundle to serve until a retrain writes `DIR/bundle` (`--bundle`, when given). */
  startBundle: string | undefined;
}

/** The learner's base rate of the calibration coin (`--audit-rate` in learn mode). */
export const DEFAULT_LEARN_RATE = 0.02;

/** Settings of one `serve` run, from its flags. */
export interface ServeSettings {
  /** The bundle served and reloaded: `--bundle`, or with `--learn DIR`, `DIR/bundle`. */
  bundle: string;
  /** With `--learn DIR`: how the service learns; null otherwise. */
  learn: LearnSettings | null;
  host: string;
  port: number;
  tokenEnv: string;
  tokenFile: string | undefined;
  /** The feedback token file (`--feedback-token-file`): `/v1/feedback` then needs its token instead of the access token. */
  feedbackTokenFile: string | undefined;
  costPerCall: number | null;
  llmLatencyMs: number | null;
  keepText: boolean;
  drift: Partial<DriftSettings>;
  /** Most bytes the word cache keeps. */
  wordCacheBytes: number;
  /** The live certificate's audit rate and seed. */
  live: LiveOptions;
  /** The audit key file (`--audit-key-file`): signed audit ids. */
  auditKeyFile: string | undefined;
  /** The fleet's live store (`--live-store redis://HOST:PORT[/DB]`). */
  liveStore: string | undefined;
  /** This replica's name in a fleet (`--replica`). */
  replica: string;
  /**
   * Where a stop keeps what it could not deliver to the live store, for
   * the next start to replay (`--live-journal`; by default beside the
   * feedback log); undefined without a store, or without either.
   */
  liveJournal: { path: string; given: boolean } | undefined;
  /** Where feedback is appended as traces (`--feedback-log`). */
  feedbackLog: string | undefined;
  /** Take feedback naming options the bundle lacks (`--accept-new-options`). */
  acceptNewOptions: boolean;
  /** Most bytes of the feedback log before it is rotated (`--feedback-log-max-mb`); unbounded when absent. */
  feedbackLogMaxBytes: number | undefined;
  /** Reload the bundle when its folder is replaced (`--watch`). */
  watch: boolean;
  /** The limits on every request (the body size limit is fixed). */
  limits: RequestLimits;
  /** Most milliseconds a shutdown waits for requests in flight. */
  drainMs: number;
  /** The second tier's encoder workers and queue (used only for a bundle with a second tier). */
  semantic: EncoderQueueOptions;
}

/** The flags of `serve`. */
const SERVE_FLAGS = {
  bundle: { type: "string" },
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "8010" },
  "token-env": { type: "string", default: "SERVICE_PROXY_TOKEN" },
  "token-file": { type: "string" },
  "feedback-token-file": { type: "string" },
  "cost-per-call": { type: "string" },
  "llm-latency-ms": { type: "string" },
  "keep-text": { type: "boolean", default: false },
  ...DRIFT_FLAGS,
  "word-cache-mb": { type: "string" },
  "audit-rate": { type: "string" },
  "audit-seed": { type: "string" },
  "feedback-log": { type: "string" },
  "feedback-log-max-mb": { type: "string" },
  "audit-key-file": { type: "string" },
  "live-store": { type: "string" },
  "live-journal": { type: "string" },
  replica: { type: "string" },
  watch: { type: "boolean", default: false },
  "accept-new-options": { type: "boolean", default: false },
  "body-timeout-ms": { type: "string" },
  "max-in-flight": { type: "string" },
  "max-bodies-per-client": { type: "string" },
  "drain-ms": { type: "string" },
  "semantic-workers": { type: "string" },
  "semantic-queue": { type: "string" },
  learn: { type: "string" },
  traces: { type: "string", multiple: true },
  semantic: { type: "string" },
  help: { type: "boolean", default: false },
} as const;

/** The flag values of one `serve` run. */
type ServeValues = ReturnType<typeof parseServeArgs>;

function parseServeArgs(args: string[]) {
  return parseFlags("serve", args, SERVE_FLAGS).values;
}

/** Parses the flags of `serve`; throws `UsageError` for a bad one. Null for `--help`. */
export function parseServeFlags(args: string[]): ServeSettings | null {
  const values = parseServeArgs(args);
  if (values.help) return null;
  const learn = learnFrom(values);
  if (
    learn === null && (values.bundle === undefined || values.bundle === "")
  ) {
    throw new UsageError("serve needs --bundle DIR (or --learn DIR)");
  }
  if (values.bundle === "") throw new UsageError("--bundle must name a folder");
  if (values.host.trim() === "") {
    throw new UsageError("--host must not be empty");
  }
  if (values["token-env"] === "") {
    throw new UsageError("--token-env must name an environment variable");
  }
  const costs = savingsFrom(values);
  const drift = driftFlagSettings(values);
  const { limits, drainMs } = limitsFrom(values);
  const wordCacheMb = numberFlag(
    "word-cache-mb",
    values["word-cache-mb"],
    DEFAULT_WORD_CACHE_BYTES / 1048576,
    (n) => n >= 0 && n <= 65536,
    "a number of MiB from 0 to 65536",
  );
  const live = liveFrom(values, learn !== null);
  const fleet = fleetFrom(values, learn !== null);
  if (learn !== null && live.auditRate === 0) {
    throw new UsageError(
      "--learn needs the calibration coin: --audit-rate must be above 0",
    );
  }
  if (fleet.liveStore !== undefined && live.auditRate === 0) {
    throw new UsageError(
      "--live-store needs the live certificate on: --audit-rate must be above 0",
    );
  }
  return {
    bundle: learn === null ? userPath(values.bundle)! : `${learn.dir}/bundle`,
    learn,
    host: values.host.trim().replace(/^\[(.*)\]$/, "$1"),
    port: numberFlag(
      "port",
      values.port,
      8010,
      (n) => Number.isInteger(n) && n >= 0 && n <= 65535,
      "an integer from 0 to 65535",
    ),
    tokenEnv: values["token-env"],
    tokenFile: userPath(values["token-file"]),
    feedbackTokenFile: feedbackTokenFile(values),
    ...costs,
    keepText: values["keep-text"],
    drift,
    wordCacheBytes: Math.round(wordCacheMb * 1024 * 1024),
    limits,
    feedbackLog: learn === null
      ? userPath(values["feedback-log"])
      : `${learn.dir}/feedback.jsonl`,
    feedbackLogMaxBytes: feedbackLogMaxBytes(values),
    watch: values.watch,
    acceptNewOptions: values["accept-new-options"] || learn !== null,
    live,
    ...fleet,
    liveJournal: liveJournalFrom(
      values,
      fleet.liveStore,
      learn === null ? undefined : `${learn.dir}/feedback.jsonl`,
    ),
    drainMs,
    semantic: {
      workers: numberFlag(
        "semantic-workers",
        values["semantic-workers"],
        DEFAULT_ENCODER_QUEUE.workers,
        (n) => Number.isInteger(n) && n >= 0 && n <= 64,
        "an integer from 0 to 64 (0: the table alone)",
      ),
      queue: numberFlag(
        "semantic-queue",
        values["semantic-queue"],
        DEFAULT_ENCODER_QUEUE.queue,
        (n) => Number.isInteger(n) && n >= 1 && n <= 100_000,
        "an integer from 1 to 100000",
      ),
    },
  };
}

/** `--feedback-token-file`: a file other than the access token's. */
function feedbackTokenFile(values: ServeValues): string | undefined {
  const path = userPath(values["feedback-token-file"]);
  if (path === "") {
    throw new UsageError("--feedback-token-file must name a file");
  }
  if (path !== undefined && path === userPath(values["token-file"])) {
    throw new UsageError(
      "--feedback-token-file must not be the --token-file: the feedback token is the one credential decision clients do not hold",
    );
  }
  return path;
}

/** `--feedback-log-max-mb` in bytes; refused without `--feedback-log`. */
function feedbackLogMaxBytes(values: ServeValues): number | undefined {
  const mb = values["feedback-log-max-mb"];
  if (mb === undefined) return undefined;
  if (values["feedback-log"] === undefined) {
    throw new UsageError("--feedback-log-max-mb needs --feedback-log FILE");
  }
  const n = numberFlag(
    "feedback-log-max-mb",
    mb,
    0,
    (n) => n >= 1 && n <= 1_048_576,
    "a number of MiB from 1 to 1048576",
  );
  return Math.round(n * 1024 * 1024);
}

/**
 * `--live-journal`, or by default a file beside the feedback log
 * (`journalBeside`); only with a live store.
 */
function liveJournalFrom(
  values: ServeValues,
  liveStore: string | undefined,
  learnLog?: string,
): ServeSettings["liveJournal"] {
  const given = userPath(values["live-journal"]);
  if (given !== undefined) {
    if (given.trim() === "") {
      throw new UsageError("--live-journal must name a file");
    }
    if (liveStore === undefined) {
      throw new UsageError(
        "--live-journal goes with --live-store: without a store nothing waits to be delivered",
      );
    }
    const log = userPath(values["feedback-log"]);
    if (log !== undefined && log === given) {
      throw new UsageError("--live-journal must not be the --feedback-log");
    }
    return { path: given, given: true };
  }
  const log = learnLog ?? userPath(values["feedback-log"]);
  if (liveStore === undefined || log === undefined) return undefined;
  return { path: journalBeside(log), given: false };
}

/** The audit key file, the live store and the replica's name, checked together. */
function fleetFrom(
  values: ServeValues,
  learning: boolean,
): Pick<ServeSettings, "auditKeyFile" | "liveStore" | "replica"> {
  const auditKeyFile = userPath(values["audit-key-file"]);
  if (auditKeyFile === "") {
    throw new UsageError("--audit-key-file must name a file");
  }
  const liveStore = values["live-store"];
  if (liveStore !== undefined) {
    try {
      parseStoreUrl(liveStore);
    } catch (e) {
      throw new UsageError(oneLine(e));
    }
    // A learning fleet shares its key through the store.
    if (auditKeyFile === undefined && !learning) {
      throw new UsageError(
        "--live-store needs --audit-key-file: a fleet counts an audit on whichever replica its answer reaches, so every replica must verify its id",
      );
    }
  }
  const replica = values.replica ?? `${values.host.trim()}:${values.port}`;
  if (replica.trim() === "" || [...replica].some((c) => c < " ")) {
    throw new UsageError("--replica must be a name on one line");
  }
  return { auditKeyFile, liveStore, replica: replica.trim() };
}

/** What one language-model call costs, in money and time, when given. */
function savingsFrom(
  values: ServeValues,
): Pick<ServeSettings, "costPerCall" | "llmLatencyMs"> {
  const optional = (name: string, value: string | undefined) =>
    value === undefined
      ? null
      : numberFlag(name, value, 0, (n) => n >= 0, "a number at least 0");
  return {
    costPerCall: optional("cost-per-call", values["cost-per-call"]),
    llmLatencyMs: optional("llm-latency-ms", values["llm-latency-ms"]),
  };
}

/** The limits on every request, and how long a shutdown waits. */
function limitsFrom(
  values: ServeValues,
): { limits: RequestLimits; drainMs: number } {
  const positiveInteger = (
    name:
      | "body-timeout-ms"
      | "max-in-flight"
      | "max-bodies-per-client"
      | "drain-ms",
    fallback: number,
  ) =>
    numberFlag(
      name,
      values[name],
      fallback,
      (n) => Number.isInteger(n) && n >= 1,
      "a positive integer",
    );
  return {
    limits: {
      bodyTimeoutMs: positiveInteger(
        "body-timeout-ms",
        DEFAULT_REQUEST_LIMITS.bodyTimeoutMs,
      ),
      maxInFlight: positiveInteger(
        "max-in-flight",
        DEFAULT_REQUEST_LIMITS.maxInFlight,
      ),
      maxBodiesPerClient: positiveInteger(
        "max-bodies-per-client",
        DEFAULT_REQUEST_LIMITS.maxBodiesPerClient,
      ),
    },
    drainMs: positiveInteger("drain-ms", DRAIN_MS),
  };
}

/** `--learn DIR` and the flags only it takes, checked; null without it. */
function learnFrom(values: ServeValues): LearnSettings | null {
  const dir = userPath(values.learn);
  const only = (flag: string, given: boolean) => {
    if (given && dir === undefined) {
      throw new UsageError(`--${flag} needs --learn DIR`);
    }
  };
  only("traces", values.traces !== undefined);
  only("semantic", values.semantic !== undefined);
  if (dir === undefined) return null;
  if (dir === "") throw new UsageError("--learn must name a folder");
  if (values["feedback-log"] !== undefined) {
    throw new UsageError(
      "--learn keeps its feedback log in DIR/feedback.jsonl: leave out --feedback-log",
    );
  }
  const semantic = values.semantic ?? "auto";
  if (semantic !== "auto" && semantic !== "on" && semantic !== "off") {
    throw new UsageError(
      `--semantic must be auto, on or off: got "${semantic}"`,
    );
  }
  const seeds = (values.traces ?? []).map((t) => {
    if (t === "") throw new UsageError("--traces must name a file");
    return userPath(t)!;
  });
  return {
    dir,
    seeds,
    semantic,
    startBundle: values.bundle === undefined
      ? undefined
      : userPath(values.bundle),
  };
}

/** The live certificate's audit rate and seed (a learning service's base rate by default). */
function liveFrom(values: ServeValues, learning: boolean): LiveOptions {
  return {
    auditRate: numberFlag(
      "audit-rate",
      values["audit-rate"],
      learning ? DEFAULT_LEARN_RATE : DEFAULT_AUDIT_RATE,
      (n) => n >= 0 && n <= 1,
      "a probability in [0, 1]",
    ),
    auditSeed: values["audit-seed"] === undefined ? undefined : numberFlag(
      "audit-seed",
      values["audit-seed"],
      0,
      (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff,
      "an integer from 0 to 4294967295",
    ),
  };
}
