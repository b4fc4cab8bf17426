/**
 * Which encoder this program has, as a bundle names it: the package, its
 * version (read from the import map of `deno.json`, the one place it is
 * pinned) and the hash of its model files. Only the main thread reads it:
 * an encoder worker's modules are loaded at run time, where reading
 * `deno.json` would need a permission a locked-down server does not have.
 *
 * @module
 */

import config from "../../deno.json" with { type: "json" };
import { ENCODER_PACKAGE, type EncoderName } from "./package.ts";

/**
 * Its version, read from the import map of `deno.json` (the one place it is
 * pinned), so a bundle names the version this program actually loads.
 */
export const ENCODER_VERSION: string = pinnedVersion(
  config.imports[ENCODER_PACKAGE],
);

/** The version of an `npm:NAME@VERSION` specifier; throws `SyntaxError` for another form. */
function pinnedVersion(specifier: string): string {
  const at = specifier.lastIndexOf("@");
  const version = specifier.slice(at + 1);
  if (at <= "npm:".length || !/^\d+\.\d+\.\d+/.test(version)) {
    throw new SyntaxError(
      `deno.json must pin ${ENCODER_PACKAGE} as npm:NAME@VERSION: got "${specifier}"`,
    );
  }
  return version;
}

/**
 * SHA-256 of the package's model files (see `hashFiles`): what a bundle
 * names, checked against the files when the encoder is loaded (and by a
 * test), so that loading a bundle needs no hashing.
 */
export const ENCODER_SHA256 =
  "8178b0feb15ad1b40c0ce42aa8661196cc3b8c2b64ce4b3fdcc26406119b77cb";
/** This program's encoder. */
export const THIS_ENCODER: EncoderName = {
  package: ENCODER_PACKAGE,
  version: ENCODER_VERSION,
  sha256: ENCODER_SHA256,
};
