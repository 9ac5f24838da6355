"""The client bridge, end to end: the official Python MCP client spawns `aeterna bridge` on
stdio against a real `aeterna serve`; extensions are the real sample components (and the
`probe` test guest, whose output shows its per-session state)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from conftest import (
    ALPHA_TOKEN,
    BETA_TOKEN,
    ROOT,
    TWO_TENANTS,
    aeterna_bin,
    call_err,
    call_ok,
    clean_env,
    guest_components,
    http_client,
    text,
)

pytestmark = pytest.mark.anyio

SAMPLES = ["secret_redactor", "todo_tags", "context_injector", "output_compactor"]
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PROBE_MANIFEST = '[config]\nreg-hooks = "plain-text,input-messages"\nreg-tags = ""\n'


def samples_dir() -> Path:
    return guest_components("sample-extensions", "sample-extensions")


def probe_wasm() -> Path:
    return guest_components("tests/guests", "test-guests") / "probe.wasm"


def add_sample(directory: Path, stem: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(samples_dir() / f"{stem}.wasm", directory / f"{stem}.wasm")
    manifest = ROOT / "sample-extensions" / stem.replace("_", "-") / f"{stem}.toml"
    if manifest.exists():
        shutil.copy(manifest, directory / f"{stem}.toml")


def add_probe(directory: Path, name: str = "probe") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.toml").write_text(PROBE_MANIFEST + f'reg-id = "{name}"\nmark = "{name}"\n')
    shutil.copy(probe_wasm(), directory / f"{name}.wasm")


def extensions_dir(path: Path, samples: list[str], probe: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for stem in samples:
        add_sample(path, stem)
    if probe:
        add_probe(path)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# One compile cache for every bridge and server of the run: a component compiles once.
CACHE_DIR = Path(os.environ.get("TMPDIR", "/tmp")) / f"aeterna-bridge-tests-cache-{os.getuid()}"


def bridge_client(
    url: str, extensions: Path, data_dir: Path, token: str | None = None, extra: list[str] | None = None
) -> Client:
    env = clean_env()
    args = [
        "bridge", "--server", url, "--extensions", str(extensions), "--data-dir", str(data_dir),
        "--call-timeout-ms", "5000", "--connect-timeout-ms", "2000", "--cache-dir", str(CACHE_DIR),
        *(extra or []),
    ]
    if token is not None:
        env["BRIDGE_TEST_TOKEN"] = token
        args += ["--token-env", "BRIDGE_TEST_TOKEN"]
    return Client(StdioServerParameters(command=aeterna_bin(), args=args, env=env))


async def apply(client: Client, hook: str, payload, session: str = "s1") -> dict:
    return await call_ok(client, "extensions_apply", {"hook": hook, "payload": payload, "session": session})


async def eventually(check, timeout: float = 15.0, interval: float = 0.05):
    """Polls `check` (async, returning a truthy value when done) until it succeeds."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s (last value {value!r})")
        await asyncio.sleep(interval)


async def loaded_ids(client: Client) -> list[str]:
    return [ext["id"] for ext in (await call_ok(client, "extensions_list", {}))["extensions"]]


