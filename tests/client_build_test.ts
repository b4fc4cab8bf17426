/**
 * `deno task build:client` makes an npm package of the client that Node
 * imports and uses against a served bundle, and that `npm pack` accepts.
 */

import assert from "node:assert/strict";
import { tempDir } from "./_fixtures.ts";
import { startServer } from "./_http_helpers.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Whether `command --version` runs here. */
function available(command: string): boolean {
  try {
    return new Deno.Command(command, {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
}

const HAS_NODE = available("node");
const HAS_NPM = available("npm");

async function build(out: string) {
  const run = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      `--allow-write=${out}`,
      "--allow-env",
      `${ROOT}scripts/build-client.ts`,
      "--out",
      out,
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
}

Deno.test("build:client writes an ES module, its declarations and a package manifest, with no Deno API", async () => {
  await using dir = await tempDir();
  await build(dir.path);
  const js = await Deno.readTextFile(`${dir.path}/index.js`);
  const dts = await Deno.readTextFile(`${dir.path}/index.d.ts`);
  const pkg = JSON.parse(await Deno.readTextFile(`${dir.path}/package.json`));
  assert.match(js, /^export class DecisionClient\b/m);
  assert.doesNotMatch(js, /\bDeno\.|: string|interface /);
  assert.match(dts, /export declare class DecisionClient/);
  assert.match(dts, /export interface ClientOptions/);
  assert.equal(pkg.type, "module");
  assert.equal(pkg.main, "./index.js");
  assert.equal(pkg.types, "./index.d.ts");
});

Deno.test({
  name: "npm pack accepts the client package",
  ignore: !HAS_NPM,
  fn: async () => {
    await using dir = await tempDir();
    await build(dir.path);
    const run = await new Deno.Command("npm", {
      args: ["pack", "--dry-run", "--json"],
      cwd: dir.path,
      stdout: "piped",
      stderr: "piped",
      env: { npm_config_update_notifier: "false", NO_COLOR: "1" },
    }).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    const [packed] = JSON.parse(new TextDecoder().decode(run.stdout));
    assert.equal(packed.name, "@dtable/client");
    assert.deepEqual(
      packed.files.map((f: { path: string }) => f.path).sort(),
      ["index.d.ts", "index.js", "package.json"],
    );
  },
});

Deno.test({
  name: "Node imports the built client and decides through a served bundle",
  ignore: !HAS_NODE,
  fn: async () => {
    await using dir = await tempDir();
    await build(`${dir.path}/client`);
    const server = await startServer({ bundle: `${ROOT}demo/bundle` });
    try {
      // A Node program of a user's: the package, imported by its file.
      await Deno.writeTextFile(
        `${dir.path}/use.mjs`,
        `import { DecisionClient } from "./client/index.js";
const asked = [];
const client = new DecisionClient({
  url: process.argv[2],
  model: (ask) => { asked.push(ask.question); return ask.question === "topic" ? "delivery" : false; },
  onFeedbackError: (e) => { console.error(String(e)); process.exitCode = 1; },
});
const answers = await client.decide("where is my parcel, it has not arrived yet");
console.log(JSON.stringify({ answers, asked }));
`,
      );
      const run = await new Deno.Command("node", {
        args: ["use.mjs", server.base],
        cwd: dir.path,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(run.stderr);
      assert.equal(run.code, 0, stderr);
      const { answers } = JSON.parse(new TextDecoder().decode(run.stdout));
      assert.equal(answers.topic.answer, "delivery");
      assert.ok(["table", "model"].includes(answers.topic.source));
      assert.equal(typeof answers.topic.certified, "boolean");
      assert.equal(answers.wants_human.answer, false);
    } finally {
      await server.stop();
    }
  },
});

Deno.test({
  name:
    "the README's import works as written in a Node project that installed the built package, and refused feedback reaches onFeedbackError",
  ignore: !HAS_NODE || !HAS_NPM,
  fn: async () => {
    const readme = await Deno.readTextFile(`${ROOT}README.md`);
    const line = readme.match(/^import \{ DecisionClient \} from "[^"]+";$/m)
      ?.[0];
    assert.ok(line !== undefined, "the README shows the client's import");
    await using dir = await tempDir();
    await build(`${dir.path}/client`);
    const project = `${dir.path}/project`;
    await Deno.mkdir(project);
    await Deno.writeTextFile(
      `${project}/package.json`,
      JSON.stringify({ name: "a-proxy", version: "1.0.0", type: "module" }),
    );
    // As the README says: npm install /path/to/the/clone/dist/client.
    const install = await new Deno.Command("npm", {
      args: [
        "install",
        "--offline",
        "--no-audit",
        "--no-fund",
        `${dir.path}/client`,
      ],
      cwd: project,
      stdout: "piped",
      stderr: "piped",
      env: { npm_config_update_notifier: "false", NO_COLOR: "1" },
    }).output();
    assert.equal(install.code, 0, new TextDecoder().decode(install.stderr));
    const server = await startServer({
      bundle: `${ROOT}demo/bundle`,
      args: ["--audit-rate", "1"],
    });
    try {
      // The model's labels end in a carriage return: every audit's
      // feedback is refused, and the client says so for each.
      await Deno.writeTextFile(
        `${project}/proxy.mjs`,
        `${line}
const errors = [];
const client = new DecisionClient({
  url: process.argv[2],
  model: (ask) => ask.question === "topic" ? "delivery\\r" : false,
  onFeedbackError: (e) => errors.push({ kind: e.kind, reason: e.reason, question: e.item.question, message: e.message }),
});
for (let i = 0; i < 3; i++) await client.decide("where is my parcel, it has not arrived yet");
console.log(JSON.stringify({ errors, counts: client.feedbackCounts }));
`,
      );
      const run = await new Deno.Command("node", {
        args: ["proxy.mjs", server.base],
        cwd: project,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
      const { errors, counts } = JSON.parse(
        new TextDecoder().decode(run.stdout),
      );
      const refused = errors.filter((e: { kind: string }) =>
        e.kind === "refused"
      );
      assert.ok(refused.length >= 1, JSON.stringify(errors));
      for (const e of refused) {
        assert.equal(e.reason, "unknown_option");
        assert.equal(e.question, "topic");
        assert.match(e.message, /ends in a carriage return/);
      }
      assert.equal(counts.refused, refused.length);
      assert.equal(counts.sent, counts.accepted + counts.refused);
    } finally {
      await server.stop();
    }
  },
});
