// The plugin's hooks against the real `aeterna bridge` and a real `aeterna serve` (no OpenCode:
// the hooks are called as OpenCode calls them). Needs AETERNA_BIN (the built `aeterna`) and the
// built sample extensions in <target>/wasm-guests/sample-extensions (as `aeterna-testkit` and
// tests/mcp lay them out), or AETERNA_SAMPLES_DIR.
//
//   AETERNA_BIN=target/debug/aeterna node --test clients/opencode/test/*.test.ts

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { BridgeClient, bridgeArgs, createHooks, optionsFromEnv } from "../src/index.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const bin = process.env.AETERNA_BIN ?? join(root, "target/debug/aeterna");
const samples = process.env.AETERNA_SAMPLES_DIR ?? join(dirname(dirname(resolve(bin))), "wasm-guests/sample-extensions");
const SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

let server: ChildProcess;
let bridge: BridgeClient;
let work: string;
const logs: string[] = [];

function startServer(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(bin, ["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  return new Promise((resolveUrl, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      out += chunk;
      const match = out.match(/(http:\/\/\S+\/mcp)/);
      if (match) resolveUrl({ child, url: match[1] });
    });
    child.on("exit", (code) => reject(new Error(`aeterna serve exited (${code})`)));
  });
}

before(async () => {
  assert.ok(existsSync(bin), `aeterna binary not found at ${bin}: build it or set AETERNA_BIN`);
  assert.ok(existsSync(samples), `no built samples at ${samples}: run the Rust tests first or set AETERNA_SAMPLES_DIR`);
  work = mkdtempSync(join(tmpdir(), "aeterna-opencode-"));
  const extensions = join(work, "extensions");
  mkdirSync(extensions);
  for (const stem of ["secret_redactor", "todo_tags", "context_injector", "output_compactor"]) {
    copyFileSync(join(samples, `${stem}.wasm`), join(extensions, `${stem}.wasm`));
    const manifest = join(root, "sample-extensions", stem.replaceAll("_", "-"), `${stem}.toml`);
    if (existsSync(manifest)) copyFileSync(manifest, join(extensions, `${stem}.toml`));
  }
  const started = await startServer(join(work, "server"));
  server = started.child;
  const options = optionsFromEnv(
    { AETERNA_BIN: bin, AETERNA_SERVER_URL: started.url, AETERNA_EXTENSIONS_DIR: extensions, AETERNA_BRIDGE_DATA_DIR: join(work, "bridge") },
    work,
  );
  bridge = await BridgeClient.start({ command: options.command, args: bridgeArgs(options), timeoutMs: 30_000 });
});

after(async () => {
  await bridge?.close();
  server?.kill("SIGKILL");
  if (work) rmSync(work, { recursive: true, force: true });
});

function hooks() {
  const options = optionsFromEnv({ AETERNA_BIN: bin, AETERNA_CONTEXT_TOKENS: "500" }, work);
  return createHooks(bridge, options, (line) => logs.push(line));
}

test("the bridge lists the local and the server's tools", async () => {
  const tools = await bridge.listTools();
  for (const name of ["extensions_apply", "extensions_list", "memory_add", "context_assemble", "trajectory_capture"]) {
    assert.ok(tools.includes(name), `${name} in ${tools}`);
  }
});

test("chat.message: a secret in the user's text never leaves redacted", async () => {
  const output = { parts: [{ type: "text", text: `deploy with GITHUB_TOKEN=${SECRET}` }, { type: "file", url: "x" }] };
  await hooks()["chat.message"]({ sessionID: "s1" }, output);
  const text = (output.parts[0] as { text: string }).text;
  assert.ok(!text.includes(SECRET), text);
  assert.match(text, /\[REDACTED:github-token\]/);
});

test("tool.execute.after: long tool output is compacted and the call is captured", async () => {
  const long = Array.from({ length: 3000 }, (_, i) => `line ${i}: compiling crate number ${i}`).join("\n");
  const output = { title: "bash", output: long, metadata: {} };
  await hooks()["tool.execute.after"]({ tool: "bash", sessionID: "s1", callID: "c1", args: { command: "cargo build" } }, output);
  assert.ok(output.output.length < long.length, "compacted");
  assert.match(output.output, /line 0:/);
  assert.match(output.output, /line 2999:/);
});

test("experimental.text.complete: the model's TODOs become checklist lines, secrets are removed", async () => {
  const output = { text: `Use ${SECRET}.\n<todo owner="ana">write the migration</todo>` };
  await hooks()["experimental.text.complete"]({ sessionID: "s1" }, output);
  assert.ok(!output.text.includes(SECRET), output.text);
  assert.match(output.text, /- \[ \] write the migration \(owner: ana\)/);
});

