//! The server's integration tests, one binary (each module was its own binary: one link, and
//! `common` and the dependencies' generic code compiled once instead of seven times).

mod common;
#[path = "../../../llm/tests/standin/mod.rs"]
mod standin;

mod backup;
mod claims;
mod domain;
mod export_import;
mod ext_cli;
mod hooks;
mod http_api;
mod http_api_cc_memex;
mod http_hardening;
mod knowledge_cli;
mod knowledge_sync;
mod llm;
mod memory_lifecycle;
mod notes_shutdown;
mod shared_cache;
mod tasks;
