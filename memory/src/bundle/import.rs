//! Import: the bundle is read twice. The first pass checks it whole without writing
//! ([`super::lines::check`]); the second parses items on a blocking thread and writes them in
//! batches of at most [`BATCH`]: memories through [`RecordStore::insert`], rows with
//! `INSERT … ON CONFLICT DO NOTHING` in one write transaction per batch.
//!
//! Under another tenant (`ImportOptions::tenant`), memory ids are derived from the target
//! tenant and the original id (the original's time prefix kept, so ids keep their creation
//! order): ids are unique across tenants, and a colleague's bundle may be imported into the
//! same database its own tenant lives in. The columns that name a memory
//! ([`MEMORY_REFERENCES`]) follow; ids inside JSON (a Meta-Agent loop's note) do not.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::lines::{self, Checked, Item};
use super::values::{Bound, Shape, bind_all, blob, floats, quoted, retarget_json, set};
use super::{AGENT_TABLES, BATCH, Header, MAX_LINE_BYTES, MEMORIES, Phase, Progress};
use crate::embed::{Embedder, check_vectors};
use crate::error::{MemoryError, Result};
use crate::model::MemoryRecord;
use crate::service::MemoryService;
use crate::storage::{Database, Inserted, NewRecord, RecordStore};
use crate::with_connection;

/// Columns of the agents' tables that hold a memory's id.
pub const MEMORY_REFERENCES: &[(&str, &str)] = &[
    ("memory_versions", "memory_id"),
    ("trajectory_events", "note_id"),
    ("hindsight_resolutions", "note_id"),
];

/// Bytes of lines per batch handed from the reading thread (besides [`BATCH`] items).
const BATCH_BYTES: usize = 8 << 20;

#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Import under this tenant instead of the bundle's.
    pub tenant: Option<String>,
    /// The longest line accepted ([`MAX_LINE_BYTES`]).
    pub max_line_bytes: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            tenant: None,
            max_line_bytes: MAX_LINE_BYTES,
        }
    }
}

/// Items of one kind (`memories` or a table).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportCount {
    /// In the bundle.
    pub read: u64,
    /// Written now.
    pub inserted: u64,
    /// Already in the target (the same id or key; for memories, the same content in the scope).
    pub present: u64,
    /// Not written: past versions of a memory whose content the target already held under
    /// another id.
    pub skipped: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ImportReport {
    pub header: Header,
    /// The tenant the items were written under.
    pub tenant_id: String,
    pub counts: BTreeMap<String, ImportCount>,
    /// Memories and past versions whose vector the target's embedder computed (the bundle's
    /// was made by another embedder, or had none).
    pub reembedded: u64,
}

impl ImportReport {
    pub fn total(&self) -> ImportCount {
        self.counts
            .values()
            .fold(ImportCount::default(), |sum, c| ImportCount {
                read: sum.read + c.read,
                inserted: sum.inserted + c.inserted,
                present: sum.present + c.present,
                skipped: sum.skipped + c.skipped,
            })
    }
}

