//! The `memory_*` tools: layered memory for any MCP client.

use aeterna_memory::{ForgetOutcome, MemoryHistory, MemoryRecord, Page};
use rmcp::handler::server::common::schema_for_output;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::params::Parameters;
use super::{AeternaMcp, Caller, respond};
use crate::domain::memory::{
    self, AddArgs, Added, Deleted, ForgetArgs, IdArgs, ListArgs, SearchArgs, SearchResult,
    UpdateArgs,
};

#[tool_router(router = memory_router, vis = "pub(crate)")]
impl AeternaMcp {
    /// Store a memory (a fact, decision, convention or lesson) in one layer. Returns the stored
    /// record with its id; identical content in the same scope is stored once and reported as
    /// `deduplicated`. `conflicts` lists memories of the same scope it probably contradicts or
    /// repeats; nothing is changed for them: pass `supersedes` to replace one.
    #[tool(
        name = "memory_add",
        output_schema = schema_for_output::<Added>(),
        annotations(
            title = "Remember",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn memory_add(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<AddArgs>,
    ) -> CallToolResult {
        let result = memory::add(&self.state.memory, &caller, args).await;
        // Other instances' cached contexts must not outlive the write the caller saw succeed.
        self.state.context.writes_published().await;
        respond("memory_add", result)
    }

    /// Read one memory by id, with its content, tags, metadata and timestamps.
    #[tool(
        name = "memory_get",
        output_schema = schema_for_output::<MemoryRecord>(),
        annotations(
            title = "Read a memory",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn memory_get(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<IdArgs>,
    ) -> CallToolResult {
        respond(
            "memory_get",
            memory::get(&self.state.memory, &caller, args).await,
        )
    }

    /// Search memories by meaning and keywords (hybrid vector + BM25 retrieval) across every
    /// layer you can see, or only the `layers` given. Hits are ranked by `score` (0..1).
    #[tool(
        name = "memory_search",
        output_schema = schema_for_output::<SearchResult>(),
        annotations(
            title = "Search memories",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn memory_search(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<SearchArgs>,
    ) -> CallToolResult {
        respond(
            "memory_search",
            memory::search(&self.state.memory, &caller, args).await,
        )
    }

    /// List memories newest first, one page at a time: pass `next_cursor` back as `cursor` for
    /// the next page. `metadata_only` leaves the content out for a cheap overview.
    #[tool(
        name = "memory_list",
        output_schema = schema_for_output::<Page>(),
        annotations(
            title = "List memories",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn memory_list(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<ListArgs>,
    ) -> CallToolResult {
        respond(
            "memory_list",
            memory::list(&self.state.memory, &caller, args).await,
        )
    }

    /// Change a memory's content, tags or metadata (each replaces the old value). A changed
    /// fact is superseded by default: the old version stays readable (`memory_history`,
    /// `memory_search` with `as_of`) and searches now see the new one; `mode: "fix"` corrects
    /// a typo in place without history. Changing the content re-embeds the memory.
    #[tool(
        name = "memory_update",
        output_schema = schema_for_output::<MemoryRecord>(),
        annotations(
            title = "Update a memory",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn memory_update(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<UpdateArgs>,
    ) -> CallToolResult {
        let result = memory::update(&self.state.memory, &caller, args).await;
        // Other instances' cached contexts must not outlive the write the caller saw succeed.
        self.state.context.writes_published().await;
        respond("memory_update", result)
    }

    /// Every version of one memory: the current one first, then each superseded version,
    /// newest first, with `valid_from` and `valid_to` (when it stopped being true).
    #[tool(
        name = "memory_history",
        output_schema = schema_for_output::<MemoryHistory>(),
        annotations(
            title = "A memory's history",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn memory_history(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<IdArgs>,
    ) -> CallToolResult {
        respond(
            "memory_history",
            memory::history(&self.state.memory, &caller, args).await,
        )
    }

    /// Delete a memory and its vector for good. An unknown id (or one of another tenant) is an
    /// error, so a repeated delete reports that the memory is already gone.
    #[tool(
        name = "memory_delete",
        output_schema = schema_for_output::<Deleted>(),
        annotations(
            title = "Forget a memory",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn memory_delete(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<IdArgs>,
    ) -> CallToolResult {
        let result = memory::delete(&self.state.memory, &caller, args).await;
        // Other instances' cached contexts must not outlive the write the caller saw succeed.
        self.state.context.writes_published().await;
        respond("memory_delete", result)
    }

    /// Forget memories by filter — layers, tags, ids, `updated_before` — for good: their
    /// vectors, past versions and the summaries made from them go too, and an audit row
    /// records who forgot which ids (never the content). `dry_run: true` counts and lists
    /// what would go; at most 10 000 per call (`more` says when to call again).
    #[tool(
        name = "memory_forget",
        output_schema = schema_for_output::<ForgetOutcome>(),
        annotations(
            title = "Forget memories",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn memory_forget(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<ForgetArgs>,
    ) -> CallToolResult {
        let result = memory::forget(&self.state.memory, &self.state.context, &caller, args).await;
        // Other instances' cached contexts must not outlive the write the caller saw succeed.
        self.state.context.writes_published().await;
        respond("memory_forget", result)
    }
}
