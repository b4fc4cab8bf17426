/**
 * Signed audit ids (`serve --audit-key-file`): the token format, the key
 * file (refused when empty or short, read again, rotated), the replay
 * guard, and the controller's checks (forged, expired, answered,
 * other_question, other_bundle, not_shared) in process.
 */

import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createApp } from "../src/http/app.ts";
import type { Table } from "../src/engine/table.ts";
import { AuditKeyFile, parseAuditKeys } from "../src/live/audit_key.ts";
import { AuditTokens, hmacSigner } from "../src/live/audit_token.ts";
import { AUDIT_TTL_MS } from "../src/live/audits.ts";
import { LiveController } from "../src/live/controller.ts";
import { ReplayGuard } from "../src/live/_replays.ts";
import { smallTable, tempDir } from "./_fixtures.ts";

const KEY = "a shared secret of the fleet";
const CLEAR = "my invoice was overcharged";
const BUNDLE = "ab".repeat(32);

function keyFile(text: string, dir: string): Promise<AuditKeyFile> {
  const path = `${dir}/audit.key`;
  return Deno.writeTextFile(path, text).then(() =>
    AuditKeyFile.open(path, { rereadMs: 0 })
  );
}

/** A table of its own, with a fixed bundle id (as if loaded from one bundle). */
function replicaTable(bundle = BUNDLE): Table {
  const t = smallTable().table;
  return {
    ...t,
    info: { ...t.info, bundle_id: bundle },
  };
}

/** The JSON body of a response. */
async function json(res: Response | Promise<Response>) {
  return await (await res).json();
}

const claim = {
  slot: 1,
  answer: 7,
  confidence: 0.8125,
  issuedAt: 1_700_000_000_000.5,
  bundle: "0123456789abcdef",
  pool: "cafe0001",
};

Deno.test("AuditTokens.verify() gives back the claim of an id it issued, exactly", () => {
  const tokens = new AuditTokens(hmacSigner([new TextEncoder().encode(KEY)]));
  const id = tokens.issue(claim);
  assert.match(id, /^[A-Za-z0-9_-]{104}$/);
  const back = tokens.verify(id)!;
  const { tag, issuer, ...rest } = back;
  // Said nothing of its kind, an id is an audit's, eligible, rate unsaid.
  assert.deepEqual(rest, {
    ...claim,
    kind: "audit",
    eligible: true,
    rate: NaN,
    question: 0,
    seal: "unsealed",
  });
  assert.match(tag, /^[0-9a-f]{32}$/);
  assert.equal(issuer, tokens.issuer);
  assert.notEqual(tokens.issue(claim), id, "two ids for one claim differ");
  // A decision id says its rate and question; whether it was picked is
  // its own draw, which only the key reads.
  const decision = tokens.verify(
    tokens.issue({
      ...claim,
      kind: "sample",
      eligible: false,
      rate: 0.05,
      question: 12345,
    }),
  )!;
  assert.equal(decision.kind, tokens.draw < 0.05 ? "sample" : "uncertified");
  assert.equal(decision.eligible, false);
  assert.equal(decision.rate, 0.05);
  assert.equal(decision.question, 12345);
});

Deno.test("AuditTokens ids carry each claim's own bundle and pool, however they alternate", () => {
  const tokens = new AuditTokens(hmacSigner([new TextEncoder().encode(KEY)]));
  const claims = [
    { ...claim, bundle: "00112233445566ff", pool: "0a0b0c0d" },
    { ...claim, bundle: "ffeeddccbbaa9988", pool: "0a0b0c0d" },
    { ...claim, bundle: "ffeeddccbbaa9988", pool: "01020304" },
    { ...claim, bundle: "00112233445566ff", pool: "01020304" },
    { ...claim, bundle: "00112233445566ff", pool: "0a0b0c0d" },
  ];
  for (const c of [...claims, ...claims.reverse()]) {
    const back = tokens.verify(tokens.issue(c))!;
    assert.equal(back.bundle, c.bundle);
    assert.equal(back.pool, c.pool);
  }
  // Base64url without padding, and nothing else, decodes.
  const id = tokens.issue(claim);
  assert.equal(tokens.verify(`${id}=`), null);
  assert.equal(tokens.verify(id.replace(/.$/, "+")), null);
  assert.equal(tokens.verify(id.slice(0, -1)), null);
});

Deno.test("hmacSigner() gives HMAC-SHA256 cut to 16 bytes, for short and long keys", () => {
  const payload = new TextEncoder().encode(
    "forty-one bytes of payload, give or take",
  );
  for (const key of [KEY, "k".repeat(100)]) {
    const bytes = new TextEncoder().encode(key);
    const expected = createHmac("sha256", bytes).update(payload).digest()
      .subarray(0, 16);
    const tag = hmacSigner([bytes]).sign(payload);
    assert.deepEqual([...tag], [...expected]);
    assert.equal(hmacSigner([bytes]).verify(payload, tag), true);
  }
});

