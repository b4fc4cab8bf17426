/**
 * Signed decision ids: an id that says what it stands for, so any replica
 * holding the key can count it without having kept anything when it was
 * given. A certified answer picked for audit carries one
 * (`serve --audit-key-file`), and so does every uncertified answer (under
 * the key file's keys, or a key of the process's own without one), so that
 * feedback on a decision is counted once and a feedback log knows how the
 * decision was picked.
 *
 * An id is the base64url text of 54 payload bytes and a 16-byte tag. The
 * payload, little-endian: format (1 byte, 2), question position (u16), the
 * table's answer (u16: option position, or 1 for yes and 0 for no), the
 * answer's full-option confidence (f64, exactly as thresholds are compared
 * with it), the issue time (f64, ms since the epoch), the bundle id (8
 * bytes: the first 16 hex digits of the manifest checksum), the evidence
 * pool (4 bytes: the fleet's store epoch, or the replica's own random id
 * without a store), a nonce (8 bytes: the issuing process's random id and
 * a counter, so no two ids are alike), the kind (1 byte: 0 an audit, 1 an
 * uncertified answer the calibration coin picked, 2 one it did not; plus 4
 * when the answer was eligible for the live certificate), the coin's rate
 * (f64) and a hash of the question's name (u32, for a question the bundle
 * lacks, whose position is `UNKNOWN_SLOT`). Format 1 ids (41 bytes, no
 * kind, rate or hash: audits of an earlier version) still verify. The tag
 * is HMAC-SHA256 of the
 * payload under the audit key, cut to 16 bytes; it is computed with
 * `@noble/hashes` (each key's state made once, copied per id), not
 * WebCrypto, because an id is made inside the decision route, which does
 * not wait on promises, and not `node:crypto`, whose calls cost three times
 * as much an id (`deno task bench:versus --uncertified` measures the path).
 *
 * The tag also names the audit across the fleet: a store remembers it for
 * the audit's lifetime, so a replayed id is counted once.
 *
 * @module
 */

import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { timingSafeEqual } from "node:crypto";
import { hex } from "../format.ts";

/** Bytes of a token's payload (format 2, and format 1) and of its tag. */
const PAYLOAD_BYTES = 54;
const PAYLOAD_BYTES_V1 = 41;
const TAG_BYTES = 16;
const FORMAT = 2;

/** What a decision id stands for. */
export type DecisionKind = "audit" | "sample" | "uncertified";
const KINDS: readonly DecisionKind[] = ["audit", "sample", "uncertified"];
/** The kind byte's flag for an answer eligible for the live certificate. */
const ELIGIBLE = 4;

/** The question position of a question the bundle does not have (a learner's). */
export const UNKNOWN_SLOT = 0x7fff;

/**
 * A 32-bit hash of a question's name (FNV-1a over its UTF-16 units), which
 * an id carries so that it names its question even when the bundle lacks it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { questionHash } from "./audit_token.ts";
 * assert.equal(questionHash("topic"), questionHash("topic"));
 * assert.notEqual(questionHash("topic"), questionHash("intent"));
 * ```
 */
export function questionHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  }
  return h >>> 0;
}

/** What a signed audit id stands for. */
export interface AuditClaim {
  /** Position of the question in the bundle. */
  slot: number;
  /** The table's answer: option position (choice), or 1 yes / 0 no. */
  answer: number;
  /** The answer's full-option confidence. */
  confidence: number;
  /** When the id was given, ms since the epoch (wall clock: replicas compare it). */
  issuedAt: number;
  /** The bundle that answered: 16 hex digits. */
  bundle: string;
  /** The evidence pool the decision was counted in: 8 hex digits. */
  pool: string;
  /** What the id stands for (format 1 ids are audits); absent: an audit. */
  kind?: DecisionKind;
  /** The answer was eligible for the live certificate (audits always are). */
  eligible?: boolean;
  /** The calibration coin's rate for the decision; NaN when the id does not say (format 1). */
  rate?: number;
  /** `questionHash` of the question's name; absent in format 1 ids. */
  question?: number;
}

