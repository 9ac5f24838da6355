// The Aeterna plugin for OpenCode. It spawns `aeterna bridge` once per OpenCode instance and:
//
// * `chat.message` — runs the input-messages chain over the user's text parts before they are
//   sent to the model (the sample secret-redactor removes secrets there);
// * `chat.message` also assembles context for that message (`context_assemble` with the user's
//   redacted text as the query; cached per text, within `requestTokens`), added to the system
//   prompt of the request that carries it;
// * `tool.execute.after` — runs the plain-text chain over each tool's output (compaction,
//   redaction) and records the call with `trajectory_capture`; a failing shell command also
//   goes to Hindsight (`hindsight_capture`), and a fix it has `matched` is appended to the
//   output the model reads;
// * `experimental.text.complete` — runs the llm-output chain (with the tag stage) over the
//   model's finished text;
// * on `session.created` — calls `context_assemble` and adds the result to that session's system
//   prompt (`experimental.chat.system.transform`), with the extensions' prompt additions.
//
// What the user sends fails closed: if the input-messages chain cannot run (the redactor among
// it), the hook throws and the message is not sent. The other hooks fail open: the text is left
// as it was and the error is logged.
// Configuration comes from the environment (see README.md).

import { basename } from "node:path";

import { BridgeClient } from "./bridge.ts";
import type { ToolResult } from "./bridge.ts";

export { BridgeClient } from "./bridge.ts";

export interface AeternaOptions {
  /** The `aeterna` executable (AETERNA_BIN, default `aeterna`). */
  command: string;
  /** The memory server's MCP endpoint (AETERNA_SERVER_URL). */
  serverUrl: string;
  /** The extensions directory (AETERNA_EXTENSIONS_DIR, default `<project>/.aeterna/extensions`). */
  extensionsDir: string;
  /** Name of the variable holding the server token (AETERNA_TOKEN_ENV). */
  tokenEnv?: string;
  /** The bridge's data directory (AETERNA_BRIDGE_DATA_DIR). */
  dataDir?: string;
  /** Token budget of the context added at session start (AETERNA_CONTEXT_TOKENS, 2000; 0 = off). */
  contextTokens: number;
  /** Token budget of the context assembled per user message (AETERNA_REQUEST_TOKENS, 800; 0 = off). */
  requestTokens: number;
  /** The memory project (AETERNA_PROJECT_ID, default the project directory's name). */
  projectId: string;
}

export function optionsFromEnv(env: Record<string, string | undefined>, directory: string): AeternaOptions {
  return {
    command: env.AETERNA_BIN || "aeterna",
    serverUrl: env.AETERNA_SERVER_URL || "http://127.0.0.1:7878/mcp",
    extensionsDir: env.AETERNA_EXTENSIONS_DIR || `${directory}/.aeterna/extensions`,
    tokenEnv: env.AETERNA_TOKEN_ENV || undefined,
    dataDir: env.AETERNA_BRIDGE_DATA_DIR || undefined,
    contextTokens: Number(env.AETERNA_CONTEXT_TOKENS ?? 2000) || 0,
    requestTokens: Number(env.AETERNA_REQUEST_TOKENS ?? 800) || 0,
    projectId: env.AETERNA_PROJECT_ID || basename(directory) || "default",
  };
}

export function bridgeArgs(options: AeternaOptions): string[] {
  const args = ["bridge", "--server", options.serverUrl, "--extensions", options.extensionsDir];
  if (options.tokenEnv) args.push("--token-env", options.tokenEnv);
  if (options.dataDir) args.push("--data-dir", options.dataDir);
  return args;
}

type Log = (message: string) => void;

/** Most text kept per session for the system prompt (context and prompt additions). */
const MAX_SYSTEM_BYTES = 64 * 1024;
/** Sessions whose system text is remembered at once; the oldest are forgotten first. */
const MAX_SESSIONS = 256;
/** Messages whose assembled context is cached; the oldest are forgotten first. */
const MAX_CACHED_QUERIES = 64;
/** The longest user text used as a query. */
const MAX_QUERY_CHARS = 2048;
/** The most of a failing command's output sent to Hindsight, and of the fixes appended. */
const MAX_ERROR_CHARS = 16 * 1024;
const MAX_FIX_CHARS = 4096;

/** A bounded map that forgets its oldest entry first. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
  map.set(key, value);
}

/** Whether a tool call was a shell command that failed. */
export function failedCommand(tool: string, metadata: any): boolean {
  if (tool !== "bash") return false;
  if (metadata?.error) return true;
  return typeof metadata?.exit === "number" && metadata.exit !== 0;
}

