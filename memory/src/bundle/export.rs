//! Export: one tenant's memories and agent rows, read in keyset pages inside one read
//! transaction (a consistent snapshot on PostgreSQL, `REPEATABLE READ`; on SQLite the WAL
//! snapshot of the transaction) and written as bundle lines by a blocking thread that owns the
//! zstd encoder.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::values::{Shape, bind_all, row_json};
use super::{AGENT_TABLES, BATCH, Counts, FORMAT, Header, MEMORIES, Phase, Progress, VERSION};
use crate::error::{MemoryError, Result};
use crate::model::{Layer, MemoryRecord, now_millis};
use crate::storage::{Columns, Database, Transaction};
use crate::with_connection;

/// What an export wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportReport {
    pub header: Header,
    /// Items per kind, as in the trailer.
    pub counts: Counts,
    /// Compressed size of the bundle.
    pub bytes: u64,
    pub path: PathBuf,
}

#[derive(Serialize)]
struct MemoryLine<'a> {
    kind: &'static str,
    record: &'a MemoryRecord,
    vector: Option<String>,
}

#[derive(Serialize)]
struct RowLine<'a> {
    kind: &'static str,
    table: &'a str,
    row: &'a Map<String, Value>,
}

#[derive(Serialize)]
struct EndLine<'a> {
    kind: &'static str,
    counts: &'a Counts,
}

/// Writes the bundle of `tenant_id` in `db` to `to` (which must not exist) through
/// `to.partial`, renamed when complete; `progress` is called after every page.
pub async fn export_bundle(
    db: &Database,
    tenant_id: &str,
    to: &Path,
    progress: impl FnMut(Progress<'_>),
) -> Result<ExportReport> {
    if to.exists() {
        return Err(MemoryError::invalid(format!(
            "{} already exists; export to a new file (or remove it first)",
            to.display()
        )));
    }
    let partial = super::partial_path(to);
    let file = File::create(&partial).map_err(|error| {
        MemoryError::invalid(format!("cannot create {}: {error}", partial.display()))
    })?;
    let written = export_to_writer(
        db,
        tenant_id,
        BufWriter::with_capacity(1 << 16, file),
        progress,
    )
    .await
    .and_then(|(header, counts, file)| {
        let finish = || -> std::io::Result<u64> {
            let file = file.into_inner().map_err(|error| error.into_error())?;
            file.sync_all()?;
            Ok(file.metadata()?.len())
        };
        let bytes = finish().map_err(|error| {
            MemoryError::invalid(format!("cannot write {}: {error}", partial.display()))
        })?;
        Ok((header, counts, bytes))
    });
    let (header, counts, bytes) = match written {
        Ok(written) => written,
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            return Err(error);
        }
    };
    std::fs::rename(&partial, to).map_err(|error| {
        MemoryError::invalid(format!(
            "cannot rename {} to {}: {error}",
            partial.display(),
            to.display()
        ))
    })?;
    Ok(ExportReport {
        header,
        counts,
        bytes,
        path: to.to_path_buf(),
    })
}

/// Writes the bundle of `tenant_id` into `writer` (compressed); returns the header, the counts
/// and the writer.
pub async fn export_to_writer<W: Write + Send + 'static>(
    db: &Database,
    tenant_id: &str,
    writer: W,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<(Header, Counts, W)> {
    if tenant_id.trim().is_empty() {
        return Err(MemoryError::invalid("the tenant to export is empty"));
    }
    // Pages go to a thread of their own, which compresses while the next page is read; two in
    // flight at most.
    let (sender, mut pages) = mpsc::channel::<Vec<u8>>(2);
    let compressor = tokio::task::spawn_blocking(move || -> std::io::Result<W> {
        let mut encoder = zstd::Encoder::new(writer, 3)?;
        while let Some(page) = pages.blocking_recv() {
            encoder.write_all(&page)?;
        }
        let mut writer = encoder.finish()?;
        writer.flush()?;
        Ok(writer)
    });
    let exported = write_lines(db, tenant_id, &sender, &mut progress).await;
    drop(sender);
    let compressed = compressor
        .await
        .map_err(|error| MemoryError::storage("compressing the bundle", error))?;
    // The compressor's failure (a full disk) is the cause of a page that could not be sent.
    let writer = compressed.map_err(|error| MemoryError::storage("writing the bundle", error))?;
    let (header, counts) = exported?;
    Ok((header, counts, writer))
}

