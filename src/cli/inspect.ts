/**
 * `inspect`: what a bundle holds.
 *
 * @module
 */

import { loadBundle } from "../bundle/mod.ts";
import {
  type Calibration,
  type DriftSettings,
  type FeaturizerSettings,
  questionThresholds,
  type Table,
  type TableSettings,
} from "../engine/mod.ts";
import type {
  LeakageReport,
  Measurement,
  QuestionReport,
  SplitReport,
} from "../train/mod.ts";
import { oneLine, parseFlags, UsageError, userPath } from "./common.ts";
import {
  fetchLive,
  learnLines,
  liveLines,
  resetLine,
  resetLive,
  serverToken,
  tokenFromFile,
} from "./inspect_server.ts";
import {
  leakageInWords,
  testInWords,
  thresholdInWords,
  ZERO_THRESHOLD,
} from "./report_words.ts";
import { bundleInfo, questionReportOf, splitInWords } from "../train/mod.ts";
import { percent } from "../format.ts";

/** Usage text of `inspect`. */
export const INSPECT_USAGE = `Usage: inspect --bundle DIR [--json]
       inspect --server URL [--token-env NAME | --token-file PATH] [--json]
       inspect --server URL --live-reset [--question Q] [--feedback-token-file PATH]
               [--token-env NAME | --token-file PATH]

Shows what a bundle holds: format and tool versions, featurizer, settings
(minimum radius, new options, forced thresholds, drift guard), and per question
its kind, options, temperature, threshold and held-out test figures.
With --server, shows a running server's live certificate instead: per
question the threshold in force and why, audits, disagreements, the live
rate and its bound, and the check of the feedback against the bundle's
calibration (an alarm names an echoing or lying proxy).
With --live-reset, starts the live evidence of question Q (every question
without --question) afresh on that server: counts, threshold in force and
feedback alarms; on a fleet with a live store, on every replica. A server
started with --feedback-token-file resets only with that feedback token,
never with the access token; one without takes the access token.

Options:
  --bundle DIR       bundle folder
  --server URL       a running server (its /v1/stats)
  --token-env NAME   environment variable holding the server's access token
                     (default SERVICE_PROXY_TOKEN)
  --token-file PATH  file holding the server's access token (as serve
                     --token-file); takes precedence over --token-env
  --live-reset       reset the server's live evidence (POST /v1/live/reset)
  --feedback-token-file PATH  with --live-reset: file holding the server's
                     feedback token (as serve --feedback-token-file), sent
                     with the reset instead of the access token
  --question Q       with --live-reset: only this question
  --json             print as JSON
  --help             this text`;

/** What `inspect --json` prints about one question. */
export interface InspectedQuestion {
  name: string;
  kind: string;
  options: string[];
  temperature: number;
  calibration: Calibration;
  /**
   * The threshold `serve` puts in force (with its second tier, the
   * two-tier rule's), the table's own, and the two-tier rule's (null
   * without a second tier).
   */
  thresholds: {
    in_force: number | null;
    table: number | null;
    two_tier: number | null;
  };
  calibration_texts: number;
  /** What the fit chose; null when the bundle's report does not say. */
  model: QuestionReport["model"] | null;
  /** Held-out test figures (an older report may lack some); null when absent. */
  test: Partial<Measurement> | null;
  leakage: LeakageReport | null;
  advice: string | null;
}

/** What `inspect --json` prints about a bundle. */
export interface BundleDescription {
  format: string | undefined;
  format_version: number | undefined;
  tool_version: string | undefined;
  rows: number;
  featurizer: FeaturizerSettings;
  settings: TableSettings;
  drift_guard: DriftSettings & { note: string };
  split: SplitReport | null;
  questions: InspectedQuestion[];
}

/** A plain summary of a loaded table. */
export function describe(table: Table): BundleDescription {
  const info = bundleInfo(table);
  return {
    format: info.format,
    format_version: info.format_version,
    tool_version: info.tool_version,
    rows: table.rowCount,
    featurizer: table.featurizer,
    settings: table.settings,
    drift_guard: {
      ...table.settings.drift,
      note:
        "online guard starts quiet at every server start; see /v1/stats for its live state",
    },
    split: info.report?.split ?? null,
    questions: table.questions.map((q) => {
      const r = questionReportOf(info, q.name);
      return {
        name: q.name,
        kind: q.kind,
        options: q.options,
        temperature: q.temperature,
        calibration: q.calibration,
        thresholds: (({ inForce, table, twoTier }) => ({
          in_force: inForce,
          table,
          two_tier: twoTier,
        }))(questionThresholds(q)),
        calibration_texts: q.drift.scores.length,
        model: r?.model ?? null,
        test: r?.test ?? null,
        leakage: r?.leakage ?? null,
        advice: r?.calibration?.advice ?? null,
      };
    }),
  };
}

/** What the out-of-scope rule of a table's questions judges, in words. */
function scopeInWords(table: Table): string {
  const scores = new Set(
    table.questions.filter((q) => q.drift.scope.values.length > 0).map((q) =>
      q.drift.scope.score === "spread"
        ? "answer spread (choices of three or more)"
        : "energy (evidence for any option; choices of three or more)"
    ),
  );
  return scores.size === 0 ? "score (no question has one)" : [...scores].join(
    " or ",
  );
}

