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
 * With `--check` (what `deno task check` runs) it also holds the house's
 * rules and exits 1 when one is broken, naming each import that breaks it:
 *
 * - no file cycle (above), and no cycle between the folders of `src/` (an
 *   arrow that runs back up: folder A imports folder B while B, through
 *   any of its files, imports A);
 * - doors: an import of a file from outside that file's folder goes
 *   through the folder's `mod.ts` (a file under a folder is inside it, so
 *   `src/http/openapi/x.ts` may import `src/http/y.ts`, not the reverse),
 *   except for the modules a door must not load, listed in `DOORLESS`;
 * - private files: a file whose name starts with `_` is imported only from
 *   its own folder (tests, outside `src/`, are not held to these rules);
 * - purity: the engine and the guarantee (`PURE_ROOMS`) import nothing of
 *   the other rooms but `src/format.ts` and no package but jStat, and
 *   never call `Deno`;
 * - workers: the encoder's worker loads nothing from outside
 *   `src/encoder/` (`serve` may read no other source: `WORKER_FOLDERS`).
 *
 * Usage: deno run --allow-read --allow-write --allow-run scripts/import-cycles.ts [--code-only] [--under src/http] [--check]
 *
 * @module
 */

import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    "code-only": { type: "boolean", default: false },
    under: { type: "string", default: "src" },
    check: { type: "boolean", default: false },
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
    specifier: string;
    code?: { specifier: string };
    type?: { specifier: string };
  }[];
}

/** Per `src/` file, the modules it imports from outside `src/`, as written (`jstat`, `node:fs`, `../../deno.json`). */
const outside = new Map<string, Set<string>>();
/** Per `src/` file, the `src/` files it loads when it runs (type imports left out). */
const running = new Map<string, Set<string>>();

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
      const other = new Set<string>();
      const loads = new Set<string>();
      for (const d of m.dependencies ?? []) {
        if (d.code?.specifier.startsWith(src.href)) {
          loads.add(d.code.specifier);
        }
        for (const target of [d.code, codeOnly ? undefined : d.type]) {
          if (target === undefined) continue;
          if (target.specifier.startsWith(src.href)) to.add(target.specifier);
          else other.add(d.specifier);
        }
      }
      edges.set(m.specifier, to);
      outside.set(m.specifier, other);
      running.set(m.specifier, loads);
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

/**
 * The modules a folder's door must not load, each imported straight where
 * it is asked for, with why. An import of one of these from another folder
 * is allowed; any other deep import is not.
 */
const DOORLESS: Record<string, string> = {
  "src/live/redis_store.ts":
    "the Redis client: loaded only when serve is given --live-store",
  "src/live/redis_learn_store.ts":
    "the Redis client: loaded only when serve is given --learn with --live-store",
};

/**
 * The pure rooms: no I/O, no clock, no process (the engine answers, the
 * guarantee counts). Their files import only one another, the modules of
 * `PURE_PACKAGES`, and never name `Deno`.
 */
const PURE_ROOMS = ["src/engine", "src/guarantee"];
/** Files of `src/` itself that are as pure (the number formats). */
const PURE_FILES = new Set(["src/format.ts"]);
/** What a pure room may import from outside `src/`: jStat's special functions. */
const PURE_PACKAGES = new Set(["jstat"]);

/** The imports and calls that would make a pure room impure. */
function impurities(edges: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  const pure = (path: string) =>
    PURE_ROOMS.includes(roomOf(path) ?? "") || PURE_FILES.has(path);
  for (const [fromUrl, tos] of edges) {
    const from = name(fromUrl);
    if (!pure(from)) continue;
    for (const toUrl of tos) {
      if (!pure(name(toUrl))) out.push(`${from} imports ${name(toUrl)}`);
    }
    for (const spec of outside.get(fromUrl) ?? []) {
      if (!PURE_PACKAGES.has(spec)) out.push(`${from} imports ${spec}`);
    }
    const code = Deno.readTextFileSync(new URL(fromUrl)).split("\n")
      .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line));
    if (code.some((line) => /\bDeno\./.test(line))) {
      out.push(`${from} calls Deno`);
    }
  }
  return out.sort();
}

