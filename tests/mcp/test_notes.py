"""The Note-Taking agent through the official Python MCP client, against the real binary:
capture → distill → note_get → read the note as a resource, over HTTP and stdio."""

from __future__ import annotations

import json

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from conftest import ALPHA_TOKEN, BETA_TOKEN, TWO_TENANTS, call_err, call_ok, http_client, stdio_client, text

pytestmark = pytest.mark.anyio

SESSION = {"session_id": "s-7", "project_id": "p1"}

FAILING_RUN = """running 3 tests
test parser::tests::parses_numbers ... ok
test parser::tests::parses_sums ... ok
test parser::tests::parses_empty_input ... FAILED

failures:

---- parser::tests::parses_empty_input stdout ----
thread 'parser::tests::parses_empty_input' panicked at src/parser.rs:13:11:
index out of bounds: the len is 0 but the index is 0

test result: FAILED. 2 passed; 1 failed"""

# search → read → edit → test fails → fix → test passes, with a secret in one output.
TRAJECTORY = [
    {"tool_name": "grep", "description": "Find where expressions are parsed",
     "input": {"pattern": "fn parse_expr"}, "output": "src/parser.rs:12: pub fn parse_expr", "success": True},
    {"tool_name": "read_file", "description": "Read the parser", "input": {"path": "src/parser.rs"},
     "output": "match tokens[0] {", "success": True},
    {"tool_name": "edit_file", "description": "Parse sums of two terms",
     "input": {"path": "src/parser.rs", "old": "tokens[0]", "new": "(tokens[0], tokens.get(1))"},
     "output": "edited", "success": True},
    {"tool_name": "bash", "description": "Run the parser tests", "input": {"command": "cargo test parser"},
     "output": FAILING_RUN, "success": False, "duration_ms": 14200, "tags": ["parser"]},
    {"tool_name": "edit_file", "description": "Return Expr::Empty for an empty token list",
     "input": {"path": "src/parser.rs", "old": "match (tokens[0]", "new": "if tokens.is_empty() { return Expr::Empty; }"},
     "output": "edited; GITHUB_TOKEN=ghp_Tk9sY2FsRGV2VG9rZW5Gb3JUZXN0czEyMzQ1Ng", "success": True},
    {"tool_name": "bash", "description": "Run the parser tests again", "input": {"command": "cargo test parser"},
     "output": "test result: ok. 3 passed; 0 failed", "success": True},
]


async def capture_and_distill(client) -> dict:
    receipt = await call_ok(client, "trajectory_capture", {"events": TRAJECTORY, **SESSION})
    assert (receipt["accepted"], receipt["filtered"], receipt["dropped"]) == (6, 0, 0)
    assert [event["status"] for event in receipt["events"]] == ["accepted"] * 6
    assert all(event["mode"] == "all" for event in receipt["events"])
    outcome = await call_ok(client, "note_distill", SESSION)
    assert outcome["distilled_events"] == 6 and len(outcome["notes"]) == 1
    return outcome["notes"][0]


