"""Hindsight Learning through the official Python MCP client, against the real binary.

The error texts are real compiler and interpreter outputs from the fixture corpus
(agents/hindsight/fixtures/outputs, produced by fixtures/generate.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ALPHA_TOKEN, BETA_TOKEN, ROOT, TWO_TENANTS, call_err, call_ok, http_client, stdio_client

pytestmark = pytest.mark.anyio

OUTPUTS = ROOT / "agents" / "hindsight" / "fixtures" / "outputs"
TOOLS = [
    "hindsight_approve",
    "hindsight_capture",
    "hindsight_feedback",
    "hindsight_promotions",
    "hindsight_query",
    "hindsight_resolve",
]


def fixture(path: str) -> str:
    return (OUTPUTS / path).read_text()


async def test_capture_resolve_query_feedback_over_http(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha:
        tools = {tool.name: tool for tool in (await alpha.list_tools()).tools}
        for name in TOOLS:
            assert name in tools, f"{name} missing from tools/list"
        assert tools["hindsight_query"].annotations.read_only_hint is True
        assert "error_text" in tools["hindsight_capture"].input_schema["required"]
        assert set(tools["hindsight_feedback"].input_schema["required"]) == {"resolution_id", "success"}

        # Capture a real rustc failure and record what fixed it.
        captured = await call_ok(alpha, "hindsight_capture", {"error_text": fixture("rust/E0308-mismatched-types/parse_port.txt")})
        [signature] = captured["signatures"]
        assert (signature["error_type"], signature["language"], signature["layer"]) == ("E0308", "rust", "project")
        resolved = await call_ok(
            alpha,
            "hindsight_resolve",
            {
                "signature_id": signature["signature_id"],
                "description": "Convert with str::parse and handle the error instead of returning the &str.",
                "files": [{"file": "src/config.rs", "summary": "parse the port with .parse::<u16>()"}],
            },
        )
        resolution = resolved["resolution"]
        assert resolution["application_count"] == 0 and resolution["note_id"]

        # The same error class in different code (other file, names and lines) finds it.
        found = await call_ok(alpha, "hindsight_query", {"error_text": fixture("rust/E0308-mismatched-types/invoice_total.txt")})
        assert (found["status"], found["form"]) == ("matched", "tool_output")
        best = found["matched"][0]
        assert best["signature_id"] == signature["signature_id"]
        assert found["threshold"] <= best["score"] <= 1.0
        assert best["breakdown"]["error_type"] == 1.0 and best["ranks"]["score"] == 1
        assert best["resolutions"][0]["id"] == resolution["id"]
        assert found["queried"][0]["message_pattern"] == "mismatched types"

        # An unrelated error has no known resolution.
        unrelated = await call_ok(alpha, "hindsight_query", {"error_text": fixture("python/KeyError/cart.txt")})
        assert unrelated["status"] == "no_known_resolution" and unrelated["matched"] == []

        # Feedback: three successes promote it from the project to the team.
        for attempt in range(1, 4):
            outcome = await call_ok(
                alpha,
                "hindsight_feedback",
                {"resolution_id": resolution["id"], "success": True, "team_id": "core"},
            )
            assert outcome["resolution"]["application_count"] == attempt
            assert outcome["resolution"]["success_rate"] == 1.0
        promotion = outcome["promotion"]
        assert promotion["status"] == "promoted"
        assert (promotion["promotion"]["from_layer"], promotion["promotion"]["to_layer"]) == ("project", "team")
        again = await call_ok(alpha, "hindsight_feedback", {"resolution_id": resolution["id"], "success": False, "team_id": "core"})
        assert "promotion" not in again and again["resolution"]["success_rate"] == 0.75
        listed = await call_ok(alpha, "hindsight_promotions", {"team_id": "core"})
        assert [p["resolution_id"] for p in listed["promotions"]] == [resolution["id"]]

        # The note is a memory of kind `hindsight` that memory_search surfaces.
        hits = await call_ok(alpha, "memory_search", {"query": "mismatched types parse the port", "kinds": ["hindsight"]})
        assert any(hit["record"]["id"] == resolution["note_id"] for hit in hits["hits"]), hits

    # Another tenant sees none of it.
    async with http_client(server, BETA_TOKEN) as beta:
        other = await call_ok(beta, "hindsight_query", {"error_text": fixture("rust/E0308-mismatched-types/invoice_total.txt")})
        assert other["status"] == "no_known_resolution"
        message = await call_err(beta, "hindsight_feedback", {"resolution_id": resolution["id"], "success": True})
        assert "no resolution with id" in message


async def test_bad_arguments_get_clear_errors(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha:
        message = await call_err(alpha, "hindsight_query", {})
        assert message.startswith("hindsight_query:") and "error_text" in message
        message = await call_err(alpha, "hindsight_capture", {"error_text": "Compiling shop v0.1.0\n    Finished dev"})
        assert "no error recognised" in message
        message = await call_err(alpha, "hindsight_feedback", {"resolution_id": "not-a-uuid", "success": True})
        assert "not a UUID" in message
        message = await call_err(alpha, "hindsight_feedback", {"resolution_id": "0191e1a2-0000-7000-8000-000000000000"})
        assert "hindsight_feedback" in message and "success" in message
        message = await call_err(alpha, "hindsight_capture", {"error_text": fixture("go/undefined/main.txt"), "layer": "galaxy"})
        assert "unknown layer" in message
        message = await call_err(alpha, "hindsight_query", {"signature": {"error_type": "E0308", "message_pattern": "x", "language": "cobol"}})
        assert "unknown language" in message
        message = await call_err(alpha, "hindsight_query", {"error_text": "mismatched types", "form": "poem"})
        assert "`form`" in message and "error_message" in message
        message = await call_err(alpha, "hindsight_query", {"error_text": "it broke again", "form": "tool_output"})
        assert "no error was recognised" in message
        message = await call_err(alpha, "hindsight_resolve", {"error_text": fixture("go/undefined/main.txt")})
        assert "`description` is empty" in message
        message = await call_err(
            alpha,
            "hindsight_resolve",
            {"error_text": fixture("go/undefined/main.txt"), "resolution_id": "0191e1a2-0000-7000-8000-000000000000"},
        )
        assert "no resolution with id" in message


async def test_a_promotion_needing_approval_is_listed_and_approved(serve):
    """Every shape of a feedback's `promotion` and a decided promotion, through the client that
    validates each result against the tool's outputSchema."""
    server = serve(TWO_TENANTS + '\n[hindsight.promotion]\nrequire_approval = ["team"]\n')
    async with http_client(server, ALPHA_TOKEN) as alpha:
        captured = await call_ok(alpha, "hindsight_capture", {"error_text": fixture("go/undefined/main.txt")})
        fix = {"signature_id": captured["signatures"][0]["signature_id"], "description": "declare it first"}
        resolution = (await call_ok(alpha, "hindsight_resolve", fix))["resolution"]

        # Three successes qualify it for the team layer, but the caller names no team.
        for _ in range(3):
            outcome = await call_ok(alpha, "hindsight_feedback", {"resolution_id": resolution["id"], "success": True})
        assert outcome["promotion"] == {"status": "needs_scope", "layer": "team", "field": "team_id"}
        outcome = await call_ok(
            alpha, "hindsight_feedback", {"resolution_id": resolution["id"], "success": True, "team_id": "core"}
        )
        assert outcome["promotion"]["status"] == "pending"

        pending = await call_ok(alpha, "hindsight_promotions", {"status": "pending", "team_id": "core"})
        [promotion] = pending["promotions"]
        assert promotion["status"] == "pending" and "decided_at" not in promotion
        decided = await call_ok(alpha, "hindsight_approve", {"promotion_id": promotion["id"], "team_id": "core"})
        assert decided["status"] == "promoted" and decided["decided_by"] and decided["promoted_resolution_id"]
        again = await call_ok(alpha, "hindsight_approve", {"promotion_id": promotion["id"], "team_id": "core"})
        assert again == decided


