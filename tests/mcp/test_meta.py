"""The Meta-Agent through the official Python MCP client, against the real binary: a
client-driven loop reported step by step, `meta_loop_status` waiting with progress
notifications, a command-driven loop over a real Python project, tenant isolation and
argument errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import anyio
import pytest

from conftest import ALPHA_TOKEN, BETA_TOKEN, TWO_TENANTS, call_err, call_ok, http_client

pytestmark = pytest.mark.anyio

TOOLS = ["meta_loop_cancel", "meta_loop_list", "meta_loop_start", "meta_loop_status", "meta_loop_step"]

FAILING = textwrap.dedent(
    """\
    test_add (test_calc.CalcTest.test_add) ... FAIL

    ======================================================================
    FAIL: test_add (test_calc.CalcTest.test_add)
    ----------------------------------------------------------------------
    Traceback (most recent call last):
      File "/src/calc/test_calc.py", line 8, in test_add
        self.assertEqual(add(1, 2), 3)
    AssertionError: -1 != 3

    ----------------------------------------------------------------------
    Ran 1 test in 0.000s

    FAILED (failures=1)
    """
)


async def test_a_client_driven_loop_with_waiting_and_progress(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha, http_client(server, ALPHA_TOKEN) as agent:
        tools = {tool.name: tool for tool in (await alpha.list_tools()).tools}
        for name in TOOLS:
            assert name in tools, f"{name} missing from tools/list"
        assert tools["meta_loop_status"].annotations.read_only_hint is True
        assert set(tools["meta_loop_step"].input_schema["required"]) == {"loop_id", "phase", "success"}

        started = await call_ok(alpha, "meta_loop_start", {"task": "make the calculator tests pass"})
        loop_id = started["loop"]["loop_id"]
        assert started["loop"]["state"] == "running" and started["next"]["action"] == "build"

        built = await call_ok(alpha, "meta_loop_step", {"loop_id": loop_id, "phase": "build", "success": True, "output": "ok"})
        assert built["next"]["action"] == "test"
        failed = await call_ok(
            alpha, "meta_loop_step", {"loop_id": loop_id, "phase": "test", "success": False, "output": FAILING}
        )
        improve = failed["loop"]["last_improve"]
        assert improve["action"] == "refine" and "AssertionError" in " ".join(improve["signatures"]), improve
        assert failed["loop"]["last_test"]["failing_tests"] == ["test_add (test_calc.CalcTest.test_add)"]
        assert failed["loop"]["iteration"] == 2 and failed["next"]["action"] == "build"

        # A short wait on a running loop returns it running.
        waited = await call_ok(alpha, "meta_loop_status", {"loop_id": loop_id, "wait_ms": 200})
        assert waited["state"] == "running"

        # A long wait returns as soon as another session finishes the loop, with progress.
        updates: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, total, message))

        result: dict = {}

        async def wait() -> None:
            answer = await alpha.call_tool(
                "meta_loop_status", {"loop_id": loop_id, "wait_ms": 20_000}, progress_callback=on_progress
            )
            assert not answer.is_error, answer
            result.update(answer.structured_content)

        with anyio.fail_after(15):
            async with anyio.create_task_group() as group:
                group.start_soon(wait)
                await anyio.sleep(0.5)
                await call_ok(agent, "meta_loop_step", {"loop_id": loop_id, "phase": "build", "success": True})
                await call_ok(agent, "meta_loop_step", {"loop_id": loop_id, "phase": "test", "success": True, "output": "OK"})
        assert result["state"] == "succeeded" and result["iteration"] == 2, result
        assert updates, "progress notifications while waiting"
        assert updates[-1][1] == 3 and "succeeded" in (updates[-1][2] or ""), updates

        # A cancelled wait does not hold up the session.
        other = await call_ok(alpha, "meta_loop_start", {"task": "a loop nobody drives"})
        with anyio.move_on_after(0.3):
            await alpha.call_tool("meta_loop_status", {"loop_id": other["loop"]["loop_id"], "wait_ms": 20_000})
        with anyio.fail_after(5):
            listed = await call_ok(alpha, "meta_loop_list", {})
        assert [loop["loop_id"] for loop in listed["loops"]][:2] == [other["loop"]["loop_id"], loop_id]
        cancelled = await call_ok(alpha, "meta_loop_cancel", {"loop_id": other["loop"]["loop_id"]})
        assert cancelled["state"] == "cancelled"

    async with http_client(server, BETA_TOKEN) as beta:
        message = await call_err(beta, "meta_loop_status", {"loop_id": loop_id})
        assert f"no loop with id `{loop_id}`" in message, message
        assert (await call_ok(beta, "meta_loop_list", {}))["loops"] == []
    assert server.terminate() == 0


async def test_bad_arguments_are_named(serve):
    server = serve()
    async with http_client(server) as client:
        started = await call_ok(client, "meta_loop_start", {"task": "x", "project_id": "p1"})
        loop_id = started["loop"]["loop_id"]
        message = await call_err(client, "meta_loop_step", {"loop_id": loop_id, "phase": "deploy", "success": True})
        assert "`phase` is `deploy`" in message, message
        message = await call_err(client, "meta_loop_status", {"loop_id": loop_id, "wait_ms": 999_999})
        assert "`wait_ms` is 999999" in message and "meta.max_wait_ms" in message, message
        message = await call_err(client, "meta_loop_status", {"loop_id": "nope"})
        assert "`loop_id` is `nope`" in message, message
        message = await call_err(client, "meta_loop_start", {"task": "x", "test_command": "py-test", "working_dir": "/tmp"})
        assert "`working_dir`" in message and "disabled" in message, message
        message = await call_err(client, "meta_loop_start", {"task": "x", "max_iterations": 99})
        assert "`max_iterations` is 99" in message, message
        message = await call_err(client, "meta_loop_list", {"state": "sleeping"})
        assert "`state` is `sleeping`" in message, message
    assert server.terminate() == 0


async def test_a_command_driven_loop_runs_the_allowed_commands(serve, tmp_path: Path):
    project = tmp_path / "calc"
    project.mkdir()
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "test_calc.py").write_text(
        "import unittest\nfrom calc import add\n\n\nclass CalcTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n"
    )
    config = f"""
[meta]
allowed_roots = ["{tmp_path}"]

[meta.commands.py-test]
argv = ["python3", "-m", "unittest", "-v", "test_calc"]
"""
    server = serve(config)
    async with http_client(server) as client:
        message = await call_err(
            client, "meta_loop_start", {"task": "x", "test_command": "rm", "working_dir": str(project), "project_id": "p1"}
        )
        assert "`test_command` is `rm`" in message and "py-test" in message, message
        started = await call_ok(
            client,
            "meta_loop_start",
            {"task": "keep the calculator green", "test_command": "py-test", "working_dir": str(project), "project_id": "p1"},
        )
        assert started["next"]["action"] == "wait"
        loop_id = started["loop"]["loop_id"]
        with anyio.fail_after(60):
            while True:
                status = await call_ok(client, "meta_loop_status", {"loop_id": loop_id, "wait_ms": 5_000, "project_id": "p1"})
                if status["state"] not in ("queued", "running"):
                    break
        assert status["state"] == "succeeded", status
        assert status["last_test"]["status"] == "passed" and "Ran 1 test" in status["last_test"]["output"]
    assert server.terminate() == 0
