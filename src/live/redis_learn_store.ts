/**
 * The fleet learning's store on Redis or Valkey (`serve --learn DIR
 * --live-store URL`; the contract is `learn_store.ts`). Every write that
 * must be checked and applied together is one server-side script.
 *
 * Keys, all in one hash slot: `dtable:learn:{fleet}:pool` (a stream: fields
 * `src`, `rep`, `seq`, `kind`, `text`; trimmed to about `POOL_MAX_CHUNKS`),
 * `...:seqs` (a hash: each source's last chunk number), `...:lease` (JSON
 * `{"h": holder, "f": fence}`, expiring), `...:fence` and `...:version`
 * (counters), `...:current` (the bundle in force, JSON), `...:kept` (a
 * list of the bundles kept, newest first), `...:blob:ID` (a kept bundle's
 * files), `...:status` (the learner's status) and `...:key` (the fleet's
 * decision-id key). A change of the bundle in force is announced on the
 * channel `dtable:learn:bundle`.
 *
 * @module
 */

import { RedisLink } from "./redis_link.ts";
import {
  type Chunk,
  type ChunkKind,
  type LearnStore,
  type Lease,
  POOL_MAX_CHUNKS,
  type PoolRead,
  type PublishedBundle,
} from "./learn_store.ts";

/** The channel a change of the fleet's bundle is announced on. */
export const BUNDLE_CHANNEL = "dtable:learn:bundle";

const PREFIX = "dtable:learn:{fleet}:";
const key = (name: string) => `${PREFIX}${name}`;

const APPEND_SCRIPT = `
for i = 4, #ARGV, 3 do
  local seq = tonumber(ARGV[i])
  if seq == nil or seq < 1 or seq ~= math.floor(seq) then
    return redis.error_reply('ERR malformed chunk number ' .. tostring(ARGV[i]))
  end
  if ARGV[i + 1] ~= 'log' and ARGV[i + 1] ~= 'history' then
    return redis.error_reply('ERR malformed chunk kind')
  end
end
local last = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
for i = 4, #ARGV, 3 do
  local seq = tonumber(ARGV[i])
  if seq > last then
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*',
      'src', ARGV[1], 'rep', ARGV[2], 'seq', ARGV[i], 'kind', ARGV[i + 1], 'text', ARGV[i + 2])
    last = seq
  end
end
redis.call('HSET', KEYS[1], ARGV[1], last)
return last
`;

const LEASE_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local l = cjson.decode(cur)
  if l.h == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, l.h, tostring(l.f)}
  end
  return {0, l.h, tostring(l.f)}
end
local f = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], cjson.encode({h = ARGV[1], f = f}), 'PX', ARGV[2])
return {1, ARGV[1], tostring(f)}
`;

const HOLDS = `
local function holds(holder, fence)
  local cur = redis.call('GET', KEYS[1])
  if not cur then return false end
  local l = cjson.decode(cur)
  return l.h == holder and tostring(l.f) == fence
end
`;

const RELEASE_SCRIPT = `${HOLDS}
if holds(ARGV[1], ARGV[2]) then redis.call('DEL', KEYS[1]) end
return 1
`;

const PUBLISH_SCRIPT = `${HOLDS}
if not holds(ARGV[1], ARGV[2]) then return false end
local meta = cjson.decode(ARGV[3])
meta.version = redis.call('INCR', KEYS[2])
meta.fence = tonumber(ARGV[2])
meta.published = ARGV[8]
redis.call('SET', KEYS[5], ARGV[4])
for _, k in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do
  if cjson.decode(k).id == meta.id then redis.call('LREM', KEYS[4], 0, k) end
end
local enc = cjson.encode(meta)
redis.call('LPUSH', KEYS[4], enc)
local keep = tonumber(ARGV[5])
for _, k in ipairs(redis.call('LRANGE', KEYS[4], keep, -1)) do
  redis.call('DEL', ARGV[6] .. cjson.decode(k).id)
end
redis.call('LTRIM', KEYS[4], 0, keep - 1)
redis.call('SET', KEYS[3], enc)
redis.call('PUBLISH', ARGV[7], tostring(meta.version))
return enc
`;

const ROLLBACK_SCRIPT = `
for _, k in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
  local m = cjson.decode(k)
  if m.id == ARGV[1] then
    m.version = redis.call('INCR', KEYS[1])
    m.rollback = true
    m.published = ARGV[3]
    local enc = cjson.encode(m)
    redis.call('SET', KEYS[2], enc)
    redis.call('PUBLISH', ARGV[2], tostring(m.version))
    return enc
  end
