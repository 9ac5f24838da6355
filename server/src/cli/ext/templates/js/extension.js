// {{name}}: removes trailing whitespace from every line of tool output, which the LLM would
// otherwise pay for in tokens.
//
// The component glue: the host's imports and the world's exports (see wit/extension.wit). The
// logic is in logic.js, so that `node --test` can test it without the host.

import { get, set } from "aeterna:extension/state@0.1.0";
import { hook } from "./aeterna.js";
import { trimLines } from "./logic.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function register() {
  return {
    id: "{{name}}",
    version: "0.1.0",
    priority: 0,
    hooks: ["plain-text"],
    tags: [],
    promptAdditions: [],
    toolConfig: { add: [], remove: [], override: [] },
  };
}

export const onPlainText = hook((text) => {
  const { text: trimmed, lines } = trimLines(text);
  if (lines > 0) {
    // State survives between callbacks (per tenant and session); memory does not.
    const total = Number(decoder.decode(get("trimmed") ?? new Uint8Array())) + lines;
    set("trimmed", encoder.encode(String(total)));
  }
  return trimmed;
});

// Hooks this extension does not declare are never called; the world still exports them.
export const onInputMessages = (messages) => messages;
export const onTag = (tag, attributes, content) => content;
export const onLlmOutput = (text) => text;