/// Imports the bundle at `from` into `service`'s stores; `progress` is called while checking
/// (compressed bytes) and after every batch (items).
pub async fn import_bundle(
    service: &MemoryService,
    from: &Path,
    options: &ImportOptions,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<ImportReport> {
    let checked = check(from, options.max_line_bytes, &mut progress).await?;
    let tenant_id = match options.tenant.as_deref().map(str::trim) {
        Some("") => return Err(MemoryError::invalid("--tenant is empty; name a tenant")),
        Some(tenant) => tenant.to_owned(),
        None => checked.header.tenant_id.clone(),
    };
    let remap = tenant_id != checked.header.tenant_id;
    let mut writer = Writer {
        records: service.records().as_ref(),
        database: service.database(),
        embedder: service.embedder().as_ref(),
        path: from,
        source: checked.header.tenant_id.clone(),
        remap,
        shapes: HashMap::new(),
        redirect: HashMap::new(),
        report: ImportReport {
            header: checked.header.clone(),
            tenant_id,
            counts: BTreeMap::new(),
            reembedded: 0,
        },
    };

    let (sender, mut batches) = mpsc::channel::<Result<Vec<(u64, Item)>>>(2);
    let path = from.to_path_buf();
    let limit = options.max_line_bytes;
    let reader = tokio::task::spawn_blocking(move || {
        if let Err(error) = read_items(&path, limit, &sender) {
            let _ = sender.blocking_send(Err(error));
        }
    });
    let mut done = 0u64;
    let mut ended = false;
    while let Some(batch) = batches.recv().await {
        let batch = batch?;
        let mut items = batch.into_iter().peekable();
        while let Some((line, item)) = items.next() {
            match item {
                Item::Memory { record, vector } => {
                    let mut run = vec![(line, record, vector)];
                    while let Some((_, Item::Memory { .. })) = items.peek() {
                        if let Some((line, Item::Memory { record, vector })) = items.next() {
                            run.push((line, record, vector));
                        }
                    }
                    done += run.len() as u64;
                    writer.memories(run).await?;
                    progress(Progress {
                        phase: Phase::Import,
                        table: MEMORIES,
                        done,
                        total: checked.items,
                    });
                }
                Item::Row { table, row } => {
                    let mut run = vec![(line, row)];
                    while let Some((_, Item::Row { table: next, .. })) = items.peek() {
                        if *next != table {
                            break;
                        }
                        if let Some((line, Item::Row { row, .. })) = items.next() {
                            run.push((line, row));
                        }
                    }
                    done += run.len() as u64;
                    let table = writer.rows(line, &table, run).await?;
                    progress(Progress {
                        phase: Phase::Import,
                        table,
                        done,
                        total: checked.items,
                    });
                }
                Item::End => ended = true,
            }
        }
    }
    let _ = reader.await;
    if !ended {
        return Err(MemoryError::invalid(format!(
            "the bundle {} changed while it was imported; import it again",
            from.display()
        )));
    }
    for (kind, &count) in &checked.counts {
        let read = writer.report.counts.get(kind).map_or(0, |c| c.read);
        if read != count {
            return Err(MemoryError::invalid(format!(
                "the bundle {} is damaged: its end line counts {count} {kind}, it holds {read}",
                from.display()
            )));
        }
    }
    Ok(writer.report)
}

/// The first pass, on a blocking thread, reporting the compressed bytes read.
async fn check(
    from: &Path,
    limit: usize,
    progress: &mut impl FnMut(Progress<'_>),
) -> Result<Checked> {
    let size = std::fs::metadata(from).map(|m| m.len()).unwrap_or(0);
    let read = Arc::new(AtomicU64::new(0));
    let mut checking = tokio::task::spawn_blocking({
        let (from, read) = (from.to_path_buf(), read.clone());
        move || lines::check(&from, limit, &read)
    });
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(100));
    loop {
        tokio::select! {
            checked = &mut checking => {
                progress(Progress { phase: Phase::Check, table: "", done: size, total: size });
                return checked.map_err(|error| MemoryError::storage("checking the bundle", error))?;
            }
            _ = ticks.tick() => progress(Progress {
                phase: Phase::Check,
                table: "",
                done: read.load(Ordering::Relaxed),
                total: size,
            }),
        }
    }
}

/// The second pass's reading thread: items in batches, until the receiver is gone.
fn read_items(
    path: &Path,
    limit: usize,
    sender: &mpsc::Sender<Result<Vec<(u64, Item)>>>,
) -> Result<()> {
    let (mut lines, _, _) = lines::open(path, limit)?;
    lines
        .next_line()
        .map_err(|error| lines::line_error(path, error, 0))?;
    let (mut batch, mut bytes, mut items) = (Vec::new(), 0, 0);
    while let Some((number, line)) = lines
        .next_line()
        .map_err(|error| lines::line_error(path, error, items))?
    {
        let item = lines::item(path, number, line)?;
        items += 1;
        bytes += line.len();
        batch.push((number, item));
        if batch.len() >= BATCH || bytes >= BATCH_BYTES {
            if sender
                .blocking_send(Ok(std::mem::take(&mut batch)))
                .is_err()
            {
                return Ok(());
            }
            bytes = 0;
        }
    }
    if !batch.is_empty() {
        let _ = sender.blocking_send(Ok(batch));
    }
    Ok(())
}

struct Writer<'a> {
    records: &'a dyn RecordStore,
    database: &'a Database,
    embedder: &'a dyn Embedder,
    path: &'a Path,
    /// The bundle's tenant.
    source: String,
    /// Whether the target tenant differs (memory ids are derived).
    remap: bool,
    shapes: HashMap<&'static str, Shape>,
    /// Memories (bundle ids) whose content the target already held under another id, and that
    /// id: references follow, past versions are skipped.
    redirect: HashMap<Uuid, Uuid>,
    report: ImportReport,
}