async def test_capture_distill_get_and_read_the_resource_over_http(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha:
        tools = {tool.name: tool for tool in (await alpha.list_tools()).tools}
        for name in ["trajectory_capture", "note_distill", "note_list", "note_get"]:
            assert name in tools, f"{name} missing"
        capture_schema = tools["trajectory_capture"].input_schema
        assert {"event", "events", "session_id", "project_id"} <= set(capture_schema["properties"])
        assert tools["note_get"].annotations.read_only_hint is True

        note = await capture_and_distill(alpha)
        assert note["title"] == "Fix for failing test `parser::tests::parses_empty_input` in `src/parser.rs`"
        assert (note["layer"], note["scope_id"]) == ("project", "p1")
        uri = f"aeterna://notes/{note['id']}"
        assert note["uri"] == uri

        # Markdown for people, JSON with metadata for programs.
        result = await alpha.call_tool("note_get", {"id": note["id"]})
        assert not result.is_error, text(result)
        markdown = result.content[0].text
        for section in ["## Context", "## Problem", "## Solution", "## Patterns", "## Tags"]:
            assert section in markdown
        assert "`parser::tests::parses_empty_input`" in markdown
        assert "Edited `src/parser.rs`: Return Expr::Empty for an empty token list" in markdown
        assert "ghp_Tk9sY2FsRGV2VG9rZW5Gb3JUZXN0czEyMzQ1Ng" not in json.dumps(result.structured_content)
        structured = result.structured_content
        assert structured["id"] == note["id"] and structured["covered_events"] == 6
        assert structured["sections"]["solution"][-1].startswith("`cargo test parser` passed")

        # Distilling again writes nothing new.
        again = await call_ok(alpha, "note_distill", SESSION)
        assert again["notes"] == [] and again["session_notes"] == [{"id": note["id"], "events": 6}]
        listed = await call_ok(alpha, "note_list", SESSION)
        assert [n["id"] for n in listed["notes"]] == [note["id"]]

        # The note is a memory: search finds it.
        hits = await call_ok(alpha, "memory_search", {"query": "parses_empty_input index out of bounds", **SESSION})
        assert hits["hits"][0]["record"]["id"] == note["id"]
        assert hits["hits"][0]["record"]["kind"] == "note"

        # And a resource.
        templates = await alpha.list_resource_templates()
        assert "aeterna://notes/{id}" in [t.uri_template for t in templates.resource_templates]
        resources = await alpha.list_resources()
        assert uri in [str(r.uri) for r in resources.resources]
        read = await alpha.read_resource(uri)
        by_type = {content.mime_type: content.text for content in read.contents}
        assert by_type["text/markdown"] == markdown
        assert json.loads(by_type["application/json"])["covered_events"] == 6

        metrics = httpx.get(f"{server.base}/metrics", headers={"Authorization": f"Bearer {ALPHA_TOKEN}"}).text
        assert "aeterna_notes_events_accepted_total 6" in metrics
        assert "aeterna_notes_notes_created_total 1" in metrics
        assert "aeterna_notes_secrets_redacted_total 1" in metrics

    # Another tenant sees none of it, as tool or resource.
    async with http_client(server, BETA_TOKEN) as beta:
        message = await call_err(beta, "note_get", {"id": note["id"]})
        assert "no note with id" in message
        assert (await call_ok(beta, "note_list", SESSION))["notes"] == []
        assert uri not in [str(r.uri) for r in (await beta.list_resources()).resources]
        with pytest.raises(MCPError) as error:
            await beta.read_resource(uri)
        assert "no note with id" in str(error.value)


async def test_one_event_and_bad_input(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha:
        one = await call_ok(alpha, "trajectory_capture", {"event": TRAJECTORY[0], **SESSION})
        assert one["accepted"] == 1 and one["events"][0]["id"]

        both = await call_err(alpha, "trajectory_capture", {"event": TRAJECTORY[0], "events": TRAJECTORY})
        assert "either `event`" in both
        none = await call_err(alpha, "trajectory_capture", SESSION)
        assert "no event" in none
        wrong_type = await call_err(alpha, "trajectory_capture", {"event": {"tool_name": "bash", "success": "yes"}})
        assert "trajectory_capture: invalid arguments" in wrong_type and "bool" in wrong_type
        empty_tool = await call_err(alpha, "trajectory_capture", {"events": [TRAJECTORY[0], {**TRAJECTORY[1], "tool_name": ""}]})
        assert "events[1]: `tool_name` is empty" in empty_tool
        bad_id = await call_err(alpha, "note_get", {"id": "not-a-uuid"})
        assert "is not a note id" in bad_id
        with pytest.raises(MCPError):
            await alpha.read_resource("aeterna://notes/not-a-uuid")


async def test_capture_modes_come_from_the_config(serve):
    server = serve(TWO_TENANTS + '\n[notes.capture]\nmode = "errors_only"\nprojects = { "alpha/quiet" = "disabled" }\n')
    async with http_client(server, ALPHA_TOKEN) as alpha:
        receipt = await call_ok(alpha, "trajectory_capture", {"events": TRAJECTORY, **SESSION})
        assert (receipt["accepted"], receipt["filtered"]) == (1, 5)
        assert {event["mode"] for event in receipt["events"]} == {"errors_only"}
        quiet = await call_ok(alpha, "trajectory_capture", {"events": TRAJECTORY, "session_id": "s-7", "project_id": "quiet"})
        assert (quiet["accepted"], quiet["filtered"]) == (0, 6)


async def test_capture_distill_get_and_read_over_stdio(tmp_path):
    async with stdio_client(tmp_path / "data") as client:
        note = await capture_and_distill(client)
        got = await call_ok(client, "note_get", {"id": note["id"]})
        assert got["title"] == note["title"]
        read = await client.read_resource(note["uri"])
        markdown = next(c.text for c in read.contents if c.mime_type == "text/markdown")
        # YAML front matter, then the note.
        assert markdown.startswith(f"---\nid: {note['id']}\ntitle: ")
        assert "\n---\n\n# Fix for failing test" in markdown
        assert f"keywords: {json.dumps(note['keywords'])}" in markdown
