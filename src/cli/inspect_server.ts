/**
 * `inspect --server URL`: a running server's live certificate, per
 * question in words (from its `/v1/stats`), with the access token from an
 * environment variable when one is set.
 *
 * @module
 */

import type { LiveStatsDocument } from "../http/live/stats.ts";
import { oneLine, UsageError } from "./common.ts";

/**
 * The live section of the server at `url` (its `/v1/stats`). Throws
 * `UsageError` naming the URL when it cannot be read.
 */
export async function fetchLive(
  url: string,
  token: string | undefined,
): Promise<LiveStatsDocument | null> {
  let target: URL;
  try {
    target = new URL("v1/stats", url.endsWith("/") ? url : `${url}/`);
  } catch {
    throw new UsageError(
      `--server must be a URL such as http://127.0.0.1:8010: got "${url}"`,
    );
  }
  let res: Response;
  try {
    res = await fetch(target, {
      headers: token ? { "x-service-token": token } : {},
    });
  } catch (e) {
    throw new UsageError(`Cannot reach ${target}: ${oneLine(e)}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new UsageError(
      `${target} answered ${res.status}${
        res.status === 401
          ? " (set the access token in SERVICE_PROXY_TOKEN or --token-env)"
          : ""
      }`,
    );
  }
  const stats = await res.json() as { live?: LiveStatsDocument };
  return stats.live ?? null;
}

/** The live section as lines of plain words. */
export function liveLines(
  url: string,
  live: LiveStatsDocument | null,
): string[] {
  if (live === null) {
    return [`server ${url}: no live certificate (an older version)`];
  }
  if (!live.enabled) {
    return [`server ${url}: live certificate off (serve --audit-rate 0)`];
  }
  return [
    `server ${url}: audits ${
      live.audit_rate * 100
    }% of certified answers; ${live.pending_audits} waiting (at most ${live.pending_capacity}, for ${live.audit_ttl_s} s), ${live.audits_dropped} dropped unanswered`,
    ...Object.entries(live.questions).map(([name, q]) =>
      `- ${name}: ${q.summary}; feedback on ${q.feedback} of ${q.uncertified_decisions} uncertified answers`
    ),
  ];
}