Deno.test("hmacSigner() gives each payload its own tag, id after id (its scratch state reused)", () => {
  const keys = [KEY, "an older key of the fleet"].map((k) =>
    new TextEncoder().encode(k)
  );
  const signer = hmacSigner(keys);
  const older = hmacSigner([keys[1]!]);
  for (let i = 0; i < 200; i++) {
    const payload = crypto.getRandomValues(new Uint8Array(1 + (i % 70)));
    const expected = createHmac("sha256", keys[0]!).update(payload).digest()
      .subarray(0, 16);
    const tag = signer.sign(payload);
    assert.deepEqual(tag, new Uint8Array(expected));
    // A tag stays as it was given when the next id is signed.
    signer.sign(new Uint8Array(8));
    assert.deepEqual(tag, new Uint8Array(expected));
    assert.ok(signer.verify(payload, older.sign(payload)));
    assert.ok(!signer.verify(payload, older.sign(new Uint8Array(3))));
  }
});

Deno.test("AuditTokens.verify() refuses a changed id, another key's id and junk", () => {
  const mine = new AuditTokens(hmacSigner([new TextEncoder().encode(KEY)]));
  const theirs = new AuditTokens(
    hmacSigner([new TextEncoder().encode("another secret, not ours")]),
  );
  const id = mine.issue(claim);
  // One payload character changed (the confidence's bytes).
  const at = 12;
  const changed = id.slice(0, at) + (id[at] === "A" ? "B" : "A") +
    id.slice(at + 1);
  assert.equal(mine.verify(changed), null);
  assert.equal(mine.verify(theirs.issue(claim)), null);
  for (const junk of ["", "p-1", "x".repeat(76), "!".repeat(76), id + "A"]) {
    assert.equal(mine.verify(junk), null, junk);
  }
});

Deno.test("hmacSigner() signs with the first key and verifies with any (key rotation)", () => {
  const enc = new TextEncoder();
  const old = new AuditTokens(hmacSigner([enc.encode(KEY)]));
  const rotated = new AuditTokens(
    hmacSigner([enc.encode("the new secret of the fleet"), enc.encode(KEY)]),
  );
  const after = new AuditTokens(
    hmacSigner([enc.encode("the new secret of the fleet")]),
  );
  assert.notEqual(rotated.verify(old.issue(claim)), null);
  assert.notEqual(after.verify(rotated.issue(claim)), null);
  assert.equal(after.verify(old.issue(claim)), null);
});

Deno.test("parseAuditKeys() refuses an empty file and a short key", () => {
  assert.throws(
    () => parseAuditKeys(" \n\n", "k"),
    /Audit key file k is empty/,
  );
  assert.throws(
    () => parseAuditKeys(`${KEY}\nshort\n`, "k"),
    /key 2 has 5 bytes; a key needs at least 16/,
  );
  assert.equal(parseAuditKeys(`  ${KEY}  \r\n`, "k").length, 1);
});