async def test_bridge_forwards_the_server_tools_and_runs_the_samples(serve, tmp_path):
    server = serve(TWO_TENANTS)
    ext = extensions_dir(tmp_path / "ext", SAMPLES)
    async with bridge_client(server.url, ext, tmp_path / "bridge", ALPHA_TOKEN) as bridge:
        assert bridge.server_info is not None and bridge.server_info.name == "aeterna-bridge"
        tools = {tool.name: tool for tool in (await bridge.list_tools()).tools}
        # Server tools are passed through with their schemas, after the local ones.
        async with http_client(server, ALPHA_TOKEN) as direct:
            server_tools = {tool.name: tool for tool in (await direct.list_tools()).tools}
        assert {"extensions_list", "extensions_apply", "extensions_prompt"} <= tools.keys()
        assert set(server_tools) <= set(tools)
        for name, tool in server_tools.items():
            assert tools[name].input_schema == tool.input_schema, name
            assert tools[name].output_schema == tool.output_schema, name
            assert tools[name].description == tool.description, name

        # Forwarded calls act as the token's tenant.
        added = await call_ok(bridge, "memory_add", {"content": "the bridge forwards memory_add", "layer": "project"})
        assert added["record"]["tenant_id"] == "alpha"
        found = await call_ok(bridge, "memory_search", {"query": "bridge forwards"})
        assert found["hits"][0]["record"]["id"] == added["record"]["id"]
        assert "invalid arguments" in await call_err(bridge, "memory_search", {"query": 1})

        listed = await call_ok(bridge, "extensions_list", {})
        assert listed["rejected"] == [] and listed["dir_error"] is None
        by_id = {ext["id"]: ext for ext in listed["extensions"]}
        assert {"secret-redactor", "todo-tags", "context-injector", "output-compactor", "probe"} <= by_id.keys()
        assert listed["extensions"][0]["id"] == "secret-redactor"  # priority 1000 runs first
        assert by_id["secret-redactor"]["hooks"] == ["input-messages", "llm-output"]
        assert by_id["secret-redactor"]["health"] == {"consecutive_faults": 0, "quarantined_ms": None}

        # input-messages: the redactor, the context injector and the probe, in priority order.
        run = await apply(bridge, "input-messages", [{"role": "user", "content": f"push with GITHUB_TOKEN={GITHUB_TOKEN}"}])
        contents = "\n".join(message["content"] for message in run["output"])
        assert GITHUB_TOKEN not in contents and "[REDACTED:github-token]" in contents
        assert any(message["role"] == "system" and "aeterna" in message["content"] for message in run["output"])
        assert [row["extension"] for row in run["report"]][0] == "secret-redactor"
        assert all(row["outcome"]["status"] == "ok" for row in run["report"])

        # llm-output: the redactor, then todo-tags on the tag stage.
        run = await apply(bridge, "llm-output", f"use {GITHUB_TOKEN}\n<todo owner=\"ana\">write the migration</todo>")
        assert GITHUB_TOKEN not in run["output"]
        assert "- [ ] write the migration (owner: ana)" in run["output"]

        # State persists across calls of a session, and is per session.
        assert (await apply(bridge, "plain-text", "a", session="st"))["output"].endswith("a[probe:1]")
        assert (await apply(bridge, "plain-text", "b", session="st"))["output"].endswith("b[probe:2]")
        assert (await apply(bridge, "plain-text", "c", session="s2"))["output"].endswith("c[probe:1]")

        prompt = await call_ok(bridge, "extensions_prompt", {})
        assert any(addition["extension"] == "todo-tags" for addition in prompt["prompt_additions"])
        assert any(config["extension"] == "probe" for config in prompt["tool_configs"])
        assert "removed-tool" in prompt["merged_tool_config"]["remove"]

        # Bad input: a clear tool error naming what to fix, and the bridge keeps serving.
        assert "invalid `payload` for hook input-messages" in await call_err(
            bridge, "extensions_apply", {"hook": "input-messages", "payload": "not a list", "session": "s1"}
        )
        assert "unknown hook" in await call_err(
            bridge, "extensions_apply", {"hook": "on-save", "payload": "x", "session": "s1"}
        )
        assert "`session`" in await call_err(
            bridge, "extensions_apply", {"hook": "plain-text", "payload": "x", "session": ""}
        )
        assert "invalid arguments" in await call_err(bridge, "extensions_apply", {"hook": "plain-text"})
        assert (await apply(bridge, "plain-text", "d", session="st"))["output"].endswith("d[probe:3]")


async def test_a_wrong_token_and_a_missing_directory_are_reported_not_fatal(serve, tmp_path):
    server = serve(TWO_TENANTS)
    async with bridge_client(server.url, tmp_path / "missing", tmp_path / "bridge", "wrong-token") as bridge:
        listed = await call_ok(bridge, "extensions_list", {})
        assert listed["extensions"] == []
        assert "cannot read the extensions directory" in listed["dir_error"]
        error = await call_err(bridge, "memory_search", {"query": "x"})
        assert f"memory server unreachable at {server.url}" in error
        # The directory appears later: it is picked up without a restart.
        extensions_dir(tmp_path / "missing", [])
        assert await eventually(lambda: _has(bridge, "probe"))


async def _has(client: Client, extension: str) -> bool:
    return extension in await loaded_ids(client)


async def _lacks(client: Client, extension: str) -> bool:
    return extension not in await loaded_ids(client)


