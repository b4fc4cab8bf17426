/**
 * The JSON pieces of a served table that every reply repeats, encoded once
 * when the table is served: each question's name as a key and as a string,
 * and each option's name in the forms the three reply shapes print it.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { type Fragment, fragment } from "./json_writer.ts";

/** The pre-encoded names of one question and its options. */
export interface QuestionFragments {
  /** `"<question>":` */
  readonly key: Fragment;
  /** `"<question>"` */
  readonly name: Fragment;
  /** Per option: `"<option>"` */
  readonly option: readonly Fragment[];
  /** Per option: `"<option>":` (a key of a probabilities object). */
  readonly optionKey: readonly Fragment[];
  /** Per option: `,"<option>":` (a key after the first). */
  readonly nextOptionKey: readonly Fragment[];
  /** Per option: `{"value":"<option>","probability":` (an entry of a probabilities array). */
  readonly optionEntry: readonly Fragment[];
  /** Per option: `,{"value":"<option>","probability":` (an entry after the first). */
  readonly nextOptionEntry: readonly Fragment[];
  /** Bytes of the longest of all the option fragments of an entry form, summed over options. */
  readonly optionBytes: number;
}

/** The fragments of every question of `table`, by question position. */
export function replyFragments(table: Table): QuestionFragments[] {
  return table.questions.map((q) => {
    const quoted = q.options.map((o) => JSON.stringify(o));
    const nextOptionEntry = quoted.map((o) =>
      fragment(`,{"value":${o},"probability":`)
    );
    return {
      key: fragment(`${JSON.stringify(q.name)}:`),
      name: fragment(JSON.stringify(q.name)),
      option: quoted.map((o) => fragment(o)),
      optionKey: quoted.map((o) => fragment(`${o}:`)),
      nextOptionKey: quoted.map((o) => fragment(`,${o}:`)),
      optionEntry: quoted.map((o) => fragment(`{"value":${o},"probability":`)),
      nextOptionEntry,
      optionBytes: nextOptionEntry.reduce((n, f) => n + f.length, 0),
    };
  });
}
