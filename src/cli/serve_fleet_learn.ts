/**
 * `serve --learn DIR --live-store URL`: the parts a replica of a learning
 * fleet opens before it serves (`src/learn/fleet/`): the store, the key
 * every replica signs decision ids with, the outbox its feedback log lines
 * go through, the reader of the fleet's pool into DIR, and the fleet's
 * learning itself, whose learner is made here when this replica takes the
 * lease.
 *
 * @module
 */

import {
  FleetLearning,
  type LearnerHooks,
  Outbox,
  PoolReader,
} from "../learn/fleet/mod.ts";
import { LEARN_FILES, Learner, type LearnerOptions } from "../learn/mod.ts";
import type { LearnStore } from "../live/mod.ts";
import type { FeedbackSink } from "../serve/mod.ts";
import type { Table } from "../engine/mod.ts";

/** Most ms a start waits for the store to say the fleet's key. */
const KEY_WAIT_MS = 3_000;

/** What a learning replica opened. */
export interface FleetLearnParts {
  readonly store: LearnStore;
  readonly outbox: Outbox;
  readonly pool: PoolReader;
  readonly learning: FleetLearning;
  /** Where the service's feedback-log lines go. */
  readonly sink: FeedbackSink;
  /** Stops learning, ships what it can, closes the files and the store. */
  close(): Promise<void>;
}

/** What opening a learning replica needs from `serve`. */
export interface FleetLearnInput {
  dir: string;
  storeUrl: string;
  replica: string;
  maxLogBytes: number | undefined;
  keep: number;
  served: () => Table;
  reload: () => Promise<void>;
  optionsAdded: (question: string, added: boolean) => void;
  /** The options of this replica's learner (made when it takes the lease), without what the fleet sets. */
  learner: Omit<
    LearnerOptions,
    "swapIn" | "resume" | "registry" | "writeHistory" | "dir"
  >;
  retrainAtOnce: () => boolean;
  log: (line: string) => void;
}

/**
 * Makes `DIR/audit.key` the fleet's key: the one the store holds, or this
 * folder's (made when missing) when the store holds none yet. Keys the
 * folder held before stay after it (ids they signed still verify). When
 * the store does not answer within `KEY_WAIT_MS`, the folder's key is used,
 * with a warning.
 */
export async function fleetKey(
  store: LearnStore,
  dir: string,
  log: (line: string) => void,
): Promise<string> {
  const path = `${dir}/${LEARN_FILES.key}`;
  let own: string[] = [];
  try {
    own = (await Deno.readTextFile(path)).split("\n").map((l) => l.trim())
      .filter((l) => l !== "");
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (own.length === 0) {
    own = [
      btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
    ];
  }
  let shared: string | null = null;
  const end = performance.now() + KEY_WAIT_MS;
  while (shared === null && performance.now() < end) {
    try {
      shared = await store.sharedKey(own[0]!);
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  if (shared === null) {
    log(
      `warning: the live store does not answer: decision ids are signed with ${path}, which other replicas may not hold (restart once the store answers)`,
    );
    shared = own[0]!;
  }
  const lines = [shared, ...own.filter((k) => k !== shared)];
  const text = `${lines.join("\n")}\n`;
  let before = "";
  try {
    before = await Deno.readTextFile(path);
  } catch { /* none */ }
  if (before !== text) {
    await Deno.writeTextFile(`${path}.tmp`, text, { mode: 0o600 });
    await Deno.rename(`${path}.tmp`, path);
  }
  return path;
}

/** Opens a learning replica's parts (see the module doc); nothing runs before `learning.start()`. */
export async function openFleetLearn(
  input: FleetLearnInput,
): Promise<FleetLearnParts> {
  const { RedisLearnStore } = await import("../live/redis_learn_store.ts");
  const store = new RedisLearnStore(input.storeUrl);
  const late = {} as { learning: FleetLearning };
  try {
    const outbox = await Outbox.open({
      dir: input.dir,
      replica: input.replica,
      store,
      log: input.log,
    });
    const pool = await PoolReader.open({
      dir: input.dir,
      store,
      maxLogBytes: input.maxLogBytes,
      onChunks: (chunks) => late.learning.onChunks(chunks),
      log: input.log,
    });
    const learning = late.learning = new FleetLearning({
      dir: input.dir,
      replica: input.replica,
      store,
      outbox,
      pool,
      keep: input.keep,
      served: input.served,
      reload: input.reload,
      optionsAdded: input.optionsAdded,
      retrainAtOnce: input.retrainAtOnce,
      log: input.log,
      makeLearner: (hooks: LearnerHooks) =>
        new Learner({
          ...input.learner,
          dir: input.dir,
          resume: hooks.resume,
          registry: hooks.registry,
          writeHistory: hooks.writeHistory,
          swapIn: hooks.swapIn,
        }),
    });
    return {
      store,
      outbox,
      pool,
      learning,
      sink: (lines) => outbox.append("log", lines),
      async close() {
        await learning.close();
        await pool.close();
        await outbox.close();
        await store.close();
      },
    };
  } catch (e) {
    await store.close();
    throw e;
  }
}
