/**
 * Signed audit ids taken apart and signed again with the key, as an
 * attacker holding the key (or a broken replica) would make them: every
 * field of the payload can then carry any bytes.
 */

import { AuditKeyFile } from "../src/live/audit_key.ts";
import { hmacSigner } from "../src/live/audit_token.ts";
import { tempDir } from "./_fixtures.ts";

/** The audit key the in-process fleet tests sign with. */
export const TEST_AUDIT_KEY = "a shared secret of the fleet";

/**
 * Runs `test` with the audit keys of a key file holding `TEST_AUDIT_KEY`
 * (read once, never reread), in a temporary folder (its path given)
 * removed afterwards.
 */
export async function withAuditKeys(
  test: (keys: AuditKeyFile, dir: string) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir();
  await Deno.writeTextFile(`${dir.path}/audit.key`, TEST_AUDIT_KEY);
  const keys = await AuditKeyFile.open(`${dir.path}/audit.key`, {
    rereadMs: 0,
  });
  try {
    await test(keys, dir.path);
  } finally {
    keys.close();
  }
}

/** Bytes of the payload and of the tag (see `src/live/audit_token.ts`). */
export const PAYLOAD_BYTES = 62;

function decode(id: string): Uint8Array {
  const bin = atob(id.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function encode(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** `id` with its payload changed by `mutate` (given a copy and its view) and signed again under `key`. */
export function resign(
  id: string,
  key: string,
  mutate: (payload: Uint8Array, view: DataView) => void,
): string {
  const bytes = decode(id);
  const payload = bytes.slice(0, PAYLOAD_BYTES);
  mutate(payload, new DataView(payload.buffer));
  const tag = hmacSigner([new TextEncoder().encode(key)]).sign(payload);
  const out = new Uint8Array(payload.length + tag.length);
  out.set(payload);
  out.set(tag, payload.length);
  return encode(out);
}
