// A minimal MCP client for `aeterna bridge` over stdio (newline-delimited JSON-RPC), with no
// dependencies: spawn, initialize, call tools. Every request has a timeout, at most
// `maxInFlight` requests wait at once, and a line from the bridge longer than `maxLineBytes`
// ends the connection, so nothing the bridge sends can grow this process without bound.

import { spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";

export interface BridgeOptions {
  /** The `aeterna` executable. */
  command: string;
  /** Arguments after the command, e.g. `["bridge", "--server", url, "--extensions", dir]`. */
  args: string[];
  env?: Record<string, string | undefined>;
  /** Longest a request may take. */
  timeoutMs?: number;
  maxInFlight?: number;
  maxLineBytes?: number;
  /** Where the bridge's log lines (stderr) go; ignored by default. */
  onLog?: (line: string) => void;
}

export interface ToolResult {
  isError: boolean;
  structuredContent?: any;
  text: string;
}

interface Pending {
  resolve: (value: any) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

const PROTOCOL_VERSION = "2025-06-18";

export class BridgeClient {
  private child: ChildProcessWithoutNullStreams;
  private pending = new Map<number, Pending>();
  private nextId = 1;
  private buffer = "";
  private closed: Error | undefined;
  private timeoutMs: number;
  private maxInFlight: number;
  private maxLineBytes: number;

  private constructor(options: BridgeOptions) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxInFlight = options.maxInFlight ?? 64;
    this.maxLineBytes = options.maxLineBytes ?? 32 * 1024 * 1024;
    this.child = spawn(options.command, options.args, {
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => this.receive(chunk));
    let logTail = "";
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => {
      logTail = (logTail + chunk).slice(-4096);
      if (options.onLog) for (const line of chunk.split("\n")) if (line) options.onLog(line);
    });
    this.child.on("error", (error) => this.fail(new Error(`cannot start ${options.command}: ${error.message}`)));
    this.child.on("exit", (code, signal) =>
      this.fail(new Error(`aeterna bridge exited (${signal ?? code}); last log lines:\n${logTail}`)),
    );
  }

  /** Spawns the bridge and completes the MCP handshake. */
  static async start(options: BridgeOptions): Promise<BridgeClient> {
    const client = new BridgeClient(options);
    await client.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "aeterna-opencode-plugin", version: "0.1.0" },
    });
    client.notify("notifications/initialized", {});
    return client;
  }

  /** Calls a tool; a tool error comes back as `isError`, a protocol error throws. */
  async callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const result = await this.request("tools/call", { name, arguments: args });
    const text = (result.content ?? [])
      .filter((block: any) => block.type === "text")
      .map((block: any) => block.text)
      .join("\n");
    return { isError: result.isError === true, structuredContent: result.structuredContent, text };
  }

  async listTools(): Promise<string[]> {
    const result = await this.request("tools/list", {});
    return (result.tools ?? []).map((tool: any) => tool.name);
  }

  /** Closes stdin (the bridge exits when its client leaves) and waits for the exit. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }

  private request(method: string, params: unknown): Promise<any> {
    if (this.closed) return Promise.reject(this.closed);
    if (this.pending.size >= this.maxInFlight) {
      return Promise.reject(new Error(`${method}: ${this.maxInFlight} requests already wait on aeterna bridge (maxInFlight)`));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: aeterna bridge did not answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }

  private notify(method: string, params: unknown): void {
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n");
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let newline: number;
    while ((newline = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.trim()) this.dispatch(line);
    }
    if (this.buffer.length > this.maxLineBytes) {
      this.fail(new Error(`aeterna bridge sent a line over ${this.maxLineBytes} bytes (maxLineBytes)`));
      this.child.kill("SIGKILL");
    }
  }

  private dispatch(line: string): void {
    let message: any;
    try {
      message = JSON.parse(line);
    } catch {
      return; // Not ours to answer: the bridge writes only MCP on stdout.
    }
    if (message.id === undefined || message.method !== undefined) {
      // A notification or a request from the bridge; answer requests with "not supported".
      if (message.method !== undefined && message.id !== undefined) {
        this.child.stdin.write(
          JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "not supported" } }) + "\n",
        );
      }
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.error) pending.reject(new Error(`aeterna bridge: ${message.error.message}`));
    else pending.resolve(message.result);
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.closed = error;
    for (const [, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.pending.clear();
  }
}
