/**
 * The audit key file (`serve --audit-key-file FILE`): the secret every
 * replica of a fleet signs and verifies audit ids with. Each non-empty line
 * (surrounding white space trimmed) is a key of at least
 * `MIN_AUDIT_KEY_BYTES` bytes; the first signs, every one verifies, so a
 * key is rotated without losing an audit in flight: put the new key first
 * and keep the old one after it for an audit's lifetime, then drop it.
 *
 * The file is read again once a second and whenever an id does not verify
 * (another replica may have seen a new key first), like the token file. It
 * is refused at startup when it is empty, unreadable or holds a short key.
 * A file that turns empty or unreadable while serving keeps the keys read
 * last, with one warning: dropping them would turn every audit in flight
 * into a miss.
 *
 * @module
 */

import { type AuditSigner, hmacSigner } from "./audit_token.ts";

/** Fewest bytes of an audit key. */
export const MIN_AUDIT_KEY_BYTES = 16;
/** How often the key file is read again, in ms. */
export const AUDIT_KEY_REREAD_MS = 1000;

/** The keys of a key file's text; throws `RangeError` naming the problem. */
export function parseAuditKeys(text: string, path: string): Uint8Array[] {
  const encoder = new TextEncoder();
  const keys = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "")
    .map((l) => encoder.encode(l));
  if (keys.length === 0) {
    throw new RangeError(`Audit key file ${path} is empty`);
  }
  const short = keys.findIndex((k) => k.length < MIN_AUDIT_KEY_BYTES);
  if (short >= 0) {
    throw new RangeError(
      `Audit key file ${path}: key ${short + 1} has ${
        keys[short]!.length
      } bytes; a key needs at least ${MIN_AUDIT_KEY_BYTES}`,
    );
  }
  return keys;
}

/** Options of `AuditKeyFile.open`. */
export interface AuditKeyFileOptions {
  /** Reads the file; `Deno.readTextFile` unless replaced. */
  read?: (path: string) => Promise<string>;
  /** Told once each time the file turns bad while serving. */
  warn?: (message: string) => void;
  /** Milliseconds between reads (`AUDIT_KEY_REREAD_MS`); 0 reads only on demand. */
  rereadMs?: number;
}

/** A key file, read again while serving (see the module doc). */
export class AuditKeyFile {
  readonly path: string;
  #signer: AuditSigner;
  #text: string;
  readonly #read: (path: string) => Promise<string>;
  readonly #warn: (message: string) => void;
  readonly #listeners: ((signer: AuditSigner) => void)[] = [];
  #failing = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #reading: Promise<boolean> | null = null;

  private constructor(
    path: string,
    text: string,
    signer: AuditSigner,
    read: (path: string) => Promise<string>,
    warn: (message: string) => void,
  ) {
    this.path = path;
    this.#text = text;
    this.#signer = signer;
    this.#read = read;
    this.#warn = warn;
  }

  /**
   * Reads `path`; throws `RangeError` for an empty file or a short key, and
   * what the read throws for an unreadable one. Reads it again every
   * `rereadMs` from then on (the timer keeps no process alive).
   */
  static async open(
    path: string,
    options: AuditKeyFileOptions = {},
  ): Promise<AuditKeyFile> {
    const read = options.read ?? Deno.readTextFile;
    const text = await read(path);
    const file = new AuditKeyFile(
      path,
      text,
      hmacSigner(parseAuditKeys(text, path)),
      read,
      options.warn ?? (() => {}),
    );
    const every = options.rereadMs ?? AUDIT_KEY_REREAD_MS;
    if (every > 0) {
      const timer = setInterval(() => void file.reread(), every);
      Deno.unrefTimer(timer);
      file.#timer = timer;
    }
    return file;
  }

  /** Signs with the first key, verifies with any. */
  get signer(): AuditSigner {
    return this.#signer;
  }

  /** Calls `listener` with the new signer whenever the keys change. */
  onChange(listener: (signer: AuditSigner) => void): void {
    this.#listeners.push(listener);
  }

  /** Reads the file again; true when the keys changed. A bad file keeps the keys (see the module doc). */
  reread(): Promise<boolean> {
    this.#reading ??= this.#reread().finally(() => this.#reading = null);
    return this.#reading;
  }

  async #reread(): Promise<boolean> {
    let text: string;
    let keys: Uint8Array[];
    try {
      text = await this.#read(this.path);
      if (text === this.#text) {
        this.#failing = false;
        return false;
      }
      keys = parseAuditKeys(text, this.path);
    } catch (e) {
      if (!this.#failing) {
        this.#warn(
          `${(e as Error).message}: still using the audit keys read last`,
        );
      }
      this.#failing = true;
      return false;
    }
    this.#failing = false;
    this.#text = text;
    this.#signer = hmacSigner(keys);
    for (const l of this.#listeners) l(this.#signer);
    return true;
  }

  /** Stops reading the file again. */
  close(): void {
    clearInterval(this.#timer);
  }
}
