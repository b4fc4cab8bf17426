/**
 * Signed decision ids: an id that says what it stands for, so any replica
 * holding the key can count it without having kept anything when it was
 * given. A certified answer picked for audit carries one
 * (`serve --audit-key-file`), and so does every uncertified answer (under
 * the key file's keys, or a key of the process's own without one), so that
 * feedback on a decision is counted once, only with the text it was given
 * for, and a feedback log knows how the decision was picked.
 *
 * An id is the base64url text of 62 payload bytes and a 16-byte tag. The
 * payload, little-endian: format (1 byte, 3), question position (u16), the
 * table's answer (u16: option position, or 1 for yes and 0 for no), the
 * answer's full-option confidence (f64, exactly as thresholds are compared
 * with it), the issue time (f64, ms since the epoch), the bundle id (8
 * bytes: the first 16 hex digits of the manifest checksum), the evidence
 * pool (4 bytes: the fleet's store epoch, or the replica's own random id
 * without a store), a nonce (8 bytes: the issuing process's random id and
 * a counter, so no two ids are alike), the kind (1 byte: 0 an audit, 2 an
 * uncertified answer; plus 4 when the answer was eligible for the live
 * certificate), the calibration coin's rate (f64), a hash of the
 * question's name (u32, for a question the bundle lacks, whose position is
 * `UNKNOWN_SLOT`) and the text's seal (8 bytes: HMAC-SHA256 of the
 * prepared text, `textKey`, under the same key, so feedback under another
 * text is told from a forged id, and nobody without the key can test a
 * guess of the text).
 *
 * The tag is HMAC-SHA256 of the payload under the audit key, cut to 16
 * bytes. The other 16 bytes of that digest are never shown: the coin of an
 * uncertified answer is drawn from them (`draw`), so whether it was picked
 * to calibrate is decided by the id itself, the same on every replica
 * holding the key, and nothing a client can read tells it (the kind byte
 * says only "uncertified"; the rate is the same for every decision of a
 * question). Format 1 (41 bytes, an audit of an earlier version) and format
 * 2 (54 bytes, no seal) audits still verify; a format 2 id of an uncertified
 * answer, whose kind byte told its pick, does not.
 *
 * Digests are computed with `@noble/hashes` (each key's state made once,
 * copied per id), not WebCrypto, because an id is made inside the decision
 * route, which does not wait on promises, and not `node:crypto`, whose
 * calls cost three times as much an id (`deno task bench:versus
 * --uncertified` measures the path).
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
import { textKey } from "../engine/mod.ts";

/** Bytes of a token's payload (format 3, 2 and 1), of its text seal and of its tag. */
const PAYLOAD_BYTES = 62;
const PAYLOAD_BYTES_V2 = 54;
const PAYLOAD_BYTES_V1 = 41;
const SEAL_BYTES = 8;
const SEAL_AT = 54;
const TAG_BYTES = 16;
const FORMAT = 3;
/** Longest id `verify` reads (a format 3 id is 104 characters). */
const MAX_ID_CHARS = 110;
/** The first byte of what a text seal is the digest of: no payload starts with it. */
const SEAL_DOMAIN = 0xff;

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

/** How an id's text seal compares with the text of the feedback it came with. */
export type SealCheck = "match" | "mismatch" | "unsealed";

/** A verified id: its claim and the hex of its tag (the id's name across a fleet). */
export interface VerifiedAudit extends AuditClaim {
  tag: string;
  kind: DecisionKind;
  eligible: boolean;
  rate: number;
  /** The issuing process's random id: 8 hex digits (the nonce's first 4 bytes). */
  issuer: string;
  /**
   * The text given to `verify` against the id's seal: `unsealed` for an id
   * of an earlier format (no seal) or when no text was given.
   */
  seal: SealCheck;
}

