/**
 * The fleet's store on Redis or Valkey (`serve --live-store
 * redis://HOST:PORT[/DB]`), through node-redis (`@redis/client`, which runs
 * on Deno with network permission only). Every sync is one server-side
 * script (EVALSHA, atomic: nothing else runs in between) that checks the
 * epoch, applies each batch once, counts each audit once (`SET NX PX` of
 * its tag) and reads every question's record back; a policy change is a
 * second script, compare-and-set on the version, that announces itself on
 * the channel `dtable:live:policy` (the message is the bundle id).
 *
 * Keys, all of one bundle in one hash slot (BUNDLE is the bundle id, with
 * `+semantic` after it when served with its second tier, whose records are
 * `QUESTION#semantic`): `dtable:live:{BUNDLE}:epoch`,
 * `dtable:live:{BUNDLE}:q:QUESTION` (a hash of counters, see `store.ts`),
 * `dtable:live:{BUNDLE}:gen` (each question's reset generation; a reset
 * is a third script that bumps it and deletes the question's record),
 * `dtable:live:{BUNDLE}:batch:ID` and `dtable:live:{BUNDLE}:audit:TAG`
 * (expiring). A command is not queued while the connection is down: it
 * fails at once, and the client reconnects in the background. The sync
 * script checks every number it is given before it writes anything, and a
 * script the server refuses (`ERR ...`) is `StoreRejected`: the replica
 * gives that sync up and stays connected (`fleet.ts`).
 *
 * @module
 */

import type { LivePolicy } from "../guarantee/mod.ts";
import { RedisLink, STORE_TIMEOUT_MS } from "./redis_link.ts";
import {
  type AuditOutcome,
  BATCH_MEMORY_MS,
  type LiveStore,
  type SyncReply,
  type SyncRequest,
} from "./store.ts";

export { STORE_TIMEOUT_MS };
/** The channel policy changes are announced on. */
export const POLICY_CHANNEL = "dtable:live:policy";

const SYNC_SCRIPT = `
local req = cjson.decode(ARGV[1])
local nq = req.nq
local function whole(x)
  return type(x) == 'number' and x == x and x > -1e15 and x < 1e15 and x == math.floor(x)
end
for b, batch in ipairs(req.batches) do
  for q, fields in ipairs(batch.adds) do
    for j = 1, #fields, 2 do
      if type(fields[j]) ~= 'string' or not whole(fields[j + 1]) then
        return redis.error_reply('ERR malformed counts in batch ' .. b)
      end
    end
  end
  for i, a in ipairs(batch.audits) do
    if not whole(a.ttl) or a.ttl < 1 or not whole(a.q) or a.q < 1 or a.q > nq then
      return redis.error_reply('ERR malformed audit ' .. i .. ' in batch ' .. b)
    end
    for j = 1, #a.fields, 2 do
      if type(a.fields[j]) ~= 'string' or not whole(a.fields[j + 1]) then
        return redis.error_reply('ERR malformed audit ' .. i .. ' in batch ' .. b)
      end
    end
  end
end
local epoch = redis.call('GET', KEYS[1])
if not epoch and req.proposal ~= '' then
  redis.call('SET', KEYS[1], req.proposal)
  epoch = req.proposal
end
local gens = {}
for q = 1, nq do
  gens[q] = tonumber(redis.call('HGET', KEYS[2 + nq], req.names[q]) or '0')
end
local out = {}
local k = 2 + nq
for b, batch in ipairs(req.batches) do
  k = k + 1
  local codes = {}
  if epoch ~= req.epoch then
    for i = 1, #batch.audits do codes[i] = 2 end
    k = k + #batch.audits
  elseif not redis.call('SET', KEYS[k], '1', 'NX', 'PX', req.batchMs) then
    for i = 1, #batch.audits do codes[i] = 1 end
    k = k + #batch.audits
  else
    for q, fields in ipairs(batch.adds) do
      if gens[q] == req.gens[q] then
        for j = 1, #fields, 2 do
          redis.call('HINCRBY', KEYS[1 + q], fields[j], fields[j + 1])
        end
      end
    end
    for i, a in ipairs(batch.audits) do
      k = k + 1
      if gens[a.q] ~= req.gens[a.q] then
        codes[i] = 2
      elseif redis.call('SET', KEYS[k], '1', 'NX', 'PX', a.ttl) then
        for j = 1, #a.fields, 2 do
          redis.call('HINCRBY', KEYS[1 + a.q], a.fields[j], a.fields[j + 1])
        end
        codes[i] = 1
      else
        codes[i] = 0
      end
    end
  end
  out[b] = codes
end
local records = {}
for q = 1, nq do records[q] = redis.call('HGETALL', KEYS[1 + q]) end
return cjson.encode({epoch = epoch or '', audits = out, records = records, gens = gens})
`;

