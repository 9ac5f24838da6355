"""Two `aeterna serve` instances on one PostgreSQL (127.0.0.1:5432, database `test`), each with
its own data directory, driven by the official MCP client over real HTTP: what is written
through one — memories, and every agent's own records — is found, changed and deleted through
the other, with the vectors in each process or, when `QDRANT_URL` names a Qdrant, in Qdrant; an
unreachable database or Qdrant stops the server at start with a message naming its key."""

from __future__ import annotations

import os
import subprocess
import uuid

import httpx
import pytest

from conftest import ROOT, aeterna_bin, call_err, call_ok, clean_env, http_client
from test_notes import SESSION, TRAJECTORY

pytestmark = pytest.mark.anyio

DATABASE = "postgres://postgres@127.0.0.1:5432/test"


@pytest.fixture
def schema() -> str:
    """A schema of this test's own, dropped afterwards."""
    name = f"aeterna_test_{uuid.uuid4().hex[:16]}"
    yield name
    subprocess.run(["psql", DATABASE, "-qc", f'DROP SCHEMA IF EXISTS "{name}" CASCADE'], check=False)


def scale_out_config(schema: str, qdrant: str | None = None) -> str:
    vectors = f'qdrant_url = "{qdrant}"\n[memory.qdrant]\ncollection = "{schema}"\n' if qdrant else ""
    return f"""
database_url = "{DATABASE}"
{vectors}[memory.postgres]
schema = "{schema}"
[memory.follow]
interval_ms = 50
"""


@pytest.fixture(params=["in-memory", "qdrant"])
def vectors(request) -> str | None:
    """Where the instances keep their vectors: each in its own memory, or in the Qdrant that
    `QDRANT_URL` names (skipped, visibly, without one: Qdrant is not in the registries here)."""
    if request.param == "in-memory":
        return None
    url = os.environ.get("QDRANT_URL")
    if not url:
        pytest.skip("QDRANT_URL is not set; the Qdrant variant needs a running Qdrant")
    return url


async def test_a_memory_written_through_one_instance_is_served_by_the_other(serve, schema, vectors):
    first = serve(scale_out_config(schema, vectors))
    second = serve(scale_out_config(schema, vectors))
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
    assert stores["vectors"] == {"backend": "qdrant" if vectors else "in-memory", "status": "ok"}
    assert first.terminate() == 0 and second.terminate() == 0


def error_output(path: str) -> str:
    return (ROOT / "agents" / "hindsight" / "fixtures" / "outputs" / path).read_text()


async def test_every_agent_keeps_its_records_in_the_shared_database(serve, schema):
    first = serve(scale_out_config(schema))
    second = serve(scale_out_config(schema))
    project = {"project_id": "aeterna"}
    async with http_client(first) as a, http_client(second) as b:
        # Hindsight: the second instance loads its index first, then the first one learns a fix;
        # the second finds it (its index follows the other instance's writes).
        later_error = {"error_text": error_output("rust/E0308-mismatched-types/invoice_total.txt"), **project}
        assert (await call_ok(b, "hindsight_query", later_error))["status"] == "no_known_resolution"
        captured = await call_ok(
            a, "hindsight_capture",
            {"error_text": error_output("rust/E0308-mismatched-types/parse_port.txt"), **project},
        )
        [signature] = captured["signatures"]
        resolved = await call_ok(
            a, "hindsight_resolve",
            {"signature_id": signature["signature_id"], "description": "Parse the port with str::parse.", **project},
        )
        found = await call_ok(b, "hindsight_query", later_error)
        assert found["status"] == "matched", found
        assert found["matched"][0]["resolutions"][0]["id"] == resolved["resolution"]["id"]

        # Notes: a trajectory distilled through the first is listed through the second.
        await call_ok(a, "trajectory_capture", {"events": TRAJECTORY, **SESSION})
        distilled = await call_ok(a, "note_distill", SESSION)
        [note] = distilled["notes"]
        listed = await call_ok(b, "note_list", SESSION)
        assert [n["id"] for n in listed["notes"]] == [note["id"]]

        # Summaries: refreshed through the first, read through the second.
        for i in range(3):
            await call_ok(a, "memory_add", {"content": f"Deploy step {i} waits for the smoke tests.", "layer": "project", **project})
        refreshed = await call_ok(a, "summary_refresh", {"layers": ["project"], **project})
        summary = await call_ok(b, "summary_get", {"layer": "project", **project})
        assert summary["source_hash"] == refreshed["refreshed"][0]["source_hash"]

        # Meta-Agent loops: started through the first, followed and ended through the second.
        started = await call_ok(a, "meta_loop_start", {"task": "make the parser tests pass", **project})
        loop_id = started["loop"]["loop_id"]
        assert (await call_ok(b, "meta_loop_status", {"loop_id": loop_id}))["state"] == "running"
        built = await call_ok(b, "meta_loop_step", {"loop_id": loop_id, "phase": "build", "success": True})
        assert built["next"]["action"] == "test"
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


