/**
 * Every learning replica serves the fleet's bundle: the one the store says
 * is in force (`LearnStore.current`). On each announcement, and once a
 * second in case one was missed, a replica whose bundle in force is older
 * fetches the new one, checks it (`bundle_share.ts`), swaps it in as the
 * newest version of `DIR/bundle` and reloads. The learner that published
 * a bundle already serves it (`published`).
 *
 * @module
 */

import type { LearnStore, PublishedBundle } from "../../live/mod.ts";
import { installBundle, unpackBundle } from "./bundle_share.ts";

/** How often the store's bundle is looked at without an announcement, ms. */
export const BUNDLE_POLL_MS = 1_000;

/** What a bundle follower is told. */
export interface BundleFollowerOptions {
  /** The learning folder (its `bundle` is swapped). */
  dir: string;
  store: LearnStore;
  /** Versions of `DIR/bundle` kept. */
  keep: number;
  /** The bundle id served now. */
  servedId: () => string;
  /** Serves `DIR/bundle` again. */
  reload: () => Promise<void>;
  log?: ((line: string) => void) | undefined;
}

/** Keeps a replica on the fleet's bundle (see the module doc). */
export class BundleFollower {
  readonly #o: BundleFollowerOptions;
  readonly #log: (line: string) => void;
  #applied: PublishedBundle | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #refused = new Set<string>();
  #swaps = 0;

  /** A follower; nothing runs before `start`. */
  constructor(options: BundleFollowerOptions) {
    this.#o = options;
    this.#log = options.log ?? ((l) => console.error(l));
  }

  /** The fleet's bundle in force here (null: none applied yet). */
  get applied(): PublishedBundle | null {
    return this.#applied;
  }

  /** Bundles swapped in from the store. */
  get swaps(): number {
    return this.#swaps;
  }

  /** Listens for announcements and looks every `BUNDLE_POLL_MS`. */
  async start(): Promise<void> {
    await this.#o.store.subscribe(() => this.kick()).catch(() => {});
    this.#timer = setInterval(() => this.kick(), BUNDLE_POLL_MS);
    Deno.unrefTimer(this.#timer);
    this.kick();
  }

  /** The learner published `bundle` and serves it already. */
  published(bundle: PublishedBundle): void {
    this.#applied = bundle;
  }

  /** Forgets what is applied: the store's bundle is applied again (after a publish the store refused). */
  forget(): void {
    this.#applied = null;
    this.kick();
  }

  /** Looks at the store's bundle now (after the look running, if any). */
  kick(): Promise<void> {
    this.#again = true;
    this.#running ??= this.#loop().finally(() => this.#running = null);
    return this.#running;
  }

  async #loop(): Promise<void> {
    while (this.#again) {
      this.#again = false;
      try {
        await this.#step();
      } catch {
        // Not answering: the next look tries again.
      }
    }
  }

  async #step(): Promise<void> {
    const current = await this.#o.store.current();
    if (current === null) return;
    const applied = this.#applied;
    if (applied !== null && current.version <= applied.version) return;
    if (current.id === this.#o.servedId()) {
      this.#applied = current;
      return;
    }
    const key = `${current.version}:${current.id}`;
    if (this.#refused.has(key)) return;
    const started = performance.now();
    try {
      const blob = await this.#o.store.blob(current.id);
      if (blob === null) {
        throw new Error("the store no longer keeps its files");
      }
      const files = await unpackBundle(blob, current.sha256);
      await installBundle(
        `${this.#o.dir}/bundle`,
        files,
        current.id,
        this.#o.keep,
      );
    } catch (e) {
      this.#refused.add(key);
      this.#log(
        `learn: the fleet's bundle ${
          current.id.slice(0, 12)
        } (version ${current.version}) refused: ${
          (e as Error)?.message ?? e
        }; the bundle in force stays`,
      );
      return;
    }
    await this.#o.reload();
    this.#applied = current;
    this.#swaps++;
    this.#log(
      `learn: serving the fleet's bundle ${
        current.id.slice(0, 12)
      } (version ${current.version}, ${
        current.rollback
          ? "rolled back to"
          : `written by ${current.replica} under lease ${current.fence}`
      }) ${
        Math.round(performance.now() - started)
      } ms after this replica heard of it`,
    );
  }

  /** Stops looking. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
