/**
 * One connection to a Redis or Valkey server as the fleet uses it: a
 * node-redis client (`@redis/client`) that reconnects forever in the
 * background (every 100 ms to 1 s), whose commands fail at once while it is
 * down rather than queue, and a script runner with the fleet's failure
 * classes. `redis_store.ts` (the live certificate) and
 * `redis_learn_store.ts` (the fleet's learning) each hold one.
 *
 * A script the server refuses (`ERR ...`, `WRONGTYPE ...`) is
 * `StoreRejected`: reachable, nothing applied, the same call fails again. A
 * call with no reply within the timeout, or whose connection broke after it
 * was sent, is `StoreReplyLost`: it may have run. Anything else (not
 * connected, `LOADING`, `BUSY`, `READONLY`) is an outage.
 *
 * @module
 */

import { createClient, ErrorReply } from "@redis/client";
import { StoreRejected, StoreReplyLost } from "./store_errors.ts";
import { parseStoreUrl } from "./store.ts";

/** Most milliseconds a store command may take before its reply counts as lost. */
export const STORE_TIMEOUT_MS = 2000;

/** Most ms `subscribe` waits for the subscription to be in place. */
const SUBSCRIBE_WAIT_MS = 1_000;

/** A node-redis client that reconnects forever; commands wait for the connection only with `queue`. */
function newClient(url: URL, queue: boolean, timeoutMs: number) {
  return createClient({
    url: url.href,
    disableOfflineQueue: !queue,
    socket: {
      connectTimeout: timeoutMs,
      reconnectStrategy: (retries: number) =>
        Math.min(100 * (retries + 1), 1000),
    },
  });
}

/** The node-redis client a link holds. */
export type RedisClient = ReturnType<typeof newClient>;

/** The address without a password, for messages. */
export function describeStore(url: URL): string {
  const db = url.pathname.replace(/^\//, "");
  return `redis://${url.hostname}:${url.port || "6379"}${db ? `/${db}` : ""}`;
}

/** What a link is told. */
export interface RedisLinkOptions {
  /** Most ms a command may take (`STORE_TIMEOUT_MS`). */
  timeoutMs?: number | undefined;
  /** Hears connection errors. */
  log?: ((message: string) => void) | undefined;
}

/** One connection to a store (see the module doc); connects in the background. */
export class RedisLink {
  readonly description: string;
  readonly #url: URL;
  readonly client: RedisClient;
  #subscriber: RedisClient | null = null;
  readonly #timeoutMs: number;
  readonly #shas = new Map<string, string>();
  readonly #log: (message: string) => void;

  /** A link to `address` (`redis://HOST:PORT[/DB]`); throws `RangeError` for a bad address. */
  constructor(address: string, options: RedisLinkOptions = {}) {
    const url = parseStoreUrl(address);
    this.#url = url;
    this.description = describeStore(url);
    this.#timeoutMs = options.timeoutMs ?? STORE_TIMEOUT_MS;
    this.#log = options.log ?? (() => {});
    this.client = this.#connect(false);
  }

  /** A client that reconnects forever; commands wait for the connection only with `queue`. */
  #connect(queue: boolean): RedisClient {
    const client = newClient(this.#url, queue, this.#timeoutMs);
    // Errors are seen through the calls that fail; reconnecting goes on.
    client.on("error", () => {});
    client.connect().catch((e: unknown) =>
      this.#log(`live store ${this.description}: ${(e as Error).message}`)
    );
    return client;
  }

  /**
   * Runs `call` on the connected client within the timeout, with the
   * failure classes of the module doc. Rejects at once when not connected.
   */
  async run<T>(call: (client: RedisClient) => Promise<T>): Promise<T> {
    if (!this.client.isReady) throw new Error("not connected");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new StoreReplyLost(`no reply within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
    });
    try {
      return await Promise.race([call(this.client), late]);
    } catch (e) {
      // The server answered with an error the same request would get again
      // (the scripts check their input before they write anything). Replies
      // such as LOADING, BUSY or READONLY say the server cannot serve now:
      // those are an outage like any other.
      if (e instanceof ErrorReply && /^(ERR|WRONGTYPE)\b/.test(e.message)) {
        throw new StoreRejected(e.message);
      }
      // Sent, then the connection broke: it may have run.
      if (
        !(e instanceof StoreReplyLost) &&
        (e as Error).name === "SocketClosedUnexpectedlyError"
      ) {
        throw new StoreReplyLost((e as Error).message);
      }
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs `script` by its digest (loaded when the server lacks it), as `run` does. */
  eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.run(async (client) => {
      let sha = this.#shas.get(script);
      if (sha === undefined) {
        sha = await client.scriptLoad(script);
        this.#shas.set(script, sha);
      }
      try {
        return await client.evalSha(sha, { keys, arguments: args });
      } catch (e) {
        if (!String((e as Error).message).startsWith("NOSCRIPT")) throw e;
        this.#shas.delete(script);
        sha = await client.scriptLoad(script);
        this.#shas.set(script, sha);
        return await client.evalSha(sha, { keys, arguments: args });
      }
    });
  }

  /**
   * Calls `onMessage` with every message on `channel`; resubscribed after
   * reconnects. Resolves once subscribed, or after a second (the store not
   * answering: it subscribes once it does).
   */
  async subscribe(
    channel: string,
    onMessage: (message: string) => void,
  ): Promise<void> {
    if (this.#subscriber === null) this.#subscriber = this.#connect(true);
    // Subscribing waits for the connection: for a second at most here.
    const subscribed = this.#subscriber.subscribe(channel, onMessage).catch(
      () => {},
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      subscribed,
      new Promise((r) => timer = setTimeout(r, SUBSCRIBE_WAIT_MS)),
    ]);
    clearTimeout(timer);
  }

  /** Closes the connections (one still reconnecting is dropped). */
  async close(): Promise<void> {
    for (const c of [this.client, this.#subscriber]) {
      if (c === null) continue;
      try {
        // A client still reconnecting would wait for a connection that may
        // never come (a serve whose store never answered did not stop).
        if (c.isReady) await c.close();
        else if (c.isOpen) c.destroy();
      } catch {
        c.destroy();
      }
    }
  }
}
