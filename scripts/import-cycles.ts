/**
 * Import cycles among the project's `src/` files: reads the module graph
 * from `deno info --json` (rooted at every `.ts` file under `src/`, so a
 * module nothing imports is read too), keeps the edges between `src/`
 * files (`import type` included: a type-only import still ties the two
 * files' meaning together; `--code-only` leaves those out), and prints
 * each strongly connected component of more than one file (the files
 * that import one another, directly or not) with one shortest cycle
 * through each of its files. Prints `no cycles` when there are none.
 *
 * Usage: deno run --allow-read --allow-write --allow-run scripts/import-cycles.ts [--code-only] [--under src/http]
 *
 * @module
 */

import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    "code-only": { type: "boolean", default: false },
    under: { type: "string", default: "src" },
  },
});

const root = new URL("../", import.meta.url);
const src = new URL("src/", root);

/** Every `.ts` file under `dir`, as file URLs. */
function sources(dir: URL): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) out.push(...sources(url));
    else if (entry.name.endsWith(".ts")) out.push(url.href);
  }
  return out.sort();
}

interface InfoModule {
  specifier: string;
  dependencies?: {
    code?: { specifier: string };
    type?: { specifier: string };
  }[];
}

/** The graph of imports among `src/` files: file to the files it imports. */
async function graph(codeOnly: boolean): Promise<Map<string, Set<string>>> {
  const files = sources(src);
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      entry,
      files.map((f) => `import ${JSON.stringify(f)};\n`).join(""),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      cwd: root.pathname,
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error("deno info failed");
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: InfoModule[];
    };
    const edges = new Map<string, Set<string>>();
    for (const m of info.modules) {
      if (!m.specifier.startsWith(src.href)) continue;
      const to = new Set<string>();
      for (const d of m.dependencies ?? []) {
        for (const target of [d.code, codeOnly ? undefined : d.type]) {
          if (target?.specifier.startsWith(src.href)) to.add(target.specifier);
        }
      }
      edges.set(m.specifier, to);
    }
    return edges;
  } finally {
    await Deno.remove(entry);
  }
}

/** Strongly connected components (Tarjan), each sorted, of more than one file. */
function components(edges: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** A shortest cycle through `start` inside `group` (breadth first). */
function shortestCycle(
  edges: Map<string, Set<string>>,
  group: Set<string>,
  start: string,
): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of [...(edges.get(v) ?? [])].sort()) {
      if (!group.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(from.get(path[0]!)!);
        return [...path, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

const edges = await graph(values["code-only"]);
const name = (f: string) => f.slice(root.href.length);
const groups = components(edges).filter((g) =>
  g.some((f) => name(f).startsWith(values.under))
);
if (groups.length === 0) console.log("no cycles");
for (const group of groups) {
  console.log(`${group.length} files import one another:`);
  const seen = new Set<string>();
  for (const file of group) {
    const cycle = shortestCycle(edges, new Set(group), file).map(name);
    const key = [...cycle.slice(0, -1)].sort().join(" ");
    if (seen.has(key)) continue;
    seen.add(key);
    console.log(`  ${cycle.join(" -> ")}`);
  }
}
