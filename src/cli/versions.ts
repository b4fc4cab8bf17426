/**
 * `versions` and `rollback`: the versions `train --out DIR` keeps beside
 * `DIR` (`DIR.v-ID`, see `src/bundle/swap.ts`), listed with their figures,
 * and pointing `DIR` back at one of them by the same one-rename swap a new
 * version uses (a server with `--watch` follows).
 *
 * @module
 */

import {
  listVersions,
  loadBundle,
  pointTo,
  type VersionFolder,
} from "../bundle/mod.ts";
import { questionThresholds } from "../engine/mod.ts";
import { bundleIdOf, shownBundleId } from "../live/mod.ts";
import { bundleInfo, questionReportOf } from "../train/mod.ts";
import { oneLine, parseFlags, UsageError, userPath } from "./common.ts";
import { percent } from "../format.ts";
import { fleetRollback, fleetVersions } from "./fleet_versions.ts";

/** Usage text of `versions`. */
export const VERSIONS_USAGE = `Usage: versions --bundle DIR [--json]
       versions --live-store URL [--json]

Lists the versions of the bundle DIR that train --out DIR kept (DIR.v-ID beside
it; train --keep N says how many), newest first, the one DIR points to marked
with *: its bundle id (the first 12 hex digits of the bundle_id /v1/health and
/v1/stats show), when it was written, and per question its threshold in force
and what the held-out test part said (certified share, disagreement).

With --live-store, the bundles a learning fleet (serve --learn DIR
--live-store URL) keeps in its store instead, the one in force marked.

Options:
  --bundle DIR      the bundle link train --out wrote (--out DIR works too)
  --live-store URL  a learning fleet's store (redis://HOST:PORT[/DB])
  --json            print as JSON
  --help            this text`;

/** Usage text of `rollback`. */
export const ROLLBACK_USAGE = `Usage: rollback --bundle DIR [--to ID]
       rollback --live-store URL [--to ID]

Points the bundle link DIR back at one of its kept versions (versions --bundle
DIR lists them) by one rename, as train swaps a new version in: a reader sees
one version or the other, never none, and a server with --watch reloads it (any
server reloads it on SIGHUP). The version is loaded and checked first; a
damaged one is refused and DIR left as it was. No version is removed.

With --live-store, for a learning fleet (serve --learn DIR --live-store URL):
the store makes one of the bundles it keeps the one in force again, and every
replica swaps it in within seconds. The learner's next bundle replaces it.

Options:
  --bundle DIR      the bundle link train --out wrote (--out DIR works too)
  --live-store URL  a learning fleet's store (redis://HOST:PORT[/DB])
  --to ID           the version to go back to: its bundle id (as versions
                    shows it), its folder's id (DIR.v-ID), or a unique
                    beginning of either (default: the newest version written
                    before the one in force)
  --help            this text`;

/** One question of a version, as its bundle's report says. */
export interface VersionQuestion {
  /** The threshold `serve` puts in force (with a second tier, the two-tier rule's); null when uncalibrated. */
  threshold: number | null;
  /** The table's own calibrated threshold, when the question has a second tier (absent without one). */
  table_threshold?: number | null;
  /** The held-out test part: answers, certified share, disagreement among certified. */
  test: {
    n: number;
    coverage: number | null;
    disagreement: number | null;
    /** The 95% Clopper-Pearson interval of the disagreement among the certified test answers. */
    disagreement_lower: number | null;
    disagreement_upper: number | null;
  } | null;
}

/** One kept version as `versions --json` prints it. */
export interface VersionDocument {
  id: string;
  path: string;
  /** When its files were written (ISO 8601). */
  written: string;
  current: boolean;
  /** The manifest checksum (as `/v1/health` shows it); null when it does not load. */
  bundle_id: string | null;
  questions: Record<string, VersionQuestion>;
  /** Why it does not load; absent when it does. */
  error?: string;
}

