"""log-dedup: collapses repeated lines in tool output before the LLM reads it.

The component glue: the host's imports and the world's exports. Built with componentize-py (see
README.md); the logic lives in log_dedup.py.
"""

import json

import wit_world
from componentize_py_types import Err
from wit_world.imports import host, state, types

from log_dedup import Options, dedup


class WitWorld(wit_world.WitWorld):
    def register(self) -> types.Registration:
        return types.Registration(
            id="log-dedup",
            version="0.1.0",
            priority=-60,
            hooks=[types.Hook.PLAIN_TEXT],
            tags=[],
            prompt_additions=[],
            tool_config=types.ToolConfig(add=[], remove=[], override=[]),
        )

    def on_plain_text(self, text: str) -> str:
        try:
            options = Options.from_config(host.config())
        except ValueError as error:
            # Raising `Err(ExtError)` returns the hook's `ext-error`.
            raise Err(types.ExtError(code="invalid-config", message=str(error)))
        collapsed, removed = dedup(text, options)
        if removed:
            stats = json.loads(state.get("removed") or b"{}")
            stats["calls"] = stats.get("calls", 0) + 1
            stats["lines"] = stats.get("lines", 0) + removed
            state.set("removed", json.dumps(stats).encode())
            host.log(host.LogLevel.INFO, f"collapsed {removed} repeated lines ({stats['lines']} this session)")
        return collapsed

    def on_input_messages(self, messages):
        return messages

    def on_tag(self, tag, attributes, content):
        return content

    def on_llm_output(self, text):
        return text