/// A written page, or the compressor's failure (told by its result).
async fn send(sender: &mpsc::Sender<Vec<u8>>, page: Vec<u8>) -> Result<()> {
    sender.send(page).await.map_err(|_| {
        MemoryError::storage(
            "writing the bundle",
            anyhow::anyhow!("the compressing thread stopped"),
        )
    })
}

fn line(page: &mut Vec<u8>, item: &impl Serialize) -> Result<()> {
    serde_json::to_writer(&mut *page, item)
        .map_err(|error| MemoryError::storage("encoding the bundle", error))?;
    page.push(b'\n');
    Ok(())
}

async fn write_lines(
    db: &Database,
    tenant_id: &str,
    sender: &mpsc::Sender<Vec<u8>>,
    progress: &mut impl FnMut(Progress<'_>),
) -> Result<(Header, Counts)> {
    let failed = |what: &'static str| move |error| MemoryError::storage(what, error);
    let mut shapes = Vec::with_capacity(AGENT_TABLES.len());
    for table in AGENT_TABLES {
        shapes.push(Shape::of(db, table).await?);
    }
    let mut tx = begin_snapshot(db).await?;
    let embedder: Option<String> = with_connection!(&mut tx, |conn| {
        sqlx::query_scalar("SELECT value FROM memory_meta WHERE key = 'embedder_id'")
            .fetch_optional(&mut *conn)
            .await
    })
    .map_err(failed("reading the embedder id"))?;
    let header = Header {
        format: FORMAT.into(),
        version: VERSION,
        tenant_id: tenant_id.to_owned(),
        exported_at: now_millis(),
        aeterna_version: env!("CARGO_PKG_VERSION").into(),
        embedder,
    };
    let mut page = Vec::new();
    line(&mut page, &header)?;
    send(sender, page).await?;

    let mut counts = Counts::new();
    let total = count(&mut tx, "memories", tenant_id).await?;
    let mut done = 0;
    progress(Progress {
        phase: Phase::Export,
        table: MEMORIES,
        done,
        total,
    });
    let mut after = 0i64;
    loop {
        let rows = memory_page(&mut tx, tenant_id, after).await?;
        if rows.is_empty() {
            break;
        }
        let mut page = Vec::with_capacity(rows.len() * 2048);
        for (seq, record, vector) in rows {
            after = seq;
            let vector = vector.as_deref().map(super::base64::encode);
            line(
                &mut page,
                &MemoryLine {
                    kind: "memory",
                    record: &record,
                    vector,
                },
            )?;
            done += 1;
        }
        send(sender, page).await?;
        progress(Progress {
            phase: Phase::Export,
            table: MEMORIES,
            done,
            total,
        });
    }
    counts.insert(MEMORIES.into(), done);

    for shape in &shapes {
        let done = export_table(&mut tx, shape, tenant_id, sender, progress).await?;
        counts.insert(shape.table.into(), done);
    }
    tx.rollback().await.map_err(failed("ending the export"))?;
    let mut page = Vec::new();
    line(
        &mut page,
        &EndLine {
            kind: "end",
            counts: &counts,
        },
    )?;
    send(sender, page).await?;
    Ok((header, counts))
}

/// A stored memory: its `seq`, the record and its vector's bytes.
pub(crate) type StoredMemory = (i64, MemoryRecord, Option<Vec<u8>>);

/// A tenant's memories after `after` (a `seq`), with their vectors: one page, in `seq` order.
pub(crate) async fn memory_page(
    tx: &mut Transaction,
    tenant_id: &str,
    after: i64,
) -> Result<Vec<StoredMemory>> {
    let rows: Vec<std::result::Result<StoredMemory, String>> = with_connection!(tx, |conn| {
        sqlx::query(
            "SELECT m.seq, m.id, m.layer, m.scope_id, m.kind, m.content, m.tags, \
                 m.metadata, m.content_hash, m.embedder_id, m.created_at, m.updated_at, \
                 m.valid_from, m.version, v.vector \
                 FROM memories m LEFT JOIN memory_vectors v ON v.memory_seq = m.seq \
                 WHERE m.tenant_id = $1 AND m.seq > $2 ORDER BY m.seq LIMIT $3",
        )
        .bind(tenant_id)
        .bind(after)
        .bind(BATCH as i64)
        .fetch_all(&mut *conn)
        .await
        .map(|rows| rows.iter().map(|row| memory(row, tenant_id)).collect())
    })
    .map_err(|error| MemoryError::storage("reading memories", error))?;
    rows.into_iter()
        .map(|row| {
            row.map_err(|error| MemoryError::storage("reading memories", anyhow::anyhow!(error)))
        })
        .collect()
}

/// Starts the read transaction of an export: one snapshot of every table.
pub(crate) async fn begin_snapshot(db: &Database) -> Result<Transaction> {
    let failed = |error| MemoryError::storage("starting the export", error);
    let mut tx = db.begin_read().await.map_err(failed)?;
    if let Transaction::Postgres(tx) = &mut tx {
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut **tx)
            .await
            .map_err(failed)?;
    }
    Ok(tx)
}

