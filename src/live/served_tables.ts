/**
 * What the live controller keeps per table served (`controller.ts`): the
 * serving state its decisions are put in force in, whether it is served
 * with its second tier, each question's coin rate, its certificates (the
 * table's answers, and the second tier's), the second tier's threshold
 * each last decided, its bundle id as ids carry it, and when each question
 * was last reset. Kept by table, so a table no longer served is forgotten
 * with it.
 *
 * @module
 */

import type { Table, TableState } from "../engine/mod.ts";
import type { LiveCertificate } from "../guarantee/mod.ts";
import { bundleIdOf } from "./bundle_id.ts";
import { newCertificate } from "./_new_certificate.ts";

/** A table's certificates, one per question. */
export type Certificates = readonly LiveCertificate[];

/** The tables a controller serves (see the module doc). */
export class ServedTables {
  readonly #certificates = new WeakMap<Table, Certificates>();
  readonly #states = new WeakMap<Table, TableState>();
  readonly #tiered = new WeakSet<Table>();
  readonly #semantic = new WeakMap<Table, (LiveCertificate | null)[]>();
  readonly #semanticInForce = new WeakMap<Table, (number | null)[]>();
  readonly #rates = new WeakMap<Table, Float64Array>();
  readonly #bundles = new WeakMap<Table, string>();
  readonly #resetAt = new WeakMap<Table, Map<string, number>>();
  readonly #defaultRate: () => number;

  /** Tables whose questions take `defaultRate()` unless `serve` was given rates. */
  constructor(defaultRate: () => number) {
    this.#defaultRate = defaultRate;
  }

  /**
   * Serves `table` in `state` (with its second tier when `tiered`), its
   * questions' coin at `rates` when given. Throws `RangeError` for rates
   * not one per question in (0, 1].
   */
  serve(
    table: Table,
    state: TableState,
    tiered: boolean,
    rates: ArrayLike<number> | undefined,
  ): void {
    this.#states.set(table, state);
    if (tiered) this.#tiered.add(table);
    if (rates === undefined) return;
    if (rates.length !== table.questions.length) {
      throw new RangeError(
        `Expected one rate per question (${table.questions.length}): got ${rates.length}`,
      );
    }
    for (let i = 0; i < rates.length; i++) {
      const r = rates[i]!;
      if (!(r > 0 && r <= 1)) {
        throw new RangeError(`A question's rate must be in (0, 1]: got ${r}`);
      }
    }
    this.#rates.set(table, Float64Array.from(rates));
  }

  /** The serving state `table` was served with; undefined for a table never served. */
  stateOf(table: Table): TableState | undefined {
    return this.#states.get(table);
  }

  /** True when `table` is served with its second tier. */
  tiered(table: Table): boolean {
    return this.#tiered.has(table);
  }

  /** The coin's rate of question `slot` of `table` (the default rate when not given). */
  rateOf(table: Table, slot: number): number {
    return this.#rates.get(table)?.[slot] ?? this.#defaultRate();
  }

  /**
   * The certificates of `table` (made on first use, one per question). A
   * question served with its second tier is certified against the
   * two-tier rule's calibration, so its table certificate starts from that.
   */
  certificates(table: Table): Certificates {
    let found = this.#certificates.get(table);
    if (found === undefined) {
      const tiered = this.#tiered.has(table);
      found = table.questions.map((q, slot) =>
        newCertificate(
          q,
          this.rateOf(table, slot),
          tiered && q.semantic !== undefined
            ? q.semantic.calibration
            : q.calibration,
        )
      );
      this.#certificates.set(table, found);
    }
    return found;
  }

  /** The second tier's certificates of `table` (made on first use; null for a question without one). */
  semanticCertificates(table: Table): (LiveCertificate | null)[] {
    let found = this.#semantic.get(table);
    if (found === undefined) {
      found = table.questions.map((q, slot) =>
        q.semantic === undefined
          ? null
          : newCertificate(q, this.rateOf(table, slot), q.semantic.calibration)
      );
      this.#semantic.set(table, found);
    }
    return found;
  }

  /** The second tier's certificates of `table` if made (undefined before their first use). */
  semanticCertificatesMade(
    table: Table,
  ): readonly (LiveCertificate | null)[] | undefined {
    return this.#semantic.get(table);
  }

  /** The second tier's threshold question `slot`'s certificate last decided (undefined: none yet). */
  semanticInForce(table: Table, slot: number): number | null | undefined {
    return this.#semanticInForce.get(table)?.[slot];
  }

  /** Records the second tier's threshold question `slot`'s certificate decided. */
  setSemanticInForce(table: Table, slot: number, threshold: number | null) {
    let inForce = this.#semanticInForce.get(table);
    if (inForce === undefined) {
      inForce = [];
      this.#semanticInForce.set(table, inForce);
    }
    inForce[slot] = threshold;
  }

  /** The first 16 hex digits of `table`'s bundle id, as ids and the ledger carry them. */
  bundleOf(table: Table): string {
    let id = this.#bundles.get(table);
    if (id === undefined) {
      id = bundleIdOf(table).slice(0, 16);
      this.#bundles.set(table, id);
    }
    return id;
  }

  /** Wall-clock ms of the last reset of `question` of `table` (0: never). */
  resetAt(table: Table, question: string): number {
    return this.#resetAt.get(table)?.get(question) ?? 0;
  }

  /** Records a reset of `question` of `table` at `now` (wall-clock ms). */
  markReset(table: Table, question: string, now: number): void {
    let times = this.#resetAt.get(table);
    if (times === undefined) this.#resetAt.set(table, times = new Map());
    times.set(question, now);
  }
}