async def test_stdio_capture_and_query(tmp_path: Path):
    async with stdio_client(tmp_path / "data") as client:
        scope = {"project_id": "shop"}
        captured = await call_ok(client, "hindsight_capture", {"error_text": fixture("go/undefined/main.txt")} | scope)
        signature_id = captured["signatures"][0]["signature_id"]
        fix = {"signature_id": signature_id, "description": "declare it first", "diff": "+var greeting = \"hi\""}
        await call_ok(client, "hindsight_resolve", fix | scope)
        signature = {"error_type": "undefined", "message_pattern": "undefined: <ID>", "language": "go"}
        found = await call_ok(client, "hindsight_query", {"signature": signature} | scope)
        assert found["status"] == "matched"
        assert found["matched"][0]["resolutions"][0]["changes"]["diff"] == "+var greeting = \"hi\""


async def test_a_message_without_its_code_and_a_description_find_the_fix(serve):
    """What an agent has at hand is not always the raw output: a message copied without its
    code, or a sentence about the error. Neither is refused; the answer says how it was read."""
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha:
        captured = await call_ok(alpha, "hindsight_capture", {"error_text": fixture("rust/E0382-use-after-move/queue.txt")})
        fix = {
            "signature_id": captured["signatures"][0]["signature_id"],
            "description": "Clone the value before the move, or pass a reference so ownership stays with the caller.",
        }
        resolution = (await call_ok(alpha, "hindsight_resolve", fix))["resolution"]
        await call_ok(alpha, "hindsight_capture", {"error_text": fixture("python/KeyError/cart.txt")})

        found = await call_ok(alpha, "hindsight_query", {"error_text": "borrow of moved value: `jobs`"})
        assert (found["form"], found["status"]) == ("error_message", "matched")
        best = found["matched"][0]
        assert best["resolutions"][0]["id"] == resolution["id"]
        assert best["breakdown"]["error_type"] is None, "a code-less message is judged on its words"

        asked = await call_ok(
            alpha,
            "hindsight_query",
            {"error_text": "How did we fix the Rust error where a value is used after it was moved into a function?"},
        )
        assert asked["form"] == "description"
        answers = asked["matched"] + asked["related"]
        assert answers and answers[0]["resolutions"][0]["id"] == resolution["id"], asked
        assert answers[0]["breakdown"]["resolution"] is not None

        forced = await call_ok(alpha, "hindsight_query", {"error_text": "use of moved value", "form": "description"})
        assert forced["form"] == "description"


