/**
 * The live certificate in serving: per served table and question a
 * `LiveCertificate` (see `src/engine/live_certificate.ts`), fed at decision time and
 * by feedback, whose decision is applied to the table's engine state (the
 * threshold in force; a withdrawn certification, flag `drift` with rule
 * `live_audit`).
 *
 * An answer is *eligible* (it passed every rule but, perhaps, the
 * threshold) when its flag is null, `low_confidence`, or `drift` by rule
 * `live_audit`. Every eligible answer of every decision route is recorded
 * with its full-option confidence, whether it was certified and whether it
 * was picked for audit.
 *
 * The calibration coin: every decision (every answer but an empty text's
 * or an unknown question's) is picked with its question's rate, whatever
 * its verdict. A picked certified answer is an audit; a picked uncertified
 * one a `sample`. Every answer that may get feedback (an audit, or any
 * uncertified answer) carries a signed decision id (`audit_token.ts`), so
 * feedback on a decision counts once, and a feedback log knows how each
 * decision was picked; with a ledger (`ledger.ts`), every decision is
 * counted in it.
 *
 * With audit rate 0 the live certificate is off: no answer is picked,
 * nothing is recorded, feedback is kept as traces only.
 *
 * @module
 */

import {
  type AnsweringTier,
  answerOf,
  type Assessment,
  type Table,
  type TableState,
} from "../engine/mod.ts";
import { LiveCertificate, type LiveState } from "../guarantee/mod.ts";
import { FeedbackWarnings } from "./feedback_warnings.ts";
import { applyLiveDecision } from "./apply_decision.ts";
import type { AuditKeyFile } from "./audit_key.ts";
import {
  AuditTokens,
  claimProblem,
  type DecisionKind,
  hmacSigner,
  questionHash,
  type VerifiedAudit,
} from "./audit_token.ts";
import {
  type AuditMiss,
  AuditSampler,
  MAX_PENDING_AUDITS,
  type PendingAudit,
  PendingAudits,
  type PendingAuditsOptions,
} from "./audits.ts";
import { bundleIdOf } from "./bundle_id.ts";
import { auditLogName } from "./_log_name.ts";
import { DecisionLedger, type LedgerOptions } from "./ledger.ts";
import { FleetLive, type FleetOptions } from "./fleet.ts";
import { type RecentAnswer, RecentAnswers } from "./recent_answers.ts";
import { ReplayGuard } from "./_replays.ts";
import {
  type CheckedDecision,
  DecisionIds,
  SEMANTIC_SLOT,
} from "./decision_ids.ts";
import { ResetHistory, type ResetSource } from "./_resets.ts";
import { randomHex8 } from "./store.ts";
import { type Certificates, ServedTables } from "./served_tables.ts";

/** The default audit rate of `serve` (`--audit-rate`). */
export const DEFAULT_AUDIT_RATE = 0.02;

export { DECISION_REPLAYS } from "./decision_ids.ts";

/** Fewest ms between two reads of the key file that ids which did not verify ask for. */
const KEY_REREAD_GAP_MS = 1000;

/** How the live certificate runs. */
export interface LiveOptions {
  /** Probability that a certified answer is picked for audit, in [0, 1]; 0 turns the live certificate off. */
  auditRate: number;
  /** Told, once per alarm, when a question's feedback turns suspect, and when feedback comes without its ids (`FeedbackWarnings`). */
  warn?: ((line: string) => void) | undefined;
  /** Seed of the audit sampler; random when absent. */
  auditSeed?: number | undefined;
  /** Limits and clock of the pending audits. */
  pending?: PendingAuditsOptions | undefined;
  /**
   * Signs audit ids with these keys (`serve --audit-key-file`): an id
   * then says what it stands for, any process holding the keys counts it,
   * and none is kept while it waits. Absent: ids name audits this process
   * keeps (`PendingAudits`).
   */
  auditKeys?: AuditKeyFile | undefined;
  /** Pools the evidence with a fleet's store (`serve --live-store`); needs `auditKeys`. */
  fleet?: FleetOptions | undefined;
  /** The wall clock signed ids carry, in ms (`Date.now` by default). */
  clock?: (() => number) | undefined;
  /**
   * Keep a decision ledger (`ledger.ts`) for a feedback log: every decision
   * counted per question and stretch, the picked ones' texts kept until
   * drained. Off by default.
   */
  ledger?: boolean | Omit<LedgerOptions, "issuer"> | undefined;
  /**
   * Each question's calibration coin rate for a table served from now on
   * (a learning service's: higher while a question's evidence is thin);
   * absent, every question takes the audit rate.
   */
  rates?: ((table: Table) => ArrayLike<number>) | undefined;
}

