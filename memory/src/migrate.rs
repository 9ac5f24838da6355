//! Copying an embedded deployment (the data dir's SQLite) into the scale-out profile's
//! PostgreSQL, for `aeterna migrate`.
//!
//! * Memory records go through [`RecordStore::insert`] with their ids, timestamps, embedder
//!   and stored vectors: nothing is re-embedded, and the target's change log tells running
//!   instances about them.
//! * The agents' tables ([`AGENT_TABLES`]) are copied row by row in primary-key order, every
//!   column as SQLite stores it (the PostgreSQL twins have the same columns).
//! * Resumable: a record already in the target is found by its content in its scope and
//!   skipped; agent rows are inserted with `ON CONFLICT DO NOTHING`. Running it again after an
//!   interruption copies what is missing, and nothing twice.
//! * Verified: the report counts every table's rows per tenant on both sides; the copy is
//!   complete when no tenant has fewer rows in the target than in the source.

use std::collections::BTreeMap;

use sqlx::query_builder::Separated;
use sqlx::sqlite::SqliteRow;
use sqlx::{Postgres, QueryBuilder, Row};

use crate::error::{MemoryError, Result};
use crate::storage::postgres::{PgDatabase, PgRecordStore, PostgresConfig};
use crate::storage::sqlite::{SqliteConfig, SqliteDatabase, SqliteRecordStore};
use crate::storage::{NewRecord, RecordStore};

/// Every agent table, in an order where nothing refers to a row not yet copied; and the
/// memories' past versions, copied the same way (keyed by memory id, not by position).
pub const AGENT_TABLES: &[&str] = &[
    "memory_versions",
    "context_summaries",
    "trajectory_events",
    "hindsight_signatures",
    "hindsight_resolutions",
    "hindsight_resolution_examples",
    "hindsight_feedback",
    "hindsight_promotions",
    "hindsight_versions",
    "meta_loops",
    "llm_token_usage",
];

/// Records (and rows) read and written per batch.
const BATCH: usize = 500;
const EMBEDDER_KEY: &str = "embedder_id";

/// Where a copy is, for a progress bar: `copied` of `total` rows of `table` (`memories` for
/// the records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress<'a> {
    pub table: &'a str,
    pub copied: u64,
    pub total: u64,
}

/// Rows of one table and tenant on each side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantCount {
    pub table: String,
    pub tenant_id: String,
    pub source: u64,
    pub target: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrationReport {
    pub counts: Vec<TenantCount>,
}

impl MigrationReport {
    /// The counts where the target has fewer rows than the source.
    pub fn missing(&self) -> impl Iterator<Item = &TenantCount> {
        self.counts
            .iter()
            .filter(|count| count.target < count.source)
    }

    pub fn is_complete(&self) -> bool {
        self.missing().next().is_none()
    }
}