const POLICY_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(redis.call('HGET', KEYS[3], ARGV[8]) or '0') ~= tonumber(ARGV[9]) then return 0 end
local v = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
if v ~= tonumber(ARGV[2]) then return 0 end
local f = redis.call('HGET', KEYS[2], 'floor')
if f and tonumber(ARGV[3]) > tonumber(f) then return 0 end
local al = tonumber(redis.call('HGET', KEYS[2], 'alarms') or '0')
local na = tonumber(ARGV[7])
if (al % 2 == 1 and na % 2 == 0) or (al >= 2 and na < 2) then return 0 end
redis.call('HSET', KEYS[2], 'floor', ARGV[3], 'in_force', ARGV[4], 'alarms', ARGV[7], 'version', v + 1)
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
`;

const RESET_SCRIPT = `
for i = 3, #ARGV do
  redis.call('HINCRBY', KEYS[1], ARGV[i], 1)
  redis.call('DEL', KEYS[i - 1])
end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
`;

const keyOf = (bundle: string, rest: string) =>
  `dtable:live:{${bundle}}:${rest}`;

const asList = <T>(x: unknown): T[] => Array.isArray(x) ? x as T[] : [];

const OUTCOMES: Record<number, AuditOutcome> = {
  0: "answered",
  1: "counted",
  2: "not_shared",
};

/**
 * A store on the Redis or Valkey server at `address` (`redis://HOST:PORT[/DB]`).
 * Connects in the background: until it is connected, every call rejects.
 */
export class RedisStore implements LiveStore {
  readonly description: string;
  readonly #link: RedisLink;

  /** A store at `address`; `log` hears connection errors once per outage. */
  constructor(
    address: string,
    options: {
      timeoutMs?: number;
      log?: (message: string) => void;
    } = {},
  ) {
    this.#link = new RedisLink(address, options);
    this.description = this.#link.description;
  }

  #eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#link.eval(script, keys, args);
  }

  async sync(request: SyncRequest): Promise<SyncReply> {
    const { bundle } = request;
    const keys = [
      keyOf(bundle, "epoch"),
      ...request.questions.map((q) => keyOf(bundle, `q:${q}`)),
      keyOf(bundle, "gen"),
    ];
    for (const batch of request.batches) {
      keys.push(keyOf(bundle, `batch:${batch.id}`));
      for (const a of batch.audits) keys.push(keyOf(bundle, `audit:${a.id}`));
    }
    const arg = JSON.stringify({
      nq: request.questions.length,
      names: request.questions,
      gens: request.questions.map((_, i) => request.generations[i] ?? -1),
      epoch: request.epoch,
      proposal: request.proposal,
      batchMs: BATCH_MEMORY_MS,
      batches: request.batches.map((b) => ({
        adds: b.adds.map((fields) => fields.flat()),
        audits: b.audits.map((a) => ({
          q: a.question + 1,
          ttl: a.ttlMs,
          fields: a.fields.flat(),
        })),
      })),
    });
    const raw = await this.#eval(SYNC_SCRIPT, keys, [arg]);
    const reply = JSON.parse(String(raw)) as {
      epoch: string;
      audits: unknown;
      records: unknown;
      gens: unknown;
    };
    const audits = asList<unknown>(reply.audits);
    return {
      epoch: reply.epoch,
      audits: request.batches.map((b, i) =>
        b.audits.map((_, j) =>
          OUTCOMES[asList<number>(audits[i])[j] ?? 1] ?? "counted"
        )
      ),
      records: request.questions.map((_, i) => {
        const flat = asList<string>(asList<unknown>(reply.records)[i]);
        const record: Record<string, number> = {};
        for (let j = 0; j + 1 < flat.length; j += 2) {
          record[flat[j]!] = Number(flat[j + 1]);
        }
        return record;
      }),
      generations: request.questions.map((_, i) =>
        Number(asList<number>(reply.gens)[i] ?? 0)
      ),
    };
  }

  async setPolicy(
    bundle: string,
    epoch: string,
    question: string,
    version: number,
    policy: LivePolicy,
    generation: number,
  ): Promise<boolean> {
    const set = await this.#eval(POLICY_SCRIPT, [
      keyOf(bundle, "epoch"),
      keyOf(bundle, `q:${question}`),
      keyOf(bundle, "gen"),
    ], [
      epoch,
      String(version),
      String(policy.floor),
      String(policy.inForce),
      POLICY_CHANNEL,
      bundle,
      String(policy.alarms ?? 0),
      question,
      String(generation),
    ]);
    return Number(set) === 1;
  }

  async reset(bundle: string, questions: readonly string[]): Promise<void> {
    await this.#eval(RESET_SCRIPT, [
      keyOf(bundle, "gen"),
      ...questions.map((q) => keyOf(bundle, `q:${q}`)),
    ], [POLICY_CHANNEL, bundle, ...questions]);
  }

  subscribe(onChange: (bundle: string) => void): Promise<void> {
    return this.#link.subscribe(POLICY_CHANNEL, onChange);
  }

  close(): Promise<void> {
    return this.#link.close();
  }
}
