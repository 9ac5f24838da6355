//! The agents' tables as the database declares them, and their values as bundle JSON: read
//! from a row of either backend, and bound into a statement of either backend.

use serde_json::{Map, Value};

use super::base64;
use crate::error::{MemoryError, Result};
use crate::storage::Database;

/// A column's type family: SQLite's STRICT types, and their PostgreSQL twins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Integer,
    Real,
    Blob,
}

impl Kind {
    fn of_sqlite(declared: &str) -> Kind {
        match declared.to_ascii_uppercase().as_str() {
            "INTEGER" | "INT" | "BIGINT" => Kind::Integer,
            "REAL" | "DOUBLE PRECISION" | "FLOAT" => Kind::Real,
            "BLOB" => Kind::Blob,
            _ => Kind::Text,
        }
    }

    fn of_postgres(data_type: &str) -> Kind {
        match data_type {
            "bigint" | "integer" | "smallint" => Kind::Integer,
            "double precision" | "real" | "numeric" => Kind::Real,
            "bytea" => Kind::Blob,
            _ => Kind::Text,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub name: String,
    pub kind: Kind,
    /// How to read it: the quoted name, cast to the canonical type where PostgreSQL declares a
    /// narrower one.
    select: String,
}

/// One table's columns (in declaration order) and primary key.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub table: &'static str,
    pub columns: Vec<Column>,
    /// Indexes into `columns` of the primary key but `tenant_id`, in key order: the keyset an
    /// export pages by within one tenant.
    pub keyset: Vec<usize>,
}

impl Shape {
    /// Reads the declaration of `table` (a name from [`super::AGENT_TABLES`]) in `db`.
    pub async fn of(db: &Database, table: &'static str) -> Result<Shape> {
        let failed = |error: sqlx::Error| {
            MemoryError::storage(format!("reading the columns of `{table}`"), error)
        };
        // (name, type, position in the primary key or 0)
        let declared: Vec<(String, String, i64)> = match db {
            Database::Sqlite(db) => {
                sqlx::query_as("SELECT name, type, pk FROM pragma_table_info($1) ORDER BY cid")
                    .bind(table)
                    .fetch_all(&db.pool)
                    .await
                    .map_err(failed)?
            }
            Database::Postgres(db) => sqlx::query_as(
                "SELECT c.column_name::text, c.data_type::text, \
                        COALESCE(MIN(k.ordinal_position), 0)::bigint \
                 FROM information_schema.columns c \
                 LEFT JOIN information_schema.table_constraints t \
                   ON t.table_schema = c.table_schema AND t.table_name = c.table_name \
                  AND t.constraint_type = 'PRIMARY KEY' \
                 LEFT JOIN information_schema.key_column_usage k \
                   ON k.constraint_schema = t.constraint_schema \
                  AND k.constraint_name = t.constraint_name \
                  AND k.table_name = c.table_name AND k.column_name = c.column_name \
                 WHERE c.table_schema = current_schema() AND c.table_name = $1 \
                   AND c.is_generated <> 'ALWAYS' \
                 GROUP BY c.column_name, c.data_type, c.ordinal_position \
                 ORDER BY c.ordinal_position",
            )
            .bind(table)
            .fetch_all(&db.pool)
            .await
            .map_err(failed)?,
        };
        if declared.is_empty() {
            return Err(MemoryError::storage(
                format!("reading the columns of `{table}`"),
                anyhow::anyhow!("the database has no such table; is it migrated?"),
            ));
        }
        let postgres = matches!(db, Database::Postgres(_));
        let mut key = Vec::new();
        let columns = declared
            .into_iter()
            .enumerate()
            .map(|(i, (name, declared, position))| {
                if position > 0 && name != "tenant_id" {
                    key.push((position, i));
                }
                let (kind, select) = if postgres {
                    let kind = Kind::of_postgres(&declared);
                    let select = match (kind, declared.as_str()) {
                        (Kind::Integer, "bigint") | (Kind::Real, "double precision") => {
                            quoted(&name)
                        }
                        (Kind::Integer, _) => format!("CAST({} AS BIGINT)", quoted(&name)),
                        (Kind::Real, _) => format!("CAST({} AS DOUBLE PRECISION)", quoted(&name)),
                        (Kind::Text, "text") | (Kind::Blob, _) => quoted(&name),
                        (Kind::Text, _) => format!("CAST({} AS TEXT)", quoted(&name)),
                    };
                    (kind, select)
                } else {
                    (Kind::of_sqlite(&declared), quoted(&name))
                };
                Column { name, kind, select }
            })
            .collect::<Vec<_>>();
        if !columns.iter().any(|c| c.name == "tenant_id") {
            return Err(MemoryError::storage(
                format!("reading the columns of `{table}`"),
                anyhow::anyhow!("the table has no tenant_id column"),
            ));
        }
        key.sort();
        Ok(Shape {
            table,
            columns,
            keyset: key.into_iter().map(|(_, i)| i).collect(),
        })
    }