end
return false
`;

const STATUS_SCRIPT = `${HOLDS}
if not holds(ARGV[1], ARGV[2]) then return 0 end
redis.call('SET', KEYS[2], ARGV[3], 'PX', 60000)
return 1
`;

/** A published bundle's record read back; null when it is not one. */
function bundleOf(raw: unknown): PublishedBundle | null {
  if (typeof raw !== "string") return null;
  try {
    const m = JSON.parse(raw) as Record<string, unknown>;
    if (
      typeof m.id !== "string" || typeof m.sha256 !== "string" ||
      typeof m.version !== "number" || typeof m.fence !== "number"
    ) return null;
    return {
      version: m.version,
      id: m.id,
      sha256: m.sha256,
      bytes: Number(m.bytes ?? 0),
      fence: m.fence,
      replica: String(m.replica ?? ""),
      published: String(m.published ?? ""),
      ...(m.rollback === true ? { rollback: true } : {}),
    };
  } catch {
    return null;
  }
}

/** A learning store on the server at `address` (`redis://HOST:PORT[/DB]`); connects in the background. */
export class RedisLearnStore implements LearnStore {
  readonly description: string;
  readonly #link: RedisLink;
  readonly #maxChunks: number;

  /** A store at `address`; `log` hears connection errors. */
  constructor(
    address: string,
    options: {
      timeoutMs?: number;
      log?: (message: string) => void;
      maxChunks?: number;
    } = {},
  ) {
    this.#link = new RedisLink(address, options);
    this.description = this.#link.description;
    this.#maxChunks = options.maxChunks ?? POOL_MAX_CHUNKS;
  }

  async append(
    source: string,
    replica: string,
    chunks: readonly Chunk[],
  ): Promise<number> {
    const args = [source, replica, String(this.#maxChunks)];
    for (const c of chunks) args.push(String(c.seq), c.kind, c.text);
    const last = await this.#link.eval(APPEND_SCRIPT, [
      key("seqs"),
      key("pool"),
    ], args);
    return Number(last);
  }

  async shipped(source: string): Promise<number> {
    const n = await this.#link.run((c) => c.hGet(key("seqs"), source));
    return Number(n ?? 0);
  }

  read(after: string, count: number): Promise<PoolRead> {
    return this.#link.run(async (c) => {
      const [entries, head] = await Promise.all([
        c.xRange(key("pool"), `(${after}`, "+", { COUNT: count }),
        c.xRange(key("pool"), "-", "+", { COUNT: 1 }),
      ]);
      return {
        chunks: entries.map((e) => {
          const m = e.message as Record<string, string>;
          return {
            id: e.id,
            source: m.src ?? "",
            replica: m.rep ?? "",
            seq: Number(m.seq ?? 0),
            kind: (m.kind === "history" ? "history" : "log") as ChunkKind,
            text: m.text ?? "",
          };
        }),
        first: head[0]?.id ?? null,
      };
    });
  }

  async lease(holder: string, ttlMs: number): Promise<Lease> {
    const r = await this.#link.eval(LEASE_SCRIPT, [
      key("lease"),
      key("fence"),
    ], [holder, String(Math.max(1, Math.round(ttlMs)))]) as unknown[];
    return {
      held: Number(r[0]) === 1,
      holder: String(r[1]),
      fence: Number(r[2]),
    };
  }

  async release(holder: string, fence: number): Promise<void> {
    await this.#link.eval(RELEASE_SCRIPT, [key("lease")], [
      holder,
      String(fence),
    ]);
  }

  async publish(
    holder: string,
    fence: number,
    bundle: Omit<PublishedBundle, "version" | "fence" | "published">,
    blob: string,
    keep: number,
  ): Promise<PublishedBundle | null> {
    const raw = await this.#link.eval(PUBLISH_SCRIPT, [
      key("lease"),
      key("version"),
      key("current"),
      key("kept"),
      key(`blob:${bundle.id}`),
    ], [
      holder,
      String(fence),
      JSON.stringify(bundle),
      blob,
      String(Math.max(1, keep)),
      key("blob:"),
      BUNDLE_CHANNEL,
      new Date().toISOString(),
    ]);
    return bundleOf(raw);
  }

  async current(): Promise<PublishedBundle | null> {
    return bundleOf(await this.#link.run((c) => c.get(key("current"))));
  }

  blob(id: string): Promise<string | null> {
    return this.#link.run((c) => c.get(key(`blob:${id}`)));
  }

  async versions(): Promise<PublishedBundle[]> {
    const list = await this.#link.run((c) => c.lRange(key("kept"), 0, -1));
    return list.map(bundleOf).filter((b): b is PublishedBundle => b !== null);
  }

  async rollback(id: string): Promise<PublishedBundle | null> {
    return bundleOf(
      await this.#link.eval(ROLLBACK_SCRIPT, [
        key("version"),
        key("current"),
        key("kept"),
      ], [id, BUNDLE_CHANNEL, new Date().toISOString()]),
    );
  }

  async putStatus(
    holder: string,
    fence: number,
    json: string,
  ): Promise<boolean> {
    return Number(
      await this.#link.eval(STATUS_SCRIPT, [key("lease"), key("status")], [
        holder,
        String(fence),
        json,
      ]),
    ) === 1;
  }

  status(): Promise<string | null> {
    return this.#link.run((c) => c.get(key("status")));
  }

  sharedKey(proposal: string): Promise<string> {
    return this.#link.run(async (c) => {
      await c.set(key("key"), proposal, { NX: true });
      return (await c.get(key("key"))) ?? proposal;
    });
  }

  subscribe(onBundle: () => void): Promise<void> {
    return this.#link.subscribe(BUNDLE_CHANNEL, () => onBundle());
  }

  close(): Promise<void> {
    return this.#link.close();
  }
}
