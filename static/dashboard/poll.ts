/**
 * Polling `GET /v1/stats`: every 2 seconds while the tab is visible, slower
 * after a failure, with the connection's state in words.
 *
 * @module
 */

import { requestJson } from "./api.ts";
import type { Stats } from "./stats.ts";

/** The connection's state, as the status line shows it. */
export type ConnectionState = "live" | "error" | "auth";

/** What the poller calls back. */
export interface PollerOptions {
  /** Called with each statistics document received. */
  onStats: (stats: Stats) => void;
  /** Called with the connection's state and a sentence about it. */
  onStatus: (state: ConnectionState, text: string) => void;
  /** Time between refreshes, in ms. */
  intervalMs?: number;
  /** Time before trying again after a failure, in ms (twice this after a refused login). */
  retryMs?: number;
  /** Time after which a request is given up, in ms. */
  timeoutMs?: number;
}

const DEFAULTS = {
  intervalMs: 2000,
  retryMs: 4000,
  timeoutMs: 8000,
} satisfies Partial<PollerOptions>;

/**
 * Starts polling at once, pauses while the tab is hidden and resumes when
 * it shows again. One request at a time.
 */
export function startPolling(options: PollerOptions): void {
  const o = { ...DEFAULTS, ...options };
  let timer = 0;
  let inFlight = false;
  let lastOk = 0;

  const schedule = (ms: number) => {
    clearTimeout(timer);
    if (!document.hidden) timer = setTimeout(poll, ms);
  };

  async function poll(): Promise<void> {
    if (inFlight) return;
    inFlight = true;
    const abort = new AbortController();
    const kill = setTimeout(() => abort.abort(), o.timeoutMs);
    let next = o.intervalMs;
    let stats: Stats | null = null;
    try {
      const reply = await requestJson("/v1/stats", { signal: abort.signal });
      if (reply.status === 401 || reply.status === 403) {
        o.onStatus(
          "auth",
          "Sign-in needed: reload the page and enter the token as the password",
        );
        next = o.retryMs * 2;
      } else if (!reply.ok || reply.body === null) {
        o.onStatus("error", `The server answered ${reply.status}; retrying`);
        next = o.retryMs;
      } else {
        stats = reply.body as Stats;
      }
    } catch {
      const when = lastOk
        ? ` (last update ${new Date(lastOk).toLocaleTimeString()})`
        : "";
      o.onStatus("error", `Cannot reach the server; retrying${when}`);
      next = o.retryMs;
    } finally {
      clearTimeout(kill);
    }
    // A page that fails to show a document is a bug, not a lost connection:
    // it surfaces as the script error it is, and polling goes on.
    try {
      if (stats !== null) {
        o.onStats(stats);
        lastOk = Date.now();
        o.onStatus("live", `Live · updated ${new Date().toLocaleTimeString()}`);
      }
    } finally {
      inFlight = false;
      schedule(next);
    }
  }

  document.addEventListener("visibilitychange", () => {
    if (document.hidden) clearTimeout(timer);
    else poll();
  });
  poll();
}
