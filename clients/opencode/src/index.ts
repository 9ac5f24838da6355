// The Aeterna plugin for OpenCode. It spawns `aeterna bridge` once per OpenCode instance and:
//
// * `chat.message` — runs the input-messages chain over the user's text parts before they are
//   sent to the model (the sample secret-redactor removes secrets there);
// * `tool.execute.after` — runs the plain-text chain over each tool's output (compaction,
//   redaction) and records the call with `trajectory_capture`;
// * `experimental.text.complete` — runs the llm-output chain (with the tag stage) over the
//   model's finished text;
// * on `session.created` — calls `context_assemble` and adds the result to that session's system
//   prompt (`experimental.chat.system.transform`), with the extensions' prompt additions.
//
// What the user sends fails closed: if the input-messages chain cannot run (the redactor among
// it), the hook throws and the message is not sent. The other hooks fail open: the text is left
// as it was and the error is logged.
// Configuration comes from the environment (see README.md).

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
}

export function optionsFromEnv(env: Record<string, string | undefined>, directory: string): AeternaOptions {
  return {
    command: env.AETERNA_BIN || "aeterna",
    serverUrl: env.AETERNA_SERVER_URL || "http://127.0.0.1:7878/mcp",
    extensionsDir: env.AETERNA_EXTENSIONS_DIR || `${directory}/.aeterna/extensions`,
    tokenEnv: env.AETERNA_TOKEN_ENV || undefined,
    dataDir: env.AETERNA_BRIDGE_DATA_DIR || undefined,
    contextTokens: Number(env.AETERNA_CONTEXT_TOKENS ?? 2000) || 0,
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

/** The hooks, over a started bridge. Exported so they can be tested without OpenCode. */
export function createHooks(bridge: BridgeClient, options: AeternaOptions, log: Log = () => {}) {
  const systemBySession = new Map<string, string>();

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
        .callTool("context_assemble", { query: "start of a coding session", token_budget: options.contextTokens, session_id: sessionID })
        .catch((error: Error) => ({ isError: true, text: error.message }) as ToolResult);
      if (context.isError) log(`aeterna: context_assemble: ${context.text}`);
      else if (context.structuredContent?.content) parts.push(context.structuredContent.content);
    }
    const text = parts.join("\n\n").slice(0, MAX_SYSTEM_BYTES);
    if (!text) return;
    if (systemBySession.size >= MAX_SESSIONS) {
      const oldest = systemBySession.keys().next().value;
      if (oldest !== undefined) systemBySession.delete(oldest);
    }
    systemBySession.set(sessionID, text);
  }

  return {
    event: async ({ event }: { event: any }) => {
      if (event?.type === "session.created") {
        const id = event.properties?.info?.id ?? event.properties?.sessionID;
        if (typeof id === "string") await sessionStarted(id);
      }
    },

    "experimental.chat.system.transform": async (input: { sessionID?: string }, output: { system: string[] }) => {
      const text = input.sessionID ? systemBySession.get(input.sessionID) : undefined;
      if (text) output.system.push(text);
    },

    "chat.message": async (input: { sessionID: string }, output: { parts: any[] }) => {
      for (const part of output.parts) {
        if (part?.type !== "text" || typeof part.text !== "string" || part.synthetic) continue;
        const messages = await applyOrThrow("input-messages", [{ role: "user", content: part.text }], input.sessionID);
        const user = Array.isArray(messages) ? messages.filter((m: any) => m.role === "user").at(-1) : undefined;
        if (user && typeof user.content === "string") part.text = user.content;
      }
    },

    "tool.execute.after": async (
      input: { tool: string; sessionID: string; callID?: string; args?: unknown },
      output: { title?: string; output: string; metadata?: any },
    ) => {
      if (typeof output.output === "string") {
        const text = await apply("plain-text", output.output, input.sessionID);
        if (typeof text === "string") output.output = text;
      }
      const event = {
        tool_name: input.tool,
        input: input.args ?? null,
        output: output.output ?? null,
        success: !(output.metadata && output.metadata.error),
      };
      // Queued by the bridge when the server is down; never blocks the agent on failure.
      bridge
        .callTool("trajectory_capture", { event, session_id: input.sessionID })
        .then((result) => {
          if (result.isError) log(`aeterna: trajectory_capture: ${result.text}`);
        })
        .catch((error: Error) => log(`aeterna: trajectory_capture failed: ${error.message}`));
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
  const bridge = await BridgeClient.start({ command: options.command, args: bridgeArgs(options), onLog: () => {} });
  return createHooks(bridge, options, log);
};

export default AeternaPlugin;
