"""{{name}}: removes trailing whitespace from every line of tool output, which the LLM would
otherwise pay for in tokens.

The component glue: the host's imports and the world's exports (see wit/extension.wit). The logic
is in logic.py, so that `python -m unittest` can test it without the host.
"""

import wit_world
from wit_world.imports import state, types

from logic import trim_lines


class WitWorld(wit_world.WitWorld):
    def register(self) -> types.Registration:
        return types.Registration(
            id="{{name}}",
            version="0.1.0",
            priority=0,
            hooks=[types.Hook.PLAIN_TEXT],
            tags=[],
            prompt_additions=[],
            tool_config=types.ToolConfig(add=[], remove=[], override=[]),
        )

    def on_plain_text(self, text: str) -> str:
        trimmed, lines = trim_lines(text)
        if lines:
            # State survives between callbacks (per tenant and session); memory does not.
            total = int(state.get("trimmed") or b"0") + lines
            state.set("trimmed", str(total).encode())
        return trimmed

    # Hooks this extension does not declare are never called; the world still exports them.
    def on_input_messages(self, messages):
        return messages

    def on_tag(self, tag, attributes, content):
        return content

    def on_llm_output(self, text):
        return text
