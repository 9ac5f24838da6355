"""The official Python MCP client against `aeterna mcp` over stdio."""

from __future__ import annotations

import pytest

from conftest import TOOLS, call_err, call_ok, stdio_client

pytestmark = pytest.mark.anyio


async def test_stdio_lists_tools_and_runs_add_search_get_delete(tmp_path):
    async with stdio_client(tmp_path / "data") as client:
        assert client.server_info is not None and client.server_info.name == "aeterna"
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert names == TOOLS
        added = await call_ok(
            client, "memory_add", {"content": "cargo clippy runs with -D warnings in CI", "layer": "company"}
        )
        memory_id = added["record"]["id"]
        assert added["record"]["tenant_id"] == "default"
        found = await call_ok(client, "memory_search", {"query": "clippy warnings"})
        assert found["hits"][0]["record"]["id"] == memory_id
        got = await call_ok(client, "memory_get", {"id": memory_id})
        assert got["content"] == "cargo clippy runs with -D warnings in CI"
        await call_ok(client, "memory_delete", {"id": memory_id})
        assert "no memory with id" in await call_err(client, "memory_get", {"id": memory_id})
        # Bad input does not end the session.
        assert "invalid arguments" in await call_err(client, "memory_search", {"query": 1})
        assert (await call_ok(client, "memory_list", {}))["items"] == []


async def test_stdio_tenant_comes_from_the_command_line(tmp_path):
    data = tmp_path / "data"
    async with stdio_client(data, "--tenant", "alpha") as alpha:
        added = await call_ok(alpha, "memory_add", {"content": "alpha's private runbook", "layer": "company"})
        assert added["record"]["tenant_id"] == "alpha"
        memory_id = added["record"]["id"]
    async with stdio_client(data, "--tenant", "beta") as beta:
        assert (await call_ok(beta, "memory_search", {"query": "private runbook"}))["hits"] == []
        assert "no memory with id" in await call_err(beta, "memory_get", {"id": memory_id})
    async with stdio_client(data, "--tenant", "alpha") as alpha:
        assert (await call_ok(alpha, "memory_get", {"id": memory_id}))["content"] == "alpha's private runbook"