/**
 * Workers whose modules must all lie in one folder: `serve` may be run
 * with `--allow-read=BUNDLE,src/encoder` (docs/operations.md), and a
 * worker reads its modules under the process's permissions.
 */
const WORKER_FOLDERS: Record<string, string> = {
  "src/encoder/worker.ts": "src/encoder/",
};

/** The modules a worker of `WORKER_FOLDERS` would load from outside its folder. */
function workerReaches(): string[] {
  const out: string[] = [];
  for (const [worker, folder] of Object.entries(WORKER_FOLDERS)) {
    const start = new URL(worker, root).href;
    const seen = new Set([start]);
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      for (const next of running.get(queue[i]!) ?? []) {
        if (seen.has(next)) continue;
        seen.add(next);
        queue.push(next);
        if (!name(next).startsWith(folder)) {
          out.push(`${worker} loads ${name(next)}, outside ${folder}`);
        }
      }
    }
  }
  return out.sort();
}

/** The folder of a path (`src/http/app.ts` -> `src/http`). */
function folderOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/"));
}

/** The top folder under `src/` of a path (`src/http/stats/x.ts` -> `src/http`), or null for a file of `src/` itself. */
function roomOf(path: string): string | null {
  const parts = path.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : null;
}

/** The imports that go round a door or into another folder's private file. */
function doorBreaches(edges: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  for (const [fromUrl, tos] of edges) {
    const from = name(fromUrl);
    for (const toUrl of tos) {
      const to = name(toUrl);
      const home = folderOf(to);
      const base = to.slice(home.length + 1);
      if (base.startsWith("_") && folderOf(from) !== home) {
        out.push(`${from} imports ${to}, private to ${home}/`);
        continue;
      }
      const inside = from.startsWith(home + "/");
      if (!inside && base !== "mod.ts" && !(to in DOORLESS)) {
        out.push(`${from} imports ${to}: go through ${home}/mod.ts`);
      }
    }
  }
  return out.sort();
}

/** Arrows between the top folders of `src/` that run back up: each pair of folders that import one another, directly or not. */
function folderCycles(edges: Map<string, Set<string>>): string[] {
  const rooms = new Map<string, Set<string>>();
  const why = new Map<string, string>();
  for (const [fromUrl, tos] of edges) {
    const a = roomOf(name(fromUrl));
    if (a === null) continue;
    if (!rooms.has(a)) rooms.set(a, new Set());
    for (const toUrl of tos) {
      const b = roomOf(name(toUrl));
      if (b === null || b === a) continue;
      rooms.get(a)!.add(b);
      if (!why.has(`${a} ${b}`)) {
        why.set(`${a} ${b}`, `${name(fromUrl)} -> ${name(toUrl)}`);
      }
    }
  }
  const out: string[] = [];
  for (const group of components(rooms)) {
    const cycle = shortestCycle(rooms, new Set(group), group[0]!);
    out.push(
      `${group.join(", ")} import one another: ` +
        cycle.slice(1).map((b, i) => why.get(`${cycle[i]} ${b}`)).join(
          "; ",
        ),
    );
  }
  return out;
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
if (values.check) {
  const folders = folderCycles(edges);
  for (const line of folders) console.log(`folders: ${line}`);
  const breaches = doorBreaches(edges);
  for (const line of breaches) console.log(`door: ${line}`);
  const impure = impurities(edges);
  for (const line of impure) console.log(`pure: ${line}`);
  const reaches = workerReaches();
  for (const line of reaches) console.log(`worker: ${line}`);
  const broken = folders.length + breaches.length + impure.length +
    reaches.length;
  if (broken === 0) {
    console.log(
      "no folder cycles; every import through a door; engine and guarantee pure; the encoder's worker inside its folder",
    );
  }
  if (groups.length + broken > 0) Deno.exit(1);
}
