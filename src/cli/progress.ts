/**
 * Progress on stderr: phase lines, and meters for long counted phases (lines
 * read, lines per second, bytes of the total and the time left when the size
 * is known). A meter stays silent for its first second; on a terminal it
 * rewrites one line in place, elsewhere it prints a line every ten seconds.
 * `--quiet` silences progress, never warnings or notes.
 *
 * @module
 */

/** Where progress goes and how time is told; the defaults are stderr and the clock. */
export interface ProgressOptions {
  /** Print no progress (warnings and notes still print). */
  quiet?: boolean;
  /** Writes text as is (default: to stderr). */
  write?: (text: string) => void;
  /** Milliseconds (default `performance.now`). */
  now?: () => number;
  /** Whether output is a terminal, where a meter rewrites its line (default: whether stderr is). */
  terminal?: boolean;
}

/** A meter says nothing before its phase has lasted this long (ms). */
export const METER_DELAY_MS = 1000;

const encoder = new TextEncoder();

function writeStderr(text: string): void {
  const bytes = encoder.encode(text);
  let done = 0;
  while (done < bytes.length) {
    done += Deno.stderr.writeSync(bytes.subarray(done));
  }
}

function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

function duration(seconds: number): string {
  return seconds < 90
    ? `${Math.max(1, Math.round(seconds))} s`
    : `${Math.round(seconds / 60)} min`;
}

/**
 * Prints progress lines prefixed with the seconds since it was made.
 *
 * @example
 * ```ts
 * import { ProgressPrinter } from "./progress.ts";
 * const printer = new ProgressPrinter({ quiet: false });
 * const meter = printer.meter("reading");
 * meter.update(120_000, 8_000_000, 64_000_000);
 * meter.done("read 1,000,000 lines");
 * printer.line("trained"); // the `progress` option of `train` takes `printer.line`
 * ```
 */
export class ProgressPrinter {
  readonly #quiet: boolean;
  readonly #write: (text: string) => void;
  readonly #now: () => number;
  readonly #terminal: boolean;
  readonly #start: number;
  /** Whether the last thing written is a meter line without its newline. */
  #open = false;

  /** A printer; see `ProgressOptions` for the defaults. */
  constructor(options: ProgressOptions = {}) {
    this.#quiet = options.quiet ?? false;
    this.#write = options.write ?? writeStderr;
    this.#now = options.now ?? (() => performance.now());
    this.#terminal = options.terminal ??
      (options.write === undefined && Deno.stderr.isTerminal());
    this.#start = this.#now();
  }

  /** Prints a line of progress at once (nothing when quiet); fits `TrainOptions.progress`. */
  readonly line = (text: string): void => {
    if (this.#quiet) return;
    this.#print(`${this.#stamp()} ${text}`, false);
  };

  /** Prints `warning: TEXT`, even when quiet. */
  readonly warn = (text: string): void => {
    this.#print(`warning: ${text}`, false);
  };

  /** Prints `note: TEXT`, even when quiet. */
  readonly note = (text: string): void => {
    this.#print(`note: ${text}`, false);
  };

  /** Starts a counted phase named `phase` ("reading"). */
  meter(phase: string): ProgressMeter {
    return new ProgressMeter(this, phase);
  }

  /** Milliseconds on this printer's clock. */
  get now(): number {
    return this.#now();
  }

  /** Whether progress is silenced. */
  get quiet(): boolean {
    return this.#quiet;
  }

  /** Whether a meter rewrites its line in place. */
  get terminal(): boolean {
    return this.#terminal;
  }

  #stamp(): string {
    const s = ((this.#now() - this.#start) / 1000).toFixed(1);
    return `[${s.padStart(5)}s]`;
  }

  /** Writes `text`: in place (a meter on a terminal) or as a line of its own. */
  #print(text: string, inPlace: boolean): void {
    if (inPlace) {
      this.#write(`\r\x1b[K${text}`);
      this.#open = true;
      return;
    }
    this.#write(`${this.#open ? "\r\x1b[K" : ""}${text}\n`);
    this.#open = false;
  }

  /** Ends a meter line left open in place (before an error is printed). */
  close(): void {
    if (this.#open) this.#write("\n");
    this.#open = false;
  }

  /** Prints a meter's state, stamped. */
  meterLine(text: string, final: boolean): void {
    if (this.#quiet) return;
    this.#print(`${this.#stamp()} ${text}`, this.#terminal && !final);
  }
}

/** One counted phase of a `ProgressPrinter`. */
export class ProgressMeter {
  readonly #printer: ProgressPrinter;
  readonly #phase: string;
  readonly #start: number;
  #next: number;
  #lines = 0;

  /** A meter for `phase`, started now; use `ProgressPrinter.meter`. */
  constructor(printer: ProgressPrinter, phase: string) {
    this.#printer = printer;
    this.#phase = phase;
    this.#start = printer.now;
    this.#next = this.#start + METER_DELAY_MS;
  }

  /**
   * Reports `lines` done, and `bytes` of `totalBytes` (null when unknown).
   * Prints once the phase has lasted a second, then every second on a
   * terminal, every ten seconds elsewhere.
   */
  update(lines: number, bytes = 0, totalBytes: number | null = null): void {
    this.#lines = lines;
    const now = this.#printer.now;
    if (now < this.#next || this.#printer.quiet) return;
    this.#next = now + (this.#printer.terminal ? 1000 : 10_000);
    const seconds = (now - this.#start) / 1000;
    let text = `${this.#phase}: ${count(lines)} lines, ${
      count(lines / seconds)
    } lines/s`;
    if (totalBytes !== null && totalBytes > 0) {
      text += `, ${megabytes(bytes)} of ${megabytes(totalBytes)} MB`;
      if (bytes > 0 && bytes < totalBytes) {
        text += `, about ${
          duration((seconds * (totalBytes - bytes)) / bytes)
        } left`;
      }
    } else if (bytes > 0) {
      text += `, ${megabytes(bytes)} MB`;
    }
    this.#printer.meterLine(text, false);
  }

  /** Ends the phase: prints `summary` (with the seconds and rate) when the phase lasted over a second. */
  done(summary: string): void {
    const seconds = (this.#printer.now - this.#start) / 1000;
    if (seconds * 1000 < METER_DELAY_MS) return;
    this.#printer.meterLine(
      `${summary} in ${seconds.toFixed(1)} s (${
        count(this.#lines / seconds)
      } lines/s)`,
      true,
    );
  }
}

/**
 * How long a job of countable steps has left, from the throughput measured
 * since its first step was done: the time before it (loading a model,
 * warming it up) says nothing of the pace, so no estimate is given until a
 * step after the first has been measured.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RemainingTime } from "./progress.ts";
 * const eta = new RemainingTime();
 * assert.equal(eta.seconds(32, 1000, 9_000), null); // the first batch, after a slow start
 * assert.equal(eta.seconds(64, 1000, 9_500), 14.625); // 32 texts in 0.5 s since
 * ```
 */
export class RemainingTime {
  #from: { done: number; at: number } | null = null;

  /**
   * Seconds left for `total` steps with `done` done at `atMs`
   * (milliseconds on any clock that only goes forward); null until a
   * pace has been measured.
   */
  seconds(done: number, total: number, atMs: number): number | null {
    if (this.#from === null) {
      this.#from = { done, at: atMs };
      return null;
    }
    const steps = done - this.#from.done;
    const ms = atMs - this.#from.at;
    if (steps <= 0 || ms <= 0) return null;
    return ((total - done) * ms) / steps / 1000;
  }
}
