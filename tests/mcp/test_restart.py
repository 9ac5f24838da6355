"""Durability: data written, server stopped with SIGTERM, server started, data found."""

from __future__ import annotations

import re

import httpx
import pytest

from conftest import call_ok, http_client

pytestmark = pytest.mark.anyio


def gauge(base: str, name: str) -> float:
    metrics = httpx.get(f"{base}/metrics").text
    match = re.search(rf"^{name} (\S+)$", metrics, re.MULTILINE)
    assert match, f"{name} missing from /metrics"
    return float(match.group(1))


async def test_data_and_vectors_survive_a_restart(serve, tmp_path):
    data = tmp_path / "data"
    first = serve(data_dir=data)
    contents = [
        "Postgres connection pool exhaustion happens when transactions are left open",
        "The frontend bundle is built with esbuild in watch mode",
        "Kubernetes liveness probes hit the /healthz endpoint",
    ]
    async with http_client(first) as client:
        ids = [
            (await call_ok(client, "memory_add", {"content": text, "layer": "company"}))["record"]["id"]
            for text in contents
        ]
    assert first.terminate() == 0, first.stderr
    assert "shutdown complete" in first.stderr

    second = serve(data_dir=data)
    assert gauge(second.base, "aeterna_memory_records") == 3
    assert gauge(second.base, "aeterna_memory_vectors") == 3, "the vector index was reloaded"
    async with http_client(second) as client:
        listed = await call_ok(client, "memory_list", {"metadata_only": True})
        assert sorted(item["id"] for item in listed["items"]) == sorted(ids)
        # Misspelled words the lexical index cannot match: only the vectors find this.
        found = await call_ok(client, "memory_search", {"query": "postgress conection pol exhausted"})
        assert found["hits"] and found["hits"][0]["record"]["id"] == ids[0]
        found = await call_ok(client, "memory_search", {"query": "liveness probe endpoint"})
        assert found["hits"][0]["record"]["id"] == ids[2]
    assert second.terminate() == 0


async def test_config_errors_fail_fast_and_name_the_key(serve, tmp_path):
    import subprocess

    from conftest import aeterna_bin, clean_env

    config = tmp_path / "bad.toml"
    config.write_text("[memory]\nmax_content_byte = 10\n")
    result = subprocess.run(
        [aeterna_bin(), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d"), "--config", str(config)],
        capture_output=True, text=True, timeout=30, env=clean_env(),
    )
    assert result.returncode != 0
    assert "max_content_byte" in result.stderr

    env = clean_env() | {"AETERNA_MEMORY__MAX_PAGE_SIZE": "lots"}
    result = subprocess.run(
        [aeterna_bin(), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=30, env=env,
    )
    assert result.returncode != 0
    assert "max_page_size" in result.stderr

    result = subprocess.run(
        [aeterna_bin(), "serve", "--listen", "0.0.0.0:0", "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=30, env=clean_env(),
    )
    assert result.returncode != 0
    assert "auth.tokens" in result.stderr


async def test_environment_overrides_the_config(serve, tmp_path):
    server = serve("[memory]\nmax_content_bytes = 100000\n", extra_env={"AETERNA_MEMORY__MAX_CONTENT_BYTES": "100"})
    async with http_client(server) as client:
        result = await client.call_tool("memory_add", {"content": "x" * 200, "layer": "company"})
        assert result.is_error and "100" in result.content[0].text
    assert server.terminate() == 0
