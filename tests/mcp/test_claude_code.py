"""Memory inside the real Claude Code (npm `@anthropic-ai/claude-code`, pinned in
`tests/claude-code/package.json`, installed by `scripts/test`): `aeterna hooks install
claude-code` writes the hooks, `claude -p` runs a session against a stand-in Anthropic Messages
API over real HTTP, and the test reads what the model was sent. Skills exported from the
knowledge repository (`aeterna knowledge export --format skills`) load in it the same way.

Set CLAUDE_CODE_BIN to the `claude` executable; without it these tests say SKIPPED."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import aeterna_bin, call_ok, clean_env, http_client

pytestmark = pytest.mark.anyio

MEMORY = "The parser crate keeps every column width as a u32; widths never come from strings."
FIX = "Parse the literal into the width: let width: u32 = \"4\".parse().unwrap();"

LIB_RS = """pub fn width() -> u32 {
    let width: u32 = "4";
    width
}

#[cfg(test)]
mod tests {
    #[test]
    fn width_is_four() {
        assert_eq!(super::width(), 4);
    }
}
"""


def claude_bin() -> str:
    path = os.environ.get("CLAUDE_CODE_BIN", "")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("SKIPPED: CLAUDE_CODE_BIN is not set (scripts/test installs Claude Code)")
    return str(Path(path).resolve())


def has_tool_result(body: dict) -> bool:
    """Whether a Messages API request already carries a tool's result."""
    return any(
        isinstance(message.get("content"), list)
        and any(block.get("type") == "tool_result" for block in message["content"])
        for message in body.get("messages", [])
    )


class StandInModel:
    """The Anthropic Messages API as Claude Code calls it (streamed), scripted: the first turn
    runs `cargo test` with the Bash tool, the next one ends. Every request body is kept."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if "count_tokens" in self.path:
                    return self.reply("application/json", json.dumps({"input_tokens": 100}).encode())
                model.requests.append(body)
                blocks, stop = model.script(body)
                events = model.stream(body.get("model", "stand-in"), blocks, stop)
                if body.get("stream"):
                    data = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
                    return self.reply("text/event-stream", data.encode())
                message = events[0][1]["message"] | {"content": blocks, "stop_reason": stop}
                self.reply("application/json", json.dumps(message).encode())

            def do_GET(self) -> None:
                self.send_response(404)
                self.end_headers()

            def reply(self, content_type: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def script(body: dict) -> tuple[list[dict], str]:
        tools = {tool.get("name") for tool in body.get("tools", [])}
        answered = has_tool_result(body)
        if "Bash" in tools and not answered:
            call = {"command": "cargo test --offline 2>&1", "description": "Run the tests"}
            return [{"type": "tool_use", "id": "toolu_stand_in_1", "name": "Bash", "input": call}], "tool_use"
        return [{"type": "text", "text": "The tests fail to compile."}], "end_turn"

    @staticmethod
    def stream(model: str, blocks: list[dict], stop: str) -> list[tuple[str, dict]]:
        events = [("message_start", {"type": "message_start", "message": {
            "id": "msg_stand_in", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 1}}})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 10}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return events

    def agent_requests(self) -> list[str]:
        """The main agent's requests (those offering the Bash tool), as JSON text."""
        return [json.dumps(body) for body in self.requests
                if any(tool.get("name") == "Bash" for tool in body.get("tools", []))]

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def stand_in():
    model = StandInModel()
    yield model
    model.close()


def cargo_project(root: Path) -> Path:
    """A crate whose tests do not compile (E0308), in a real git repository."""
    project = root / "parser-rs"
    (project / "src").mkdir(parents=True)
    (project / "Cargo.toml").write_text('[package]\nname = "parser"\nversion = "0.1.0"\nedition = "2021"\n')
    (project / "src" / "lib.rs").write_text(LIB_RS)
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    return project


def rust_env(home: Path) -> dict[str, str]:
    """Cargo and rustup as installed for this user, building into `home`."""
    return {
        "RUSTUP_HOME": os.environ.get("RUSTUP_HOME", str(Path.home() / ".rustup")),
        "CARGO_HOME": os.environ.get("CARGO_HOME", str(Path.home() / ".cargo")),
        "CARGO_TARGET_DIR": str(home / "cargo-target"),
    }