async def test_hot_reload_adds_replaces_and_removes_while_calls_run(serve, tmp_path):
    server = serve(TWO_TENANTS)
    ext = extensions_dir(tmp_path / "ext", ["secret_redactor"], probe=False)
    async with bridge_client(server.url, ext, tmp_path / "bridge", ALPHA_TOKEN) as bridge:
        assert await loaded_ids(bridge) == ["secret-redactor"]
        stop = asyncio.Event()
        results: list[dict] = []

        async def keep_calling():
            while not stop.is_set():
                run = await apply(bridge, "input-messages", [{"role": "user", "content": f"token {GITHUB_TOKEN}"}])
                results.append(run)
                await asyncio.sleep(0.005)

        caller = asyncio.create_task(keep_calling())
        try:
            # Drop a component: available without a restart.
            add_probe(ext)
            await eventually(lambda: _has(bridge, "probe"))
            # A corrupt component is rejected with its reason; the others keep working.
            (ext / "broken.wasm").write_bytes(b"\0asm this is not a component")
            listed = await eventually(lambda: _rejected(bridge, "broken.wasm"))
            assert {"secret-redactor", "probe"} <= {e["id"] for e in listed["extensions"]}
            # Delete: gone.
            (ext / "probe.wasm").unlink()
            await eventually(lambda: _lacks(bridge, "probe"))
            (ext / "broken.wasm").unlink()
            await eventually(lambda: _no_rejections(bridge))
        finally:
            stop.set()
            await caller
        # Every call made while the directory changed succeeded and was redacted.
        assert len(results) > 5
        for run in results:
            assert all(row["outcome"]["status"] == "ok" for row in run["report"])
            assert all(GITHUB_TOKEN not in message["content"] for message in run["output"])
        assert await loaded_ids(bridge) == ["secret-redactor"]


async def _rejected(client: Client, file: str):
    listed = await call_ok(client, "extensions_list", {})
    reasons = [rejected["reason"] for rejected in listed["rejected"] if rejected["file"].endswith(file)]
    return listed if reasons and all(reason for reason in reasons) else None


async def _no_rejections(client: Client) -> bool:
    return (await call_ok(client, "extensions_list", {}))["rejected"] == []


async def test_outage_local_tools_work_writes_are_queued_across_restarts_and_delivered_once(serve, tmp_path):
    port = free_port()
    data = tmp_path / "server-data"
    server = serve(TWO_TENANTS, data_dir=data, listen=f"127.0.0.1:{port}")
    url = server.url
    ext = extensions_dir(tmp_path / "ext", ["secret_redactor"])
    bridge_data = tmp_path / "bridge"
    queue = bridge_data / "queue"

    async with bridge_client(url, ext, bridge_data, ALPHA_TOKEN) as bridge:
        await call_ok(bridge, "memory_add", {"content": "written before the outage", "layer": "project"})
        server.kill()
        # Local tools keep working.
        assert (await apply(bridge, "plain-text", "x"))["output"].endswith("x[probe:1]")
        # Forwarded calls fail fast with the clear error.
        started = time.monotonic()
        error = await call_err(bridge, "memory_search", {"query": "outage"})
        assert f"memory server unreachable at {url}" in error
        assert time.monotonic() - started < 6
        # Writes are queued, and say so.
        error = await call_err(bridge, "memory_add", {"content": "queued write one", "layer": "project"})
        assert "memory server unreachable" in error and "queued locally (position 1)" in error
        error = await call_err(
            bridge,
            "trajectory_capture",
            {"event": {"tool_name": "cargo_test", "input": "cargo test", "output": "ok", "success": True}},
        )
        assert "queued locally (position 2)" in error
        assert (await apply(bridge, "plain-text", "y"))["output"].endswith("y[probe:2]")
    assert len(list(queue.glob("*.json"))) == 2

    # A new bridge process, still without the server: the queue survived and grows in order.
    async with bridge_client(url, ext, bridge_data, ALPHA_TOKEN) as bridge:
        tools = {tool.name for tool in (await bridge.list_tools()).tools}
        assert "memory_add" in tools  # the last tool list was kept
        error = await call_err(bridge, "memory_add", {"content": "queued write two", "layer": "project"})
        assert "queued locally (position 3)" in error

        # The server comes back on the same address: the queue drains, in order, once.
        server = serve(TWO_TENANTS, data_dir=data, listen=f"127.0.0.1:{port}")
        await eventually(lambda: _queue_empty(queue), timeout=30)
        listed = await call_ok(bridge, "memory_list", {"layers": ["project"]})
        contents = [item["content"] for item in listed["items"]]
        assert contents == ["queued write two", "queued write one", "written before the outage"]
        # New writes go straight through again.
        added = await call_ok(bridge, "memory_add", {"content": "after the outage", "layer": "project"})
        assert added["record"]["tenant_id"] == "alpha"

    async with http_client(server, ALPHA_TOKEN) as direct:
        listed = await call_ok(direct, "memory_list", {"layers": ["project"]})
        contents = [item["content"] for item in listed["items"]]
        assert sorted(contents) == sorted(
            ["after the outage", "queued write two", "queued write one", "written before the outage"]
        )
    assert not (queue / "refused").exists()


