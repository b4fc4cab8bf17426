/**
 * `eval`: how a bundle does on traces it has never seen.
 *
 * @module
 */

import { loadBundle } from "../bundle/files.ts";
import { assess, prepareText } from "../engine/answer.ts";
import { type DriftGuard, DriftMonitor, QUIET_GUARD } from "../engine/drift.ts";
import { TableState } from "../engine/state.ts";
import type { Table } from "../engine/table.ts";
import { disagrees } from "../engine/verdict.ts";
import { type Measurement, Meter } from "../train/meter.ts";
import type { TraceSet } from "../traces/mod.ts";
import { parseFlags, ProgressPrinter, UsageError, userPath } from "./common.ts";
import {
  readTraceFlags,
  TRACE_FLAGS,
  TRACE_FLAGS_USAGE,
} from "./trace_input.ts";

/** Usage text of `eval`. */
export const EVAL_USAGE =
  `Usage: eval --bundle DIR --traces FILE [--traces FILE ...] [--json] [--stream]

Answers every trace with the bundle, as serving would, and reports per question:
answers, certified share, disagreement among certified answers (with the upper
end of the two-sided 95% Clopper-Pearson interval) and accuracy over all answers.
Traces are read as train reads them. When the traces answer none of the
bundle's questions, eval fails (exit code 2).

Options:
  --bundle DIR               bundle folder (required)
${TRACE_FLAGS_USAGE}
  --json                     print the figures as JSON
  --stream                   also replay the traces in order through the online drift
                             guard, certify as a live server would, and report when it
                             raised and cleared the alarm (request index, 1-based, per
                             question)
  --quiet                    no progress on stderr (--json implies it)
  --help                     this text`;

/** Per-question figures of an evaluation: the meter's, and unlearned answers. */
export interface EvalFigures extends Measurement {
  /** Traces whose answer is an option the bundle never learned (counted as disagreements). */
  unlearned_answers: number;
}

/** When the online guard raised and cleared its alarm, by request index. */
export interface StreamEvents {
  raised: number[];
  cleared: number[];
}

/** Evaluates `table` on `traces`. With `stream`, certification also consults an online drift guard. */
export function evaluate(
  table: Table,
  traces: TraceSet,
  stream: boolean,
): {
  questions: Record<string, EvalFigures>;
  stream?: Record<string, StreamEvents>;
} {
  const monitor = stream ? new DriftMonitor(table.settings.drift) : undefined;
  const guard: DriftGuard = monitor ?? QUIET_GUARD;
  const state = new TableState(table);
  const asked = traces.questions.filter((q) => table.byName.has(q.name));
  const meters = asked.map(() => new Meter());
  const unlearned = asked.map(() => 0);
  const events: Record<string, StreamEvents> = {};
  const lastStatus = new Map<string, string>();
  for (const q of asked) {
    events[q.name] = { raised: [], cleared: [] };
    lastStatus.set(q.name, "quiet");
  }
  for (let i = 0; i < traces.texts.length; i++) {
    let prepared;
    for (let t = 0; t < asked.length; t++) {
      const q = asked[t]!;
      const label = q.labels[i]!;
      if (label < 0) continue;
      prepared ??= prepareText(table, state, traces.texts[i]!);
      const tq = table.byName.get(q.name)!;
      const a = assess(table, state, prepared, q.name, {}, guard).answer;
      const expected = q.options[label]!;
      meters[t]!.add(a.certified, disagrees(a, expected));
      if (!tq.optionIndex.has(expected)) unlearned[t]!++;
      if (monitor !== undefined) {
        const state = monitor.state(q.name);
        if (state.status !== lastStatus.get(q.name)) {
          const list = state.status === "alarmed"
            ? events[q.name]!.raised
            : events[q.name]!.cleared;
          list.push(state.observed);
          lastStatus.set(q.name, state.status);
        }
      }
    }
  }
  const questions: Record<string, EvalFigures> = {};
  asked.forEach((q, t) => {
    questions[q.name] = {
      ...meters[t]!.result(),
      unlearned_answers: unlearned[t]!,
    };
  });
  return stream ? { questions, stream: events } : { questions };
}

/** Runs `eval`; returns the exit code. */
export async function evalCommand(args: string[]): Promise<number> {
  const { values } = parseFlags("eval", args, {
    ...TRACE_FLAGS,
    bundle: { type: "string" },
    json: { type: "boolean", default: false },
    stream: { type: "boolean", default: false },
    quiet: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  });
  if (values.help) {
    console.log(EVAL_USAGE);
    return 0;
  }
  if (values.bundle === undefined) {
    throw new UsageError("eval needs --bundle DIR (see eval --help)");
  }
  if (values.traces === undefined) {
    throw new UsageError("eval needs --traces FILE (see eval --help)");
  }
  const printer = new ProgressPrinter({ quiet: values.quiet || values.json });
  const table = await loadBundle(userPath(values.bundle));
  const traces = await readTraceFlags("eval", values, printer);
  const skipped = traces.questions.filter((q) => !table.byName.has(q.name));
  if (skipped.length === traces.questions.length) {
    throw new RangeError(
      `nothing to evaluate: the traces answer none of the bundle's questions (bundle: ${
        table.questions.map((q) => q.name).join(", ")
      }; traces: ${traces.questions.map((q) => q.name).join(", ")})`,
    );
  }
  for (const q of skipped) {
    printer.note(
      `the bundle has no question "${q.name}"; its answers are skipped`,
    );
  }
  const started = performance.now();
  const result = evaluate(table, traces, values.stream);
  const seconds = (performance.now() - started) / 1000;
  if (seconds > 1) {
    printer.line(
      `evaluated ${traces.texts.length} traces in ${seconds.toFixed(2)}s`,
    );
  }
  if (values.json) {
    console.log(JSON.stringify(result, null, 2));
    return 0;
  }
  const pct = (x: number | null) =>
    x === null ? "n/a" : `${(x * 100).toFixed(1)}%`;
  for (const [name, f] of Object.entries(result.questions)) {
    console.log(
      `${name}: ${f.n} answers, ${f.certified} certified (${
        pct(f.coverage)
      }), ${f.disagreements} disagreements ` +
        `(${pct(f.disagreement)}, 95% CI up to ${
          pct(f.disagreement_upper)
        }), accuracy ${pct(f.accuracy)}` +
        (f.unlearned_answers > 0
          ? `, ${f.unlearned_answers} answers name options the bundle never learned`
          : ""),
    );
    const ev = result.stream?.[name];
    if (ev !== undefined) {
      console.log(
        `  drift alarm raised at request ${
          ev.raised.join(", ") || "(never)"
        }; cleared at ${ev.cleared.join(", ") || "(never)"}`,
      );
    }
  }
  return 0;
}
