/**
 * What went wrong below the routes: connections the listener could not
 * accept (descriptors ran out) and requests refused because their client
 * already had as many bodies arriving as one client may. Counted here,
 * shown in `/v1/stats` (`transport`) and `/metrics`.
 *
 * @module
 */

/** The `transport` section of `/v1/stats`. */
export interface TransportSnapshot {
  /** Times the listener failed to accept (or to listen again), such as on too many open files. */
  accept_errors: number;
  /** Times the address was listened on again after such a failure. */
  listener_restarts: number;
  /** The last such error's message; null when none happened. */
  last_accept_error: string | null;
  /** Requests refused (503) because their client address had too many bodies arriving. */
  client_body_refusals: number;
}

/** Counters of the transport (see the module doc). */
export class TransportCounters {
  #acceptErrors = 0;
  #restarts = 0;
  #lastError: string | null = null;
  #clientRefusals = 0;

  /** Counts one failure of the listener, keeping the first line of its message. */
  acceptError(error: unknown): void {
    this.#acceptErrors++;
    const text = error instanceof Error ? error.message : String(error);
    this.#lastError = text.split("\n")[0]!.slice(0, 200);
  }

  /** Counts one successful listen after a failure. */
  relistened(): void {
    this.#restarts++;
  }

  /** Counts one request refused for its client's bodies in flight. */
  clientRefused(): void {
    this.#clientRefusals++;
  }

  /** The counters as `/v1/stats` shows them. */
  snapshot(): TransportSnapshot {
    return {
      accept_errors: this.#acceptErrors,
      listener_restarts: this.#restarts,
      last_accept_error: this.#lastError,
      client_body_refusals: this.#clientRefusals,
    };
  }
}
