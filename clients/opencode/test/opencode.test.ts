// The plugin inside the real OpenCode (npm `opencode-ai`), run non-interactively
// (`opencode run`) against an OpenAI-compatible stand-in model server started here, with the
// real `aeterna bridge` and `aeterna serve`. Asserts what the model received: the secret in the
// prompt was redacted by the sample secret-redactor before it left OpenCode, and memory
// assembled for the message was there; and that a failing command the model ran reached
// Hindsight.
//
// Needs OPENCODE_BIN or `npm install` in clients/opencode (the `opencode-ai` dev dependency),
// AETERNA_BIN and the built samples (see plugin.test.ts).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const bin = process.env.AETERNA_BIN ?? join(root, "target/debug/aeterna");
const samples = process.env.AETERNA_SAMPLES_DIR ?? join(dirname(dirname(resolve(bin))), "wasm-guests/sample-extensions");
const opencode = process.env.OPENCODE_BIN ?? join(here, "../node_modules/.bin/opencode");
const SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2";

const received: any[] = [];
let model: Server;
let server: ChildProcess;
let work: string;
let serverUrl: string;

/** The prompt that makes the stand-in model run a failing command with the bash tool. */
const RUN_FAILING = "run the failing check";

/** Whether a request asks for the failing command and has not run it yet. */
function wantsFailingRun(body: any): boolean {
  const messages: any[] = body.messages ?? [];
  const asked = messages.some((message) => message.role === "user" && JSON.stringify(message.content).includes(RUN_FAILING));
  const offered = (body.tools ?? []).some((tool: any) => tool.function?.name === "bash");
  return asked && offered && !messages.some((message) => message.role === "tool");
}

/** An OpenAI-compatible `/v1/chat/completions` that records each request and answers with a
 * fixed text (streamed when asked), including a `<todo>` for the llm-output chain; asked to
 * run the failing check, it first calls the bash tool. */
function startModel(): Promise<string> {
  model = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
      received.push({ path: request.url, body });
      const answer = 'Done. <todo owner="ana">write the migration</todo>';
      if (body.stream) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: object, finish: string | null, usage?: object) =>
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "model", choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
        const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
        if (wantsFailingRun(body)) {
          const call = { command: `python3 -c "import aeterna_missing_module"`, description: "Run the check" };
          response.write(chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "bash", arguments: JSON.stringify(call) } }] }, null));
          response.write(chunk({}, "tool_calls", usage));
        } else {
          response.write(chunk({ role: "assistant", content: answer }, null));
          response.write(chunk({}, "stop", usage));
        }
        response.end("data: [DONE]\n\n");
      } else {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({
          id: "c1", object: "chat.completion", created: 1, model: "model",
          choices: [{ index: 0, message: { role: "assistant", content: "a title" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }));
      }
    });
  });
  return new Promise((ok) => model.listen(0, "127.0.0.1", () => ok(`http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`)));
}

function run(command: string, args: string[], options: { cwd: string; env: Record<string, string | undefined>; timeoutMs: number }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((ok) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout = (stdout + chunk).slice(-65536)));
    child.stderr.on("data", (chunk) => (stderr = (stderr + chunk).slice(-65536)));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      ok({ code, stdout, stderr });
    });
  });
}

before(async () => {
  assert.ok(existsSync(opencode), `OpenCode not found at ${opencode}: npm install in clients/opencode or set OPENCODE_BIN`);
  assert.ok(existsSync(bin), `aeterna binary not found at ${bin}`);
  assert.ok(existsSync(samples), `no built samples at ${samples}`);
  work = mkdtempSync(join(tmpdir(), "aeterna-opencode-e2e-"));
  const child = spawn(bin, ["serve", "--listen", "127.0.0.1:0", "--data-dir", join(work, "server")], { stdio: ["ignore", "pipe", "ignore"] });
  server = child;
  serverUrl = await new Promise((ok, fail) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const match = out.match(/(http:\/\/\S+\/mcp)/);
      if (match) ok(match[1]);
    });
    child.on("exit", (code) => fail(new Error(`aeterna serve exited (${code})`)));
  });
});