def run_claude(project: Path, home: Path, stand_in: StandInModel,
               prompt: str = "Run the tests and tell me why they fail.",
               allowed_tools: str = "Bash") -> subprocess.CompletedProcess:
    env = clean_env() | rust_env(home) | {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": stand_in.url,
        "ANTHROPIC_API_KEY": "sk-ant-stand-in",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "XDG_DATA_HOME": str(home / "data"),
    }
    return subprocess.run(
        [claude_bin(), "-p", prompt, "--allowedTools", allowed_tools,
         "--output-format", "json"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240,
    )


async def test_claude_code_sessions_get_memory_and_a_failing_command_is_remembered(serve, stand_in, tmp_path):
    if shutil.which("cargo") is None:
        pytest.skip("SKIPPED: cargo is not on PATH")
    claude_bin()
    server = serve()
    project = cargo_project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    async with http_client(server) as client:
        await call_ok(client, "memory_add", {"content": MEMORY, "layer": "project", "project_id": "parser-rs"})

    # The user's own settings survive the install.
    settings_path = project / ".claude" / "settings.json"
    settings_path.parent.mkdir()
    settings_path.write_text(json.dumps({"permissions": {"allow": ["Bash(cargo test:*)"]}}))
    installed = subprocess.run(
        [aeterna_bin(), "hooks", "install", "claude-code", "--project", str(project), "--server", server.url],
        env=clean_env(), capture_output=True, text=True, check=True,
    )
    assert "installed 6 aeterna hooks" in installed.stdout, installed.stdout
    settings = json.loads(settings_path.read_text())
    assert settings["permissions"] == {"allow": ["Bash(cargo test:*)"]}
    assert set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit", "PostToolUse",
                                      "PostToolUseFailure", "Stop", "SessionEnd"}

    # Session 1: the model's first request carries the memory; the failing run is captured.
    first = run_claude(project, home, stand_in)
    assert first.returncode == 0, first.stdout + first.stderr
    requests = stand_in.agent_requests()
    assert len(requests) >= 2, requests
    assert MEMORY in requests[0], "the first request has the session's memory"
    assert "E0308" in requests[1], "the model saw the failing run"
    failing_run = subprocess.run(["cargo", "test", "--offline"], cwd=project, capture_output=True, text=True,
                                 env=clean_env() | rust_env(home))
    async with http_client(server) as client:
        known = await call_ok(client, "hindsight_query", {
            "error_text": failing_run.stderr, "project_id": "parser-rs"})
        assert known["status"] == "matched", known
        signature = known["matched"][0]
        assert signature["error_type"] == "E0308"
        # Someone fixed it and recorded how.
        await call_ok(client, "hindsight_resolve", {
            "signature_id": signature["signature_id"], "description": FIX, "project_id": "parser-rs"})

    # Session 2 meets the same error: the recorded fix reaches the model with the failure.
    stand_in.requests.clear()
    second = run_claude(project, home, stand_in)
    assert second.returncode == 0, second.stdout + second.stderr
    after_failure = [body for body in stand_in.agent_requests() if "toolu_stand_in_1" in body]
    assert after_failure, stand_in.agent_requests()
    assert json.dumps(FIX)[1:-1] in after_failure[0], "the known fix was injected"

    # Both sessions' tool calls were recorded and distilled into notes at their end.
    async with http_client(server) as client:
        notes = await call_ok(client, "note_list", {"project_id": "parser-rs"})
        assert notes["notes"], notes