/// Copies everything in `source` into `target`, calling `progress` after every batch.
pub async fn copy_to_postgres(
    source: &SqliteDatabase,
    sqlite: &SqliteConfig,
    target: &PgDatabase,
    postgres: &PostgresConfig,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<MigrationReport> {
    copy_records(source, sqlite, target, postgres, &mut progress).await?;
    for table in AGENT_TABLES {
        copy_table(source, target, table, &mut progress).await?;
    }
    let mut report = MigrationReport::default();
    for table in std::iter::once(&"memories").chain(AGENT_TABLES) {
        report
            .counts
            .extend(count_both(source, target, table).await?);
    }
    Ok(report)
}

async fn copy_records(
    source: &SqliteDatabase,
    sqlite: &SqliteConfig,
    target: &PgDatabase,
    postgres: &PostgresConfig,
    progress: &mut impl FnMut(Progress<'_>),
) -> Result<()> {
    let from = SqliteRecordStore::new(source.clone(), sqlite).await?;
    let to = PgRecordStore::new(target.clone(), postgres);
    let total = from.counts().await?.records;
    if let Some(embedder) = from.meta(EMBEDDER_KEY).await? {
        match to.meta(EMBEDDER_KEY).await? {
            Some(existing) if existing != embedder && to.counts().await?.records > 0 => {
                return Err(MemoryError::invalid(format!(
                    "the target database holds memories embedded with `{existing}`, the data \
                     dir's were embedded with `{embedder}`; migrate into an empty database or \
                     schema"
                )));
            }
            _ => to.set_meta(EMBEDDER_KEY, &embedder).await?,
        }
    }
    let (mut position, mut copied) = (0, 0);
    progress(Progress {
        table: "memories",
        copied,
        total,
    });
    loop {
        let batch = from.vectors_after(position, BATCH).await?;
        let Some(last) = batch.last() else { break };
        position = last.position;
        let mut by_tenant: BTreeMap<&str, Vec<&crate::vector::VectorEntry>> = BTreeMap::new();
        for stored in &batch {
            by_tenant
                .entry(&stored.tenant_id)
                .or_default()
                .push(&stored.entry);
        }
        for (tenant_id, entries) in by_tenant {
            let ids: Vec<_> = entries.iter().map(|entry| entry.id).collect();
            let mut records: BTreeMap<_, _> = from
                .get_many(tenant_id, &ids)
                .await?
                .into_iter()
                .map(|record| (record.id, record))
                .collect();
            let new = entries
                .iter()
                .filter_map(|entry| {
                    let record = records.remove(&entry.id)?;
                    Some(NewRecord {
                        record,
                        vector: entry.vector.clone(),
                    })
                })
                .collect();
            to.insert(new).await?;
        }
        copied += batch.len() as u64;
        progress(Progress {
            table: "memories",
            copied,
            total,
        });
    }
    Ok(())
}

/// A column of an agent table as SQLite declares it.
struct Column {
    name: String,
    /// `TEXT`, `INTEGER`, `REAL` or `BLOB` (the tables are `STRICT`).
    kind: String,
    /// Position in the primary key, 0 when not part of it.
    key: i64,
}

async fn copy_table(
    source: &SqliteDatabase,
    target: &PgDatabase,
    table: &str,
    progress: &mut impl FnMut(Progress<'_>),
) -> Result<()> {
    let failed = |what: &str| {
        let what = format!("{what} `{table}` (rerun to resume)");
        move |error: sqlx::Error| MemoryError::storage(what, error)
    };
    let columns: Vec<Column> = sqlx::query_as::<_, (String, String, i64)>(
        "SELECT name, type, pk FROM pragma_table_info($1)",
    )
    .bind(table)
    .fetch_all(&source.pool)
    .await
    .map_err(failed("reading the columns of"))?
    .into_iter()
    .map(|(name, kind, key)| Column {
        name,
        kind: kind.to_ascii_uppercase(),
        key,
    })
    .collect();
    let mut key: Vec<&Column> = columns.iter().filter(|c| c.key > 0).collect();
    key.sort_by_key(|c| c.key);
    if key.is_empty() {
        return Err(MemoryError::storage(
            format!("copying `{table}`"),
            anyhow::anyhow!("the table has no primary key to copy it in order"),
        ));
    }
    let names = columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let key_names = key
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let total: i64 =
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
            .fetch_one(&source.pool)
            .await
            .map_err(failed("counting"))?;
    let total = total as u64;
    let mut copied = 0;
    progress(Progress {
        table,
        copied,
        total,
    });
    let mut after: Option<SqliteRow> = None;
    loop {
        // Keyset paging: the rows after the last one copied, in primary-key order.
        let mut select = QueryBuilder::<sqlx::Sqlite>::new(format!("SELECT {names} FROM {table}"));
        if let Some(last) = &after {
            select.push(format!(" WHERE ({key_names}) > ("));
            let mut values = select.separated(", ");
            for column in &key {
                push_column(&mut values, last, column).map_err(failed("reading"))?;
            }
            select.push(")");
        }
        select.push(format!(" ORDER BY {key_names} LIMIT {BATCH}"));
        let mut rows = select
            .build()
            .fetch_all(&source.pool)
            .await
            .map_err(failed("reading"))?;
        if rows.is_empty() {
            break;
        }

        let mut insert = QueryBuilder::<Postgres>::new(format!("INSERT INTO {table} ({names}) "));
        let mut bad = None;
        insert.push_values(&rows, |mut values, row| {
            for column in &columns {
                if let Err(error) = push_column(&mut values, row, column) {
                    bad.get_or_insert(error);
                }
            }
        });
        if let Some(error) = bad {
            return Err(failed("reading")(error));
        }
        insert.push(" ON CONFLICT DO NOTHING");
        insert
            .build()
            .execute(&target.pool)
            .await
            .map_err(failed("writing"))?;
        copied += rows.len() as u64;
        progress(Progress {
            table,
            copied,
            total,
        });
        after = rows.pop();
    }
    Ok(())
}

/// Binds `row`'s value of `column`, as SQLite stores it, into a query of either database.
fn push_column<DB: sqlx::Database>(
    values: &mut Separated<'_, DB, &str>,
    row: &SqliteRow,
    column: &Column,
) -> sqlx::Result<()>
where
    for<'t> Option<i64>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> Option<f64>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> Option<Vec<u8>>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> Option<String>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    let name = column.name.as_str();
    match column.kind.as_str() {
        "INTEGER" => values.push_bind(row.try_get::<Option<i64>, _>(name)?),
        "REAL" => values.push_bind(row.try_get::<Option<f64>, _>(name)?),
        "BLOB" => values.push_bind(row.try_get::<Option<Vec<u8>>, _>(name)?),
        _ => values.push_bind(row.try_get::<Option<String>, _>(name)?),
    };
    Ok(())
}

async fn count_both(
    source: &SqliteDatabase,
    target: &PgDatabase,
    table: &str,
) -> Result<Vec<TenantCount>> {
    let sql = format!("SELECT tenant_id, count(*) FROM {table} GROUP BY tenant_id");
    let failed = |side: &str| {
        let what = format!("counting `{table}` in the {side}");
        move |error: sqlx::Error| MemoryError::storage(what, error)
    };
    let source_counts: Vec<(String, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()))
        .fetch_all(&source.pool)
        .await
        .map_err(failed("data dir"))?;
    let target_counts: Vec<(String, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .fetch_all(&target.pool)
        .await
        .map_err(failed("target database"))?;
    let mut counts: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (tenant, count) in source_counts {
        counts.entry(tenant).or_default().0 = count as u64;
    }
    for (tenant, count) in target_counts {
        counts.entry(tenant).or_default().1 = count as u64;
    }
    Ok(counts
        .into_iter()
        .map(|(tenant_id, (source, target))| TenantCount {
            table: table.to_owned(),
            tenant_id,
            source,
            target,
        })
        .collect())
}