after(async () => {
  server?.kill("SIGKILL");
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Calls a memory server tool with one stateless (2026-07-28) request. */
async function serverTool(name: string, args: object): Promise<any> {
  const response = await fetch(serverUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {
      name, arguments: args,
      _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "opencode-test", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": {} } } }),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const message = JSON.parse(text.split("\n").find((line) => line.startsWith("data:"))?.slice(5) ?? text);
  assert.notEqual(message.result?.isError, true, text);
  return message.result.structuredContent;
}

/** A project using the plugin and the stand-in model, and `opencode run` in it. */
async function openCodeRun(name: string, prompt: string, extraEnv: Record<string, string> = {}) {
  const baseUrl = await startModel();
  const project = join(work, name);
  const extensions = join(project, ".aeterna", "extensions");
  mkdirSync(extensions, { recursive: true });
  for (const stem of ["secret_redactor", "todo_tags", "context_injector"]) {
    copyFileSync(join(samples, `${stem}.wasm`), join(extensions, `${stem}.wasm`));
    const manifest = join(root, "sample-extensions", stem.replaceAll("_", "-"), `${stem}.toml`);
    if (existsSync(manifest)) copyFileSync(manifest, join(extensions, `${stem}.toml`));
  }
  writeFileSync(
    join(project, "opencode.json"),
    JSON.stringify({
      $schema: "https://opencode.ai/config.json",
      provider: {
        standin: {
          npm: "@ai-sdk/openai-compatible",
          name: "Stand-in",
          options: { baseURL: baseUrl, apiKey: "not-a-real-key" },
          models: { model: { name: "Stand-in model", tool_call: true } },
        },
      },
      model: "standin/model",
      small_model: "standin/model",
      autoupdate: false,
      share: "disabled",
      permission: { bash: "allow" },
      plugin: [`file://${resolve(here, "../src/index.ts")}`],
    }),
  );
  const home = join(work, `${name}-home`);
  mkdirSync(home);
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    AETERNA_BIN: bin,
    AETERNA_SERVER_URL: serverUrl,
    AETERNA_EXTENSIONS_DIR: extensions,
    AETERNA_BRIDGE_DATA_DIR: join(work, `${name}-bridge`),
    ...extraEnv,
  };
  const result = await run(opencode, ["run", "--print-logs", "-m", "standin/model", prompt], { cwd: project, env, timeoutMs: 240_000 });
  model.close();
  const chats = received.splice(0).filter((request) => request.path?.endsWith("/chat/completions"));
  assert.ok(chats.length > 0, `the model got no request (exit ${result.code}):\n${result.stderr.slice(-4000)}`);
  return { result, chats };
}

test("opencode run: the model never sees the secret, and sees the extensions' prompt and the message's memory", async () => {
  // A memory only this message's own context can bring: the session-start context is off.
  const MEMORY = "Deployments go through the blue-green pipeline in deploy/pipeline.yml";
  await serverTool("memory_add", { content: MEMORY, layer: "company" });
  const { result, chats } = await openCodeRun("project", `deploy it through the pipeline with GITHUB_TOKEN=${SECRET} please`, {
    AETERNA_CONTEXT_TOKENS: "0",
  });
  const everything = JSON.stringify(chats);
  assert.ok(!everything.includes(SECRET), "the secret reached the model");
  assert.ok(everything.includes("[REDACTED:github-token]"), "the redacted prompt reached the model");
  // The extensions' prompt additions reached the system prompt (todo-tags explains <todo>).
  assert.ok(everything.includes("To record a task for later"), "prompt additions missing");
  assert.ok(everything.includes(MEMORY), "the context assembled for the message reached the model");
  assert.equal(result.code, 0, result.stderr.slice(-4000));
});

test("opencode run: a failing command the model runs is captured by Hindsight", async () => {
  const { result, chats } = await openCodeRun("failing", `${RUN_FAILING} and tell me what broke`);
  assert.equal(result.code, 0, result.stderr.slice(-4000));
  const afterTool = chats.filter((chat) => chat.body.messages?.some((message: any) => message.role === "tool"));
  assert.ok(afterTool.length > 0, `the model never got the tool's result:\n${result.stderr.slice(-4000)}`);
  assert.match(JSON.stringify(afterTool[0].body), /aeterna_missing_module/);
  const known = await serverTool("hindsight_query", {
    error_text: "ModuleNotFoundError: No module named 'aeterna_missing_module'",
    project_id: "failing", // the project directory's name
  });
  assert.equal(known.status, "matched", JSON.stringify(known));
  assert.equal(known.matched[0].error_type, "ModuleNotFoundError");
});
