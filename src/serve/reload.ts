/**
 * Loading the served table, and loading it again while serving: on SIGHUP,
 * and with `serve --watch` when the bundle folder is replaced (as `train
 * --out` replaces it: a new link renamed over the old one). A new table is
 * swapped in whole between requests (`Service.swap`), so none is dropped;
 * a bundle that fails to load is refused with one logged line and the old
 * table keeps serving. Shortly after a reload, a full garbage collection
 * frees the table it replaced (`full_collection.ts`).
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { loadBundle } from "../bundle/mod.ts";
import {
  type DriftMonitor,
  type DriftSettings,
  type Table,
  TableState,
  warmUp,
} from "../engine/mod.ts";
import { collectGarbage } from "./full_collection.ts";

/**
 * What a load needs: the folder, drift overrides and the word cache size;
 * `S` is what the serving side needs to start a second tier's encoder.
 */
export interface LoadSettings<S = unknown> {
  bundle: string;
  drift: Partial<DriftSettings>;
  wordCacheBytes: number;
  /** The second tier's workers and queue, for a bundle with one (the target's defaults otherwise). */
  semantic?: S;
}

/**
 * Where a loaded table goes: a running service (`Service` of `src/http/`
 * is one). `prepare` gets ready to serve the table (starting an encoder
 * for a second tier), `swap` serves it from the next request on.
 */
export interface SwapTarget<S = unknown> {
  prepare(table: Table, semantic?: S): Promise<void>;
  swap(
    table: Table,
    monitor?: DriftMonitor,
    loadMs?: number,
    state?: TableState,
  ): unknown;
}

/** An error's message on one line (the default wording of a refused reload). */
function messageOf(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, " ");
}

/**
 * Loads the bundle as `serve` serves it: drift overrides applied, its
 * serving state made (word cache of `s.wordCacheBytes`), hot paths
 * compiled.
 */
export async function loadBundleToServe(
  s: LoadSettings<unknown>,
): Promise<{ table: Table; state: TableState; loadMs: number }> {
  const start = performance.now();
  const loaded = await loadBundle(s.bundle);
  const table: Table = {
    ...loaded,
    settings: {
      ...loaded.settings,
      drift: { ...loaded.settings.drift, ...s.drift },
    },
  };
  const state = new TableState(table, { wordCacheBytes: s.wordCacheBytes });
  // Compile the hot paths now, not on the first requests (no guard state is touched).
  warmUp(table, state);
  return { table, state, loadMs: performance.now() - start };
}

/**
 * Milliseconds after a reload before the full collection that frees the old
 * table: requests begun on it (microseconds each) have ended by then.
 */
export const RELOAD_COLLECT_MS = 100;

/** Milliseconds a burst of file events must go quiet before `--watch` reloads. */
export const WATCH_SETTLE_MS = 300;

/** A running reloader. */
export interface Reloader {
  /** Loads the bundle again now (a reload already running is followed by one more). */
  reload(): Promise<void>;
  /** Stops listening for SIGHUP and file events. */
  stop(): void;
}

/**
 * Reloads `s.bundle` into `service` on SIGHUP and, with `watch`, when the
 * folder is replaced. `log` gets one line per reload or refusal, a refusal
 * naming its error as `wordError` words it (its message by default).
 */
export function startReloader<S>(
  s: LoadSettings<S>,
  service: SwapTarget<S>,
  watch: boolean,
  log: (line: string) => void,
  wordError: (e: unknown) => string = messageOf,
): Reloader {
  let running: Promise<void> | null = null;
  let again = false;
  const once = async () => {
    try {
      const { table, state, loadMs } = await loadBundleToServe(s);
      // A bundle with a second tier starts the encoder before it serves.
      await service.prepare(table, s.semantic);
      service.swap(table, undefined, loadMs, state);
      log(`reloaded bundle ${s.bundle} in ${loadMs.toFixed(1)} ms`);
      Deno.unrefTimer(setTimeout(collectGarbage, RELOAD_COLLECT_MS));
    } catch (e) {
      log(
        `error: reload of bundle ${s.bundle} refused (${
          wordError(e)
        }); still serving the previous one`,
      );
    }
  };
  const reload = (): Promise<void> => {
    if (running !== null) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await once();
      } while (again);
      running = null;
    })();
    return running;
  };

  const onHangup = () => void reload();
  const hangup = Deno.build.os !== "windows";
  if (hangup) Deno.addSignalListener("SIGHUP", onHangup);

  let watcher: Deno.FsWatcher | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (watch) {
    const folder = resolve(s.bundle);
    watcher = Deno.watchFs(dirname(folder), { recursive: false });
    (async () => {
      try {
        for await (const event of watcher!) {
          const touches = event.paths.some((p) =>
            p === folder || p.startsWith(`${folder}/`)
          );
          if (!touches) continue;
          clearTimeout(timer);
          timer = setTimeout(() => void reload(), WATCH_SETTLE_MS);
        }
      } catch (e) {
        log(`error: watching ${folder} stopped: ${wordError(e)}`);
      }
    })();
  }
  return {
    reload,
    stop() {
      if (hangup) Deno.removeSignalListener("SIGHUP", onHangup);
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