    /// `SELECT … FROM table WHERE tenant_id = $1 [AND (keyset) > ($2, …)] ORDER BY keyset
    /// LIMIT n`: one export page.
    pub fn page_sql(&self, after: bool, limit: usize) -> String {
        let select = self
            .columns
            .iter()
            .map(|c| c.select.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let keys: Vec<String> = self
            .keyset
            .iter()
            .map(|&i| quoted(&self.columns[i].name))
            .collect();
        let mut sql = format!("SELECT {select} FROM {} WHERE tenant_id = $1", self.table);
        if after && !keys.is_empty() {
            let params: Vec<String> = (0..keys.len()).map(|i| format!("${}", i + 2)).collect();
            sql.push_str(&format!(
                " AND ({}) > ({})",
                keys.join(", "),
                params.join(", ")
            ));
        }
        if !keys.is_empty() {
            sql.push_str(&format!(" ORDER BY {}", keys.join(", ")));
        }
        sql.push_str(&format!(" LIMIT {limit}"));
        sql
    }

    /// The keyset values of an exported row, to page after it.
    pub fn keyset_of(&self, row: &Map<String, Value>) -> std::result::Result<Vec<Bound>, String> {
        self.keyset
            .iter()
            .map(|&i| {
                let column = &self.columns[i];
                bound(column.kind, row.get(&column.name).unwrap_or(&Value::Null))
            })
            .collect()
    }
}

pub(crate) fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A value to bind, typed for its column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Bound {
    Integer(Option<i64>),
    Real(Option<f64>),
    Blob(Option<Vec<u8>>),
    Text(Option<String>),
}

/// Binds `values` in order.
pub(crate) fn bind_all<'q, DB: sqlx::Database>(
    mut query: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>,
    values: impl IntoIterator<Item = Bound>,
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>
where
    for<'t> Option<i64>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> Option<f64>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> Option<Vec<u8>>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    for<'t> Option<String>: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
{
    for value in values {
        query = match value {
            Bound::Integer(v) => query.bind(v),
            Bound::Real(v) => query.bind(v),
            Bound::Blob(v) => query.bind(v),
            Bound::Text(v) => query.bind(v),
        };
    }
    query
}

/// A row of `shape`'s page query as bundle JSON: every column by name.
pub(crate) fn row_json<R: sqlx::Row>(row: &R, shape: &Shape) -> sqlx::Result<Map<String, Value>>
where
    usize: sqlx::ColumnIndex<R>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<f64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<Vec<u8>>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let mut out = Map::with_capacity(shape.columns.len());
    for (i, column) in shape.columns.iter().enumerate() {
        let value = match column.kind {
            Kind::Integer => row.try_get::<Option<i64>, _>(i)?.map(Value::from),
            Kind::Real => row.try_get::<Option<f64>, _>(i)?.map(real_json),
            Kind::Blob => row
                .try_get::<Option<Vec<u8>>, _>(i)?
                .map(|bytes| blob_json(&bytes)),
            Kind::Text => row.try_get::<Option<String>, _>(i)?.map(Value::String),
        };
        out.insert(column.name.clone(), value.unwrap_or(Value::Null));
    }
    Ok(out)
}

pub(crate) fn blob_json(bytes: &[u8]) -> Value {
    let mut object = Map::with_capacity(1);
    object.insert("$base64".into(), Value::String(base64::encode(bytes)));
    Value::Object(object)
}

fn real_json(x: f64) -> Value {
    serde_json::Number::from_f64(x)
        .map(Value::Number)
        .unwrap_or_else(|| {
            let mut object = Map::with_capacity(1);
            object.insert("$real".into(), Value::String(x.to_string()));
            Value::Object(object)
        })
}

/// The bundle JSON `value` as a value of a column of `kind`; the error says what was expected
/// (never the value itself).
pub(crate) fn bound(kind: Kind, value: &Value) -> std::result::Result<Bound, String> {
    let wrong = |expected: &str| Err(format!("expected {expected}, found {}", type_name(value)));
    Ok(match (kind, value) {
        (Kind::Integer, Value::Null) => Bound::Integer(None),
        (Kind::Real, Value::Null) => Bound::Real(None),
        (Kind::Blob, Value::Null) => Bound::Blob(None),
        (Kind::Text, Value::Null) => Bound::Text(None),
        (Kind::Integer, Value::Number(n)) => match n.as_i64() {
            Some(n) => Bound::Integer(Some(n)),
            None => return wrong("an integer"),
        },
        (Kind::Integer, Value::Bool(b)) => Bound::Integer(Some(i64::from(*b))),
        (Kind::Real, Value::Number(n)) => Bound::Real(n.as_f64()),
        (Kind::Real, Value::Object(o)) => match o.get("$real").and_then(Value::as_str) {
            Some(text) if o.len() == 1 => match text.parse::<f64>() {
                Ok(x) => Bound::Real(Some(x)),
                Err(_) => return wrong("a number"),
            },
            _ => return wrong("a number"),
        },
        (Kind::Blob, Value::Object(o)) => match o.get("$base64").and_then(Value::as_str) {
            Some(text) if o.len() == 1 => Bound::Blob(Some(base64::decode(text)?)),
            _ => return wrong(r#"{"$base64": "…"}"#),
        },
        (Kind::Text, Value::String(s)) => Bound::Text(Some(s.clone())),
        (Kind::Integer, _) => return wrong("an integer"),
        (Kind::Real, _) => return wrong("a number"),
        (Kind::Blob, _) => return wrong(r#"{"$base64": "…"}"#),
        (Kind::Text, _) => return wrong("a string"),
    })
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Sets (or adds) the value of column `name` of a row.
pub(crate) fn set(
    shape: &Shape,
    columns: &mut Vec<usize>,
    values: &mut Vec<Bound>,
    name: &str,
    value: Bound,
) {
    let Some(index) = shape.columns.iter().position(|c| c.name == name) else {
        return;
    };
    debug_assert!(matches!(
        (shape.columns[index].kind, &value),
        (Kind::Blob, Bound::Blob(_)) | (Kind::Text, Bound::Text(_))
    ));
    match columns.iter().position(|&c| c == index) {
        Some(at) => values[at] = value,
        None => {
            columns.push(index);
            values.push(value);
        }
    }
}

/// JSON text naming the source tenant (`{"tenant_id": "acme", …}`, such as a stored identity)
/// names the target tenant instead.
pub(crate) fn retarget_json(value: &mut Value, source: &str, target: &str) {
    let Value::String(text) = value else { return };
    if !text.starts_with('{') || !text.contains("\"tenant_id\"") {
        return;
    }
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(text) else {
        return;
    };
    if object.get("tenant_id").and_then(Value::as_str) == Some(source) {
        object.insert("tenant_id".into(), Value::String(target.to_owned()));
        *text = Value::Object(object).to_string();
    }
}

pub(crate) fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

pub(crate) fn blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_values_bind_as_their_columns_type_or_say_what_was_expected() {
        assert_eq!(bound(Kind::Integer, &json!(7)), Ok(Bound::Integer(Some(7))));
        assert_eq!(bound(Kind::Real, &json!(0.5)), Ok(Bound::Real(Some(0.5))));
        assert_eq!(bound(Kind::Real, &json!(2)), Ok(Bound::Real(Some(2.0))));
        assert_eq!(bound(Kind::Text, &json!(null)), Ok(Bound::Text(None)));
        assert_eq!(
            bound(Kind::Blob, &blob_json(&[0, 0, 128, 63])),
            Ok(Bound::Blob(Some(vec![0, 0, 128, 63])))
        );
        let nan = real_json(f64::NAN);
        assert!(matches!(bound(Kind::Real, &nan), Ok(Bound::Real(Some(x))) if x.is_nan()));
        assert_eq!(
            bound(Kind::Integer, &json!("secret")),
            Err("expected an integer, found a string".into())
        );
        assert!(bound(Kind::Integer, &json!(1.5)).is_err());
        assert!(bound(Kind::Text, &json!(1)).is_err());
        assert!(bound(Kind::Blob, &json!("AAAA")).is_err());
    }

    #[test]
    fn a_stored_identity_moves_to_the_target_tenant_and_nothing_else_changes() {
        let mut identity = Value::String(r#"{"tenant_id":"acme","user_id":"ann"}"#.into());
        retarget_json(&mut identity, "acme", "beta");
        let parsed: Value = serde_json::from_str(identity.as_str().unwrap()).unwrap();
        assert_eq!(parsed["tenant_id"], "beta");
        assert_eq!(parsed["user_id"], "ann");
        for text in [
            r#"{"tenant_id":"other"}"#,
            "tenant_id acme",
            r#"{"tenant_id":"#,
        ] {
            let mut value = Value::String(text.into());
            retarget_json(&mut value, "acme", "beta");
            assert_eq!(value, Value::String(text.into()));
        }
    }

    #[test]
    fn vectors_round_trip_through_their_bytes() {
        let vector = [0.5f32, -1.0, 3.25];
        assert_eq!(floats(&blob(&vector)), vector);
    }
}