/** A verified id: its claim and the hex of its tag (the id's name across a fleet). */
export interface VerifiedAudit extends AuditClaim {
  tag: string;
  kind: DecisionKind;
  eligible: boolean;
  rate: number;
  /** The issuing process's random id: 8 hex digits (the nonce's first 4 bytes). */
  issuer: string;
}

/** Signs and verifies with a list of keys: the first signs, any verifies. */
export interface AuditSigner {
  /** The 16-byte tag of `payload` under the signing key. */
  sign(payload: Uint8Array): Uint8Array;
  /** True when `tag` is the tag of `payload` under one of the keys. */
  verify(payload: Uint8Array, tag: Uint8Array): boolean;
}

/** HMAC-SHA256 cut to 16 bytes, under `keys` (the first signs); throws `RangeError` without a key. */
export function hmacSigner(keys: readonly Uint8Array[]): AuditSigner {
  if (keys.length === 0) throw new RangeError("An audit signer needs a key");
  // Each key's HMAC state is made once and copied into one scratch state per
  // id, the digest written into one buffer: a third of the cost of
  // `node:crypto`'s calls, which cross into the runtime several times an id.
  const keyed = keys.map((key) => hmac.create(sha256, key));
  const scratch = keyed[0]!.clone();
  const digest = new Uint8Array(sha256.outputLen);
  const tagOf = (at: number, payload: Uint8Array) => {
    keyed[at]!._cloneInto(scratch).update(payload).digestInto(digest);
    return digest.slice(0, TAG_BYTES);
  };
  return {
    sign: (payload) => tagOf(0, payload),
    verify(payload, tag) {
      if (tag.length !== TAG_BYTES) return false;
      return keyed.some((_, at) => timingSafeEqual(tagOf(at, payload), tag));
    },
  };
}

/** Latest issue time a claim may carry: the last millisecond a `Date` can hold. */
const MAX_ISSUED_AT = 8.64e15;

/**
 * Why the numbers of `claim` cannot be used, or null when they can: the
 * confidence must be a finite number in [0, 1] and the issue time a finite,
 * non-negative number of milliseconds a `Date` can hold. A signed id may
 * still carry such numbers (its key signed whatever it was given), so every
 * claim is checked before its numbers reach a certificate or a store.
 * Positions (question, answer) are checked against the table that reads them.
 *
 * @example
 * ```ts
 * import { claimProblem } from "./audit_token.ts";
 * import assert from "node:assert/strict";
 * const claim = { slot: 0, answer: 1, confidence: 0.9, issuedAt: NaN, bundle: "", pool: "" };
 * assert.equal(claimProblem(claim), "the issue time is NaN, not a time");
 * ```
 */
export function claimProblem(claim: AuditClaim): string | null {
  const { confidence, issuedAt } = claim;
  if (!(Number.isFinite(confidence) && confidence >= 0 && confidence <= 1)) {
    return `the confidence is ${confidence}, not a number in [0, 1]`;
  }
  if (
    !(Number.isFinite(issuedAt) && issuedAt >= 0 && issuedAt <= MAX_ISSUED_AT)
  ) {
    return `the issue time is ${issuedAt}, not a time`;
  }
  const rate = claim.rate;
  if (rate !== undefined && !Number.isNaN(rate) && !(rate > 0 && rate <= 1)) {
    return `the rate ${rate} is not a probability in (0, 1]`;
  }
  if (
    !(Number.isInteger(claim.slot) && claim.slot >= 0 &&
      Number.isInteger(claim.answer) && claim.answer >= 0)
  ) {
    return `the positions ${claim.slot}, ${claim.answer} are not positions`;
  }
  return null;
}

/** The first `n` bytes `digits` (hex) spell; 0 for a pair that is not hex. */
function hexBytes(digits: string, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const byte = parseInt(digits.slice(2 * i, 2 * i + 2), 16);
    out[i] = Number.isNaN(byte) ? 0 : byte;
  }
  return out;
}

function base64url(bytes: Uint8Array): string {
  return bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

function fromBase64url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    return Uint8Array.fromBase64(text, { alphabet: "base64url" });
  } catch {
    return null;
  }
}