def test_an_unreachable_qdrant_stops_the_server_naming_it(tmp_path):
    config = tmp_path / "aeterna.toml"
    config.write_text('qdrant_url = "http://127.0.0.1:1"\n[memory.qdrant]\ntimeout_ms = 2000\n')
    done = subprocess.run(
        [aeterna_bin(), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"),
         "--config", str(config)],
        capture_output=True, text=True, env=clean_env(), timeout=60,
    )
    assert done.returncode != 0
    assert "qdrant_url" in done.stderr and "http://127.0.0.1:1" in done.stderr, done.stderr


async def test_aeterna_migrate_moves_an_embedded_deployment_to_postgres(serve, schema, tmp_path):
    embedded = serve(data_dir=tmp_path / "embedded")
    project = {"project_id": "aeterna"}
    async with http_client(embedded) as client:
        added = await call_ok(
            client, "memory_add",
            {"content": "Blue-green deploys switch the load balancer after smoke tests pass", "layer": "project", **project},
        )
        captured = await call_ok(
            client, "hindsight_capture",
            {"error_text": error_output("rust/E0308-mismatched-types/parse_port.txt"), **project},
        )
        [signature] = captured["signatures"]
        resolved = await call_ok(
            client, "hindsight_resolve",
            {"signature_id": signature["signature_id"], "description": "Parse the port with str::parse.", **project},
        )
    assert embedded.terminate() == 0

    config = tmp_path / "target.toml"
    config.write_text(f'[memory.postgres]\nschema = "{schema}"\n')
    migrate = [aeterna_bin(), "migrate", "--from", str(tmp_path / "embedded"), "--to", DATABASE, "--config", str(config)]
    done = subprocess.run(migrate, capture_output=True, text=True, env=clean_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "every tenant's rows are there" in done.stdout
    assert any(line.split()[:4] == ["memories", "default", "2", "→"] for line in done.stdout.splitlines()), done.stdout
    # Run again: nothing is copied twice.
    again = subprocess.run(migrate, capture_output=True, text=True, env=clean_env(), timeout=120)
    assert again.returncode == 0 and again.stdout == done.stdout, again.stderr

    scaled = serve(scale_out_config(schema))
    async with http_client(scaled) as client:
        found = await call_ok(client, "memory_search", {"query": "blue green deploys smoke tests", **project})
        assert found["hits"][0]["record"]["id"] == added["record"]["id"]
        matched = await call_ok(
            client, "hindsight_query",
            {"error_text": error_output("rust/E0308-mismatched-types/invoice_total.txt"), **project},
        )
        assert matched["matched"][0]["resolutions"][0]["id"] == resolved["resolution"]["id"]
    assert scaled.terminate() == 0


def test_aeterna_migrate_refuses_a_data_dir_in_use(serve, tmp_path):
    running = serve(data_dir=tmp_path / "busy")
    done = subprocess.run(
        [aeterna_bin(), "migrate", "--from", str(tmp_path / "busy"), "--to", "postgres://app:s3cret@127.0.0.1:1/x"],
        capture_output=True, text=True, env=clean_env(), timeout=60,
    )
    assert done.returncode != 0
    assert "stop it first" in done.stderr, done.stderr
    assert running.terminate() == 0
