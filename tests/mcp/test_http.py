"""The official Python MCP client against `aeterna serve` over real Streamable HTTP."""

from __future__ import annotations

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from conftest import ALPHA_TOKEN, BETA_TOKEN, TOOLS, TWO_TENANTS, call_err, call_ok, http_client, raw_post

pytestmark = pytest.mark.anyio


# "auto" negotiates the stateless 2026-07-28 protocol; "legacy" the initialize handshake.
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_lists_tools_and_runs_add_search_get_delete(serve, mode):
    server = serve()
    async with http_client(server, mode=mode) as client:
        assert client.server_info is not None and client.server_info.name == "aeterna"
        assert "memory_search" in (client.instructions or "")
        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        assert sorted(tools) == TOOLS
        assert tools["memory_search"].annotations.read_only_hint is True
        assert tools["memory_delete"].annotations.destructive_hint is True
        assert tools["memory_add"].input_schema["required"] == ["content", "layer"]

        added = await call_ok(
            client,
            "memory_add",
            {"content": "The flaky integration test needs a fresh Redis database", "layer": "project",
             "project_id": "aeterna", "tags": ["tests"]},
        )
        memory_id = added["record"]["id"]
        found = await call_ok(client, "memory_search", {"query": "flaky test redis", "project_id": "aeterna"})
        assert found["hits"][0]["record"]["id"] == memory_id
        got = await call_ok(client, "memory_get", {"id": memory_id})
        assert got["content"] == "The flaky integration test needs a fresh Redis database"
        assert got["tags"] == ["tests"]
        deleted = await call_ok(client, "memory_delete", {"id": memory_id})
        assert deleted == {"id": memory_id, "deleted": True}
        message = await call_err(client, "memory_get", {"id": memory_id})
        assert "no memory with id" in message
        found = await call_ok(client, "memory_search", {"query": "flaky test redis", "project_id": "aeterna"})
        assert found["hits"] == []
    assert server.terminate() == 0


