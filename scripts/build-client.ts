/**
 * `deno task build:client`: the proxy-side client (`src/client/mod.ts`) as
 * an npm package for Node 18+ and browsers, in `dist/client/`: `index.js`
 * (an ES module), `index.d.ts` and a `package.json` that `npm pack` takes.
 * The TypeScript compiler emits both files; the build fails (exit code 2,
 * nothing written) when the client would need a Deno API or does not
 * type-check against the DOM's `fetch` alone.
 *
 * Usage: deno task build:client [--out DIR]
 *
 * @module
 */

import { parseArgs } from "node:util";
import ts from "typescript";
import { TOOL_VERSION } from "../src/version.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const ENTRY = `${ROOT}src/client/mod.ts`;

/** Usage text of the build. */
export const BUILD_CLIENT_USAGE = `Usage: deno task build:client [--out DIR]

Writes the client as an npm package: DIR/index.js (ES module), DIR/index.d.ts
and DIR/package.json (default DIR: dist/client).`;

/** The package's manifest. */
export function clientPackageJson(version: string): Record<string, unknown> {
  return {
    name: "@dtable/client",
    version,
    description:
      "Client for a decision-tables service: asks /v1/decide, calls your model when an answer is not certified or is audited, reports feedback",
    license: "MIT",
    type: "module",
    main: "./index.js",
    types: "./index.d.ts",
    exports: {
      ".": { types: "./index.d.ts", default: "./index.js" },
    },
    files: ["index.js", "index.d.ts"],
    sideEffects: false,
    engines: { node: ">=18" },
  };
}

/**
 * Compiles the client to JavaScript and declarations; throws `SyntaxError`
 * with the compiler's first complaints, or `TypeError` when the output
 * names a Deno API.
 */
export function compileClient(): { js: string; dts: string } {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.ES2020,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    declaration: true,
    allowImportingTsExtensions: false,
    skipLibCheck: true,
    removeComments: false,
    newLine: ts.NewLineKind.LineFeed,
  };
  const program = ts.createProgram([ENTRY], options);
  const problems = ts.getPreEmitDiagnostics(program);
  if (problems.length > 0) {
    throw new SyntaxError(
      `the client does not compile for Node and browsers: ${
        problems.slice(0, 3).map((d) =>
          ts.flattenDiagnosticMessageText(d.messageText, " ")
        ).join("; ")
      }`,
    );
  }
  const out = new Map<string, string>();
  program.emit(undefined, (name, text) => {
    out.set(name.endsWith(".d.ts") ? "dts" : "js", text);
  });
  const js = out.get("js");
  const dts = out.get("dts");
  if (js === undefined || dts === undefined) {
    throw new Error("the compiler emitted no JavaScript or no declarations");
  }
  if (/\bDeno\./.test(js.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ""))) {
    throw new TypeError("the client uses a Deno API; it must use fetch only");
  }
  return { js, dts };
}

/** Builds the package into `out`; returns the files written. */
export async function buildClient(out: string): Promise<string[]> {
  const { js, dts } = compileClient();
  await Deno.mkdir(out, { recursive: true });
  const files: [string, string][] = [
    ["index.js", js],
    ["index.d.ts", dts],
    [
      "package.json",
      JSON.stringify(clientPackageJson(TOOL_VERSION), null, 2) + "\n",
    ],
  ];
  for (const [name, text] of files) {
    await Deno.writeTextFile(`${out}/${name}`, text);
  }
  return files.map(([name]) => `${out}/${name}`);
}

if (import.meta.main) {
  let values;
  try {
    ({ values } = parseArgs({
      args: Deno.args,
      options: {
        out: { type: "string", default: `${ROOT}dist/client` },
        help: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    console.error(
      `error: ${(e as Error).message} (see deno task build:client --help)`,
    );
    Deno.exit(2);
  }
  if (values.help) {
    console.log(BUILD_CLIENT_USAGE);
    Deno.exit(0);
  }
  try {
    for (const file of await buildClient(values.out)) {
      console.log(`wrote ${file}`);
    }
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    Deno.exit(2);
  }
}
