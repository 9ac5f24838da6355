"""Two `aeterna serve` instances on one PostgreSQL (127.0.0.1:5432, database `test`), each with
its own data directory, driven by the official MCP client over real HTTP: what is written
through one is found, changed and deleted through the other; an unreachable database stops the
server at start with a message naming `database_url`."""

from __future__ import annotations

import subprocess
import uuid

import httpx
import pytest

from conftest import aeterna_bin, call_err, call_ok, clean_env, http_client

pytestmark = pytest.mark.anyio

DATABASE = "postgres://postgres@127.0.0.1:5432/test"


@pytest.fixture
def schema() -> str:
    """A schema of this test's own, dropped afterwards."""
    name = f"aeterna_test_{uuid.uuid4().hex[:16]}"
    yield name
    subprocess.run(["psql", DATABASE, "-qc", f'DROP SCHEMA IF EXISTS "{name}" CASCADE'], check=False)


def scale_out_config(schema: str) -> str:
    return f"""
database_url = "{DATABASE}"
[memory.postgres]
schema = "{schema}"
[memory.follow]
interval_ms = 50
"""


async def test_a_memory_written_through_one_instance_is_served_by_the_other(serve, schema):
    first = serve(scale_out_config(schema))
    second = serve(scale_out_config(schema))
    async with http_client(first) as a, http_client(second) as b:
        added = await call_ok(
            a,
            "memory_add",
            {"content": "Blue-green deploys switch the load balancer after smoke tests pass",
             "layer": "project", "project_id": "aeterna"},
        )
        memory_id = added["record"]["id"]
        found = await call_ok(b, "memory_search", {"query": "blue green deploy smoke tests", "project_id": "aeterna"})
        assert [hit["record"]["id"] for hit in found["hits"]][:1] == [memory_id]

        await call_ok(b, "memory_update", {"id": memory_id, "content": "Canary deploys take five percent of traffic first"})
        found = await call_ok(a, "memory_search", {"query": "canary deploys traffic", "project_id": "aeterna"})
        assert found["hits"][0]["record"]["id"] == memory_id

        await call_ok(a, "memory_delete", {"id": memory_id})
        assert "no memory with id" in await call_err(b, "memory_get", {"id": memory_id})
        found = await call_ok(b, "memory_search", {"query": "canary deploys traffic", "project_id": "aeterna"})
        assert found["hits"] == []

    ready = httpx.get(f"{second.base}/readyz", timeout=10).json()
    stores = ready["stores"]
    assert ready["status"] == "ready"
    assert stores["records"] == {"backend": "postgres", "status": "ok"}
    assert stores["agents"]["backend"] == "sqlite" and stores["agents"]["status"] == "ok"
    assert first.terminate() == 0 and second.terminate() == 0


def test_an_unreachable_database_stops_the_server_naming_it(tmp_path):
    config = tmp_path / "aeterna.toml"
    # Port 1 on loopback: nothing listens there.
    config.write_text('database_url = "postgres://app:s3cret@127.0.0.1:1/aeterna"\n')
    done = subprocess.run(
        [aeterna_bin(), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"),
         "--config", str(config)],
        capture_output=True, text=True, env=clean_env(), timeout=60,
    )
    assert done.returncode != 0
    assert "database_url" in done.stderr and "127.0.0.1:1" in done.stderr, done.stderr
    assert "s3cret" not in done.stderr, "the password never reaches the log"
