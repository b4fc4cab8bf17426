/**
 * The gate every request passes: at most `maxInFlight` requests are being
 * answered at once (bodies still arriving included), and once draining
 * starts no new request is let in. `idle()` settles when the last request
 * in flight has left, so a shutdown can wait for exactly those.
 *
 * This caps requests, not connections: an idle keep-alive connection holds
 * no place here (`Deno.serve` offers no connection cap).
 *
 * @module
 */

/** What `RequestGate.enter` decided. */
export type Admission = "admitted" | "busy" | "draining";

/** Counts requests in flight against a cap; see the module doc. */
export class RequestGate {
  /** The most requests in flight at once. */
  readonly maxInFlight: number;
  #inFlight = 0;
  #draining = false;
  #idle: (() => void) | null = null;
  #idlePromise: Promise<void> | null = null;

  /** Throws `RangeError` unless `maxInFlight` is a positive integer. */
  constructor(maxInFlight: number) {
    if (!(Number.isInteger(maxInFlight) && maxInFlight > 0)) {
      throw new RangeError(
        `maxInFlight must be a positive integer: got ${maxInFlight}`,
      );
    }
    this.maxInFlight = maxInFlight;
  }

  /** Requests being answered now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** True once `drain()` was called. */
  get draining(): boolean {
    return this.#draining;
  }

  /**
   * Lets a request in (`"admitted"`: call `leave()` when it is answered),
   * or says why not.
   *
   * @example
   * ```ts
   * import { RequestGate } from "./gate.ts";
   * const gate = new RequestGate(1);
   * gate.enter(); // "admitted"
   * gate.enter(); // "busy"
   * gate.leave();
   * ```
   */
  enter(): Admission {
    if (this.#draining) return "draining";
    if (this.#inFlight >= this.maxInFlight) return "busy";
    this.#inFlight++;
    return "admitted";
  }

  /** Marks an admitted request answered. */
  leave(): void {
    if (this.#inFlight === 0) {
      throw new RangeError("leave() called with no request in flight");
    }
    this.#inFlight--;
    if (this.#inFlight === 0 && this.#idle !== null) {
      this.#idle();
      this.#idle = null;
      this.#idlePromise = null;
    }
  }

  /** Lets no new request in from now on. */
  drain(): void {
    this.#draining = true;
  }

  /** Settles when no request is in flight (at once if none is). */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    this.#idlePromise ??= new Promise<void>((resolve) => {
      this.#idle = resolve;
    });
    return this.#idlePromise;
  }
}