/** What a decision or audit id says of its decision (see `LiveController.originOf`). */
export interface IdOrigin {
  kind: DecisionKind;
  rate: number;
  /** ms since the epoch; NaN when not known. */
  decidedAt: number;
  issuer: string;
  /** 16 hex digits; undefined when the id does not say. */
  bundle: string | undefined;
}

export type { CheckedDecision } from "./decision_ids.ts";

/** A signed audit id that verified, with the answer it stands for. */
export interface CheckedAudit extends VerifiedAudit {
  /** The table's answer, as the feedback item spells it. */
  tableAnswer: string | boolean;
  /** True when the answer was the second tier's (its own certificate counts the audit). */
  semantic: boolean;
}

/**
 * Added to a question's position in a signed id when the answer was the
 * second tier's (positions stay far below it: at most `MAX_QUESTIONS`).
 */

/** True when an answer passed every rule but, perhaps, the threshold (see the module doc). */
export function isEligible(a: Assessment): boolean {
  if (a.slot < 0) return false;
  const { flag } = a.answer;
  return flag === null || flag === "low_confidence" ||
    (flag === "drift" && a.answer.driftRule === "live_audit");
}

/**
 * True when question `q` could be certified at all: it has a threshold
 * (the table's, or its two tiers').
 */
function certifiable(q: Table["questions"][number]): boolean {
  return q.calibration.threshold !== null ||
    (q.semantic?.calibration.threshold ?? null) !== null;
}

/** The live certificates of one table, by question position. */

/** A random 32-bit seed. */
function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}

/**
 * The live certificates of every table served, the audit sampler and the
 * pending audits.
 *
 * @example
 * ```ts
 * import { LiveController } from "./controller.ts";
 * import type { Table } from "../engine/mod.ts";
 * import type { Assessment } from "../engine/mod.ts";
 * declare const table: Table;
 * declare const answers: Assessment[];
 * const live = new LiveController({ auditRate: 0.02, auditSeed: 1 });
 * const audits = live.recordDecisions(table, answers); // ids of the picked answers
 * ```
 */
export class LiveController {
  readonly #sampler: AuditSampler;
  /** Audits waiting for the proxy's answer. */
  readonly pending: PendingAudits;
  /** The seed the sampler started from. */
  readonly seed: number;
  /** Per table served: its state, rates, certificates, bundle id and resets. */
  readonly #served: ServedTables;
  /** Recent uncertified eligible answers by question and text (see `takeRecent`). */
  readonly recent = new RecentAnswers();
  /** The key file of signed ids; null when ids are kept in `pending`. */
  readonly #keys: AuditKeyFile | null;
  readonly #tokens: AuditTokens | null;
  /** Signed ids counted lately by this process. */
  readonly #replays: ReplayGuard;
  readonly #clock: () => number;
  /** The evidence pool of this process's signed ids when it has no fleet. */
  readonly #ownPool = randomHex8();
  /** The fleet's shared live certificate; null for a lone process. */
  readonly fleet: FleetLive | null;
  /** Resets of the live evidence applied here, latest last. */
  readonly resets = new ResetHistory();
  /** Signs decision ids: the key file's keys, or a key of this process's own. */
  readonly #decisionIds: DecisionIds;
  /** The decision ledger for a feedback log; null without one. */
  readonly ledger: DecisionLedger | null;
  readonly #ratePolicy: ((table: Table) => ArrayLike<number>) | undefined;
  /** When an id that did not verify last had the key file read again (`performance.now()`). */
  #rereadAt = -Infinity;
  /** What the operator is told of suspect feedback and feedback without ids. */
  readonly #warnings: FeedbackWarnings;