async def test_hooks_fail_open_when_the_server_is_down(tmp_path):
    """With no server, a hook answers nothing, exits 0, says why on one stderr line, and
    queues its write."""
    project = cargo_project(tmp_path)
    env = clean_env() | {"XDG_DATA_HOME": str(tmp_path / "data")}
    event = {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
             "prompt": "why do the tests fail?"}
    down = "http://127.0.0.1:9/mcp"
    prompt = subprocess.run([aeterna_bin(), "hook", "UserPromptSubmit", "--server", down],
                            input=json.dumps(event), env=env, capture_output=True, text=True, timeout=30)
    assert (prompt.returncode, prompt.stdout) == (0, "")
    assert prompt.stderr.count("\n") == 1 and "unreachable" in prompt.stderr, prompt.stderr
    tool = event | {"hook_event_name": "PostToolUse", "tool_name": "Read",
                    "tool_input": {"file_path": "src/lib.rs"}, "tool_response": {"content": "x"}}
    used = subprocess.run([aeterna_bin(), "hook", "PostToolUse", "--server", down],
                          input=json.dumps(tool), env=env, capture_output=True, text=True, timeout=30)
    assert used.returncode == 0 and "queued" in used.stderr, used.stderr
    assert len(list((tmp_path / "data" / "aeterna" / "hooks" / "queue").glob("*.json"))) == 1
    # Nonsense never blocks the agent either (exit status 2 would).
    for args, stdin in [(["hook", "PreCompact"], "{}"), (["hook", "Stop"], "not json"),
                        (["hook", "Stop", "--no-such-flag"], "{}")]:
        result = subprocess.run([aeterna_bin(), *args], input=stdin, env=env,
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0 and result.stdout == "", (args, result.stdout)
        assert result.stderr.startswith("aeterna hook") and result.stderr.count("\n") == 1, (args, result.stderr)


class SkillModel(StandInModel):
    """A model that loads the `sqlx-offline` skill with the Skill tool, then ends."""

    @staticmethod
    def script(body: dict) -> tuple[list[dict], str]:
        tools = {tool.get("name") for tool in body.get("tools", [])}
        answered = has_tool_result(body)
        if "Skill" in tools and not answered:
            call = {"skill": "sqlx-offline"}
            return [{"type": "tool_use", "id": "toolu_skill_1", "name": "Skill", "input": call}], "tool_use"
        return [{"type": "text", "text": "Done."}], "end_turn"


SKILL_ITEM = """---
id: sqlx-offline
type: pattern
title: Build sqlx crates offline in CI
description: Set SQLX_OFFLINE=true and commit the .sqlx folder when CI has no database
layer: team
scope: core
---
Run `cargo sqlx prepare --workspace` and commit the `.sqlx` folder it writes.
"""


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=Ana", "-c", "user.email=ana@example.com", *args],
                   cwd=cwd, check=True, capture_output=True)


def test_skills_exported_from_the_knowledge_repository_load_in_claude_code(tmp_path):
    claude_bin()
    knowledge = tmp_path / "knowledge"
    (knowledge / "patterns").mkdir(parents=True)
    (knowledge / "patterns" / "sqlx-offline.md").write_text(SKILL_ITEM)
    git(tmp_path, "init", "-q", "-b", "main", str(knowledge))
    git(knowledge, "add", "-A")
    git(knowledge, "commit", "-qm", "pattern: sqlx offline builds")
    project = cargo_project(tmp_path)
    skills = project / ".claude" / "skills"

    def knowledge_export(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [aeterna_bin(), "knowledge", "export", "--repo", str(knowledge), "--format", "skills",
             "--to", str(skills), *extra], env=clean_env(), capture_output=True, text=True, timeout=60)

    stale = knowledge_export("--check")
    assert stale.returncode == 1 and "stale:" in stale.stdout, stale.stdout + stale.stderr
    exported = knowledge_export()
    assert exported.returncode == 0 and "wrote" in exported.stdout, exported.stdout + exported.stderr
    assert knowledge_export("--check").returncode == 0

    model = SkillModel()
    try:
        home = tmp_path / "home"
        home.mkdir()
        session = run_claude(project, home, model, prompt="How do we build sqlx crates in CI?",
                             allowed_tools="Skill")
        assert session.returncode == 0, session.stdout + session.stderr
        requests = [json.dumps(body) for body in model.requests
                    if any(tool.get("name") == "Skill" for tool in body.get("tools", []))]
    finally:
        model.close()
    assert requests, "Claude Code offered the Skill tool"
    listing = "- sqlx-offline: Set SQLX_OFFLINE=true and commit the .sqlx folder when CI has no database"
    assert listing in requests[0], "the skill is listed by name and description"
    assert "cargo sqlx prepare --workspace" not in requests[0], "its body loads only on demand"
    loaded = [body for body in requests if "toolu_skill_1" in body]
    assert loaded and "cargo sqlx prepare --workspace" in loaded[0], "the model loaded the skill's body"
