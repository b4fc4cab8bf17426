/**
 * `inspect --server URL`: a running server's live certificate, per
 * question in words (from its `/v1/stats`), with the access token from a
 * file (`--token-file`) or an environment variable when one is set; and
 * `--live-reset`, with the feedback token (`--feedback-token-file`) when
 * the server has one.
 *
 * @module
 */

import type {
  LearnStats,
  LiveResetReply,
  LiveStatsDocument,
} from "../openapi/mod.ts";
import { oneLine, UsageError } from "./common.ts";
import { needInWords } from "../learn/mod.ts";

/** A rate as a percent, as few digits as it needs: 2%, 7.3%. */
const percentOf = (r: number) => `${Math.round(r * 1000) / 10}%`;

/** `path` on the server at `url`; throws `UsageError` for a URL that is not one. */
function routeOf(url: string, path: string): URL {
  try {
    return new URL(path, url.endsWith("/") ? url : `${url}/`);
  } catch {
    throw new UsageError(
      `--server must be a URL such as http://127.0.0.1:8010: got "${url}"`,
    );
  }
}

/** What a 401 asks for, by the credential the route takes. */
const UNAUTHORIZED_HINT = {
  access:
    " (give the access token with --token-file, or in SERVICE_PROXY_TOKEN or the variable --token-env names)",
  reset:
    " (a server with --feedback-token-file resets only with that feedback token: give it with --feedback-token-file; without one, the access token resets: --token-file, or SERVICE_PROXY_TOKEN)",
};

/** Asks `target`; throws `UsageError` naming it when it cannot be reached or does not answer 200 (with the server's message). */
async function ask(
  target: URL,
  token: string | undefined,
  init: RequestInit = {},
  credential: keyof typeof UNAUTHORIZED_HINT = "access",
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(target, {
      ...init,
      headers: {
        ...(token ? { "x-service-token": token } : {}),
        ...(init.body === undefined
          ? {}
          : { "content-type": "application/json" }),
      },
    });
  } catch (e) {
    throw new UsageError(`Cannot reach ${target}: ${oneLine(e)}`);
  }
  if (!res.ok) {
    const text = await res.text().catch(() => "");
    let said = "";
    try {
      const error = (JSON.parse(text) as { error?: unknown }).error;
      said = typeof error === "string" ? error : "";
    } catch {
      said = "";
    }
    throw new UsageError(
      `${target} answered ${res.status}${
        res.status === 401
          ? UNAUTHORIZED_HINT[credential]
          : said === ""
          ? ""
          : `: ${said}`
      }`,
    );
  }
  return res;
}

/**
 * The token in `file` (trimmed); throws `UsageError` naming the file when
 * it cannot be read or is empty.
 */
export async function tokenFromFile(
  file: string,
  what = "token file",
): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    throw new UsageError(`Cannot read ${what} ${file}: ${oneLine(e)}`);
  }
  const token = text.trim();
  if (token === "") throw new UsageError(`${what} ${file} is empty`);
  return token;
}

/**
 * The access token to send: the content of `tokenFile` when given (trimmed;
 * throws `UsageError` naming the file when it cannot be read or is empty),
 * else the variable `tokenEnv` (undefined when unset, or not allowed).
 */
export async function serverToken(
  tokenEnv: string,
  tokenFile: string | undefined,
): Promise<string | undefined> {
  if (tokenFile !== undefined) return await tokenFromFile(tokenFile);
  try {
    return Deno.env.get(tokenEnv)?.trim() || undefined;
  } catch {
    return undefined; // no --allow-env for it: ask without a token
  }
}

/**
 * The live section of the server at `url` (its `/v1/stats`), and its
 * learner's when it learns. Throws `UsageError` naming the URL when it
 * cannot be read.
 */
export async function fetchLive(
  url: string,
  token: string | undefined,
): Promise<
  {
    live: LiveStatsDocument | null;
    learn: LearnStats | null;
    since: string | undefined;
  }
> {
  const res = await ask(routeOf(url, "v1/stats"), token);
  const stats = await res.json() as {
    live?: LiveStatsDocument;
    learn?: LearnStats;
    bundle?: { loaded_at?: string };
  };
  return {
    live: stats.live ?? null,
    learn: stats.learn ?? null,
    // The live counts run from the bundle's start (evidence a restart
    // resumed from the feedback log included).
    since: stats.bundle?.loaded_at,
  };
}

/**
 * A learning service's learner as lines of plain words: labels, the next
 * retrain and when, what would help, then each retrain with its passes
 * beneath it (so the totals read as the lines count).
 */
