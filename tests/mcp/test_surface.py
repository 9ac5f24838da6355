"""The rest of the MCP surface through the official Python client, against the real binary:
prompts filled from memory, completions, progress notifications, argument errors that name
the argument, and resource errors that carry the URI."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference, ResourceTemplateReference

from conftest import ALPHA_TOKEN, BETA_TOKEN, TWO_TENANTS, call_err, call_ok, http_client, stdio_client
from test_hindsight import fixture
from test_notes import SESSION, capture_and_distill

pytestmark = pytest.mark.anyio


async def test_prompts_carry_what_memory_knows(serve):
    server = serve(TWO_TENANTS)
    async with http_client(server, ALPHA_TOKEN) as alpha:
        listed = {prompt.name: prompt for prompt in (await alpha.list_prompts()).prompts}
        assert set(listed) == {"start-task", "fix-error", "record-lesson", "use-skill"}
        required = {p.name: [a.name for a in p.arguments if a.required] for p in listed.values()}
        assert required == {"start-task": ["task"], "fix-error": ["error_output"], "record-lesson": ["lesson"], "use-skill": ["skill"]}

        await call_ok(alpha, "memory_add", {"content": "Release builds need RUSTFLAGS=-Ctarget-cpu=x86-64-v2 on the CI runners", "layer": "project"})
        started = await alpha.get_prompt("start-task", {"task": "fix the release build flags on CI"})
        [message] = started.messages
        assert message.role == "user"
        assert "fix the release build flags on CI" in message.content.text
        assert "target-cpu=x86-64-v2" in message.content.text

        # fix-error: nothing known yet, then the recorded fix comes back for the same error class.
        unknown = await alpha.get_prompt("fix-error", {"error_output": fixture("rust/E0308-mismatched-types/parse_port.txt")})
        assert "No fix is known" in unknown.messages[0].content.text
        await call_ok(alpha, "hindsight_resolve", {
            "error_text": fixture("rust/E0308-mismatched-types/parse_port.txt"),
            "description": "Parse the string with str::parse::<u16>() instead of returning the &str",
        })
        known = await alpha.get_prompt("fix-error", {"error_output": fixture("rust/E0308-mismatched-types/invoice_total.txt")})
        assert "str::parse::<u16>()" in known.messages[0].content.text

        lesson = await alpha.get_prompt("record-lesson", {"lesson": "Pin the CI runner image", "layer": "team"})
        assert "`team` layer" in lesson.messages[0].content.text and "Pin the CI runner image" in lesson.messages[0].content.text

        for name, arguments, says in [
            ("start-task", {}, "missing field `task`"),
            ("fix-error", {"error_output": "  "}, "`error_output` is empty"),
            ("record-lesson", {"lesson": "x", "layer": "galaxy"}, "galaxy"),
            ("start-task", {"task": "x", "project_id": "p" * 300}, "`project_id` is 300 bytes"),
            ("summon-demons", {}, "unknown prompt `summon-demons`"),
        ]:
            with pytest.raises(MCPError) as refused:
                await alpha.get_prompt(name, arguments)
            assert refused.value.error.code == -32602, refused.value
            assert says in str(refused.value), refused.value

    # Another tenant's prompt sees none of alpha's memory.
    async with http_client(server, BETA_TOKEN) as beta:
        started = await beta.get_prompt("start-task", {"task": "fix the release build flags on CI"})
        assert "target-cpu" not in started.messages[0].content.text
        assert "nothing relevant" in started.messages[0].content.text
    assert server.terminate() == 0


async def test_completions_suggest_own_note_ids_and_layers(serve):
    server = serve(TWO_TENANTS)
    template = ResourceTemplateReference(type="ref/resource", uri="aeterna://notes/{id}")
    async with http_client(server, ALPHA_TOKEN) as alpha:
        note = await capture_and_distill(alpha)
        completed = await alpha.complete(template, {"name": "id", "value": note["id"][:4]})
        assert completed.completion.values == [note["id"]]
        assert completed.completion.has_more is False
        completed = await alpha.complete(template, {"name": "id", "value": "zzz"})
        assert completed.completion.values == []

        layers = await alpha.complete(PromptReference(type="ref/prompt", name="record-lesson"), {"name": "layer", "value": "pro"})
        assert layers.completion.values == ["project"]
        with pytest.raises(MCPError) as refused:
            await alpha.complete(PromptReference(type="ref/prompt", name="nope"), {"name": "layer", "value": ""})
        assert refused.value.error.code == -32602
    async with http_client(server, BETA_TOKEN) as beta:
        completed = await beta.complete(template, {"name": "id", "value": ""})
        assert completed.completion.values == [], "beta must not see alpha's note ids"
    assert server.terminate() == 0


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_long_calls_report_progress(serve, mode):
    server = serve()
    async with http_client(server, mode=mode) as client:
        await call_ok(client, "memory_add", {"content": "The billing service owns invoices", "layer": "project", "project_id": "p1"})
        updates: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.append((progress, total, message))

        result = await client.call_tool(
            "summary_refresh", {"project_id": "p1", "user_id": "ann"}, progress_callback=on_progress
        )
        assert not result.is_error, result
        # company, user and project: one step per layer, then done.
        assert [u[0] for u in updates] == [0, 1, 2, 3], updates
        assert all(u[1] == 3 for u in updates), updates
        assert updates[-1][2] == "done"
        assert any("project" in (u[2] or "") for u in updates)

        updates.clear()
        await client.call_tool("note_distill", {"session_id": "s-1"}, progress_callback=on_progress)
        assert [u[0] for u in updates] == [0, 1], updates
    assert server.terminate() == 0


async def test_argument_errors_name_the_argument_path(serve):
    server = serve()
    async with http_client(server) as client:
        message = await call_err(client, "trajectory_capture", {"events": [{"tool_name": "bash", "success": True}, {"success": True}], **SESSION})
        assert "`events[1]`: missing field `tool_name`" in message, message
        message = await call_err(client, "memory_search", {"query": "x", "project_id": 5})
        assert "`project_id`: invalid type: integer `5`" in message, message
        message = await call_err(client, "memory_search", {"query": "x", "limit": "ten"})
        assert message.startswith("memory_search: invalid arguments: `limit`"), message
        message = await call_err(client, "hindsight_capture", {"error_text": "boom", "project_id": "p" * 100_000})
        assert "`project_id` is 100000 bytes" in message and "256" in message, message

        with pytest.raises(MCPError) as missing:
            await client.read_resource("aeterna://notes/0190d2c1-7b1e-7cc0-9a43-000000000000")
        assert missing.value.error.data == {"uri": "aeterna://notes/0190d2c1-7b1e-7cc0-9a43-000000000000"}
    assert server.terminate() == 0


async def test_prompts_and_completions_over_stdio(tmp_path):
    async with stdio_client(tmp_path / "data") as client:
        assert len((await client.list_prompts()).prompts) == 4
        lesson = await client.get_prompt("record-lesson", {"lesson": "Run migrations before deploys"})
        assert "`project` layer" in lesson.messages[0].content.text
        layers = await client.complete(PromptReference(type="ref/prompt", name="record-lesson"), {"name": "layer", "value": "s"})
        assert layers.completion.values == ["session"]


# The legacy half exercises resources/subscribe on purpose; the SDK warns that it is legacy.
@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_summaries_are_resources_and_subscribers_hear_of_changes(serve):
    """`subscriptions/listen` (2026-07-28) and `resources/subscribe` (the handshake revisions)
    both report a change to a watched summary, and only for the caller's tenant."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.client.subscriptions import ResourceUpdated
    from mcp.types import ResourceUpdatedNotification

    server = serve(TWO_TENANTS)
    watched = "aeterna://summaries/project/shop"
    async with http_client(server, ALPHA_TOKEN) as alpha, http_client(server, BETA_TOKEN) as beta:
        templates = [t.uri_template for t in (await alpha.list_resource_templates()).resource_templates]
        assert "aeterna://summaries/{layer}/{scope_id}" in templates
        await call_ok(alpha, "memory_add", {"content": "The shop deploys from the main branch", "layer": "project", "project_id": "shop"})
        read = await alpha.read_resource(watched)
        assert "main branch" in read.contents[0].text

        async with alpha.listen(resource_subscriptions=[watched, "aeterna://notes/not-watchable"]) as subscription:
            assert subscription.honored.resource_subscriptions == [watched]
            # Beta writes to its own "shop": alpha hears nothing; then alpha writes.
            await call_ok(beta, "memory_add", {"content": "beta's shop", "layer": "project", "project_id": "shop"})
            await call_ok(alpha, "memory_add", {"content": "The shop uses Postgres 15", "layer": "project", "project_id": "shop"})
            with anyio.fail_after(10):
                event = await subscription.__anext__()
            assert event == ResourceUpdated(uri=watched)

    updates: list[str] = []

    async def on_message(message) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updates.append(message.params.uri)

    headers = {"Authorization": f"Bearer {ALPHA_TOKEN}"}
    transport = streamable_http_client(server.url, http_client=httpx2.AsyncClient(headers=headers, timeout=30))
    async with Client(transport, mode="legacy", message_handler=on_message) as legacy:
        await legacy.subscribe_resource(watched)
        with pytest.raises(MCPError) as refused:
            await legacy.subscribe_resource("aeterna://summaries/galaxy/x")
        assert refused.value.error.data == {"uri": "aeterna://summaries/galaxy/x"}
        await call_ok(legacy, "memory_add", {"content": "The shop's CI runs on main", "layer": "project", "project_id": "shop"})
        with anyio.fail_after(10):
            while not updates:
                await anyio.sleep(0.05)
        assert updates == [watched]
        await legacy.unsubscribe_resource(watched)
        await call_ok(legacy, "memory_add", {"content": "The shop's staging is on Fridays", "layer": "project", "project_id": "shop"})
        await call_ok(legacy, "memory_list", {"project_id": "shop"})
        assert updates == [watched], "no update after unsubscribing"
    assert server.terminate() == 0


async def test_an_open_subscription_does_not_hold_up_shutdown(serve):
    """A `subscriptions/listen` stream lasts until shutdown ends it, so shutdown must not wait
    out its grace period (60 s here) for it as for a request in flight."""
    server = serve("[http]\nshutdown_grace_secs = 60\n")
    try:
        async with http_client(server) as client:
            async with client.listen(resource_subscriptions=["aeterna://summaries/company/company"]) as subscription:
                assert subscription.honored.resource_subscriptions == ["aeterna://summaries/company/company"]
                assert server.terminate(timeout=30) == 0
    except Exception:  # the stream and the session end with the server; that is the point
        pass
    assert server.process.returncode == 0
