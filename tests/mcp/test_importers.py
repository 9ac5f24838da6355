"""Memory from another tool, made by that tool: the official MCP memory server (npm
`@modelcontextprotocol/server-memory`, pinned in tests/server-memory) writes its knowledge graph
through its own MCP tools, `aeterna import --format mcp-memory` reads the file, and the facts are
found with `memory_search` over stdio.

Set MCP_MEMORY_SERVER_JS to the server's `dist/index.js` (scripts/test installs it); without it
these tests say SKIPPED."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from conftest import aeterna_bin, call_ok, clean_env, stdio_client, text

pytestmark = pytest.mark.anyio


def memory_server() -> tuple[str, str]:
    script = os.environ.get("MCP_MEMORY_SERVER_JS", "")
    if not script:
        pytest.skip("SKIPPED: MCP_MEMORY_SERVER_JS is not set (scripts/test installs the memory server)")
    node = os.environ.get("NODE_BIN") or shutil.which("node")
    if not node:
        pytest.skip("SKIPPED: no node to run the memory server (set NODE_BIN)")
    return node, script


async def write_with_the_real_server(memory_file: Path) -> None:
    node, script = memory_server()
    params = StdioServerParameters(
        command=node, args=[script], env={**clean_env(), "MEMORY_FILE_PATH": str(memory_file)}
    )
    async with Client(params) as server:
        result = await server.call_tool(
            "create_entities",
            {
                "entities": [
                    {
                        "name": "billing-service",
                        "entityType": "service",
                        "observations": [
                            "stores invoices in PostgreSQL 15",
                            "deploys every Tuesday afternoon through the canary pipeline",
                        ],
                    },
                    {
                        "name": "Dana",
                        "entityType": "person",
                        "observations": ["is on call for billing this week"],
                    },
                ]
            },
        )
        assert not result.is_error, text(result)
        result = await server.call_tool(
            "create_relations",
            {"relations": [{"from": "Dana", "to": "billing-service", "relationType": "maintains"}]},
        )
        assert not result.is_error, text(result)
        result = await server.call_tool(
            "add_observations",
            {"observations": [{"entityName": "billing-service", "contents": ["retries webhooks with backoff"]}]},
        )
        assert not result.is_error, text(result)


def run_import(data: Path, memory_file: Path) -> str:
    done = subprocess.run(
        [
            aeterna_bin(),
            "import",
            "--format",
            "mcp-memory",
            "--from",
            str(memory_file),
            "--tenant",
            "default",
            "--project",
            "p1",
            "--data-dir",
            str(data),
        ],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"import failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


async def test_the_official_memory_servers_graph_is_imported_and_searchable(tmp_path):
    memory_file = tmp_path / "memory.jsonl"
    await write_with_the_real_server(memory_file)
    assert memory_file.stat().st_size > 0, "the memory server wrote its graph"

    data = tmp_path / "data"
    run_import(data, memory_file)
    run_import(data, memory_file)

    async with stdio_client(data) as client:
        p1 = {"project_id": "p1"}
        found = await call_ok(client, "memory_search", {"query": "which database stores the invoices", **p1})
        contents = [hit["record"]["content"] for hit in found["hits"]]
        assert any("PostgreSQL 15" in c and "billing-service" in c for c in contents), contents
        assert any("retries webhooks" in c for c in contents) or any(
            "retries webhooks" in hit["record"]["content"]
            for hit in (await call_ok(client, "memory_search", {"query": "webhook retries backoff", **p1}))["hits"]
        ), "an observation added later is imported too"
        dana = await call_ok(client, "memory_search", {"query": "who maintains the billing service", **p1})
        assert any("Dana" in hit["record"]["content"] for hit in dana["hits"]), dana
        listed = await call_ok(client, "memory_list", {"layers": ["project"], "limit": 50, **p1})
        # Two entities and one relation, each stored once although imported twice.
        assert len(listed["items"]) == 3, listed