impl Writer<'_> {
    fn fail(&self, line: u64, what: impl std::fmt::Display) -> MemoryError {
        MemoryError::invalid(format!(
            "line {line} of the bundle {}: {what}",
            self.path.display()
        ))
    }

    /// The id a bundle's memory id has in the target.
    fn target_id(&self, id: Uuid) -> Uuid {
        if let Some(&existing) = self.redirect.get(&id) {
            return existing;
        }
        if !self.remap {
            return id;
        }
        let digest = Sha256::new()
            .chain_update(b"aeterna-import\0")
            .chain_update(self.report.tenant_id.as_bytes())
            .chain_update([0])
            .chain_update(id.as_bytes())
            .finalize();
        let mut bytes = [0u8; 16];
        bytes[..6].copy_from_slice(&id.as_bytes()[..6]);
        bytes[6..].copy_from_slice(&digest[..10]);
        uuid::Builder::from_bytes(bytes)
            .with_variant(uuid::Variant::RFC4122)
            .with_version(uuid::Version::SortRand)
            .into_uuid()
    }

    async fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let embedder = self.embedder;
        let context = || format!("embedding with `{}`", embedder.id());
        let vectors = embedder
            .embed(texts)
            .await
            .map_err(|error| MemoryError::storage(context(), error))?;
        check_vectors(embedder, texts.len(), &vectors)
            .map_err(|error| MemoryError::storage(context(), error))?;
        self.report.reembedded += texts.len() as u64;
        Ok(vectors)
    }

    async fn memories(
        &mut self,
        run: Vec<(u64, Box<MemoryRecord>, Option<Vec<u8>>)>,
    ) -> Result<()> {
        let tenant = self.report.tenant_id.clone();
        let mut records = Vec::with_capacity(run.len());
        for (line, mut record, vector) in run {
            if record.tenant_id != self.source {
                return Err(self.fail(line, "a memory of another tenant than the header's"));
            }
            let original = record.id;
            record.id = self.target_id(original);
            record.tenant_id.clone_from(&tenant);
            record.valid_to = None;
            records.push((original, record, vector));
        }
        let count = self.report.counts.entry(MEMORIES.into()).or_default();
        count.read += records.len() as u64;
        let ids: Vec<Uuid> = records.iter().map(|(_, r, _)| r.id).collect();
        let mut present: HashSet<Uuid> = self
            .records
            .get_many(&tenant, &ids)
            .await?
            .into_iter()
            .map(|r| r.id)
            .collect();
        let mut new = Vec::new();
        for (original, record, vector) in records {
            // A repeated id counts as present the second time.
            if !present.insert(record.id) {
                self.report
                    .counts
                    .entry(MEMORIES.into())
                    .or_default()
                    .present += 1;
                continue;
            }
            new.push((original, record, vector));
        }
        let dimensions = self.embedder.dimensions();
        let embedder_id = self.embedder.id().to_owned();
        let mut vectors: Vec<Option<Vec<f32>>> = new
            .iter()
            .map(|(_, record, vector)| match vector {
                Some(bytes)
                    if record.embedder_id == embedder_id && bytes.len() == dimensions * 4 =>
                {
                    Some(floats(bytes))
                }
                _ => None,
            })
            .collect();
        let stale: Vec<usize> = (0..new.len()).filter(|&i| vectors[i].is_none()).collect();
        if !stale.is_empty() {
            let texts: Vec<&str> = stale
                .iter()
                .map(|&i| new[i].1.content.as_deref().unwrap_or_default())
                .collect();
            let embedded = self.embed(&texts).await?;
            for (&i, vector) in stale.iter().zip(embedded) {
                vectors[i] = Some(vector);
            }
        }
        let originals: Vec<(Uuid, Uuid)> = new.iter().map(|(o, r, _)| (*o, r.id)).collect();
        let inserts = new
            .into_iter()
            .zip(vectors)
            .map(|((_, mut record, _), vector)| {
                record.embedder_id.clone_from(&embedder_id);
                NewRecord {
                    record: *record,
                    vector: vector.unwrap_or_default(),
                }
            })
            .collect();
        let outcomes = self.records.insert(inserts).await?;
        let count = self.report.counts.entry(MEMORIES.into()).or_default();
        for ((original, id), outcome) in originals.into_iter().zip(outcomes) {
            match outcome {
                Inserted::New(_) => count.inserted += 1,
                Inserted::Existing(existing) => {
                    count.present += 1;
                    if existing.id != id {
                        self.redirect.insert(original, existing.id);
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes a run of rows of `table` (the first on line `first`); returns the table's name.
    async fn rows(
        &mut self,
        first: u64,
        table: &str,
        run: Vec<(u64, Map<String, Value>)>,
    ) -> Result<&'static str> {
        let Some(&table) = AGENT_TABLES.iter().find(|t| **t == table) else {
            return Err(self.fail(first, "a row of a table aeterna does not keep"));
        };
        if !self.shapes.contains_key(table) {
            let shape = Shape::of(self.database, table).await?;
            self.shapes.insert(table, shape);
        }
        let shape = self.shapes.remove(table).expect("just read");
        let written = self.write_rows(&shape, run).await;
        self.shapes.insert(table, shape);
        written.map(|()| table)
    }

    async fn write_rows(
        &mut self,
        shape: &Shape,
        run: Vec<(u64, Map<String, Value>)>,
    ) -> Result<()> {
        let table = shape.table;
        let tenant = self.report.tenant_id.clone();
        let references: Vec<&str> = MEMORY_REFERENCES
            .iter()
            .filter(|(t, _)| *t == table)
            .map(|(_, c)| *c)
            .collect();
        let versions = table == "memory_versions";
        let embedder_id = self.embedder.id().to_owned();
        let mut skipped = 0;
        // (line, column indexes, values) per row, in bundle order.
        let mut rows: Vec<(u64, Vec<usize>, Vec<Bound>)> = Vec::with_capacity(run.len());
        let mut stale: Vec<(usize, String)> = Vec::new();
        let read = run.len() as u64;
        for (line, mut row) in run {
            if row.get("tenant_id").and_then(Value::as_str) != Some(self.source.as_str()) {
                return Err(self.fail(
                    line,
                    format!("a `{table}` row of another tenant than the header's"),
                ));
            }
            if versions
                && let Some(id) = row.get("memory_id").and_then(Value::as_str)
                && let Ok(id) = id.parse::<Uuid>()
                && self.redirect.contains_key(&id)
            {
                skipped += 1;
                continue;
            }
            row.insert("tenant_id".into(), Value::String(tenant.clone()));
            for column in &references {
                if let Some(Value::String(text)) = row.get_mut(*column)
                    && let Ok(id) = text.parse::<Uuid>()
                {
                    *text = self.target_id(id).to_string();
                }
            }
            if self.remap {
                for value in row.values_mut() {
                    retarget_json(value, &self.source, &tenant);
                }
            }
            let mut columns = Vec::with_capacity(row.len());
            let mut values = Vec::with_capacity(row.len());
            for (name, value) in &row {
                let Some(index) = shape.columns.iter().position(|c| c.name == *name) else {
                    let name: String = name.chars().take(64).collect();
                    return Err(self.fail(line, format!("`{table}` has no column `{name}` here")));
                };
                let column = &shape.columns[index];
                let bound = super::values::bound(column.kind, value).map_err(|error| {
                    self.fail(
                        line,
                        format!("column `{}` of `{table}`: {error}", column.name),
                    )
                })?;
                columns.push(index);
                values.push(bound);
            }
            if versions && row.get("embedder_id").and_then(Value::as_str) != Some(&embedder_id) {
                let content = row
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                stale.push((rows.len(), content.to_owned()));
            }
            rows.push((line, columns, values));
        }
        if !stale.is_empty() {
            let texts: Vec<&str> = stale.iter().map(|(_, text)| text.as_str()).collect();
            let vectors = self.embed(&texts).await?;
            for ((i, _), vector) in stale.iter().zip(vectors) {
                let (_, columns, values) = &mut rows[*i];
                set(
                    shape,
                    columns,
                    values,
                    "vector",
                    Bound::Blob(Some(blob(&vector))),
                );
                set(
                    shape,
                    columns,
                    values,
                    "embedder_id",
                    Bound::Text(Some(embedder_id.clone())),
                );
            }
        }
        let mut inserted = 0;
        let mut tx = self
            .database
            .begin_write()
            .await
            .map_err(|error| MemoryError::storage(format!("writing `{table}`"), error))?;
        let mut start = 0;
        while start < rows.len() {
            let columns = &rows[start].1;
            let end = start
                + rows[start..]
                    .iter()
                    .take_while(|(_, c, _)| c == columns)
                    .count();
            let names: Vec<String> = columns
                .iter()
                .map(|&i| quoted(&shape.columns[i].name))
                .collect();
            let mut sql = format!("INSERT INTO {table} ({}) VALUES ", names.join(", "));
            let mut n = 0;
            for row in 0..end - start {
                sql.push_str(if row == 0 { "(" } else { ", (" });
                for column in 0..columns.len() {
                    n += 1;
                    sql.push_str(&format!("{}${n}", if column == 0 { "" } else { ", " }));
                }
                sql.push(')');
            }
            sql.push_str(" ON CONFLICT DO NOTHING");
            let binds: Vec<Bound> = rows[start..end]
                .iter()
                .flat_map(|(_, _, values)| values.iter().cloned())
                .collect();
            let affected = with_connection!(&mut tx, |conn| {
                bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), binds)
                    .execute(&mut *conn)
                    .await
                    .map(|done| done.rows_affected())
            })
            .map_err(|error| {
                MemoryError::storage(
                    format!(
                        "writing `{table}` (lines {} to {})",
                        rows[start].0,
                        rows[end - 1].0
                    ),
                    error,
                )
            })?;
            inserted += affected;
            start = end;
        }
        tx.commit()
            .await
            .map_err(|error| MemoryError::storage(format!("writing `{table}`"), error))?;
        let count = self.report.counts.entry(table.into()).or_default();
        count.read += read;
        count.inserted += inserted;
        count.skipped += skipped;
        count.present += read - skipped - inserted;
        Ok(())
    }
}