/**
 * Makes signed audit ids for one process: its nonce prefix is random, its
 * counter runs from 0.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AuditTokens, hmacSigner } from "./audit_token.ts";
 * const tokens = new AuditTokens(hmacSigner([new TextEncoder().encode("a long shared secret")]));
 * const id = tokens.issue({ slot: 0, answer: 3, confidence: 0.93, issuedAt: 1e12, bundle: "00112233445566ff", pool: "abcdef01" });
 * const back = tokens.verify(id);
 * assert.equal(back?.answer, 3);
 * ```
 */
export class AuditTokens {
  #signer: AuditSigner;
  readonly #payload = new Uint8Array(PAYLOAD_BYTES);
  readonly #view = new DataView(this.#payload.buffer);
  readonly #token = new Uint8Array(PAYLOAD_BYTES + TAG_BYTES);
  #counter = 0;
  // The bundle and pool of the last id, written in the payload already
  // (they change on a reload or a store epoch, not per id).
  #bundle = "";
  #pool = "";

  /** Tokens under `signer`; the nonce prefix is random. */
  constructor(signer: AuditSigner, issuer?: string) {
    this.#signer = signer;
    if (issuer === undefined) {
      crypto.getRandomValues(this.#payload.subarray(33, 37));
    } else this.#payload.set(hexBytes(issuer, 4), 33);
  }

  /** The issuing process's random id in the ids made here: 8 hex digits. */
  get issuer(): string {
    return hex(this.#payload.subarray(33, 37));
  }

  /** Replaces the keys (a key file read again). */
  set signer(signer: AuditSigner) {
    this.#signer = signer;
  }

  /** A signed id for `claim`. */
  issue(claim: AuditClaim): string {
    const v = this.#view;
    const p = this.#payload;
    v.setUint8(0, FORMAT);
    v.setUint16(1, claim.slot, true);
    v.setUint16(3, claim.answer, true);
    v.setFloat64(5, claim.confidence, true);
    v.setFloat64(13, claim.issuedAt, true);
    if (claim.bundle !== this.#bundle) {
      p.set(hexBytes(claim.bundle, 8), 21);
      this.#bundle = claim.bundle;
    }
    if (claim.pool !== this.#pool) {
      p.set(hexBytes(claim.pool, 4), 29);
      this.#pool = claim.pool;
    }
    v.setUint32(37, this.#counter, true);
    this.#counter = (this.#counter + 1) >>> 0;
    const kind = KINDS.indexOf(claim.kind ?? "audit");
    v.setUint8(41, kind + (claim.eligible ?? true ? ELIGIBLE : 0));
    v.setFloat64(42, claim.rate ?? NaN, true);
    v.setUint32(50, claim.question ?? 0, true);
    this.#token.set(p, 0);
    this.#token.set(this.#signer.sign(p), PAYLOAD_BYTES);
    return base64url(this.#token);
  }

  /** The claim of `id` when its tag verifies; null for anything else (a forged, damaged or foreign id). */
  verify(id: string): VerifiedAudit | null {
    if (id.length > 100) return null;
    const bytes = fromBase64url(id);
    const size = bytes === null ? 0 : bytes.length - TAG_BYTES;
    if (
      bytes === null ||
      !(size === PAYLOAD_BYTES && bytes[0] === FORMAT ||
        size === PAYLOAD_BYTES_V1 && bytes[0] === 1)
    ) {
      return null;
    }
    const payload = bytes.subarray(0, size);
    const tag = bytes.subarray(size);
    if (!this.#signer.verify(payload, tag)) return null;
    const v = new DataView(bytes.buffer, bytes.byteOffset, size);
    const v2 = size === PAYLOAD_BYTES;
    const kindByte = v2 ? v.getUint8(41) : ELIGIBLE;
    const kind = KINDS[kindByte & 3];
    if (kind === undefined) return null;
    return {
      slot: v.getUint16(1, true),
      answer: v.getUint16(3, true),
      confidence: v.getFloat64(5, true),
      issuedAt: v.getFloat64(13, true),
      bundle: hex(payload.subarray(21, 29)),
      pool: hex(payload.subarray(29, 33)),
      tag: hex(tag),
      kind,
      eligible: (kindByte & ELIGIBLE) !== 0,
      rate: v2 ? v.getFloat64(42, true) : NaN,
      ...(v2 ? { question: v.getUint32(50, true) } : {}),
      issuer: hex(payload.subarray(33, 37)),
    };
  }
}