async def test_tenant_b_finds_gets_updates_and_deletes_nothing_of_tenant_a(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha, http_client(server, BETA_TOKEN) as beta:
        secret = "alpha rotates the signing key every 30 days"
        added = await call_ok(alpha, "memory_add", {"content": secret, "layer": "user"})
        memory_id = added["record"]["id"]
        assert added["record"]["tenant_id"] == "alpha"

        # Beta has the same user and project ids by default; the tenant still separates them.
        assert (await call_ok(beta, "memory_search", {"query": "signing key rotation"}))["hits"] == []
        assert (await call_ok(beta, "memory_list", {}))["items"] == []
        for tool, arguments in [
            ("memory_get", {"id": memory_id}),
            ("memory_update", {"id": memory_id, "content": "beta was here"}),
            ("memory_delete", {"id": memory_id}),
        ]:
            assert "no memory with id" in await call_err(beta, tool, arguments)
        # An argument cannot choose the tenant.
        found = await call_ok(beta, "memory_search", {"query": "signing key", "tenant_id": "alpha"})
        assert found["hits"] == []

        rest = httpx.post(
            f"{server.base}/v1/retrieve-context",
            headers={"X-API-Key": BETA_TOKEN},
            json={"query": "signing key rotation", "user_id": "ann", "top_k": 50},
        )
        assert rest.status_code == 200 and rest.json()["context_chunks"] == []

        # Alpha's memory is intact.
        got = await call_ok(alpha, "memory_get", {"id": memory_id})
        assert got["content"] == secret
    assert server.terminate() == 0


async def test_missing_or_wrong_token_is_refused(serve):
    server = serve(TWO_TENANTS)
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    import json

    for token in [None, "not-a-token", ALPHA_TOKEN + "x"]:
        response = raw_post(server, json.dumps(initialize), token)
        assert response.status_code == 401, token
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "unauthorized"
    with pytest.raises(Exception):
        async with http_client(server, "not-a-token") as client:
            await client.list_tools()
    async with http_client(server, ALPHA_TOKEN) as client:
        assert len((await client.list_tools()).tools) == len(TOOLS)
    assert server.terminate() == 0


async def test_bad_input_gets_clear_errors_and_the_server_keeps_serving(serve):
    server = serve("[memory]\nmax_content_bytes = 2048\n")
    async with http_client(server) as client:
        message = await call_err(client, "memory_add", {"content": ["not", "a", "string"], "layer": "company"})
        assert message.startswith("memory_add: invalid arguments") and "expected a string" in message
        message = await call_err(client, "memory_search", {"limit": "ten", "query": "x"})
        assert "memory_search: invalid arguments" in message
        message = await call_err(client, "memory_add", {"content": "x", "layer": "universe"})
        assert "unknown layer `universe`" in message
        message = await call_err(client, "memory_add", {"content": "x" * 5000, "layer": "company"})
        assert "2048" in message
        message = await call_err(client, "memory_get", {"id": "12345"})
        assert "not a memory id" in message
        message = await call_err(client, "memory_update", {"id": "01a20417-2a3b-721d-b096-be07c42283ff", "content": "y"})
        assert "no memory with id" in message
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("memory_explode", {})
        assert "unknown tool `memory_explode`" in str(unknown.value)

        # Malformed JSON-RPC, straight over HTTP.
        response = raw_post(server, b'{"jsonrpc": "2.0", "id": 7, "method": ')
        assert 400 <= response.status_code < 500
        response = raw_post(server, b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": 5}')
        assert 400 <= response.status_code < 500 or '"error"' in response.text
        # A body over the limit (1 MiB by default) is refused with 413.
        response = raw_post(server, b" " * (2 * 1024 * 1024))
        assert response.status_code == 413

        # Still serving.
        added = await call_ok(client, "memory_add", {"content": "still here", "layer": "company"})
        assert added["record"]["content"] == "still here"
    assert server.terminate() == 0


async def test_rest_api_and_operations_endpoints(serve):
    server = serve()
    ingest = httpx.post(
        f"{server.base}/v1/ingest-context",
        json={"content": "Deploys happen on Tuesdays after the standup", "user_id": "ann", "session_id": "s1"},
    )
    assert ingest.status_code == 202, ingest.text
    assert ingest.json()["status"] == "accepted"
    retrieve = httpx.post(
        f"{server.base}/v1/retrieve-context",
        json={"query": "when do deploys happen", "user_id": "ann", "session_id": "s1", "top_k": 5},
    )
    assert retrieve.status_code == 200
    chunks = retrieve.json()["context_chunks"]
    assert chunks[0]["id"] == ingest.json()["id"]
    assert 0 < chunks[0]["relevance_score"] <= 1
    bad = httpx.post(f"{server.base}/v1/retrieve-context", json={"query": "x", "top_k": 500})
    assert bad.status_code == 422 and "top_k" in bad.json()["error"]["message"]

    assert httpx.get(f"{server.base}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{server.base}/readyz").status_code == 200
    metrics = httpx.get(f"{server.base}/metrics").text
    assert 'aeterna_calls_total{operation="rest_ingest_context",outcome="ok"} 1' in metrics
    assert "aeterna_memory_records 1" in metrics
    assert server.terminate() == 0


async def test_json_logs_carry_a_span_per_tool_call(serve):
    import json

    server = serve(extra_env={"AETERNA_LOG_FORMAT": "json", "RUST_LOG": "aeterna_server=debug,info"})
    async with http_client(server) as client:
        await call_ok(client, "memory_list", {})
    assert server.terminate() == 0
    records = [json.loads(line) for line in server.stderr_lines if line.strip()]
    finished = [r for r in records if r.get("fields", {}).get("message") == "tool call finished"]
    assert finished, server.stderr
    span = finished[0]["span"]
    assert span["name"] == "tool_call"
    assert span["tool"] == "memory_list"
    assert span["tenant"] == "default"
