/**
 * The ids of uncertified answers (`feedback_id`): made when the answer is
 * given, sealing its text, with the calibration coin's draw the id keeps
 * to itself (`audit_token.ts`); checked when feedback comes, against the
 * text and question it came with and the table serving; counted once per
 * process (a replay guard for the audit lifetime). Whether a checked id's
 * feedback counts in a certificate is the controller's to say.
 *
 * @module
 */

import type { Assessment, Table } from "../engine/mod.ts";
import { answerOf } from "../engine/mod.ts";
import type { AuditMiss } from "./audits.ts";
import {
  type AuditClaim,
  claimProblem,
  questionHash,
  UNKNOWN_SLOT,
  type VerifiedAudit,
} from "./audit_token.ts";
import type { AuditTokens } from "./audit_token.ts";
import { ReplayGuard } from "./_replays.ts";

/** Most decision ids one process remembers as counted (each for the audit lifetime). */
export const DECISION_REPLAYS = 65_536;

/** Added to a question's position in an id of an answer the second tier gave. */
export const SEMANTIC_SLOT = 0x8000;

/** A decision id that verified, with the answer it stands for on the served table. */
export interface CheckedDecision extends VerifiedAudit {
  /** The table's answer as the feedback item spells it; undefined for a question the table lacks. */
  tableAnswer: string | boolean | undefined;
  semantic: boolean;
  /** Given by another bundle than the one serving (for a question that bundle had). */
  otherBundle: boolean;
}

/** What `DecisionIds` needs of the process. */
export interface DecisionIdsOptions {
  /** Signs and reads the ids: the key file's keys, or a key of the process's own. */
  tokens: AuditTokens;
  /** True when `tokens` holds a key file's keys (an id no key signed is then `forged`, else `unknown`). */
  keyFile: boolean;
  /** The wall clock, ms. */
  clock: () => number;
  /** How long an id may wait for its feedback, ms. */
  ttlMs: number;
}

/** The decision ids of one process (see the module doc). */
export class DecisionIds {
  readonly tokens: AuditTokens;
  readonly #keyFile: boolean;
  readonly #clock: () => number;
  readonly #ttlMs: number;
  readonly #replays: ReplayGuard;

  /** Ids under `options.tokens`, remembered as counted for `options.ttlMs`. */
  constructor(options: DecisionIdsOptions) {
    this.tokens = options.tokens;
    this.#keyFile = options.keyFile;
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs;
    this.#replays = new ReplayGuard(DECISION_REPLAYS, options.ttlMs);
  }

  /**
   * The id of uncertified answer `a` of `table` (bundle id `bundle`, 16 hex
   * digits), given at `now` about `text` in evidence pool `pool`, picked at
   * `rate`; `draw` then holds its coin's draw (picked when below `rate`).
   */
  issue(
    table: Table,
    a: Assessment,
    claim: Pick<AuditClaim, "issuedAt" | "bundle" | "pool"> & {
      rate: number;
      eligible: boolean;
      semantic: boolean;
    },
    text: string,
  ): string {
    const answer = answerOf(a.answer);
    const q = a.slot >= 0 ? table.questions[a.slot]! : undefined;
    return this.tokens.issue({
      slot: q === undefined
        ? UNKNOWN_SLOT
        : a.slot + (claim.semantic ? SEMANTIC_SLOT : 0),
      answer: answer === undefined || answer === null || q === undefined
        ? 0xffff
        : typeof answer === "boolean"
        ? (answer ? 1 : 0)
        : q.optionIndex.get(answer) ?? 0xffff,
      confidence: a.fullConfidence,
      issuedAt: claim.issuedAt,
      bundle: claim.bundle,
      pool: claim.pool,
      kind: "uncertified",
      eligible: claim.eligible,
      rate: claim.rate,
      question: questionHash(a.question),
    }, text);
  }

  /** The coin's draw of the last id issued (see `AuditTokens.draw`). */
  get draw(): number {
    return this.tokens.draw;
  }

  /**
   * Checks decision id `id` for `question` about `text` against the served
   * `table` (bundle id `bundle`): its claim, or why it cannot be used
   * (`unknown` or `forged`: signed by no key held now; `malformed`;
   * `other_question`; `text_mismatch`; `expired`; `answered`). The table
   * it was given by may be another (`tableAnswer` is then undefined). Nothing
   * is recorded.
   */
  check(
    id: string,
    question: string,
    text: string,
    table: Table,
    bundle: string,
  ): CheckedDecision | AuditMiss {
    const claim = this.tokens.verify(id, text);
    if (claim === null || claim.kind === "audit") {
      return this.#keyFile ? "forged" : "unknown";
    }
    if (claimProblem(claim) !== null) return "malformed";
    if (claim.question !== questionHash(question)) return "other_question";
    if (claim.seal !== "match") return "text_mismatch";
    if (Math.abs(this.#clock() - claim.issuedAt) > this.#ttlMs) {
      return "expired";
    }
    if (this.#replays.has(claim.tag)) return "answered";
    const semantic = claim.slot >= SEMANTIC_SLOT;
    const slot = semantic ? claim.slot - SEMANTIC_SLOT : claim.slot;
    const known = claim.slot !== UNKNOWN_SLOT;
    let tableAnswer: string | boolean | undefined;
    if (claim.bundle === bundle && known) {
      const q = table.questions[slot];
      if (q === undefined || q.name !== question) return "malformed";
      tableAnswer = q.kind === "yes_no"
        ? (claim.answer <= 1 ? claim.answer === 1 : undefined)
        : q.options[claim.answer];
    }
    return {
      ...claim,
      slot,
      semantic,
      tableAnswer,
      otherBundle: claim.bundle !== bundle && known,
    };
  }

  /** Remembers `checked` as counted; `answered` (or `expired`) when it was already. */
  admit(checked: CheckedDecision): AuditMiss | null {
    return this.#replays.admit(checked.tag, checked.issuedAt, this.#clock());
  }

  /** Marks the id `id` given about `text` counted (its answer was counted by its text, without it). */
  mark(id: string, text: string): void {
    const claim = this.tokens.verify(id, text);
    if (claim !== null) {
      this.#replays.admit(claim.tag, claim.issuedAt, this.#clock());
    }
  }

  /** True when `id` is a decision id this process can read (any question, any text). */
  isDecisionId(id: string): boolean {
    const claim = this.tokens.verify(id);
    return claim !== null && claim.kind !== "audit";
  }

  /** True when decision id `id` was counted already by this process; false for any other id. */
  wasCounted(id: string): boolean {
    const claim = this.tokens.verify(id);
    return claim !== null && claim.kind !== "audit" &&
      this.#replays.has(claim.tag);
  }
}
