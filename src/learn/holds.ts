/**
 * Which questions of a learning service are held for the options the model
 * added: an option a question's table lacks is watched by its frequency
 * (`option_change.ts`), and once the traffic is found to have changed the
 * question is held (nothing of it certified) until a retrain learns each
 * added option from `SETTLED_LABELS` labels and calibrates on the traffic
 * since the change. When each question changed is kept in
 * `DIR/changes.json`, so a restart calibrates as this run does.
 *
 * @module
 */

import type { Table } from "../engine/mod.ts";
import { bundleInfo, questionReportOf } from "../train/mod.ts";
import { OptionChangeWatch } from "./option_change.ts";
import type { QuestionRegistry } from "./questions.ts";
import { LEARN_FILES } from "./retrain.ts";
import { nextRetrainLabels } from "./schedule.ts";

/**
 * Labels of a held question after which an added option seen fewer than
 * `NOISE_COUNT` times is taken for noise (a slip of the model, a typo) and
 * forgotten; a question left with none is no longer held.
 */
export const NOISE_LABELS = 1000;
/** See `NOISE_LABELS`. */
export const NOISE_COUNT = 3;
/**
 * Labels of an option the model added before a retrain on them ends the
 * hold on its question: the table then learns it from as many answers as
 * `train` wants an option to have (`THIN_OPTION`).
 */
export const SETTLED_LABELS = 10;
/** What the holds are told. */
export interface HoldsOptions {
  /** The learning service's folder (`changes.json` is kept there). */
  dir: string;
  /** The wall clock, ms. */
  clock: () => number;
  /** Where lines about holds go. */
  log: (line: string) => void;
  /** The registry of the unlearned, which counts the added options' labels. */
  registry: QuestionRegistry;
  /** Told when a question is held (`added` true) or released by the noise rule (false). */
  optionsAdded?: (question: string, added: boolean) => void;
  /** Ends the retrain running now: the traffic changed under it. */
  preempt: (reason: string) => void;
  /** Asks for a retrain at once: the added options have labels enough. */
  retrainSoon: () => void;
}

/** The held questions of a learning service (see the module doc). */
export class Holds {
  readonly #options: HoldsOptions;
  /**
   * Per held question, the options the model answered that the table
   * lacked, with their labels since: held until a bundle learned each from
   * `SETTLED_LABELS` labels.
   */
  readonly #added = new Map<string, Map<string, number>>();
  /** The questions the served state is held on now. */
  #held = new Set<string>();
  /** Per question, when the model began answering options its table lacked. */
  readonly #changedAt = new Map<string, number>();
  /** Per held question, its labels since its first added option. */
  readonly #since = new Map<string, number>();
  /** Per question, the labels in the log when its traffic changed (the schedule counts from there too). */
  readonly #changedLabels = new Map<string, number>();
  /** Per question, its labels counted (the frequency test weighs them). */
  readonly #questionLabels = new Map<string, number>();
  readonly #watch = new OptionChangeWatch();

  /**
   * Holds for a learner with `labels` labels, the labels per question
   * (`answers`, a restart's) and the changes `DIR/changes.json` recorded.
   */
  constructor(
    options: HoldsOptions,
    labels: number,
    answers?: ReadonlyMap<string, { counts: ReadonlyMap<string, number> }>,
  ) {
    this.#options = options;
    for (const [q, { counts }] of answers ?? []) {
      let n = 0;
      for (const c of counts.values()) n += c;
      this.#questionLabels.set(q, n);
    }
    // When the traffic changed, as an earlier run recorded it.
    try {
      const changes = JSON.parse(
        Deno.readTextFileSync(`${options.dir}/${LEARN_FILES.changes}`),
      ) as Record<string, unknown>;
      for (const [q, at] of Object.entries(changes)) {
        if (typeof at !== "number") continue;
        this.#changedAt.set(q, at);
        // Not recorded: counted from this start's labels.
        this.#changedLabels.set(q, labels);
      }
    } catch { /* none recorded */ }
  }