  /**
   * A controller for `options`; throws `RangeError` for a rate outside
   * [0, 1], or a fleet without audit keys.
   */
  constructor(options: LiveOptions) {
    this.seed = options.auditSeed ?? randomSeed();
    this.#sampler = new AuditSampler(options.auditRate, this.seed);
    this.#served = new ServedTables(() => this.#sampler.rate);
    this.pending = new PendingAudits(options.pending);
    this.#keys = options.auditKeys ?? null;
    this.#tokens = this.#keys === null
      ? null
      : new AuditTokens(this.#keys.signer);
    this.#decisionIds = new DecisionIds({
      tokens: this.#tokens ?? new AuditTokens(
        hmacSigner([crypto.getRandomValues(new Uint8Array(32))]),
      ),
      keyFile: this.#tokens !== null,
      clock: () => this.#clock(),
      ttlMs: this.auditTtlMs,
    });
    this.#keys?.onChange((signer) => this.#tokens!.signer = signer);
    this.#ratePolicy = options.rates;
    this.#warnings = new FeedbackWarnings(options.warn);
    const ledger = options.ledger;
    this.ledger = ledger === undefined || ledger === false ||
        options.auditRate === 0
      ? null
      : new DecisionLedger({
        issuer: this.#decisionIds.tokens.issuer,
        ...(ledger === true ? {} : ledger),
      });
    this.#replays = new ReplayGuard(
      options.pending?.capacity ?? MAX_PENDING_AUDITS,
      this.auditTtlMs,
    );
    this.#clock = options.clock ?? Date.now;
    if (options.fleet !== undefined && this.#keys === null) {
      throw new RangeError("A fleet's live certificate needs signed audit ids");
    }
    this.fleet = options.fleet === undefined ? null : new FleetLive({
      ...options.fleet,
      onReset: (table, names) => this.resetLocal(table, names, "store"),
    });
  }

  /** True when audit ids are signed (any replica with the keys counts them). */
  get signed(): boolean {
    return this.#tokens !== null;
  }

  /** How long an audit may wait for its answer, in ms. */
  get auditTtlMs(): number {
    return this.pending.ttlMs;
  }

  /** Milliseconds left in the lifetime of an audit given at `issuedAt` (wall clock). */
  auditRemainingMs(issuedAt: number): number {
    return issuedAt + this.auditTtlMs - this.#clock();
  }

  /** The evidence pool signed ids name: the fleet's epoch, or this process's own. */
  get pool(): string {
    return this.fleet?.epoch ?? this.#ownPool;
  }

  /**
   * Serves `table` from now on, answering with its serving `state` (where
   * live decisions are put in force, and feedback answered again): a fleet
   * reads its pooled certificate (and withholds certification until it
   * has). A lone process's certificates start when first used.
   */
  serve(
    table: Table,
    state: TableState,
    tiered = false,
    rates?: ArrayLike<number>,
  ): void {
    this.#served.serve(
      table,
      state,
      tiered,
      rates ?? this.#ratePolicy?.(table),
    );
    if (this.fleet !== null && this.enabled) {
      this.fleet.serve(
        table,
        state,
        this.certificates(table),
        this.auditRate,
        tiered ? this.semanticCertificates(table) : undefined,
      );
    }
  }

  /**
   * The serving state `table` was served with (`serve`). Throws
   * `RangeError` for a table never served.
   */
  stateOf(table: Table): TableState {
    const state = this.#served.stateOf(table);
    if (state === undefined) {
      throw new RangeError(
        "The live controller was never asked to serve this table (call serve(table, state) first)",
      );
    }
    return state;
  }

  /** The audit rate. */
  get auditRate(): number {
    return this.#sampler.rate;
  }

  /**
   * The calibration coin's rate for question `slot` of `table` (what `serve`
   * was given for it; the audit rate otherwise, and for a question the
   * table lacks).
   */
  rateOf(table: Table, slot: number): number {
    return this.#served.rateOf(table, slot);
  }

  /** The issuing process's id that its decision ids and ledger carry (8 hex digits). */
  get issuer(): string {
    return this.#decisionIds.tokens.issuer;
  }

  /** True when the live certificate runs (audit rate above 0). */
  get enabled(): boolean {
    return this.#sampler.rate > 0;
  }

  /**
   * The certificates of `table` (made on first use, one per question): of
   * the table's own answers. A question served with its second tier is
   * certified against the two-tier rule's calibration, so its table
   * certificate starts from that (`L`, its candidates).
   */
  certificates(table: Table): Certificates {
    return this.#served.certificates(table);
  }

  /**
   * The second tier's certificates of `table` (made on first use; null for
   * a question without a second tier): the second tier's certified answers
   * are a stream of their own, audited at the same rate over the two-tier
   * rule's candidates, starting from its threshold `L`.
   */
  semanticCertificates(table: Table): (LiveCertificate | null)[] {
    return this.#served.semanticCertificates(table);
  }

  /**
   * The second tier's threshold in force for question `slot` of `table`:
   * its live certificate's last decision (made as feedback is counted, by
   * `apply`; on a fleet, the fleet's, null until the store is read; null:
   * certification withdrawn), else `fallback` (the bundle's `L`).
   */
  semanticThreshold(
    table: Table,
    slot: number,
    fallback: number | null,
  ): number | null {
    if (this.fleet !== null && this.enabled) {
      const pooled = this.fleet.semanticThreshold(table, slot);
      if (pooled !== undefined) return pooled;
    }
    const decided = this.#served.semanticInForce(table, slot);
    return decided === undefined ? fallback : decided;
  }

  /**
   * Records the answers of one decision: each is picked by the calibration
   * coin with its question's rate (see the module doc), eligible ones are
   * recorded in their certificate, and with a ledger every one is counted
   * there. Returns the id of each answer that may get feedback (a picked
   * certified answer, or any uncertified one; undefined for the rest), or
   * undefined when none has one. `learnable[i]` true records answer `i` of
   * a question the table lacks even when unsupported (a learning service's
   * decision-model shapes).
   */
  recordDecisions(
    table: Table,
    answers: readonly Assessment[],
    text?: string,
    tiers?: readonly AnsweringTier[],
    learnable?: readonly boolean[],
  ): (string | undefined)[] | undefined {
    if (!this.enabled) return undefined;
    let ids: (string | undefined)[] | undefined;
    const now = this.#clock();
    for (let i = 0; i < answers.length; i++) {
      const a = answers[i]!;
      const flag = a.answer.flag;
      // An empty text, or a question asked as nothing the service learns
      // (a learning service learns a question its table lacks: `learnable`).
      if (flag === "empty_input") continue;
      if (learnable?.[i] !== true) {
        if (flag === "unsupported") continue;
        if (a.slot < 0 && flag !== "uncalibrated") continue;
      }
      const id = this.#record(table, a, text, tiers?.[i] === "semantic", now);
      if (id !== undefined) {
        (ids ??= new Array<string | undefined>(answers.length))[i] = id;
      }
    }
    return ids;
  }

  /**
   * Records one answer decided at `now` (see `recordDecisions`) and
   * returns its id, if it gets one. An eligible answer is recorded in its
   * question's table certificate, or its second-tier one (`semantic`); a
   * picked certified one becomes an audit (a kept id tied to that
   * certificate, or a signed one whose question position is offset by
   * `SEMANTIC_SLOT` for the second tier); an uncertified eligible one is
   * remembered with its text, so feedback on it without an id counts where
   * it was decided (on a fleet, a counter of what goes to the store's
   * record).
   */
  #record(
    table: Table,
    a: Assessment,
    text: string | undefined,
    semantic: boolean,
    now: number,
  ): string | undefined {
    const certified = a.answer.certified;
    const known = a.slot >= 0;
    const rate = known ? this.rateOf(table, a.slot) : this.#sampler.rate;
    // An uncertified answer's coin is its id's own draw (below).
    let picked = certified && this.#sampler.pickAt(rate);
    const eligible = known && isEligible(a);
    let certificate: LiveCertificate | null | undefined;
    if (eligible) {
      certificate = semantic
        ? this.semanticCertificates(table)[a.slot]
        : this.certificates(table)[a.slot]!;
      // A second-tier answer of a question served without its tier.
      if (certificate == null) return undefined;
      certificate.recordDecision(
        a.fullConfidence,
        certified,
        picked && certified,
      );
    }
    let id: string | undefined;
    if (!certified) {
      id = this.#decisionId(table, a, eligible, semantic, rate, now, text);
      picked = this.#decisionIds.draw < rate;
    } else if (picked) {
      id = this.#audit(table, a, certificate!, semantic, rate, now, text);
    }
    if (!certified && eligible && text !== undefined) {
      this.recent.remember(a.question, text, {
        table,
        certificate: certificate!,
        answer: answerOf(a.answer)!,
        confidence: a.fullConfidence,
        ...(id === undefined ? {} : { id }),
      });
    }
    if (this.ledger !== null) {
      this.ledger.record(
        now,
        a.question,
        this.#bundleOf(table),
        rate,
        // Held for options the model added, nothing could be certified.
        known && certifiable(table.questions[a.slot]!) &&
          !(this.#served.stateOf(table)?.question(table.questions[a.slot]!)
            .optionsAdded ?? false),
        certified,
        picked && id !== undefined && text !== undefined
          ? { id: auditLogName(id), text }
          : undefined,
      );
    }
    return id;
  }

  /** The audit id of a picked certified answer: kept, or signed. */
  #audit(
    table: Table,
    a: Assessment,
    certificate: LiveCertificate,
    semantic: boolean,
    rate: number,
    now: number,
    text = "",
  ): string {
    const answer = answerOf(a.answer)!;
    if (this.#tokens !== null) {
      return this.#tokens.issue({
        slot: a.slot + (semantic ? SEMANTIC_SLOT : 0),
        answer: typeof answer === "boolean"
          ? (answer ? 1 : 0)
          : table.questions[a.slot]!.optionIndex.get(answer)!,
        confidence: a.fullConfidence,
        issuedAt: now,
        bundle: this.#bundleOf(table),
        pool: this.pool,
        kind: "audit",
        eligible: true,
        rate,
        question: questionHash(a.question),
      }, text);
    }
    return this.pending.add({
      table,
      certificate,
      question: a.question,
      answer,
      confidence: a.fullConfidence,
      generation: certificate.generation,
      rate,
      decidedAt: now,
      seal: this.#decisionIds.tokens.sealOf(text),
    });
  }

  /**
   * The signed id of an uncertified answer about `text`: whether the coin
   * picked it is the id's own draw (`AuditTokens.draw`), which nothing a
   * client reads tells.
   */
  #decisionId(
    table: Table,
    a: Assessment,
    eligible: boolean,
    semantic: boolean,
    rate: number,
    now: number,
    text = "",
  ): string {
    return this.#decisionIds.issue(table, a, {
      issuedAt: now,
      bundle: this.#bundleOf(table),
      pool: this.pool,
      rate,
      eligible,
      semantic,
    }, text);
  }

  /** The first 16 hex digits of `table`'s bundle id, as ids and the ledger carry them. */
  #bundleOf(table: Table): string {
    return this.#served.bundleOf(table);
  }

  /**
   * Checks a decision id (of an uncertified answer) for `question` against
   * the served `table`: its claim, or why it cannot be used (`unknown`: not
   * signed by a key held now, since without a key file the ids are signed
   * with a key this process made; `malformed`; `other_question`;
   * `expired`; `answered`; `text_mismatch`: given for another text than
   * `text`). The table it was given by may be another (`tableAnswer` is
   * then undefined): a feedback log still keeps how it was picked. Nothing
   * is recorded (`takeDecision` does).
   */
  checkDecision(
    id: string,
    question: string,
    table: Table,
    text: string,
  ): CheckedDecision | AuditMiss {
    return this.#decisionIds.check(
      id,
      question,
      text,
      table,
      this.#bundleOf(table),
    );
  }

  /**
   * Counts the feedback `answer` on decision id `id` (see `checkDecision`)
   * once: an eligible answer of the served `table` is recorded in its
   * certificate as feedback on an uncertified answer (and the answer's
   * recent entry taken, so feedback on it without the id does not count it
   * again); returns the table whose certificate counted it, null when it
   * is kept as a trace only, or why the id cannot be used (`other_bundle`
   * for an answer of a bundle no longer served: its line is kept, its
   * decision taken, but no certificate of the served bundle counts it).
   */
  takeDecision(
    id: string,
    question: string,
    text: string,
    answer: string | boolean,
    table: Table,
  ): Table | null | AuditMiss {
    const checked = this.claimDecision(id, question, text, table);
    if (checked === null || typeof checked === "string") return checked;
    const certificate = checked.semantic
      ? this.semanticCertificates(table)[checked.slot]
      : this.certificates(table)[checked.slot];
    if (certificate == null) return null;
    certificate.recordFeedback(
      checked.confidence,
      checked.tableAnswer !== answer,
    );
    return table;
  }

  /**
   * Takes decision id `id` (see `takeDecision`) without counting its
   * feedback anywhere: its check, once this process has seen it (a replay
   * is `answered`), with the table's answer it stands for; null when it
   * counts in no certificate of `table` (a question `table` lacks, an
   * answer not eligible, one given before a reset). A fleet counts it
   * through its store, once across replicas.
   */
  claimDecision(
    id: string,
    question: string,
    text: string,
    table: Table,
  ): (CheckedDecision & { tableAnswer: string | boolean }) | null | AuditMiss {
    const checked = this.checkDecision(id, question, table, text);
    if (typeof checked === "string") return checked;
    const replay = this.#decisionIds.admit(checked);
    if (replay !== null) return replay;
    this.recent.take(question, text, id);
    if (checked.otherBundle) return "other_bundle";
    const { tableAnswer } = checked;
    if (
      tableAnswer === undefined || !checked.eligible ||
      checked.issuedAt < this.resetAt(table, question)
    ) return null;
    return { ...checked, tableAnswer };
  }

  /** Marks the decision id `id` counted (its answer was counted by its text, `text`, without it). */
  markDecision(id: string, text: string): void {
    this.#decisionIds.mark(id, text);
  }

  /**
   * Checks a signed audit id against the served `table` and the feedback
   * item's `question`: its claim, or why it cannot count (`forged`: not
   * signed by a key held now, or not an id at all; `malformed`: signed, but
   * its numbers are unusable (a confidence outside [0, 1], an issue time
   * that is not a time, a question or answer the table lacks, see
   * `claimProblem`); `other_bundle`: given
   * by another bundle; `not_shared`: its decision was counted in evidence
   * this process does not share; `other_question`; `expired`: issued more
   * than the audit lifetime ago, or as far ahead by a clock; `answered`:
   * counted already; `text_mismatch`: given for another text than `text`,
   * and left to count when the right text comes). A verified id is
   * remembered as counted.
   */
  checkAudit(
    id: string,
    question: string,
    table: Table,
    text: string,
  ): CheckedAudit | AuditMiss {
    const claim = this.#tokens?.verify(id, text) ?? null;
    if (claim === null || claim.kind !== "audit") return "forged";
    // Signed, yet its numbers may be unusable (a key signs what it is given).
    if (claimProblem(claim) !== null) return "malformed";
    if (claim.bundle !== bundleIdOf(table).slice(0, 16)) return "other_bundle";
    if (claim.pool !== this.pool) return "not_shared";
    const semantic = claim.slot >= SEMANTIC_SLOT;
    const slot = semantic ? claim.slot - SEMANTIC_SLOT : claim.slot;
    const q = table.questions[slot];
    if (q === undefined) return "malformed";
    // Only a question with a second tier has second-tier answers.
    if (semantic && q.semantic === undefined) return "forged";
    if (q.name !== question) return "other_question";
    if (claim.seal === "mismatch") return "text_mismatch";
    const now = this.#clock();
    if (Math.abs(now - claim.issuedAt) > this.auditTtlMs) return "expired";
    const tableAnswer = q.kind === "yes_no"
      ? (claim.answer <= 1 ? claim.answer === 1 : undefined)
      : q.options[claim.answer];
    if (tableAnswer === undefined) return "malformed";
    const replay = this.#replays.admit(claim.tag, claim.issuedAt, now);
    if (replay !== null) return replay;
    return { ...claim, slot, semantic, tableAnswer };
  }

  /**
   * True when audit `id` was counted already by this process (a replay);
   * nothing is taken or recorded.
   */
  isReplay(id: string): boolean {
    if (this.#decisionIds.isDecisionId(id)) {
      return this.#decisionIds.wasCounted(id);
    }
    if (this.#tokens === null) return this.pending.wasAnswered(id);
    const claim = this.#tokens.verify(id);
    return claim !== null && this.#replays.has(claim.tag);
  }

  /** Reads the audit key file again (an id that did not verify may be signed by a new key); true when the keys changed. */
  async rereadKeys(): Promise<boolean> {
    // At most once a second: a flood of forged ids reads no file per request.
    const now = performance.now();
    if (now - this.#rereadAt < KEY_REREAD_GAP_MS) return false;
    this.#rereadAt = now;
    return (await this.#keys?.reread()) ?? false;
  }

  /**
   * The audit `id` names for `question` on the served `table`, taken so it
   * is never counted twice; or why there is none. Kept ids come from
   * `pending`; signed ones are checked (`checkAudit`) and stand for an
   * answer of `table`.
   */
  takeAudit(
    id: string,
    question: string,
    table: Table,
    text: string,
  ): PendingAudit | AuditMiss {
    if (this.#tokens === null) {
      const kept = this.pending.take(
        id,
        question,
        this.#decisionIds.tokens.sealOf(text),
      );
      // Given before a reset: its decision is not in the new evidence.
      if (
        typeof kept !== "string" &&
        (kept.generation ?? 0) !== kept.certificate.generation
      ) return "not_shared";
      return kept;
    }
    const checked = this.checkAudit(id, question, table, text);
    if (typeof checked === "string") return checked;
    if (checked.issuedAt < this.resetAt(table, question)) return "not_shared";
    const certificate = checked.semantic
      ? this.semanticCertificates(table)[checked.slot]
      : this.certificates(table)[checked.slot];
    if (certificate == null) return "forged";
    return {
      table,
      certificate,
      question,
      answer: checked.tableAnswer,
      confidence: checked.confidence,
      at: checked.issuedAt,
    };
  }

  /**
   * The uncertified answer this service gave lately to `question` about
   * `text` (the last one, among the `RECENT_ANSWERS` most recent, within
   * `RECENT_ANSWER_BYTES`), taken once; undefined when it has none or the
   * table that gave it was freed (it is no longer served). Feedback on it is counted with the
   * confidence it had when it was served, without answering again.
   */
  takeRecent(question: string, text: string): RecentAnswer | undefined {
    const found = this.recent.take(question, text);
    // Its decision is counted: its id, sent later, is a repeat.
    if (found?.id !== undefined) this.markDecision(found.id, text);
    return found;
  }

  /**
   * What id `id` (for `question`) says of its decision, without taking or
   * counting anything: its kind, the coin's rate, when and by which process
   * it was decided and by which bundle (16 hex digits; undefined for a kept
   * audit id, whose bundle is the one serving); null when it is no id this
   * process can read (forged, unknown, for another question, or given for
   * another text than `text`).
   */
  originOf(id: string, question: string, text: string): IdOrigin | null {
    const claim = this.#decisionIds.tokens.verify(id, text) ??
      this.#tokens?.verify(id, text) ?? null;
    if (claim !== null) {
      if (
        claim.question !== undefined &&
          claim.question !== questionHash(question) ||
        claim.seal === "mismatch"
      ) return null;
      return {
        kind: claim.kind,
        rate: Number.isNaN(claim.rate) ? this.auditRate : claim.rate,
        decidedAt: claim.issuedAt,
        issuer: claim.issuer,
        bundle: claim.bundle,
      };
    }
    const kept = this.pending.peek(id, question);
    if (kept === undefined) return null;
    return {
      kind: "audit",
      rate: kept.rate ?? this.auditRate,
      decidedAt: kept.decidedAt ?? NaN,
      issuer: this.issuer,
      bundle: undefined,
    };
  }

  /**
   * Why feedback on `question` about `text` carrying `id` is no label at
   * all, or null when it may be one: `forged` (no key held signed it, or
   * it is no id; `unknown` for a process's own kept ids), `malformed`
   * (signed, its numbers unusable), `other_question`, or `text_mismatch`
   * (given for another text). Nothing is taken or counted; an id that
   * passes may still miss (expired, answered, another bundle's).
   */
  screenId(id: string, question: string, text: string): AuditMiss | null {
    const claim = this.#decisionIds.tokens.verify(id, text) ??
      this.#tokens?.verify(id, text) ?? null;
    if (claim === null) {
      if (this.#tokens !== null) return "forged";
      const kept = this.pending.peek(id, question);
      if (kept === undefined) {
        return this.pending.knows(id) ? null : "unknown";
      }
      return kept.seal !== undefined &&
          kept.seal !== this.#decisionIds.tokens.sealOf(text)
        ? "text_mismatch"
        : null;
    }
    if (claimProblem(claim) !== null) return "malformed";
    if (
      claim.question !== undefined && claim.question !== questionHash(question)
    ) return "other_question";
    return claim.seal === "mismatch" ? "text_mismatch" : null;
  }

  /** True when `id` is a decision id of an uncertified answer (signed, any question). */
  isDecisionId(id: string): boolean {
    return this.#decisionIds.isDecisionId(id);
  }

  /**
   * Applies question `name`'s live decision to `table`'s state: the
   * threshold in force, or certification withdrawn (and reinstated once a
   * threshold is supported again); and its second tier's certificate's
   * decision to the second tier's threshold (`semanticThreshold`).
   */
  apply(table: Table, name: string): void {
    // A fleet's threshold is the fleet's: its store syncs put it in force.
    if (!this.enabled || this.fleet !== null) return;
    const slot = table.questions.findIndex((q) => q.name === name);
    if (slot < 0) return;
    const second = this.#served.semanticCertificatesMade(table)?.[slot];
    if (second != null) {
      const d = second.decide();
      if (d.reason !== "uncalibrated") {
        this.#served.setSemanticInForce(table, slot, d.threshold);
      }
    }
    const certificate = this.certificates(table)[slot]!;
    applyLiveDecision(table, this.stateOf(table), name, certificate.decide());
    this.#warnings.suspect(name, certificate);
  }

  /** Feedback items sent without the id their decision carried (see `idlessFeedback`), and the picks expected among them. */
  get idless(): { readonly items: number; readonly picksExpected: number } {
    return this.#warnings.idless;
  }

  /** Counts one item sent without the id its decision carried, picked at `rate` (see `FeedbackWarnings.noteIdless`). */
  noteIdless(rate: number): void {
    this.#warnings.noteIdless(rate);
  }

  /**
   * Wall-clock time (ms) of the last reset of `question`'s live evidence on
   * `table` (0 when never reset): a signed audit id given before it is
   * missed as `not_shared`.
   */
  resetAt(table: Table, question: string): number {
    return this.#served.resetAt(table, question);
  }

  /**
   * Starts the live evidence of `question` (every question when null) of
   * `table` afresh: evidence, threshold in force (the bundle's again) and
   * feedback alarms; recorded in `resets`. A fleet's reset goes through its
   * store (`FleetLive.reset`), which calls back `resetLocal`. Returns the
   * names reset; throws `RangeError` for a question the table lacks.
   */
  async reset(table: Table, question: string | null): Promise<string[]> {
    const names = this.#resetNames(table, question);
    if (this.fleet !== null && this.enabled) {
      await this.fleet.reset(question);
      return names;
    }
    this.resetLocal(table, names, "local", question === null);
    return names;
  }

  /**
   * Resets the certificates of `names` on `table` here (see `reset`);
   * `source` says who asked, `all` whether every question was asked for
   * (as the history shows it; by default, when `names` are all of them).
   */
  resetLocal(
    table: Table,
    names: readonly string[],
    source: ResetSource,
    all = names.length === table.questions.length,
  ): void {
    const now = this.#clock();
    const certificates = this.certificates(table);
    const semantic = this.#served.semanticCertificatesMade(table);
    for (const name of names) {
      const slot = table.questions.findIndex((q) => q.name === name);
      if (slot < 0) continue;
      certificates[slot]!.reset();
      semantic?.[slot]?.reset();
      this.#served.markReset(table, name, now);
      if (this.fleet === null) this.apply(table, name);
    }
    this.resets.record(all ? null : names.join(","), source, new Date(now));
  }

  #resetNames(table: Table, question: string | null): string[] {
    if (question === null) return table.questions.map((q) => q.name);
    if (!table.byName.has(question)) {
      const known = table.questions.map((q) => q.name);
      throw new RangeError(
        `Unknown question ${JSON.stringify(question)}: the bundle has ${
          known.map((n) => JSON.stringify(n)).join(", ")
        }`,
      );
    }
    return [question];
  }

  /**
   * The live state of the second tier of every question of `table` that
   * has one and is served with it, by name (empty when off, or when the
   * table is served without its second tier); a fleet's pooled one.
   */
  semanticStates(table: Table): Map<string, LiveState> {
    const out = new Map<string, LiveState>();
    if (!this.enabled || !this.#served.tiered(table)) return out;
    if (this.fleet !== null) return this.fleet.semanticStates(table);
    const certificates = this.semanticCertificates(table);
    table.questions.forEach((q, i) => {
      const c = certificates[i];
      if (c != null) out.set(q.name, c.state());
    });
    return out;
  }

  /** The live state of every question of `table`, by name (empty when off); a fleet's pooled one. */
  states(table: Table): Map<string, LiveState> {
    const out = new Map<string, LiveState>();
    if (!this.enabled) return out;
    if (this.fleet !== null) return this.fleet.states(table);
    const certificates = this.certificates(table);
    table.questions.forEach((q, i) =>
      out.set(q.name, certificates[i]!.state())
    );
    return out;
  }
}