/** A kept version, loaded and described (a damaged one with its error). */
export async function describeVersion(
  v: VersionFolder,
): Promise<VersionDocument> {
  const base = {
    id: v.id,
    path: v.path,
    written: new Date(v.written).toISOString(),
    current: v.current,
  };
  try {
    const table = await loadBundle(v.path);
    const questions: Record<string, VersionQuestion> = {};
    for (const q of table.questions) {
      const t = questionReportOf(bundleInfo(table), q.name)?.test;
      const th = questionThresholds(q);
      questions[q.name] = {
        threshold: th.inForce,
        ...(th.twoTier === null ? {} : { table_threshold: th.table }),
        test: t === undefined ? null : {
          n: t.n ?? 0,
          coverage: t.coverage ?? null,
          disagreement: t.disagreement ?? null,
          disagreement_lower: t.disagreement_lower ?? null,
          disagreement_upper: t.disagreement_upper ?? null,
        },
      };
    }
    return { ...base, bundle_id: bundleIdOf(table), questions };
  } catch (e) {
    return { ...base, bundle_id: null, questions: {}, error: oneLine(e) };
  }
}

/** The versions as lines of plain words. */
export function versionLines(
  dir: string,
  versions: readonly VersionDocument[],
): string[] {
  const lines = [
    `bundle ${dir}: ${versions.length} version${
      versions.length === 1 ? "" : "s"
    } kept, newest first (* the one in force; each by its bundle id, the beginning of the bundle_id /v1/health shows)`,
  ];
  for (const v of versions) {
    lines.push(
      `${v.current ? "*" : " "} ${
        v.bundle_id === null ? "(unreadable)" : shownBundleId(v.bundle_id)
      }  written ${
        v.written.replace("T", " ").replace(/\.\d+Z$/, "Z")
      }  ${v.path}`,
    );
    if (v.error !== undefined) {
      lines.push(`    does not load: ${v.error}`);
      continue;
    }
    for (const [name, q] of Object.entries(v.questions)) {
      const t = q.test;
      const test = t === null || t.n === 0 || t.coverage === null
        ? "no test answers"
        : `test ${percent(t.coverage)} certified ${
          t.disagreement === null
            ? "(so no disagreement rate to measure)"
            : `at ${percent(t.disagreement)} disagreement${
              intervalWords(t.disagreement_lower, t.disagreement_upper)
            }`
        } (${t.n} answers)`;
      const f = (x: number | null) => x === null ? "none" : x.toFixed(4);
      lines.push(
        `    ${name}: ${
          q.table_threshold === undefined
            ? `threshold ${
              q.threshold === null ? "none (uncalibrated)" : f(q.threshold)
            }`
            : `threshold in force ${
              f(q.threshold)
            } (the two-tier rule's, for both tiers; the table's own: ${
              f(q.table_threshold)
            })`
        }, ${test}`,
      );
    }
  }
  return lines;
}

/** The bundle link a command names: `--bundle DIR` or `--out DIR`; throws `UsageError` without one. */
function bundleFlag(
  command: string,
  values: { bundle?: string | undefined; out?: string | undefined },
): string {
  const dir = values.bundle ?? values.out;
  if (dir === undefined || dir.trim() === "") {
    throw new UsageError(
      `${command} needs --bundle DIR (see ${command} --help)`,
    );
  }
  return userPath(dir.replace(/\/+$/, "") || dir);
}

/** The kept versions of `dir`; throws `UsageError` when there are none. */
async function versionsOf(dir: string): Promise<VersionFolder[]> {
  let versions: VersionFolder[];
  try {
    versions = await listVersions(dir);
  } catch (e) {
    throw new UsageError(`Cannot list the versions of ${dir}: ${oneLine(e)}`);
  }
  if (versions.length === 0) {
    throw new UsageError(
      `${dir} has no kept versions (DIR.v-ID beside it): train --out ${dir} writes them`,
    );
  }
  return versions;
}