async def _queue_empty(queue: Path) -> bool:
    return not list(queue.glob("*.json"))


async def test_server_side_extensions_keep_state_per_tenant(serve, tmp_path):
    ext = extensions_dir(tmp_path / "ext", ["secret_redactor"])
    config = TWO_TENANTS + f'\n[extensions]\ndir = "{ext}"\n[extensions.host]\ncache_dir = "{CACHE_DIR}"\n'
    server = serve(config)
    async with http_client(server, ALPHA_TOKEN) as alpha, http_client(server, BETA_TOKEN) as beta:
        await eventually(lambda: _has(alpha, "probe"))
        first = await apply(alpha, "plain-text", "a")
        second = await apply(alpha, "plain-text", "b")
        assert first["output"].endswith("a[probe:1]") and second["output"].endswith("b[probe:2]")
        # Same session id, other tenant: its own state.
        assert (await apply(beta, "plain-text", "c"))["output"].endswith("c[probe:1]")
        assert (await apply(alpha, "plain-text", "d"))["output"].endswith("d[probe:3]")
        run = await apply(beta, "input-messages", [{"role": "user", "content": f"key {GITHUB_TOKEN}"}])
        system = [m["content"] for m in run["output"] if m["role"] == "system"]
        assert any("tenant=beta" in content for content in system)
        assert GITHUB_TOKEN not in str(run["output"])
        # Hot reload on the server too.
        (ext / "probe.wasm").unlink()
        await eventually(lambda: _lacks(beta, "probe"))


