/**
 * Fleets for real in tests: replicas of `main.ts serve` sharing an audit
 * key file and a Redis live store, under locked-down permissions, and the
 * live statistics they show.
 *
 * @module
 */

import { type RedisProcess, startRedis } from "../scripts/processes.ts";
import { tempDir } from "./_fixtures.ts";
import { getText, type RunningServer, startServer } from "./_http_helpers.ts";
import { missingTool } from "./_tools.ts";

// deno-lint-ignore no-explicit-any
export type Json = Record<string, any>;

/** Why `file`'s fleet tests cannot run (no `redis-server`), or null. */
export function missingRedis(file: string): string | null {
  return missingTool(file, "redis-server", "apt-get install redis-server");
}

/** The fleet's shared audit secret, as `writeAuditKey` writes it. */
export const FLEET_KEY = "the fleet's shared audit secret";

/** Writes `FLEET_KEY` to `dir/audit.key`; returns that path. */
export async function writeAuditKey(dir: string): Promise<string> {
  const key = `${dir}/audit.key`;
  await Deno.writeTextFile(key, FLEET_KEY + "\n");
  return key;
}

/** One replica of a fleet. */
export interface ReplicaOptions {
  bundle: string;
  /** The shared `--audit-key-file`. */
  key: string;
  /** The shared `--live-store` address. */
  store: string;
  /** Its `--replica` name. */
  name: string;
  /** Its `--audit-seed`. */
  seed: number;
  /** Its `--audit-rate`, as given on the command line. */
  auditRate: string;
  /** Its `--feedback-log`, the only path it may write; none by default. */
  feedbackLog?: string | undefined;
  /** Further `serve` flags, after the fleet's. */
  args?: string[] | undefined;
  /** Further paths it may read besides the bundle and the key. */
  read?: string[] | undefined;
  /** Further paths it may write besides its feedback log. */
  write?: string[] | undefined;
}

/**
 * Starts one replica: `serve` with the audit, store and replica flags of
 * `o`, allowed the network on 127.0.0.1 only, reads of the bundle, the key
 * and `o.read`, and writes of its feedback log alone.
 */
export function startReplica(o: ReplicaOptions): Promise<RunningServer> {
  const args = [
    "--audit-rate",
    o.auditRate,
    "--audit-seed",
    String(o.seed),
    "--audit-key-file",
    o.key,
    "--live-store",
    o.store,
    "--replica",
    o.name,
  ];
  if (o.feedbackLog !== undefined) args.push("--feedback-log", o.feedbackLog);
  const writes = [
    ...(o.feedbackLog === undefined ? [] : [o.feedbackLog]),
    ...o.write ?? [],
  ];
  args.push(...o.args ?? []);
  return startServer({
    bundle: o.bundle,
    args,
    // The store needs network access only.
    read: [...o.read ?? [], o.key],
    ...(writes.length === 0 ? {} : { write: writes }),
  });
}

/** A running server's `/v1/stats`. */
export async function stats(s: RunningServer): Promise<Json> {
  return JSON.parse((await getText(s.base, "/v1/stats")).text);
}

/**
 * Runs `test` with a fresh Redis (`startRedis`) and a temporary folder;
 * Redis is stopped, then the folder removed, once it ends (the test stops
 * its own servers first).
 */
export async function withRedis(
  test: (redis: RedisProcess, dir: { path: string }) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir();
  const redis = await startRedis();
  try {
    await test(redis, dir);
  } finally {
    await redis.stop();
  }
}

/** What every replica of a fleet shares (see `ReplicaOptions`). */
export interface FleetOptions {
  bundle: string;
  /** The folder of the audit key (and of the feedback logs). */
  dir: string;
  store: string;
  auditRate: string;
  /** Whether each replica logs its feedback to `dir/feedback-NAME.jsonl`. */
  feedbackLogs?: boolean;
  args?: string[];
  read?: string[];
}

/**
 * Writes the fleet's audit key into `o.dir` (`writeAuditKey`) and returns
 * how to start its replica `name` with audit seed `seed`.
 */
export async function replicaStarter(
  o: FleetOptions,
): Promise<(name: string, seed: number) => Promise<RunningServer>> {
  const key = await writeAuditKey(o.dir);
  return (name, seed) =>
    startReplica({
      bundle: o.bundle,
      key,
      store: o.store,
      name,
      seed,
      auditRate: o.auditRate,
      feedbackLog: o.feedbackLogs
        ? `${o.dir}/feedback-${name}.jsonl`
        : undefined,
      args: o.args,
      read: o.read,
    });
}
