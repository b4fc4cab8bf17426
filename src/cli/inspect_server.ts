/**
 * `inspect --server URL`: a running server's live certificate, per
 * question in words (from its `/v1/stats`), with the access token from a
 * file (`--token-file`) or an environment variable when one is set.
 *
 * @module
 */

import type { LiveStatsDocument } from "../http/live/stats.ts";
import { oneLine, UsageError } from "./common.ts";

/**
 * The access token to send: the content of `tokenFile` when given (trimmed;
 * throws `UsageError` naming the file when it cannot be read or is empty),
 * else the variable `tokenEnv` (undefined when unset, or not allowed).
 */
export async function serverToken(
  tokenEnv: string,
  tokenFile: string | undefined,
): Promise<string | undefined> {
  if (tokenFile !== undefined) {
    let text: string;
    try {
      text = await Deno.readTextFile(tokenFile);
    } catch (e) {
      throw new UsageError(
        `Cannot read token file ${tokenFile}: ${oneLine(e)}`,
      );
    }
    const token = text.trim();
    if (token === "") {
      throw new UsageError(`token file ${tokenFile} is empty`);
    }
    return token;
  }
  try {
    return Deno.env.get(tokenEnv)?.trim() || undefined;
  } catch {
    return undefined; // no --allow-env for it: ask without a token
  }
}

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
          ? " (give the access token with --token-file, or in SERVICE_PROXY_TOKEN or the variable --token-env names)"
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