async fn count(tx: &mut Transaction, table: &str, tenant_id: &str) -> Result<u64> {
    let sql = format!("SELECT count(*) FROM {table} WHERE tenant_id = $1");
    let count: i64 = with_connection!(tx, |conn| {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(tenant_id)
            .fetch_one(&mut *conn)
            .await
    })
    .map_err(|error| MemoryError::storage(format!("counting `{table}`"), error))?;
    Ok(count as u64)
}

async fn export_table(
    tx: &mut Transaction,
    shape: &Shape,
    tenant_id: &str,
    sender: &mpsc::Sender<Vec<u8>>,
    progress: &mut impl FnMut(Progress<'_>),
) -> Result<u64> {
    let table = shape.table;
    let failed = |error| MemoryError::storage(format!("reading `{table}`"), error);
    let total = count(tx, table, tenant_id).await?;
    let mut done = 0;
    progress(Progress {
        phase: Phase::Export,
        table,
        done,
        total,
    });
    let mut after: Option<Vec<super::values::Bound>> = None;
    loop {
        let sql = shape.page_sql(after.is_some(), BATCH);
        let mut binds = vec![super::values::Bound::Text(Some(tenant_id.to_owned()))];
        binds.extend(after.take().unwrap_or_default());
        let rows: Vec<Map<String, Value>> = with_connection!(&mut *tx, |conn| {
            match bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), binds)
                .fetch_all(&mut *conn)
                .await
            {
                Ok(rows) => rows.iter().map(|row| row_json(row, shape)).collect(),
                Err(error) => Err(error),
            }
        })
        .map_err(failed)?;
        let Some(last) = rows.last() else { break };
        let keyset = shape
            .keyset_of(last)
            .map_err(|error| failed(sqlx::Error::Protocol(error)))?;
        let mut page = Vec::with_capacity(rows.len() * 512);
        for row in &rows {
            line(
                &mut page,
                &RowLine {
                    kind: "row",
                    table,
                    row,
                },
            )?;
        }
        done += rows.len() as u64;
        send(sender, page).await?;
        progress(Progress {
            phase: Phase::Export,
            table,
            done,
            total,
        });
        // A table keyed by the tenant alone has one row; one without a key cannot be paged.
        if shape.keyset.is_empty() || rows.len() < BATCH {
            break;
        }
        after = Some(keyset);
    }
    Ok(done)
}

/// A `memories` row (with its vector) as a record, for the tenant it was selected for.
fn memory(row: &impl Columns, tenant_id: &str) -> std::result::Result<StoredMemory, String> {
    let get = |error: sqlx::Error| error.to_string();
    let id = row.text("id").map_err(get)?;
    let corrupt = |field: &str, error: String| format!("memory {id}: `{field}` {error}");
    let layer: Layer = row
        .text("layer")
        .map_err(get)?
        .parse()
        .map_err(|e| corrupt("layer", e))?;
    let tags = row.text("tags").map_err(get)?;
    let metadata = row.text("metadata").map_err(get)?;
    let version = row.int("version").map_err(get)?;
    let record = MemoryRecord {
        id: id
            .parse()
            .map_err(|e: uuid::Error| corrupt("id", e.to_string()))?,
        tenant_id: tenant_id.to_owned(),
        layer,
        scope_id: row.text("scope_id").map_err(get)?,
        kind: row.text("kind").map_err(get)?,
        content: Some(row.text("content").map_err(get)?),
        tags: serde_json::from_str(&tags).map_err(|e| corrupt("tags", e.to_string()))?,
        metadata: serde_json::from_str(&metadata)
            .map_err(|e| corrupt("metadata", e.to_string()))?,
        content_hash: row.text("content_hash").map_err(get)?,
        embedder_id: row.text("embedder_id").map_err(get)?,
        created_at: row.int("created_at").map_err(get)?,
        updated_at: row.int("updated_at").map_err(get)?,
        valid_from: row.int("valid_from").map_err(get)?,
        valid_to: None,
        version: u32::try_from(version).map_err(|e| corrupt("version", e.to_string()))?,
    };
    Ok((
        row.int("seq").map_err(get)?,
        record,
        row.opt_bytes("vector").map_err(get)?,
    ))
}