  /** The questions held now. */
  get held(): string[] {
    return [...this.#held];
  }

  /** The held questions' added options and their labels so far (a retrain copies them). */
  added(): ReadonlyMap<string, ReadonlyMap<string, number>> {
    return this.#added;
  }

  /** Per question, when its traffic changed (ms): calibration stands for the traffic since. */
  calibrateAfter(): Record<string, number> {
    return Object.fromEntries(this.#changedAt);
  }

  /**
   * The labels in the log when a question's traffic changed (its
   * calibration stands for the traffic since, held or not), the one that
   * brings the next retrain soonest after one on `lastLabels`; undefined
   * when none changed.
   */
  changedSince(lastLabels: number): number | undefined {
    let best: number | undefined;
    for (const from of this.#changedLabels.values()) {
      if (
        best === undefined ||
        nextRetrainLabels(lastLabels, from) <
          nextRetrainLabels(lastLabels, best)
      ) best = from;
    }
    return best;
  }

  /**
   * Counts one label of `question`, a question of `table`, the learner's
   * `labels`-th: an option the table lacks is watched, and holds the
   * question once the traffic is found to have changed; unless the label
   * is no decision of the service's (`backed` false), which counts for
   * nothing here.
   */
  observe(
    question: string,
    answer: string | boolean,
    table: Table,
    labels: number,
    backed = true,
  ): void {
    const q = table.byName.get(question);
    if (q === undefined) return;
    const labelled = this.#questionLabels.get(question) ?? 0;
    this.#questionLabels.set(question, labelled + 1);
    // The labels before: those counted, or those the bundle learned from.
    const before = Math.max(labelled, answersLearned(table, question));
    if (typeof answer !== "string") return;
    this.#forgetNoise(question);
    const lacks = !q.optionIndex.has(answer);
    if (lacks && !backed) return;
    // An option the model adds (a new product, its own "none of these").
    if (lacks) this.#options.registry.observe(question, answer);
    let added = this.#added.get(question);
    if (added === undefined) {
      // Not held: is this label a sign that the traffic changed?
      const seen = [...new Set([...this.#watch.options(question), answer])];
      if (
        this.#watch.observe(question, before, lacks ? answer : null) === null
      ) {
        return;
      }
      const counts = this.#options.registry.get(question);
      added = new Map(
        seen.filter((o) => !q.optionIndex.has(o)).map((o) => [
          o,
          counts?.counts[counts.options.indexOf(o)] ?? 1,
        ]),
      );
      this.#added.set(question, added);
      this.#hold(question, added, labels);
      return;
    }
    if (lacks && !added.has(answer)) added.set(answer, 0);
    const count = added.get(answer);
    if (count === undefined) return;
    added.set(answer, count + 1);
    if (
      count + 1 === SETTLED_LABELS &&
      [...added.values()].every((n) => n >= SETTLED_LABELS)
    ) {
      this.#options.retrainSoon();
      this.#options.preempt(
        `the options added to ${question} have labels enough to learn`,
      );
    }
  }

  /**
   * Holds `question`: the model answers options its table lacks (`added`,
   * with their labels so far) often enough that its traffic changed.
   */
  #hold(question: string, added: Map<string, number>, labels: number): void {
    this.#since.set(question, 0);
    this.#options.optionsAdded?.(question, true);
    this.#held.add(question);
    this.#changedAt.set(question, this.#options.clock());
    this.#changedLabels.set(question, labels);
    this.#save();
    this.#options.preempt(
      `the model began answering ${question} with options its bundle lacks`,
    );
    let all = 0;
    for (const n of added.values()) all += n;
    this.#options.log(
      `learn: the model answered ${question} with ${
        [...added.keys()].map((o) => JSON.stringify(o)).join(", ")
      }, which the bundle lacks (${all} labels), more often than ${
        (this.#questionLabels.get(question) ?? 0) - all
      } labels without them allow by chance: the traffic changed, and ${question} is not certified until a retrain learns each from ${SETTLED_LABELS} labels`,
    );
  }

  /**
   * Counts a label of a held `question`; past `NOISE_LABELS` of them, forgets
   * the added options seen fewer than `NOISE_COUNT` times (noise), and
   * lifts the hold when none is left.
   */
  #forgetNoise(question: string): void {
    const since = this.#since.get(question);
    if (since === undefined) return;
    this.#since.set(question, since + 1);
    if (since + 1 < NOISE_LABELS) return;
    const added = this.#added.get(question);
    for (const [o, n] of added ?? []) {
      if (n < NOISE_COUNT) added!.delete(o);
    }
    this.#since.delete(question);
    if (added === undefined || added.size > 0) return;
    this.#added.delete(question);
    this.#held.delete(question);
    this.#changedAt.delete(question);
    this.#changedLabels.delete(question);
    this.#save();
    this.#options.optionsAdded?.(question, false);
    this.#options.log(
      `learn: the options the model added for ${question} came back too rarely to learn (under ${NOISE_COUNT} times in ${NOISE_LABELS} labels): taken for noise, ${question} is certified again`,
    );
  }

  /** Records when the traffic of each question changed in the folder. */
  #save(): void {
    const path = `${this.#options.dir}/${LEARN_FILES.changes}`;
    Deno.writeTextFile(
      `${path}.tmp`,
      JSON.stringify(Object.fromEntries(this.#changedAt)) + "\n",
    ).then(() => Deno.rename(`${path}.tmp`, path)).catch((e) =>
      this.#options.log(
        `learn: cannot record the traffic's change: ${e.message}`,
      )
    );
  }

  /**
   * Puts the holds in force for `table`, served now: a question whose added
   * options it has not all learned from `SETTLED_LABELS` labels (counted
   * when the retrain began: `counted`) stays held; the others are released.
   */
  settle(
    counted: ReadonlyMap<string, ReadonlyMap<string, number>>,
    table: Table,
  ): void {
    this.#held = new Set();
    for (const [question, added] of this.#added) {
      const q = table.byName.get(question);
      const before = counted.get(question);
      const settled = q !== undefined &&
        [...added.keys()].every((o) =>
          q.optionIndex.has(o) && (before?.get(o) ?? 0) >= SETTLED_LABELS
        );
      if (settled) {
        this.#added.delete(question);
        this.#since.delete(question);
      } else if (q !== undefined) {
        this.#options.optionsAdded?.(question, true);
        this.#held.add(question);
      }
    }
  }

  /** Ends the watch on the options taken for sampling once `table`, served now, has them. */
  settleWatch(table: Table): void {
    for (const question of this.#watch.questions()) {
      const q = table.byName.get(question);
      this.#watch.settle(question, (o) => q?.optionIndex.has(o) ?? false);
    }
  }
}

/** The answers of `question` its bundle was trained and calibrated on, from its report (0 when it does not say). */
function answersLearned(table: Table, question: string): number {
  const a = questionReportOf(bundleInfo(table), question)?.answers;
  return a === undefined ? 0 : a.train + a.calibration + a.test;
}
