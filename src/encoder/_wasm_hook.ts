/**
 * TensorFlow.js's WebAssembly binaries as part of the program (imported as
 * bytes, so `deno compile` embeds them), handed to its backend from
 * memory. The backend starts as `@energetic-ai/core` is imported and
 * reads its binary from the package's folder through `node:fs`, which a
 * locked-down run may not read: this module, imported before it (first in
 * `model.ts`), answers those reads of the three binaries from memory and
 * leaves every other read alone.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import fs from "node:fs";
import wasm from "npm:@energetic-ai/core@0.2.0/dist/tfjs-backend-wasm.wasm" with {
  type: "bytes",
};
import wasmSimd from "npm:@energetic-ai/core@0.2.0/dist/tfjs-backend-wasm-simd.wasm" with {
  type: "bytes",
};
import wasmThreadedSimd from "npm:@energetic-ai/core@0.2.0/dist/tfjs-backend-wasm-threaded-simd.wasm" with {
  type: "bytes",
};

const BINARIES = new Map<string, Uint8Array>([
  ["tfjs-backend-wasm.wasm", wasm],
  ["tfjs-backend-wasm-simd.wasm", wasmSimd],
  ["tfjs-backend-wasm-threaded-simd.wasm", wasmThreadedSimd],
]);

/** The embedded binary a path names (by its last part), if any. */
function binaryAt(path: unknown): Uint8Array | undefined {
  const text = path instanceof URL ? path.pathname : String(path);
  const name = text.slice(text.lastIndexOf("/") + 1);
  return text.includes("@energetic-ai") ? BINARIES.get(name) : undefined;
}

// deno-lint-ignore no-explicit-any
const patched = fs as any;
const readFileSync = patched.readFileSync;
const readFile = patched.readFile;
patched.readFileSync = (path: unknown, ...rest: unknown[]) => {
  const b = binaryAt(path);
  return b === undefined ? readFileSync(path, ...rest) : Buffer.from(b);
};
patched.readFile = (path: unknown, ...rest: unknown[]) => {
  const b = binaryAt(path);
  if (b === undefined) return readFile(path, ...rest);
  const callback = rest[rest.length - 1] as (e: null, d: Buffer) => void;
  queueMicrotask(() => callback(null, Buffer.from(b)));
};
