// json-compactor: compacts JSON in tool output before the LLM reads it.
//
// The component glue: the host's imports and the world's exports. Built with componentize-js
// (see README.md); the logic lives in compact.js.

import { get, set } from "aeterna:extension/state@0.1.0";
import { config, log } from "aeterna:extension/host@0.1.0";
import { ExtError, hook } from "./aeterna.js";
import { ConfigError, compactText, optionsFromConfig } from "./compact.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function register() {
  return {
    id: "json-compactor",
    version: "0.1.0",
    priority: -50,
    hooks: ["plain-text"],
    tags: [],
    promptAdditions: [],
    toolConfig: { add: [], remove: [], override: [] },
  };
}

export const onPlainText = hook((text) => {
  let options;
  try {
    options = optionsFromConfig(config());
  } catch (error) {
    if (error instanceof ConfigError) {
      throw new ExtError("invalid-config", error.message);
    }
    throw error;
  }
  const { text: compacted, saved } = compactText(text, options);
  if (saved > 0) {
    const stats = JSON.parse(decoder.decode(get("saved") ?? encoder.encode("{}")));
    stats.calls = (stats.calls ?? 0) + 1;
    stats.bytes = (stats.bytes ?? 0) + saved;
    set("saved", encoder.encode(JSON.stringify(stats)));
    log("info", `compacted JSON: ${saved} bytes saved (${stats.bytes} this session)`);
  }
  return compacted;
});

export function onInputMessages(messages) {
  return messages;
}

export function onTag(tag, attributes, content) {
  return content;
}

export function onLlmOutput(text) {
  return text;
}