async def test_a_second_wording_joins_the_fix_lineage(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha:
        first = await call_ok(alpha, "hindsight_capture", {"error_text": fixture("rust/E0502-borrow-conflict/scores.txt")})
        fix = {
            "signature_id": first["signatures"][0]["signature_id"],
            "description": "End the shared borrow before mutating: copy the needed value out first.",
        }
        resolution = (await call_ok(alpha, "hindsight_resolve", fix))["resolution"]

        # The same fix resolved the other wording (`as immutable because … as mutable`).
        joined = await call_ok(
            alpha,
            "hindsight_resolve",
            {"error_text": fixture("rust/E0502-borrow-conflict/cursor.txt"), "resolution_id": resolution["id"]},
        )
        assert joined["joined"] is True and joined["resolution"]["id"] == resolution["id"]
        [example] = joined["resolution"]["examples"]

        found = await call_ok(alpha, "hindsight_query", {"error_text": fixture("rust/E0502-borrow-conflict/cursor.txt")})
        assert found["status"] == "matched"
        assert found["matched"][0]["signature_id"] == example
        assert found["matched"][0]["resolutions"][0]["id"] == resolution["id"]
        # One fix, one track record: feedback through either wording counts once.
        outcome = await call_ok(alpha, "hindsight_feedback", {"resolution_id": resolution["id"], "success": True})
        assert outcome["resolution"]["application_count"] == 1 and outcome["resolution"]["examples"] == [example]
