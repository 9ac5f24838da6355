"""Shared fixtures: the real `aeterna` binary, started as `aeterna serve` on an ephemeral
port or as `aeterna mcp` on stdio, each with its own temporary data directory."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
ALPHA_TOKEN = "alpha-token-0123456789"
BETA_TOKEN = "beta-token-0123456789"

# Ann in both tenants: a member of teams `core` and `web` (two, so neither is a default) and
# an approver of `core`.
TWO_TENANTS = f"""
[[auth.tokens]]
token = "{ALPHA_TOKEN}"
tenant = "alpha"
teams = ["core", "web"]
roles = {{ approver = ["team:core"] }}
defaults = {{ user_id = "ann", project_id = "p1" }}

[[auth.tokens]]
token = "{BETA_TOKEN}"
tenant = "beta"
teams = ["core", "web"]
roles = {{ approver = ["team:core"] }}
defaults = {{ user_id = "ann", project_id = "p1" }}
"""


# Every tool `aeterna serve` and `aeterna mcp` list, sorted.
TOOLS = [
    "context_assemble",
    "hindsight_approve",
    "hindsight_capture",
    "hindsight_feedback",
    "hindsight_promotions",
    "hindsight_query",
    "hindsight_resolve",
    "knowledge_get",
    "knowledge_propose",
    "knowledge_search",
    "memory_add",
    "memory_delete",
    "memory_forget",
    "memory_get",
    "memory_history",
    "memory_list",
    "memory_search",
    "memory_update",
    "meta_loop_cancel",
    "meta_loop_list",
    "meta_loop_start",
    "meta_loop_status",
    "meta_loop_step",
    "note_distill",
    "note_get",
    "note_list",
    "summary_get",
    "summary_refresh",
    "trajectory_capture",
]


def aeterna_bin() -> str:
    path = os.environ.get("AETERNA_BIN") or str(ROOT / "target" / "debug" / "aeterna")
    if not os.access(path, os.X_OK):
        pytest.fail(f"aeterna binary not found at {path}: build it or set AETERNA_BIN")
    return path


def clean_env() -> dict[str, str]:
    """The environment without AETERNA_* settings that would change the server under test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AETERNA_")}
    env["RUST_LOG"] = "info"
    return env


class ServeProcess:
    """`aeterna serve --listen 127.0.0.1:0`; the bound URL is read from its first stdout line."""

    def __init__(
        self,
        data_dir: Path,
        config: str | None = None,
        extra_env: dict[str, str] | None = None,
        listen: str = "127.0.0.1:0",
    ):
        self.data_dir = data_dir
        args = [aeterna_bin(), "serve", "--listen", listen, "--data-dir", str(data_dir)]
        if config is not None:
            config_path = data_dir.parent / f"{data_dir.name}.toml"
            config_path.write_text(config)
            args += ["--config", str(config_path)]
        env = clean_env() | (extra_env or {})
        self.process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        self.stderr_lines: list[str] = []
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        match = re.search(r"(http://\S+)/mcp", line)
        if not match:
            self.process.kill()
            self._stderr_reader.join(timeout=5)
            raise AssertionError(f"no listen address on stdout: {line!r}\n{self.stderr}")
        self.base = match.group(1)
        self.url = f"{self.base}/mcp"

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr_lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM, then wait for a graceful exit; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        self._stderr_reader.join(timeout=5)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def anyio_backend() -> str:
    """The MCP SDK's transports run on asyncio; do not also run every test on trio."""
    return "asyncio"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator:
    """Starts servers on demand; any still running at the end are stopped."""
    started: list[ServeProcess] = []

    def start(config: str | None = None, data_dir: Path | None = None, **kwargs) -> ServeProcess:
        server = ServeProcess(data_dir or tmp_path / f"data{len(started)}", config, **kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


def http_client(server: ServeProcess, token: str | None = None, mode: str = "auto") -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    import httpx2  # the transport library of the MCP SDK

    transport = streamable_http_client(server.url, http_client=httpx2.AsyncClient(headers=headers, timeout=30))
    return Client(transport, mode=mode)


def stdio_client(data_dir: Path, *extra_args: str) -> Client:
    params = StdioServerParameters(
        command=aeterna_bin(),
        args=["mcp", "--data-dir", str(data_dir), *extra_args],
        env=clean_env(),
    )
    return Client(params)


async def call_ok(client: Client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {text(result)}"
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def call_err(client: Client, tool: str, arguments: dict) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result}"
    return text(result)


def text(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


def raw_post(server: ServeProcess, body: bytes | str, token: str | None = None, **headers: str) -> httpx.Response:
    """A raw HTTP POST to /mcp, for malformed requests no client would send."""
    all_headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    all_headers.update(headers)
    return httpx.post(server.url, content=body, headers=all_headers, timeout=30)


def guest_components(workspace: str, label: str) -> Path:
    """The built components of a guest workspace (`sample-extensions`, `tests/guests`), as
    `aeterna-testkit` lays them out: `<target>/wasm-guests/<label>/*.wasm`, where `<target>` is
    the directory of `$AETERNA_BIN`'s profile. Built like the testkit builds them if absent."""
    target = Path(aeterna_bin()).resolve().parent.parent
    guests = target / "wasm-guests"
    out = guests / label
    if not any(out.glob("*.wasm")):
        env = {k: v for k, v in os.environ.items() if "RUSTFLAGS" not in k and k != "CARGO_BUILD_TARGET"}
        env["CARGO_TARGET_DIR"] = str(guests)
        built = subprocess.run(
            ["cargo", "build", "--release", "--locked", "--target", "wasm32-wasip2",
             "--message-format=json-render-diagnostics",
             "--manifest-path", str(ROOT / workspace / "Cargo.toml")],
            check=True, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
        )
        out.mkdir(parents=True, exist_ok=True)
        for line in built.stdout.splitlines():
            message = json.loads(line) if line.startswith("{") else {}
            for file in message.get("filenames", []) if message.get("reason") == "compiler-artifact" else []:
                if file.endswith(".wasm"):
                    (out / Path(file).name).write_bytes(Path(file).read_bytes())
    return out
