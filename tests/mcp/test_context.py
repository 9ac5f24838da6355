"""The Context Architect's tools through the official Python MCP client, against the real binary."""

from __future__ import annotations

import httpx
import pytest

from conftest import ALPHA_TOKEN, BETA_TOKEN, TWO_TENANTS, call_err, call_ok, http_client, stdio_client

pytestmark = pytest.mark.anyio

SESSION = "s-42"
RELEVANT_SESSION = [
    "The payment retry test is flaky because the backoff reads the wall clock.",
    "Fixed the flaky payment retry test by injecting a fake clock into the backoff.",
]
RELEVANT_PROJECT = [
    "Payment retries use exponential backoff with jitter, capped at five attempts.",
    "The payments retry logic lives in src/retry.rs and is covered by retry_test.",
]
BOILERPLATE = [
    "Our company values are integrity, customer focus and teamwork.",
    "The holiday calendar is published by HR every December.",
    "All employees complete the annual code of conduct training.",
    "Expense reports are due on the fifth business day of each month.",
]


async def populate(client) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {"session": [], "project": [], "company": []}
    for layer, texts in [("session", RELEVANT_SESSION), ("project", RELEVANT_PROJECT), ("company", BOILERPLATE)]:
        for content in texts:
            added = await call_ok(client, "memory_add", {"content": content, "layer": layer, "session_id": SESSION})
            ids[layer].append(added["record"]["id"])
    return ids


async def test_context_assemble_on_a_populated_server(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha:
        tools = {tool.name: tool for tool in (await alpha.list_tools()).tools}
        schema = tools["context_assemble"].input_schema
        assert schema["required"] == ["query"]
        assert "session_id" in schema["properties"] and "token_budget" in schema["properties"]
        assert tools["context_assemble"].annotations.read_only_hint is True

        ids = await populate(alpha)
        # Summaries first: generated later, they would (rightly) invalidate cached contexts.
        refreshed = await call_ok(alpha, "summary_refresh", {"session_id": SESSION})
        assert {r["layer"] for r in refreshed["refreshed"]} == {"user", "session", "project", "company"}
        arguments = {"query": "why is the payment retry test flaky", "token_budget": 1000, "session_id": SESSION}
        context = await call_ok(alpha, "context_assemble", arguments)

        assert 0 < context["total_tokens"] <= context["token_budget"] == 1000
        order = [source["id"] for source in context["sources"]]
        assert len(order) == len(set(order)), "no source twice"
        relevant = ids["session"] + ids["project"]
        for memory_id in relevant:
            assert memory_id in order, f"relevant memory {memory_id} missing from {context['sources']}"
        last_relevant = max(order.index(memory_id) for memory_id in relevant)
        assert all(order.index(m) > last_relevant for m in ids["company"] if m in order)
        assert context["layers_included"][:2] in (["session", "project"], ["project", "session"])
        assert "## Session · s-42" in context["content"] and "fake clock" in context["content"]
        assert {source["depth"] for source in context["sources"]} <= {"full", "sentence", "paragraph", "detailed"}

        # The same call again is answered from the cache, and says so in /metrics.
        again = await call_ok(alpha, "context_assemble", arguments)
        assert again == context
        metrics = httpx.get(f"{server.base}/metrics", headers={"Authorization": f"Bearer {ALPHA_TOKEN}"}).text
        assert 'aeterna_context_cache_lookups_total{cache="Hit"} 1' in metrics
        assert "aeterna_context_assemble_duration_seconds_bucket" in metrics
        assert "aeterna_context_budget_utilisation_count" in metrics

        # A write to a scope it read changes the answer.
        await call_ok(
            alpha,
            "memory_add",
            {"content": "The payment retry flake also needs a seeded jitter source.", "layer": "session",
             "session_id": SESSION},
        )
        changed = await call_ok(alpha, "context_assemble", arguments)
        assert "seeded jitter" in changed["content"]

    async with http_client(server, BETA_TOKEN) as beta:
        # Same user, project and session ids, other tenant: nothing of alpha's.
        other = await call_ok(beta, "context_assemble", {"query": "payment retry flaky", "session_id": SESSION})
        assert other["sources"] == [] and other["total_tokens"] == 0
    assert server.terminate() == 0


async def test_bad_arguments_are_tool_errors_that_name_the_argument(serve):
    server = serve()
    async with http_client(server) as client:
        for arguments, needle in [
            ({"query": "x", "token_budget": 50}, "token_budget"),
            ({"query": "x", "token_budget": 40000}, "token_budget"),
            ({"query": "  "}, "query"),
            ({"query": "x", "min_relevance": 2}, "min_relevance"),
            ({"query": "x", "layers": ["galaxy"]}, "layers"),
            ({"query": "x", "layers": ["session"]}, "session_id"),
        ]:
            message = await call_err(client, "context_assemble", arguments)
            assert message.startswith("context_assemble:") and needle in message, message
        assert "invalid arguments" in await call_err(client, "context_assemble", {"query": 7})
        assert "depth" in await call_err(client, "summary_get", {"layer": "company", "depth": "huge"})
        # The session survives bad input.
        assert (await call_ok(client, "context_assemble", {"query": "anything"}))["sources"] == []


async def test_summaries_are_generated_kept_and_regenerated_on_change(serve):
    server = serve()
    async with http_client(server) as client:
        for i in range(30):
            await call_ok(
                client,
                "memory_add",
                {"content": f"Release {i} of the ledger service shipped the retry fix number {i}.", "layer": "company"},
            )
        # Background triggers refresh every 10 writes; an explicit refresh covers all 30 now.
        await call_ok(client, "summary_refresh", {"layers": ["company"]})
        budgets = {"sentence": 50, "paragraph": 200, "detailed": 500}
        summaries = {}
        for depth, budget in budgets.items():
            summary = await call_ok(client, "summary_get", {"layer": "company", "depth": depth})
            assert summary["depth"] == depth and summary["layer"] == "company"
            assert 0 < summary["token_count"] <= budget
            assert summary["source_count"] == 30
            summaries[depth] = summary
        assert len({s["source_hash"] for s in summaries.values()}) == 1

        unchanged = await call_ok(client, "summary_refresh", {"layers": ["company"]})
        assert unchanged["refreshed"][0]["regenerated"] is False

        await call_ok(client, "memory_add", {"content": "The ledger service moved to a new cluster.", "layer": "company"})
        refreshed = await call_ok(client, "summary_refresh", {"layers": ["company"]})
        outcome = refreshed["refreshed"][0]
        assert outcome["regenerated"] is True and outcome["source_count"] == 31
        assert outcome["source_hash"] != summaries["sentence"]["source_hash"]
        paragraph = await call_ok(client, "summary_get", {"layer": "company"})
        assert paragraph["depth"] == "paragraph" and paragraph["source_hash"] == outcome["source_hash"]


async def test_context_assemble_over_stdio(tmp_path):
    async with stdio_client(tmp_path / "data") as client:
        await call_ok(client, "memory_add", {"content": "Run cargo nextest for the integration suite.", "layer": "company"})
        context = await call_ok(client, "context_assemble", {"query": "how do I run the integration suite"})
        assert context["layers_included"] == ["company"]
        assert "cargo nextest" in context["content"]
        assert context["total_tokens"] <= 4000