/** The fixes a `hindsight_query` answer calls `matched`, as text for the model. */
export function knownFixes(answer: any): string | undefined {
  if (answer?.status !== "matched") return undefined;
  const lines: string[] = [];
  for (const match of answer.matched ?? []) {
    for (const resolution of (match.resolutions ?? []).slice(0, 2)) {
      if (!resolution.description) continue;
      lines.push(`- ${match.error_type ?? "error"}: ${resolution.description}`);
      if (resolution.changes?.diff) lines.push("  ```diff", resolution.changes.diff.trimEnd(), "  ```");
      lines.push(`  (After applying it, report the result with hindsight_feedback, resolution_id ${resolution.id}.)`);
    }
  }
  if (lines.length === 0) return undefined;
  const text = ["Aeterna's memory has seen this error before. Fixes that worked for it, best first:", ...lines].join("\n");
  return text.slice(0, MAX_FIX_CHARS);
}

/** The hooks, over a started bridge. Exported so they can be tested without OpenCode. */
export function createHooks(bridge: BridgeClient, options: AeternaOptions, log: Log = () => {}) {
  const systemBySession = new Map<string, string>();
  /** The context of each session's latest user message. */
  const requestBySession = new Map<string, string>();
  /** Assembled context by query text, so a repeated message costs no call. */
  const contextByQuery = new Map<string, string>();
  let serverDown = false;

  /** Calls a memory server tool through the bridge; `undefined` (and a log line, once per
   * outage) when it cannot. */
  async function serverTool(tool: string, args: Record<string, unknown>): Promise<any | undefined> {
    const result = await bridge.callTool(tool, { project_id: options.projectId, ...args }).catch((error: Error) => ({ isError: true, text: error.message }) as ToolResult);
    if (!result.isError) {
      if (serverDown) log("aeterna: the memory server answers again");
      serverDown = false;
      return result.structuredContent;
    }
    const unreachable = /unreachable|queued locally|cannot start|bridge exited/.test(result.text);
    if (!unreachable) log(`aeterna: ${tool}: ${result.text}`);
    else if (!serverDown) log(`aeterna: OpenCode continues without memory: ${result.text}`);
    serverDown ||= unreachable;
    return undefined;
  }

  async function requestContext(sessionID: string, text: string): Promise<void> {
    requestBySession.delete(sessionID);
    const query = text.trim().slice(0, MAX_QUERY_CHARS);
    if (options.requestTokens <= 0 || !query) return;
    let context = contextByQuery.get(query);
    if (context === undefined) {
      const assembled = await serverTool("context_assemble", { query, token_budget: options.requestTokens, session_id: sessionID });
      if (assembled === undefined) return;
      context = typeof assembled.content === "string" ? assembled.content.trim() : "";
      remember(contextByQuery, query, context, MAX_CACHED_QUERIES);
    }
    if (context) remember(requestBySession, sessionID, `Memories relevant to this request, from Aeterna:\n\n${context}`, MAX_SESSIONS);
  }

  /** Hindsight for a failing command: captured, and the fixes it knows appended for the model. */
  async function failed(sessionID: string, output: { output: string }): Promise<void> {
    const error_text = output.output.slice(0, MAX_ERROR_CHARS);
    if (!error_text.trim()) return;
    const [, known] = await Promise.all([
      serverTool("hindsight_capture", { error_text, session_id: sessionID }),
      serverTool("hindsight_query", { error_text, limit: 3, session_id: sessionID }),
    ]);
    const fixes = knownFixes(known);
    if (fixes) output.output = `${output.output}\n\n${fixes}`;
  }

  /** Runs a chain; throws with the reason when it cannot. */
  async function applyOrThrow(hook: string, payload: unknown, session: string): Promise<any> {
    const result = await bridge.callTool("extensions_apply", { hook, payload, session });
    if (result.isError) throw new Error(`aeterna: ${result.text}`);
    return result.structuredContent?.output;
  }

  /** Runs a chain; `undefined` (and a log line) when it cannot. */
  async function apply(hook: string, payload: unknown, session: string): Promise<any | undefined> {
    try {
      return await applyOrThrow(hook, payload, session);
    } catch (error) {
      log(`aeterna: extensions_apply ${hook} failed: ${(error as Error).message}`);
      return undefined;
    }
  }

  async function sessionStarted(sessionID: string): Promise<void> {
    const parts: string[] = [];
    try {
      const prompt = await bridge.callTool("extensions_prompt", {});
      for (const addition of prompt.structuredContent?.prompt_additions ?? []) parts.push(addition.text);
    } catch (error) {
      log(`aeterna: extensions_prompt failed: ${(error as Error).message}`);
    }
    if (options.contextTokens > 0) {
      const context = await bridge
        .callTool("context_assemble", { query: "start of a coding session", token_budget: options.contextTokens, session_id: sessionID, project_id: options.projectId })
        .catch((error: Error) => ({ isError: true, text: error.message }) as ToolResult);
      if (context.isError) log(`aeterna: context_assemble: ${context.text}`);
      else if (context.structuredContent?.content) parts.push(context.structuredContent.content);
    }
    const text = parts.join("\n\n").slice(0, MAX_SYSTEM_BYTES);
    if (text) remember(systemBySession, sessionID, text, MAX_SESSIONS);
  }

  return {
    event: async ({ event }: { event: any }) => {
      if (event?.type === "session.created") {
        const id = event.properties?.info?.id ?? event.properties?.sessionID;
        if (typeof id === "string") await sessionStarted(id);
      }
    },

    "experimental.chat.system.transform": async (input: { sessionID?: string }, output: { system: string[] }) => {
      if (!input.sessionID) return;
      for (const text of [systemBySession.get(input.sessionID), requestBySession.get(input.sessionID)]) {
        if (text) output.system.push(text);
      }
    },

    "chat.message": async (input: { sessionID: string }, output: { parts: any[] }) => {
      const texts: string[] = [];
      for (const part of output.parts) {
        if (part?.type !== "text" || typeof part.text !== "string" || part.synthetic) continue;
        const messages = await applyOrThrow("input-messages", [{ role: "user", content: part.text }], input.sessionID);
        const user = Array.isArray(messages) ? messages.filter((m: any) => m.role === "user").at(-1) : undefined;
        if (user && typeof user.content === "string") part.text = user.content;
        texts.push(part.text);
      }
      // The query is the redacted text: what memory sees is what the model would.
      await requestContext(input.sessionID, texts.join("\n"));
    },

    "tool.execute.after": async (
      input: { tool: string; sessionID: string; callID?: string; args?: unknown },
      output: { title?: string; output: string; metadata?: any },
    ) => {
      if (typeof output.output === "string") {
        const text = await apply("plain-text", output.output, input.sessionID);
        if (typeof text === "string") output.output = text;
      }
      const commandFailed = failedCommand(input.tool, output.metadata);
      const event = {
        tool_name: input.tool,
        input: input.args ?? null,
        output: output.output ?? null,
        success: !(output.metadata && output.metadata.error) && !commandFailed,
      };
      // Queued by the bridge when the server is down; never blocks the agent on failure.
      bridge
        .callTool("trajectory_capture", { event, session_id: input.sessionID, project_id: options.projectId })
        .then((result) => {
          if (result.isError) log(`aeterna: trajectory_capture: ${result.text}`);
        })
        .catch((error: Error) => log(`aeterna: trajectory_capture failed: ${error.message}`));
      if (commandFailed && typeof output.output === "string") await failed(input.sessionID, output);
    },

    "experimental.text.complete": async (input: { sessionID: string }, output: { text: string }) => {
      if (typeof output.text !== "string") return;
      const text = await apply("llm-output", output.text, input.sessionID);
      if (typeof text === "string") output.text = text;
    },
  };
}

/** The OpenCode plugin: `plugin: ["@aeterna/opencode-plugin"]` in opencode.json. */
export const AeternaPlugin = async (ctx: { directory: string; client?: any }) => {
  const options = optionsFromEnv(process.env, ctx.directory);
  const log: Log = (message) => console.error(message);
  const bridge = await BridgeClient.start({
    command: options.command,
    args: bridgeArgs(options),
    // The bridge's own warnings (an unreachable server, queued writes) reach OpenCode's log.
    onLog: (line) => {
      if (/\b(WARN|ERROR)\b/.test(line)) log(`aeterna bridge: ${line}`);
    },
  }).catch((error: Error) => {
    log(`aeterna: cannot start \`${options.command} bridge\` (${error.message}); set AETERNA_BIN to the aeterna executable`);
    throw error;
  });
  return createHooks(bridge, options, log);
};

export default AeternaPlugin;