/** Signs and verifies with a list of keys: the first signs, any verifies. */
export interface AuditSigner {
  /** The 16-byte tag of `payload` under the signing key. */
  sign(payload: Uint8Array): Uint8Array;
  /** True when `tag` is the tag of `payload` under one of the keys. */
  verify(payload: Uint8Array, tag: Uint8Array): boolean;
  /** The position of the key `tag` is the tag of `payload` under; -1 for none. */
  keyOf(payload: Uint8Array, tag: Uint8Array): number;
  /**
   * The whole HMAC-SHA256 digest (32 bytes) of `bytes` under key `at` (0
   * signs), in a buffer the next call overwrites.
   */
  mac(at: number, bytes: Uint8Array): Uint8Array;
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
  const mac = (at: number, bytes: Uint8Array) => {
    keyed[at]!._cloneInto(scratch).update(bytes).digestInto(digest);
    return digest;
  };
  const keyOf = (payload: Uint8Array, tag: Uint8Array) => {
    if (tag.length !== TAG_BYTES) return -1;
    return keyed.findIndex((_, at) =>
      timingSafeEqual(mac(at, payload).subarray(0, TAG_BYTES), tag)
    );
  };
  return {
    sign: (payload) => mac(0, payload).slice(0, TAG_BYTES),
    verify: (payload, tag) => keyOf(payload, tag) >= 0,
    keyOf,
    mac,
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

/** The coin's draw of a digest: its bytes 16-19 (never shown) as a number in [0, 1). */
function drawOf(digest: Uint8Array): number {
  const word = (digest[16]! | digest[17]! << 8 | digest[18]! << 16 |
    digest[19]! << 24) >>> 0;
  return word / 2 ** 32;
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
 * const claim = { slot: 0, answer: 3, confidence: 0.93, issuedAt: 1e12, bundle: "00112233445566ff", pool: "abcdef01" };
 * const id = tokens.issue(claim, "my card was stolen");
 * assert.equal(tokens.verify(id, "My card  was stolen")?.seal, "match");
 * assert.equal(tokens.verify(id, "my card was found")?.seal, "mismatch");
 * ```
 */
export class AuditTokens {
  #signer: AuditSigner;
  readonly #payload = new Uint8Array(PAYLOAD_BYTES);
  readonly #view = new DataView(this.#payload.buffer);
  readonly #token = new Uint8Array(PAYLOAD_BYTES + TAG_BYTES);
  #text = new Uint8Array(256);
  readonly #encoder = new TextEncoder();
  #counter = 0;
  #draw = NaN;
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

  /**
   * The coin's draw of the last id issued, uniform in [0, 1) and unknown
   * to anyone without the key: its decision was picked to calibrate when
   * the draw is below its rate (`verify` draws the same from the id).
   */
  get draw(): number {
    return this.#draw;
  }

  /**
   * The digest of the seal of `text` (its `textKey`) under key `at`: its
   * first `SEAL_BYTES` are the seal.
   */
  #seal(at: number, text: string): Uint8Array {
    const key = textKey(text);
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.#text.length < 3 * key.length + 1) {
      this.#text = new Uint8Array(3 * key.length + 64);
    }
    this.#text[0] = SEAL_DOMAIN;
    const { written } = this.#encoder.encodeInto(key, this.#text.subarray(1));
    return this.#signer.mac(at, this.#text.subarray(0, 1 + written));
  }

  /** The seal of `text` under the signing key, as 16 hex digits (for ids kept by the process). */
  sealOf(text: string): string {
    return hex(this.#seal(0, text).subarray(0, SEAL_BYTES));
  }

  /**
   * A signed id for `claim`, sealing the text it was given for (`text`;
   * the empty text when none). `draw` then holds its coin's draw.
   */
  issue(claim: AuditClaim, text = ""): string {
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
    // The pick of an uncertified answer is the id's own (`draw`), never
    // written: "sample" is written as "uncertified".
    const kind = (claim.kind ?? "audit") === "audit" ? 0 : 2;
    v.setUint8(41, kind + (claim.eligible ?? true ? ELIGIBLE : 0));
    v.setFloat64(42, claim.rate ?? NaN, true);
    v.setUint32(50, claim.question ?? 0, true);
    p.set(this.#seal(0, text).subarray(0, SEAL_BYTES), SEAL_AT);
    const digest = this.#signer.mac(0, p);
    this.#draw = drawOf(digest);
    this.#token.set(p, 0);
    this.#token.set(digest.subarray(0, TAG_BYTES), PAYLOAD_BYTES);
    return base64url(this.#token);
  }

  /**
   * The claim of `id` when its tag verifies; null for anything else (a
   * forged, damaged or foreign id, or an uncertified answer's id of format
   * 2, whose pick anyone could read). With `text`, the claim says whether
   * the id was given for it (`seal`). An uncertified answer's kind is
   * `sample` when its coin's draw is below its rate, else `uncertified`.
   */
  verify(id: string, text?: string): VerifiedAudit | null {
    if (id.length > MAX_ID_CHARS) return null;
    const bytes = fromBase64url(id);
    const size = bytes === null ? 0 : bytes.length - TAG_BYTES;
    if (
      bytes === null ||
      !(size === PAYLOAD_BYTES && bytes[0] === FORMAT ||
        size === PAYLOAD_BYTES_V2 && bytes[0] === 2 ||
        size === PAYLOAD_BYTES_V1 && bytes[0] === 1)
    ) {
      return null;
    }
    const payload = bytes.subarray(0, size);
    const tag = bytes.subarray(size);
    const key = this.#signer.keyOf(payload, tag);
    if (key < 0) return null;
    const v = new DataView(bytes.buffer, bytes.byteOffset, size);
    const sealed = size === PAYLOAD_BYTES;
    const draw = drawOf(this.#signer.mac(key, payload));
    const withKind = size >= PAYLOAD_BYTES_V2;
    const kindByte = withKind ? v.getUint8(41) : ELIGIBLE;
    const rate = withKind ? v.getFloat64(42, true) : NaN;
    let kind: DecisionKind | undefined;
    if (!sealed) kind = KINDS[kindByte & 3];
    else if ((kindByte & 3) === 0) kind = "audit";
    else if ((kindByte & 3) === 2) {
      kind = draw < rate ? "sample" : "uncertified";
    }
    if (kind === undefined || !sealed && kind !== "audit") return null;
    let seal: SealCheck = "unsealed";
    if (sealed && text !== undefined) {
      const digest = this.#seal(key, text);
      seal = timingSafeEqual(
          digest.subarray(0, SEAL_BYTES),
          payload.subarray(SEAL_AT, SEAL_AT + SEAL_BYTES),
        )
        ? "match"
        : "mismatch";
    }
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
      rate,
      ...(withKind ? { question: v.getUint32(50, true) } : {}),
      issuer: hex(payload.subarray(33, 37)),
      seal,
    };
  }
}