Deno.test("AuditKeyFile.reread() takes a new key, and keeps the last keys when the file turns empty", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/audit.key`;
  await Deno.writeTextFile(path, KEY);
  const warnings: string[] = [];
  const file = await AuditKeyFile.open(path, {
    rereadMs: 0,
    warn: (m) => warnings.push(m),
  });
  const before = new AuditTokens(file.signer).issue(claim);
  await Deno.writeTextFile(path, "");
  assert.equal(await file.reread(), false);
  assert.equal(await file.reread(), false);
  assert.equal(warnings.length, 1, "one warning per bad spell");
  assert.match(warnings[0]!, /is empty: still using the audit keys read last/);
  assert.notEqual(new AuditTokens(file.signer).verify(before), null);
  await Deno.writeTextFile(path, "the next secret of the fleet\n");
  let seen = 0;
  file.onChange(() => seen++);
  assert.equal(await file.reread(), true);
  assert.equal(seen, 1);
  assert.equal(new AuditTokens(file.signer).verify(before), null);
  file.close();
});

Deno.test("ReplayGuard.admit() tells a repeat, and refuses ids older than one it had to forget", () => {
  const guard = new ReplayGuard(2, 1000);
  assert.equal(guard.admit("a", 10, 20), null);
  assert.equal(guard.admit("a", 10, 30), "answered");
  assert.equal(guard.admit("b", 11, 30), null);
  // Full: "a" (issued at 10, still alive) is forgotten, so ids issued at 10 or before are refused.
  assert.equal(guard.admit("c", 12, 40), null);
  assert.equal(guard.admit("a", 10, 50), "expired");
  assert.equal(guard.admit("d", 9, 50), "expired");
  assert.equal(guard.admit("b", 11, 50), "answered");
  // Expired entries leave without raising the horizon.
  const short = new ReplayGuard(2, 100);
  assert.equal(short.admit("x", 0, 0), null);
  assert.equal(short.admit("y", 500, 500), null);
  assert.equal(short.admit("z", 501, 501), null);
  assert.equal(short.admit("w", 1, 501), null);
});

Deno.test("LiveController.checkAudit() names why a signed id cannot count", async () => {
  await using dir = await tempDir();
  const keys = await keyFile(KEY, dir.path);
  let now = 1_000_000;
  const clock = () => now;
  const live = new LiveController({
    auditRate: 1,
    auditSeed: 1,
    auditKeys: keys,
    clock,
  });
  const table = replicaTable();
  const app = createApp({
    table,
    bundlePath: "b",
    live: { auditRate: 1, auditSeed: 2, auditKeys: keys, clock },
  });
  const res = await app.request("/v1/decide", {
    method: "POST",
    body: JSON.stringify({ state: CLEAR, questions: { topic: {} } }),
  });
  const id = (await res.json()).answers.topic.audit as string;
  assert.equal(typeof id, "string");
  // Another process with the same key but its own evidence.
  assert.equal(live.checkAudit(id, "topic", table, CLEAR), "not_shared");
  // Its own app counts it once.
  const feedback = (body: unknown) =>
    json(
      app.request("/v1/feedback", {
        method: "POST",
        body: JSON.stringify(body),
      }),
    );
  const wrongQuestion = await feedback({
    question: "urgent",
    state: CLEAR,
    answer: true,
    audit: id,
  });
  assert.deepEqual(wrongQuestion.missed_audits, [{
    audit: id,
    reason: "other_question",
  }]);
  const other = await feedback({
    question: "topic",
    state: CLEAR,
    answer: "billing",
    audit: id.slice(0, -2) + (id.endsWith("AA") ? "BB" : "AA"),
  });
  assert.equal(other.missed_audits[0].reason, "forged");
  now += AUDIT_TTL_MS + 1;
  const late = await feedback({
    question: "topic",
    state: CLEAR,
    answer: "billing",
    audit: id,
  });
  assert.equal(late.missed_audits[0].reason, "expired");
  now -= AUDIT_TTL_MS;
  // Feedback under another text is no label, and leaves the audit to count.
  const elsewhereText = await feedback({
    question: "topic",
    state: `${CLEAR} and more`,
    answer: "billing",
    audit: id,
  });
  assert.deepEqual(elsewhereText.missed_audits, [{
    audit: id,
    reason: "text_mismatch",
  }]);
  assert.equal(elsewhereText.audits, 0);
  const first = await feedback({
    question: "topic",
    state: CLEAR,
    answer: "billing",
    audit: id,
  });
  assert.equal(first.audits, 1);
  const again = await feedback({
    question: "topic",
    state: CLEAR,
    answer: "billing",
    audit: id,
  });
  assert.deepEqual(again.missed_audits, [{ audit: id, reason: "answered" }]);
  // The same key on a replica serving another bundle.
  const elsewhere = createApp({
    table: replicaTable("cd".repeat(32)),
    bundlePath: "b",
    live: { auditRate: 1, auditSeed: 2, auditKeys: keys, clock },
  });
  const moved = await json(elsewhere.request("/v1/feedback", {
    method: "POST",
    body: JSON.stringify({
      question: "topic",
      state: CLEAR,
      answer: "billing",
      audit: id,
    }),
  }));
  assert.equal(moved.missed_audits[0].reason, "other_bundle");
  const stats = await json(app.request("/v1/stats"));
  assert.equal(stats.live.audit_ids, "signed");
  assert.equal(stats.live.pending_audits, 0, "a signed id is kept nowhere");
  assert.equal(stats.live.questions.topic.audited, 1);
  keys.close();
});

Deno.test("without an audit key, ids are kept by the process as before", async () => {
  const app = createApp({
    table: replicaTable(),
    bundlePath: "b",
    live: { auditRate: 1, auditSeed: 2 },
  });
  const res = await app.request("/v1/decide", {
    method: "POST",
    body: JSON.stringify({ state: CLEAR, questions: { topic: {} } }),
  });
  const id = (await res.json()).answers.topic.audit as string;
  assert.match(id, /^[0-9a-f]{8}-0$/);
  const stats = await json(app.request("/v1/stats"));
  assert.equal(stats.live.audit_ids, "kept");
  assert.equal(stats.live.fleet, null);
  assert.equal(stats.live.pending_audits, 1);
  const health = await json(app.request("/v1/health"));
  assert.equal(health.bundle_id, BUNDLE);
  assert.equal(stats.bundle.id, BUNDLE);
});