export function learnLines(learn: LearnStats): string[] {
  const shown = new Set(learn.history.map((r) => r.retrain ?? -1));
  const eta = learn.next_retrain_in_s === null ||
      learn.next_retrain_in_s === undefined
    ? ""
    : ` (in about ${
      Math.max(1, Math.round(learn.next_retrain_in_s / 60))
    } min at ${learn.labels_per_s} labels a second)`;
  return [
    `learning in ${learn.dir}: ${learn.labels} labels, next retrain at ${learn.next_retrain_at}${eta}${
      learn.running ? " (one runs now)" : ""
    }; ${learn.retrains} retrains, ${learn.swaps} swapped in${
      learn.history.length === 0
        ? ""
        : shown.size < learn.retrains
        ? `; the last ${shown.size} below, with their ${learn.history.length} passes`
        : `; below, with their ${learn.history.length} passes`
    }`,
    ...(learn.fleet === undefined ? [] : [
      `  fleet: ${
        learn.learner
          ? `this replica (${learn.fleet.replica}) learns, lease ${learn.fleet.lease}`
          : learn.fleet.learner === null
          ? `no learner has written for 30 s; this is ${learn.fleet.replica}`
          : `${learn.fleet.learner} learns (lease ${learn.fleet.lease}); this is ${learn.fleet.replica}`
      }; ${learn.fleet.outbox.waiting} chunk(s) wait for the store${
        Object.entries(learn.fleet.replicas).map(([r, x]) =>
          `; ${r}: ${x.labels} labels, ${x.picks_answered} of ${x.picked} picks answered`
        ).join("")
      }`,
    ]),
    ...Object.entries(learn.advice ?? {}).map(([q, n]) =>
      `  ${q}: what would help: ${needInWords(n)}`
    ),
    ...(learn.held.length === 0 ? [] : [
      `  held (the model answers options not learned yet): ${
        learn.held.join(", ")
      }`,
    ]),
    ...(learn.unlearned.length === 0 ? [] : [
      `  not learned yet: ${learn.unlearned.join(", ")}`,
    ]),
    ...Object.entries(learn.tests ?? {}).map(([q, t]) =>
      `  ${q}: ${t.tests} calibration ${
        t.tests === 1 ? "test" : "tests"
      } run, ${t.spent.toPrecision(2)} of delta spent; the next at ${
        t.next_level.toPrecision(2)
      }`
    ),
    ...learn.history.flatMap((r, i) => [
      ...(r.retrain !== undefined && learn.history[i - 1]?.retrain !== r.retrain
        ? [
          `  retrain ${r.retrain}: ${
            learn.history.filter((p) => p.retrain === r.retrain).length
          } ${
            learn.history.filter((p) => p.retrain === r.retrain).length === 1
              ? "pass"
              : "passes"
          }`,
        ]
        : []),
      `    ${r.ended}: ${
        r.retrain === undefined
          ? ""
          : r.encoder
          ? "the encoder's pass, "
          : "the table's pass, "
      }${r.labels} labels, ${r.seconds.toFixed(1)} s, ${
        r.swapped ? "swapped in" : "not swapped in"
      }${
        Object.keys(r.failures ?? {}).length === 0
          ? ""
          : ` [${
            Object.entries(r.failures!).map(([q, why]) => `${q}: ${why}`).join(
              ", ",
            )
          }]`
      }: ${r.error ?? r.reason}`,
    ]),
  ];
}

/**
 * Resets the live evidence of `question` (every question when null) on the
 * server at `url` (`POST /v1/live/reset`; on a fleet with a live store,
 * every replica), presenting `token`: the feedback token of a server with
 * one, else its access token. Throws `UsageError` with the server's reason
 * when it refuses.
 */
export async function resetLive(
  url: string,
  token: string | undefined,
  question: string | null,
): Promise<LiveResetReply> {
  const res = await ask(routeOf(url, "v1/live/reset"), token, {
    method: "POST",
    body: JSON.stringify(question === null ? {} : { question }),
  }, "reset");
  return await res.json() as LiveResetReply;
}

/** What a reset did, in one line. */
export function resetLine(url: string, reply: LiveResetReply): string {
  return `reset the live evidence of ${
    reply.reset.map((n) => `"${n}"`).join(", ")
  } on ${url}${
    reply.fleet ? " and, through the live store, on every replica" : ""
  }: each starts afresh at the bundle's threshold`;
}

/** The live section as lines of plain words. */
export function liveLines(
  url: string,
  live: LiveStatsDocument | null,
  since?: string,
): string[] {
  if (live === null) {
    return [`server ${url}: no live certificate (an older version)`];
  }
  if (!live.enabled) {
    return [`server ${url}: live certificate off (serve --audit-rate 0)`];
  }
  const rates = Object.entries(live.rates ?? {});
  const differ = rates.some(([, r]) => r !== live.audit_rate);
  return [
    `server ${url}: ${
      differ
        ? `picks each decision at its question's rate (${
          rates.map(([q, r]) => `${q} ${percentOf(r)}`).join(", ")
        }; ${percentOf(live.audit_rate)} for any other)`
        : `audits ${percentOf(live.audit_rate)} of certified answers`
    }; ${live.pending_audits} waiting (at most ${live.pending_capacity}, for ${live.audit_ttl_s} s), ${live.audits_dropped} dropped unanswered`,
    ...(live.feedback_without_ids === undefined ||
        live.feedback_without_ids.items === 0
      ? []
      : [
        `  feedback without the ids its answers carried: ${live.feedback_without_ids.items} items; each picked one (about ${
          Math.max(1, Math.round(live.feedback_without_ids.picks_expected))
        } so far) counts as a disagreement in the next calibration: send back each answer's feedback_id`,
      ]),
    ...Object.entries(live.questions).flatMap(([name, q]) => [
      `- ${name}: ${q.summary}; the live certificate counted feedback on ${q.feedback} of the ${q.uncertified_decisions} answers its threshold alone left uncertified${
        since === undefined ? "" : ` (since ${since})`
      }`,
      ...(q.feedback_check === null
        ? [
          live.semantic_questions?.[name] !== undefined
            ? "  feedback check: not run for a question served with its second tier (the bundle's calibration bands describe the table alone); its threshold is never made more lenient than the bundle's"
            : "  feedback check: none (a bundle without calibration bands; retrain to enable it and lenient moves)",
        ]
        : q.feedback_check.status === "suspect"
        ? [] // the summary names the alarm
        : [`  feedback check: ${q.feedback_check.summary}`]),
    ]),
    ...(live.resets.total === 0 ? [] : [
      `resets: ${live.resets.total}, last ${live.resets.last.at(-1)!.at} (${
        live.resets.last.at(-1)!.question ?? "every question"
      })`,
    ]),
  ];
}
