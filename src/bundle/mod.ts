/**
 * Bundles, the way in from outside `src/bundle/` for the program's other
 * folders: load, the contents and their error, versions on disk. The
 * package's `./bundle` entry stays `files.ts`.
 *
 * @module
 */

export { type BundleContents, BundleError } from "./codec.ts";
export { loadBundle } from "./files.ts";
export { listVersions, pointTo, swapInto, type VersionFolder } from "./swap.ts";
export { encodeBundle, sha256Hex } from "./codec.ts";
export { checkBundleDestination, writeBundleVersioned } from "./files.ts";
export { DEFAULT_KEEP } from "./swap.ts";
