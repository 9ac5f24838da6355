"""Durability: data written, server stopped with SIGTERM, server started, data found."""

from __future__ import annotations

import re
import threading

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


async def test_writes_in_flight_at_sigterm_are_acknowledged_and_kept(serve, tmp_path):
    """Clients keep writing while the server gets SIGTERM: each write is either acknowledged and
    then found after a restart, or refused at the connection; none is acknowledged and lost."""
    data = tmp_path / "data"
    first = serve(data_dir=data)
    acknowledged: list[str] = []
    server_errors: list[str] = []
    lock = threading.Lock()
    enough = threading.Event()

    def writer(worker: int) -> None:
        with httpx.Client(base_url=first.base, timeout=30) as http:
            for n in range(10_000):
                body = {
                    "content": f"writer {worker} note {n}: flaky test in the payments suite",
                    "user_id": "ann",
                    "session_id": "s1",
                }
                try:
                    response = http.post("/v1/ingest-context", json=body)
                except httpx.TransportError:
                    return  # the server stopped accepting: refused, not acknowledged
                with lock:
                    if response.status_code == 202:
                        acknowledged.append(response.json()["id"])
                        if len(acknowledged) >= 150:
                            enough.set()
                    else:
                        server_errors.append(f"{response.status_code} {response.text}")
                        return

    writers = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    for thread in writers:
        thread.start()
    assert enough.wait(timeout=60), "the writers got going"
    assert first.terminate() == 0, first.stderr
    for thread in writers:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in writers), "every writer saw the server stop"
    # During shutdown a request may also be answered 503 by the draining server; nothing else.
    assert all(error.startswith("503") for error in server_errors), server_errors

    second = serve(data_dir=data)
    found: set[str] = set()
    async with http_client(second) as client:
        cursor = None
        while True:
            args = {"metadata_only": True, "limit": 100, "user_id": "ann", "session_id": "s1"}
            if cursor:
                args["cursor"] = cursor
            page = await call_ok(client, "memory_list", args)
            found.update(item["id"] for item in page["items"])
            cursor = page.get("next_cursor")
            if not cursor:
                break
    missing = set(acknowledged) - found
    assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged writes were lost"
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
