/**
 * A bundle carried through the fleet's store: its folder's files in one
 * text (`packBundle`: JSON of base64 files), the text's SHA-256, and the
 * bundle id its manifest names. A replica that receives one checks the
 * checksum (`unpackBundle`), writes the files to a folder beside
 * `DIR/bundle`, loads it (which checks every file against the manifest's
 * checksums) and checks its bundle id before it swaps the folder in as a
 * new version (`installBundle`): a blob cut short, altered or mislabelled
 * is refused and the bundle in force stays.
 *
 * @module
 */

import {
  BundleError,
  loadBundle,
  sha256Hex,
  swapInto,
} from "../../bundle/mod.ts";
import { bundleIdOf } from "../../live/mod.ts";

/** What identifies a packed bundle. */
export interface PackedBundle {
  /** The files, as one text. */
  readonly blob: string;
  /** Its bundle id (64 hex digits). */
  readonly id: string;
  /** SHA-256 of `blob`, hex. */
  readonly sha256: string;
}

const FORMAT = "decision-table-bundle-blob";

/** The bundle folder `dir` packed (see the module doc); throws `BundleError` when it does not load. */
export async function packBundle(dir: string): Promise<PackedBundle> {
  const table = await loadBundle(dir);
  const files: Record<string, string> = {};
  for await (const e of Deno.readDir(dir)) {
    if (!e.isFile) continue;
    files[e.name] = (await Deno.readFile(`${dir}/${e.name}`)).toBase64();
  }
  const blob = JSON.stringify({ format: FORMAT, files });
  return {
    blob,
    id: bundleIdOf(table),
    sha256: await sha256Hex(new TextEncoder().encode(blob)),
  };
}

/** The files of a packed bundle whose checksum is `sha256`; throws `BundleError` when it does not match or is no bundle blob. */
export async function unpackBundle(
  blob: string,
  sha256: string,
): Promise<Map<string, Uint8Array>> {
  const got = await sha256Hex(new TextEncoder().encode(blob));
  if (got !== sha256) {
    throw new BundleError(
      `the fleet's bundle does not match its checksum (sha256 ${
        got.slice(0, 12)
      }, published ${sha256.slice(0, 12)})`,
    );
  }
  let parsed: { format?: unknown; files?: unknown };
  try {
    parsed = JSON.parse(blob);
  } catch {
    throw new BundleError("the fleet's bundle is not a bundle blob");
  }
  if (
    parsed.format !== FORMAT || typeof parsed.files !== "object" ||
    parsed.files === null
  ) throw new BundleError("the fleet's bundle is not a bundle blob");
  const out = new Map<string, Uint8Array>();
  for (const [name, b64] of Object.entries(parsed.files)) {
    if (
      typeof b64 !== "string" || name.includes("/") || name.includes("\\") ||
      name === "" || name.startsWith(".")
    ) throw new BundleError(`the fleet's bundle holds a bad file: ${name}`);
    out.set(name, Uint8Array.fromBase64(b64));
  }
  return out;
}

/**
 * Writes `files` beside `bundleDir`, loads them and checks their bundle id
 * is `id`, then swaps them in as `bundleDir`'s newest version (keeping
 * `keep`). Throws `BundleError` (nothing swapped) when they do not load or
 * are another bundle.
 */
export async function installBundle(
  bundleDir: string,
  files: ReadonlyMap<string, Uint8Array>,
  id: string,
  keep: number,
): Promise<void> {
  const temp = `${bundleDir}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(temp, { recursive: true });
  try {
    for (const [name, bytes] of files) {
      await Deno.writeFile(`${temp}/${name}`, bytes);
    }
    const got = bundleIdOf(await loadBundle(temp));
    if (got !== id) {
      throw new BundleError(
        `the fleet's bundle is another bundle than published (id ${
          got.slice(0, 12)
        }, published ${id.slice(0, 12)})`,
      );
    }
  } catch (e) {
    await Deno.remove(temp, { recursive: true }).catch(() => {});
    throw e;
  }
  await swapInto(bundleDir, temp, keep);
}
