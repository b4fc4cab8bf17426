/**
 * Every relative link of the README, the CHANGELOG and `docs/` reaches a
 * file that exists, and every `#anchor` a heading of the file it names (as
 * GitHub makes heading anchors: lower case, punctuation dropped, spaces to
 * hyphens, `-1`, `-2` for repeats).
 */

import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;

/** The anchors of a Markdown text's headings (and of its `<a id>` tags), outside code fences. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    for (const a of line.matchAll(/<a (?:id|name)="([^"]+)"/g)) {
      anchors.add(a[1]!);
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading === null) continue;
    const slug = heading[1]!.trim().toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

function markdownFiles(): string[] {
  const docs = [...Deno.readDirSync(`${ROOT}docs`)]
    .filter((e) => e.isFile && e.name.endsWith(".md"))
    .map((e) => `docs/${e.name}`);
  return ["README.md", "CHANGELOG.md", ...docs];
}

/** The broken relative links of `file`: a missing file or an anchor its target lacks. */
function brokenLinks(file: string): string[] {
  const text = Deno.readTextFileSync(`${ROOT}${file}`);
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : ".";
  const broken: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]*)\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
    const [path, anchor] = target.split("#");
    const linked = path === "" ? file : `${dir}/${path}`.replace(/^\.\//, "");
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(`${ROOT}${linked}`);
    } catch {
      broken.push(`${target} (no such file)`);
      continue;
    }
    if (anchor === undefined || !info.isFile || !linked.endsWith(".md")) {
      continue;
    }
    if (!anchorsOf(Deno.readTextFileSync(`${ROOT}${linked}`)).has(anchor)) {
      broken.push(`${target} (no such heading)`);
    }
  }
  return broken;
}

Deno.test("anchorsOf() makes GitHub's heading anchors, repeats numbered", () => {
  const anchors = anchorsOf(
    "# Learning from the service's own feedback\n## `serve --learn DIR`\n## Set up\n## Set up\n```\n# not a heading\n```\n",
  );
  assert.deepEqual([...anchors], [
    "learning-from-the-services-own-feedback",
    "serve---learn-dir",
    "set-up",
    "set-up-1",
  ]);
});

Deno.test("every relative link of the README, the CHANGELOG and docs/ reaches its file and heading", () => {
  const broken = markdownFiles().flatMap((file) =>
    brokenLinks(file).map((link) => `${file}: ${link}`)
  );
  assert.deepEqual(broken, []);
});
