/**
 * `versions --live-store URL` and `rollback --live-store URL [--to ID]`: the
 * bundles a learning fleet keeps in its store (`serve --learn DIR
 * --live-store URL`), and a rollback for the whole fleet: the store makes
 * a kept bundle the one in force again, and every replica swaps it in
 * within seconds (`src/learn/fleet/bundle_follower.ts`), as it does a new
 * one. The learner's next bundle replaces it, as after a lone learner's
 * rollback.
 *
 * @module
 */

import type { LearnStore, PublishedBundle } from "../live/mod.ts";
import { shownBundleId } from "../live/mod.ts";
import { oneLine, UsageError } from "./common.ts";

/** Most ms a command waits for the store to answer. */
const STORE_WAIT_MS = 5_000;

/** Opens the store at `url` and waits until it answers; throws `UsageError` when it does not. */
async function openStore(url: string): Promise<LearnStore> {
  const { RedisLearnStore } = await import("../live/redis_learn_store.ts");
  let store: LearnStore;
  try {
    store = new RedisLearnStore(url);
  } catch (e) {
    throw new UsageError(oneLine(e));
  }
  const end = performance.now() + STORE_WAIT_MS;
  for (;;) {
    try {
      await store.current();
      return store;
    } catch (e) {
      if (performance.now() > end) {
        await store.close();
        throw new UsageError(
          `The live store ${store.description} does not answer: ${oneLine(e)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The bundles `store` keeps, newest first, and the one in force. */
async function keptBundles(
  store: LearnStore,
): Promise<{ kept: PublishedBundle[]; current: PublishedBundle | null }> {
  const [kept, current] = await Promise.all([
    store.versions(),
    store.current(),
  ]);
  return { kept, current };
}

/** One kept bundle as a line: `* 3 a292faca3812 published ... by r2 under lease 2`. */
function line(b: PublishedBundle, current: PublishedBundle | null): string {
  return `${current?.id === b.id ? "*" : " "} ${
    shownBundleId(b.id)
  } version ${b.version}, published ${b.published} by ${b.replica} under lease ${b.fence}`;
}

/** Prints the fleet's kept bundles, newest first, the one in force marked; returns the exit code. */
export async function fleetVersions(
  url: string,
  json: boolean,
): Promise<number> {
  const store = await openStore(url);
  try {
    const { kept, current } = await keptBundles(store);
    if (json) {
      console.log(
        JSON.stringify(
          { store: store.description, current, versions: kept },
          null,
          2,
        ),
      );
    } else if (kept.length === 0) {
      console.log(`${store.description}: no bundle published yet`);
    } else {
      console.log(
        [
          `${store.description}: ${kept.length} bundle(s) kept, newest first (* in force${
            current?.rollback ? ", rolled back to" : ""
          })`,
          ...kept.map((b) => line(b, current)),
        ].join("\n"),
      );
    }
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * The kept bundle `to` names (a unique beginning of its id); without `to`,
 * the newest kept bundle published before the one in force. Throws
 * `UsageError` saying which there are.
 */
export function chooseKept(
  kept: readonly PublishedBundle[],
  current: PublishedBundle | null,
  to: string | undefined,
): PublishedBundle {
  const ids = kept.map((b) => shownBundleId(b.id)).join(", ") || "none";
  if (to === undefined) {
    const at = kept.findIndex((b) => b.id === current?.id);
    const earlier = at < 0 ? kept[0] : kept[at + 1];
    if (earlier === undefined) {
      throw new UsageError(
        `no kept bundle older than the one in force to roll back to (kept: ${ids}); give --to ID`,
      );
    }
    return earlier;
  }
  const wanted = to.trim().toLowerCase();
  const matches = kept.filter((b) => wanted !== "" && b.id.startsWith(wanted));
  if (matches.length === 0) {
    throw new UsageError(`no kept bundle "${to}" in the store (kept: ${ids})`);
  }
  if (matches.length > 1) {
    throw new UsageError(
      `--to ${to} names more than one bundle: give more of the id`,
    );
  }
  return matches[0]!;
}

/** Makes a kept bundle the fleet's bundle in force again; returns the exit code. */
export async function fleetRollback(
  url: string,
  to: string | undefined,
): Promise<number> {
  const store = await openStore(url);
  try {
    const { kept, current } = await keptBundles(store);
    const chosen = chooseKept(kept, current, to);
    if (chosen.id === current?.id) {
      console.log(
        `the fleet already serves ${shownBundleId(chosen.id)}; nothing changed`,
      );
      return 0;
    }
    const done = await store.rollback(chosen.id);
    if (done === null) {
      throw new UsageError(
        `the store no longer keeps ${
          shownBundleId(chosen.id)
        }; nothing changed`,
      );
    }
    console.log(
      `the fleet's bundle in force is ${
        shownBundleId(done.id)
      } again (version ${done.version}${
        current === null
          ? ""
          : `; it was ${shownBundleId(current.id)}, still kept`
      }): every replica swaps it in within seconds, and the learner's next bundle replaces it`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
