//! Bundles: everything one tenant owns, streamed into one file and back (`aeterna export` /
//! `aeterna import`), between installs and between backends (SQLite → PostgreSQL is the
//! migration path); plus a readable Markdown export ([`export_markdown`]) and importers from
//! other tools' files ([`importers`]).
//!
//! # Format, version 1
//!
//! A bundle is [JSON Lines](https://jsonlines.org) compressed with zstd (one frame). Line 1 is
//! the header:
//!
//! ```json
//! {"format":"aeterna-bundle","version":1,"tenant_id":"acme","exported_at":1767225600000,
//!  "aeterna_version":"0.1.0","embedder":"hash-v1-384"}
//! ```
//!
//! `embedder` is the id of the embedder that made the stored vectors (`null` when none were
//! stored). Then one line per item, the memories first, then the agents' tables in the order of
//! [`AGENT_TABLES`] (the memories' past versions first):
//!
//! ```json
//! {"kind":"memory","record":{…MemoryRecord…},"vector":"<base64 of little-endian f32s>"}
//! {"kind":"row","table":"context_summaries","row":{"tenant_id":"acme","depth":"sentence",…}}
//! ```
//!
//! A row holds every column of the table: TEXT as a string, INTEGER as an integer, REAL as a
//! number (a non-finite one as `{"$real":"NaN"}`), BLOB as `{"$base64":"…"}`, NULL as `null`.
//! Notes, hindsight notes and knowledge items are memories (their kind says which); knowledge
//! links and note metadata live in the records' metadata. The last line is the trailer, the
//! number of items of each kind (`memories` and every table):
//!
//! ```json
//! {"kind":"end","counts":{"memories":2,"context_summaries":3,…}}
//! ```
//!
//! # Invariants
//!
//! * Streamed both ways: export reads keyset pages of [`BATCH`] rows in primary-key order and
//!   import writes batches of at most [`BATCH`] items; neither ever holds a table, and a line
//!   is at most [`MAX_LINE_BYTES`] (enforced while reading, before a line is buffered whole).
//! * Tenant-filtered in the query: every export statement says `WHERE tenant_id = $1`; import
//!   refuses an item whose tenant is not the header's, and writes every item under the target
//!   tenant (the header's, or the one `--tenant` names: then JSON text naming the tenant, such
//!   as a Meta-Agent loop's identity, is rewritten too).
//! * Complete or refused: export writes `FILE.partial` and renames it when the trailer is
//!   written; import first reads the whole bundle (header, every line's JSON, trailer, line
//!   count) and writes nothing from a bundle that is incomplete, corrupt or newer than it
//!   reads.
//! * Idempotent: a memory whose id (or whose content in its scope) is already in the target is
//!   left as it is; rows are inserted with `ON CONFLICT DO NOTHING`. Importing a bundle twice
//!   adds nothing the second time.
//! * Vectors are never mixed: a memory keeps its bundled vector only when the target's embedder
//!   made it; otherwise it (and each past version) is re-embedded by the target's embedder.
//! * Content is never logged: errors name the line, the table and the column, not values.
//!
//! Import writes through [`crate::storage::RecordStore::insert`] (PostgreSQL's change log tells
//! running instances), not through the service's vector store: the importing process's own
//! index does not see the records until it is reopened, and a Qdrant collection gets their
//! points from the repair the next start runs — as after `aeterna migrate`.

mod export;
mod import;
pub mod importers;
mod lines;
mod markdown;
mod values;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use export::{ExportReport, export_bundle, export_to_writer};
pub use import::{ImportCount, ImportOptions, ImportReport, import_bundle};
pub use markdown::{MarkdownReport, export_markdown};

pub use crate::migrate::AGENT_TABLES;
use crate::model::Timestamp;

/// The header's `format`.
pub const FORMAT: &str = "aeterna-bundle";
/// The newest bundle version this build writes and reads.
pub const VERSION: u32 = 1;
/// The longest line import accepts by default, in bytes (a memory is at most
/// `max_content_bytes` of content plus its vector and metadata).
pub const MAX_LINE_BYTES: usize = 16 << 20;
/// Rows read per export page and items written per import batch.
pub const BATCH: usize = 500;
/// The trailer's count of memory items.
pub const MEMORIES: &str = "memories";

/// Line 1 of a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// The tenant whose data the bundle holds.
    pub tenant_id: String,
    /// When the export began (ms since the epoch).
    pub exported_at: Timestamp,
    /// The version of aeterna that wrote it.
    pub aeterna_version: String,
    /// The embedder whose vectors the bundle carries; `None` when the source stored none.
    pub embedder: Option<String>,
}

/// Items per kind: `memories` and each table's name.
pub type Counts = BTreeMap<String, u64>;

/// Which step a long export or import is at, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Export: `done` of `total` items of `table` written.
    Export,
    /// Import, first pass: `done` of `total` compressed bytes read and checked.
    Check,
    /// Import, second pass: `done` of `total` items written (`table` is the current kind).
    Import,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress<'a> {
    pub phase: Phase,
    /// `memories` or a table name; empty while checking.
    pub table: &'a str,
    pub done: u64,
    pub total: u64,
}

/// `path` with `.partial` appended to its file name: where a file is written before it is
/// complete.
pub(crate) fn partial_path(path: &std::path::Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}

/// Standard base64 with padding (RFC 4648), for vectors and BLOB columns.
pub(crate) mod base64 {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;

    pub fn encode(bytes: &[u8]) -> String {
        STANDARD.encode(bytes)
    }

    pub fn decode(text: &str) -> Result<Vec<u8>, String> {
        STANDARD
            .decode(text)
            .map_err(|error| format!("not base64: {error}"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_partial_file_sits_beside_the_file() {
        assert_eq!(
            super::partial_path(std::path::Path::new("/tmp/acme.aeterna")),
            std::path::Path::new("/tmp/acme.aeterna.partial")
        );
    }
}
