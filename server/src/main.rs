//! The `aeterna` command: see `aeterna --help`.

/// mimalloc rather than the system allocator: a tool call allocates and frees many short-lived
/// buffers across threads (JSON, records, candidate lists), and glibc's malloc spent ~15% of
/// the server's CPU on them under the MCP load mix (`cargo bench -p aeterna-server --bench
/// mcp_load`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    aeterna_server::cli::main()
}
