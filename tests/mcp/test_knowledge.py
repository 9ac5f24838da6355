"""Knowledge repositories through the official Python client, against the real binary and a
real git repository: an item committed with `git` is a resource (`aeterna://knowledge/…`),
and a pattern loads whole as the `use-skill` prompt, its name offered by completion."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference

from conftest import call_ok, http_client

pytestmark = pytest.mark.anyio

PATTERN = """---
id: sqlx-offline
type: pattern
title: Build sqlx crates offline
description: How to build crates that use sqlx's query! macros on runners without a database.
layer: team
scope: core
---

Set `SQLX_OFFLINE=true` and commit the `.sqlx` directory that `cargo sqlx prepare` writes.
"""

DECISION = """---
id: postgres-15
type: adr
title: PostgreSQL 15 for the shared profile
layer: team
scope: core
---

We stay on PostgreSQL 15 until the runners have 16.
"""


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Ana", "-c", "user.email=ana@example.com", *args],
        cwd=cwd, check=True, capture_output=True,
        env={"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"},
    )


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "core"
    (repo / "patterns").mkdir(parents=True)
    (repo / "adr").mkdir()
    (repo / "patterns" / "sqlx-offline.md").write_text(PATTERN)
    (repo / "adr" / "postgres-15.md").write_text(DECISION)
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "knowledge: sqlx offline builds, PostgreSQL 15")
    return repo


async def test_items_are_resources_and_patterns_load_as_skills(serve, tmp_path):
    repo = repository(tmp_path)
    server = serve(
        f"""
[knowledge]
poll_interval_ms = 200

[[knowledge.repositories]]
path = "{repo}"
layer = "team"
scope = "core"
"""
    )
    async with http_client(server) as client:
        deadline = time.monotonic() + 15
        while True:
            found = await call_ok(client, "knowledge_search", {"query": "sqlx offline build", "team_id": "core"})
            if found["hits"] or time.monotonic() > deadline:
                break
        uri = found["hits"][0]["uri"]
        assert uri == "aeterna://knowledge/team/core/sqlx-offline"

        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        assert "aeterna://knowledge/{layer}/{scope_id}/{id}" in templates
        read = await client.read_resource(uri)
        markdown, document = read.contents
        assert markdown.mime_type == "text/markdown"
        assert markdown.text.startswith("---\nid: sqlx-offline\ntype: pattern\n"), markdown.text
        assert markdown.text.endswith(PATTERN.split("---\n")[-1]), markdown.text
        document = json.loads(document.text)
        assert document["history"][0]["message"].startswith("knowledge: sqlx offline builds")
        assert document["uri"] == uri
        for missing in ["aeterna://knowledge/team/core/nothing-here", "aeterna://knowledge/team/web/sqlx-offline"]:
            with pytest.raises(MCPError) as refused:
                await client.read_resource(missing)
            assert refused.value.error.data == {"uri": missing}, refused.value

        # Skills: offered by name, loaded whole only when asked for.
        names = await client.complete(
            PromptReference(type="ref/prompt", name="use-skill"),
            {"name": "skill", "value": "sq"},
            context_arguments={"team_id": "core"},
        )
        assert names.completion.values == ["sqlx-offline"]
        skill = await client.get_prompt("use-skill", {"skill": "sqlx-offline", "team_id": "core"})
        text = skill.messages[0].content.text
        assert "Build sqlx crates offline" in text and "cargo sqlx prepare" in text
        assert "type: pattern" not in text, "the front matter stays out of the skill"
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("use-skill", {"skill": "postgres-15", "team_id": "core"})
        assert "`postgres-15` is of type `adr`, not a skill" in str(refused.value), refused.value
        assert refused.value.error.code == -32602
    assert server.terminate() == 0