/** Runs `inspect`; returns the exit code. */
export async function inspectCommand(args: string[]): Promise<number> {
  const { values } = parseFlags("inspect", args, {
    bundle: { type: "string" },
    server: { type: "string" },
    "token-env": { type: "string", default: "SERVICE_PROXY_TOKEN" },
    "token-file": { type: "string" },
    "live-reset": { type: "boolean", default: false },
    "feedback-token-file": { type: "string" },
    question: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  });
  if (values.help) {
    console.log(INSPECT_USAGE);
    return 0;
  }
  if (values.server !== undefined) {
    const token = await serverToken(
      values["token-env"],
      userPath(values["token-file"]),
    );
    const feedbackFile = userPath(values["feedback-token-file"]);
    if (values["live-reset"]) {
      const reply = await resetLive(
        values.server,
        feedbackFile === undefined
          ? token
          : await tokenFromFile(feedbackFile, "feedback token file"),
        values.question ?? null,
      );
      console.log(resetLine(values.server, reply));
    } else if (values.question !== undefined) {
      throw new UsageError("--question goes with --live-reset");
    } else if (feedbackFile !== undefined) {
      throw new UsageError("--feedback-token-file goes with --live-reset");
    }
    let live;
    try {
      live = await fetchLive(values.server, token);
    } catch (e) {
      // The reset is done; the statistics may need the access token,
      // which a caller holding the feedback token alone lacks.
      if (!values["live-reset"]) throw e;
      console.error(`warning: reset done, but ${oneLine(e)}`);
      return 0;
    }
    if (values.json) {
      console.log(JSON.stringify(
        live.learn === null ? live.live : { ...live.live, learn: live.learn },
        null,
        2,
      ));
    } else {
      console.log(
        [
          ...liveLines(values.server, live.live, live.since),
          ...(live.learn === null ? [] : learnLines(live.learn)),
        ].join("\n"),
      );
    }
    return 0;
  }
  if (values["live-reset"]) {
    throw new UsageError("--live-reset needs --server URL");
  }
  if (values.bundle === undefined) {
    throw new UsageError(
      "inspect needs --bundle DIR or --server URL (see inspect --help)",
    );
  }
  const bundle = userPath(values.bundle);
  const table = await loadBundle(bundle);
  const d = describe(table);
  if (values.json) {
    console.log(JSON.stringify(d, null, 2));
    return 0;
  }
  console.log(
    `bundle ${bundle}: format ${d.format} v${d.format_version}, tool ${d.tool_version}, ${table.rowCount} rows`,
  );
  const f = table.featurizer;
  console.log(
    `featurizer: 2^${f.buckets_log2} buckets, char n-grams ${f.char_ngram_min}-${f.char_ngram_max}, words capped at ${f.max_word_length}, bigrams ${
      f.bigrams ? "on" : "off"
    }`,
  );
  const s = table.settings;
  console.log(
    `settings: min radius ${s.min_radius} (exposed), new options ${
      s.serve_new_options ? "served" : "deferred"
    }, forced thresholds ${
      Object.entries(s.force_thresholds).map(([q, t]) => `${q}=${t}`).join(
        ", ",
      ) || "none"
    }`,
  );
  console.log(
    `drift guard: single texts with drift p <= ${s.drift.single_p} or over ${
      s.drift.max_novelty * 100
    }% unseen features not certified; online alarm at evidence ${
      2 / s.drift.delta
    } (delta ${s.drift.delta}), cleared after ${s.drift.rearm_window} normal requests; quiet at start`,
  );
  console.log(
    s.drift.scope_p > 0
      ? `out-of-scope rule: single texts whose ${
        scopeInWords(table)
      } has p <= ${s.drift.scope_p} against the calibration texts are not certified (costs at most ${
        s.drift.scope_p * 100
      }% of texts like the calibration ones)`
      : "out-of-scope rule: off",
  );
  if (d.split !== null) {
    console.log(`split: ${splitInWords(d.split)}`);
  }
  for (const q of d.questions) {
    const t = q.test ?? {};
    console.log(
      `- ${q.name} (${q.kind}, ${q.options.length} options): ${q.calibration.status}, ${
        thresholdInWords(table.byName.get(q.name)!, true)
      } at alpha ${q.calibration.alpha}, delta ${q.calibration.delta}; test: ${
        percent(t.coverage, "none")
      } certified, ${
        typeof t.disagreement === "number"
          ? `${percent(t.disagreement, "none")} disagreement (CI up to ${
            percent(t.disagreement_upper, "none")
          })`
          : "so no disagreement rate to measure"
      }, accuracy ${percent(t.accuracy, "none")}`,
    );
    if (q.calibration.threshold === 0) {
      console.log(`  threshold 0: ${ZERO_THRESHOLD}`);
    }
    const test = typeof t.n === "number" &&
        typeof t.certified === "number" &&
        typeof t.disagreement === "number" &&
        typeof t.disagreement_upper === "number"
      ? testInWords(
        {
          n: t.n,
          certified: t.certified,
          disagreement: t.disagreement,
          disagreement_lower: t.disagreement_lower ?? null,
          disagreement_upper: t.disagreement_upper,
        },
        q.calibration.alpha,
        q.calibration.delta,
      )
      : null;
    if (test !== null) console.log(`  ${test}`);
    if (q.calibration.reason) {
      console.log(`  uncalibrated because ${q.calibration.reason}`);
    }
    if (q.advice) console.log(`  what would help: ${q.advice}`);
    if (q.leakage) console.log(`  leakage check: ${leakageInWords(q.leakage)}`);
  }
  return 0;
}