test("session.created: prompt additions and assembled context reach the system prompt", async () => {
  const plugin = hooks();
  const memory = await bridge.callTool("memory_add", { content: "The parser crate uses nom 8 combinators", layer: "company" });
  assert.equal(memory.isError, false, memory.text);
  await plugin.event({ event: { type: "session.created", properties: { info: { id: "s2" } } } });
  const output = { system: [] as string[] };
  await plugin["experimental.chat.system.transform"]({ sessionID: "s2" }, output);
  assert.equal(output.system.length, 1);
  assert.match(output.system[0], /<todo/);
  const other = { system: [] as string[] };
  await plugin["experimental.chat.system.transform"]({ sessionID: "unknown" }, other);
  assert.deepEqual(other.system, []);
});

test("a chain that cannot run: the user's message is held back, other text passes unchanged", async () => {
  const plugin = createHooks(bridge, optionsFromEnv({}, work), (line) => logs.push(line));
  // An empty session id is refused by extensions_apply.
  const message = { parts: [{ type: "text", text: `keep ${SECRET}` }] };
  await assert.rejects(plugin["chat.message"]({ sessionID: "" }, message), /invalid `session`/);
  const before = logs.length;
  const output = { text: "the model's answer" };
  await plugin["experimental.text.complete"]({ sessionID: "" }, output);
  assert.equal(output.text, "the model's answer");
  assert.equal(logs.length, before + 1);
  assert.match(logs.at(-1)!, /invalid `session`/);
});

test("chat.message: context for the message reaches the system prompt of its request", async () => {
  const plugin = hooks();
  const memory = await bridge.callTool("memory_add", { content: "Invoices are rounded half-even to two decimals in billing.rs", layer: "company" });
  assert.equal(memory.isError, false, memory.text);
  await plugin["chat.message"]({ sessionID: "s3" }, { parts: [{ type: "text", text: "how are invoices rounded?" }] });
  const output = { system: [] as string[] };
  await plugin["experimental.chat.system.transform"]({ sessionID: "s3" }, output);
  assert.ok(output.system.some((text) => text.includes("rounded half-even")), JSON.stringify(output.system));
  // The next message brings its own context, not the last one's.
  await plugin["chat.message"]({ sessionID: "s3" }, { parts: [{ type: "text", text: "zyxxy qwop flurb" }] });
  const next = { system: [] as string[] };
  await plugin["experimental.chat.system.transform"]({ sessionID: "s3" }, next);
  assert.ok(!next.system.some((text) => text.includes("rounded half-even")), JSON.stringify(next.system));
});

test("tool.execute.after: a failing command goes to Hindsight, and its known fix reaches the model", async () => {
  const plugin = hooks();
  const failure = "error[E0425]: cannot find value `widht` in this scope\n --> src/layout.rs:9:13\n  |\n9 |     total + widht\n  |             ^^^^^ help: a local variable with a similar name exists: `width`\n\nerror: could not compile `layout` (lib) due to 1 previous error";
  const first = { title: "bash", output: failure, metadata: { exit: 101 } };
  await plugin["tool.execute.after"]({ tool: "bash", sessionID: "s4", args: { command: "cargo build" } }, first);
  assert.ok(!first.output.includes("Fixes that worked"), first.output);
  // The plugin scopes its calls to the project directory's name.
  const project_id = basename(work);
  const known = await bridge.callTool("hindsight_query", { error_text: failure, project_id });
  assert.equal(known.structuredContent?.status, "matched", known.text);
  const signature = known.structuredContent.matched[0].signature_id;
  const resolved = await bridge.callTool("hindsight_resolve", { signature_id: signature, project_id, description: "Fix the typo: the variable is `width`." });
  assert.equal(resolved.isError, false, resolved.text);
  const second = { title: "bash", output: failure, metadata: { exit: 101 } };
  await plugin["tool.execute.after"]({ tool: "bash", sessionID: "s5", args: { command: "cargo build" } }, second);
  assert.match(second.output, /Fixes that worked for it/);
  assert.match(second.output, /E0425: Fix the typo: the variable is `width`\./);
  // A command that succeeded is left alone.
  const ok = { title: "bash", output: "Finished `dev` profile", metadata: { exit: 0 } };
  await plugin["tool.execute.after"]({ tool: "bash", sessionID: "s5" }, ok);
  assert.equal(ok.output, "Finished `dev` profile");
});