async def test_without_an_extensions_dir_the_server_offers_no_extension_tools(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha:
        names = {tool.name for tool in (await alpha.list_tools()).tools}
        assert not any(name.startswith("extensions_") for name in names)


REDIS_URL = "redis://127.0.0.1:6379"


async def test_bridge_state_in_redis_survives_a_bridge_restart(serve, tmp_path):
    server = serve(TWO_TENANTS)
    ext = extensions_dir(tmp_path / "ext", [])
    session = f"redis-{uuid.uuid4()}"
    for round_, data in enumerate(["first", "second"]):
        extra = ["--state", REDIS_URL]
        async with bridge_client(server.url, ext, tmp_path / data, ALPHA_TOKEN, extra) as bridge:
            first = await apply(bridge, "plain-text", "a", session=session)
            second = await apply(bridge, "plain-text", "b", session=session)
            # The second bridge (another data dir, another process) continues the count.
            assert first["output"].endswith(f"a[probe:{2 * round_ + 1}]"), first
            assert second["output"].endswith(f"b[probe:{2 * round_ + 2}]"), second


def test_bridge_refuses_an_unknown_state_backend_and_an_unreachable_redis(tmp_path):
    for state, expected in [
        ("postgres://somewhere", "expected `memory` or a Redis URL"),
        ("redis://127.0.0.1:1", "cannot connect to `redis://127.0.0.1:1`"),
    ]:
        finished = subprocess.run(
            [aeterna_bin(), "bridge", "--server", "http://127.0.0.1:1/mcp", "--extensions", str(tmp_path),
             "--data-dir", str(tmp_path / "data"), "--state", state],
            env=clean_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        )
        assert finished.returncode != 0 and expected in finished.stderr, finished.stderr


async def test_server_side_extension_state_is_shared_by_instances_through_redis(serve, tmp_path):
    ext = extensions_dir(tmp_path / "ext", [])
    # redis_url is a top-level key: it comes before the first table.
    config = f'redis_url = "{REDIS_URL}"\n' + TWO_TENANTS + (
        f'\n[extensions]\ndir = "{ext}"\n[extensions.host]\ncache_dir = "{CACHE_DIR}"\n'
    )
    first, second = serve(config), serve(config)
    session = f"shared-{uuid.uuid4()}"
    async with http_client(first, ALPHA_TOKEN) as one, http_client(second, ALPHA_TOKEN) as two, \
            http_client(second, BETA_TOKEN) as beta:
        await eventually(lambda: _has(one, "probe"))
        await eventually(lambda: _has(two, "probe"))
        assert (await apply(one, "plain-text", "a", session=session))["output"].endswith("a[probe:1]")
        assert (await apply(two, "plain-text", "b", session=session))["output"].endswith("b[probe:2]")
        # Another tenant, same session id: its own state, on either instance.
        assert (await apply(beta, "plain-text", "c", session=session))["output"].endswith("c[probe:1]")


PROJECT_TEST = textwrap.dedent(
    """\
    import unittest

    from calc import add


    class CalcTest(unittest.TestCase):
        def test_add(self):
            self.assertEqual(add(1, 2), 3)
    """
)


def commands_file(path: Path, root: Path) -> Path:
    path.write_text(
        f'allowed_roots = ["{root}"]\ntest_timeout_ms = 20000\n'
        f'[commands.py-test]\nargv = ["{sys.executable}", "-m", "unittest", "-v"]\n'
        f'[commands.sleepy]\nargv = ["{sys.executable}", "-c", "import time; time.sleep(30)"]\n'
    )
    return path


async def test_local_command_runner_drives_a_client_driven_loop(serve, tmp_path):
    server = serve(TWO_TENANTS)
    project = tmp_path / "projects" / "calc"
    project.mkdir(parents=True)
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "test_calc.py").write_text(PROJECT_TEST)
    commands = commands_file(tmp_path / "commands.toml", tmp_path / "projects")
    ext = extensions_dir(tmp_path / "ext", [], probe=False)
    extra = ["--commands", str(commands)]
    async with bridge_client(server.url, ext, tmp_path / "bridge", ALPHA_TOKEN, extra) as bridge:
        tools = {tool.name for tool in (await bridge.list_tools()).tools}
        assert "meta_run_local" in tools and "meta_loop_start" in tools

        started = await call_ok(bridge, "meta_loop_start", {"task": "make the calculator tests pass"})
        loop_id = started["loop"]["loop_id"]
        run = {"loop_id": loop_id, "phase": "test", "command": "py-test", "working_dir": str(project)}

        failed = await call_ok(bridge, "meta_run_local", run)
        assert failed["run"]["success"] is False and failed["run"]["exit_code"] == 1, failed["run"]
        loop = failed["step"]["loop"]
        assert loop["last_test"]["status"] == "failed", loop["last_test"]
        assert "AssertionError" in loop["last_test"]["output"]
        assert loop["last_test"]["failing_tests"], loop["last_test"]
        assert loop["last_improve"]["action"] in {"refine", "retry"}, loop["last_improve"]

        # The agent fixes the code; the next local run succeeds and ends the loop.
        (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
        passed = await call_ok(bridge, "meta_run_local", run)
        assert passed["run"]["success"] is True and passed["run"]["exit_code"] == 0
        assert passed["step"]["loop"]["state"] == "succeeded", passed["step"]["loop"]
        assert passed["step"]["next"]["action"] == "done"

        # Only the allow-list runs, only inside its roots, within its limits.
        second = (await call_ok(bridge, "meta_loop_start", {"task": "another"}))["loop"]["loop_id"]
        assert "`command` is `rm`, which is not in the operator's allow-list" in await call_err(
            bridge, "meta_run_local", {**run, "loop_id": second, "command": "rm"}
        )
        assert "`working_dir`" in await call_err(
            bridge, "meta_run_local", {**run, "loop_id": second, "working_dir": str(tmp_path)}
        )
        assert "`timeout_ms` is 99999999" in await call_err(
            bridge, "meta_run_local", {**run, "loop_id": second, "timeout_ms": 99_999_999}
        )
        # A command that outlives its timeout is killed, and the loop hears of it.
        slow = await call_ok(
            bridge, "meta_run_local", {**run, "loop_id": second, "command": "sleepy", "timeout_ms": 300}
        )
        assert slow["run"]["timed_out"] is True and slow["run"]["duration_ms"] < 10_000, slow["run"]
        assert slow["step"]["loop"]["last_test"]["status"] == "failed"
        # An unknown loop: the server's error, with the run kept for the agent.
        unknown = await call_err(bridge, "meta_run_local", {**run, "loop_id": str(uuid.uuid4())})
        assert "meta_loop_step failed" in unknown and '"success":true' in unknown, unknown

    # Without --commands the tool is not offered, and calling it says how to enable it.
    async with bridge_client(server.url, ext, tmp_path / "bridge2", ALPHA_TOKEN) as bridge:
        assert "meta_run_local" not in {tool.name for tool in (await bridge.list_tools()).tools}
        assert "--commands" in await call_err(bridge, "meta_run_local", run)