/** Runs `versions`; returns the exit code. */
export async function versionsCommand(args: string[]): Promise<number> {
  const { values } = parseFlags("versions", args, {
    bundle: { type: "string" },
    out: { type: "string" },
    "live-store": { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  });
  if (values.help) {
    console.log(VERSIONS_USAGE);
    return 0;
  }
  if (values["live-store"] !== undefined) {
    return await fleetVersions(values["live-store"], values.json);
  }
  const dir = bundleFlag("versions", values);
  const described = await Promise.all(
    (await versionsOf(dir)).map(describeVersion),
  );
  if (values.json) {
    console.log(JSON.stringify({ bundle: dir, versions: described }, null, 2));
  } else {
    console.log(versionLines(dir, described).join("\n"));
  }
  return 0;
}

/**
 * The version `to` names among `versions` (its folder id, its bundle id
 * from `bundleIds` by path, or a unique beginning of either);
 * without `to`, the newest one written before the one in force. Throws
 * `UsageError` saying which ids there are.
 */
export function chooseVersion(
  versions: readonly VersionFolder[],
  to: string | undefined,
  bundleIds: ReadonlyMap<string, string> = new Map(),
): VersionFolder {
  const idOf = (v: VersionFolder) => {
    const b = bundleIds.get(v.path);
    return b === undefined ? v.id : shownBundleId(b);
  };
  const ids = versions.map(idOf).join(", ");
  if (to === undefined) {
    const at = versions.findIndex((v) => v.current);
    const earlier = at < 0 ? versions[0] : versions[at + 1];
    if (earlier === undefined) {
      throw new UsageError(
        `no version older than the one in force to roll back to (versions: ${ids}); give --to ID`,
      );
    }
    return earlier;
  }
  const wanted = to.trim().toLowerCase();
  const matches = versions.filter((v) =>
    v.id.startsWith(wanted) || bundleIds.get(v.path)?.startsWith(wanted)
  );
  if (wanted === "" || matches.length === 0) {
    throw new UsageError(`no kept version "${to}" (versions: ${ids})`);
  }
  if (matches.length > 1) {
    throw new UsageError(
      `--to ${to} names more than one version (${
        matches.map(idOf).join(", ")
      }): give more of the id`,
    );
  }
  return matches[0]!;
}

/** Runs `rollback`; returns the exit code. */
export async function rollbackCommand(args: string[]): Promise<number> {
  const { values } = parseFlags("rollback", args, {
    bundle: { type: "string" },
    out: { type: "string" },
    "live-store": { type: "string" },
    to: { type: "string" },
    help: { type: "boolean", default: false },
  });
  if (values.help) {
    console.log(ROLLBACK_USAGE);
    return 0;
  }
  if (values["live-store"] !== undefined) {
    return await fleetRollback(values["live-store"], values.to);
  }
  const dir = bundleFlag("rollback", values);
  const versions = await versionsOf(dir);
  const bundleIds = new Map<string, string>();
  for (const d of await Promise.all(versions.map(describeVersion))) {
    if (d.bundle_id !== null) bundleIds.set(d.path, d.bundle_id);
  }
  const chosen = chooseVersion(versions, values.to, bundleIds);
  if (chosen.current) {
    console.log(`${dir} already points to ${chosen.path}; nothing changed`);
    return 0;
  }
  // A damaged version is refused before the link moves.
  await loadBundle(chosen.path);
  const before = versions.find((v) => v.current);
  try {
    await pointTo(dir, chosen.path);
  } catch (e) {
    throw new UsageError(`Cannot roll ${dir} back: ${oneLine(e)}`);
  }
  console.log(
    `${dir} now points to ${chosen.path} (written ${
      new Date(chosen.written).toISOString()
    })${
      before === undefined ? "" : `; it pointed to ${before.path}, still kept`
    }. A server with --watch reloads it; any other, on SIGHUP`,
  );
  return 0;
}

/**
 * The 95% interval of a test part's disagreement, in words, and whether a
 * sample that small can tell it from the promise: ", 95% interval 2.1-11.0%:
 * too few answers to read".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { intervalWords } from "./versions.ts";
 * assert.equal(intervalWords(0.031, 0.101), " (95% interval 3.1%-10.1%: too wide to tell from alpha)");
 * assert.equal(intervalWords(0.01, 0.02), " (95% interval 1.0%-2.0%)");
 * assert.equal(intervalWords(null, null), "");
 * ```
 */
export function intervalWords(
  lower: number | null | undefined,
  upper: number | null | undefined,
): string {
  if (lower == null || upper == null) return "";
  // Wider than 5 points: a single test part's figure cannot say whether
  // the disagreement is above or below a usual alpha.
  const wide = upper - lower > 0.05;
  return ` (95% interval ${percent(lower)}-${percent(upper)}${
    wide ? ": too wide to tell from alpha" : ""
  })`;
}
