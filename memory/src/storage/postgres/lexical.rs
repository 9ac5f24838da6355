//! Lexical search in PostgreSQL: BM25 over the generated `search` column (`tsvector` + GIN),
//! with the statistics the write triggers keep in `memory_tenant_counts` /
//! `memory_word_counts` (migrations 0003, 0005, 0008).

use std::collections::HashMap;

use sqlx::{Postgres, QueryBuilder, Row};

use super::PgDatabase;
use super::records::failed;
use crate::error::Result;
use crate::model::MemoryFilter;
use crate::storage::filter::push_filter;
use crate::storage::rows::parse_id;
use crate::storage::{LexicalHit, bm25};

/// BM25 as the embedded profile ranks (see [`crate::storage::bm25`]): the query's words
/// are used rarest first while their document frequencies add up to at most
/// `lexical_max_rows` (common words are left to the vector search). Statistics come from
/// the counters the writes keep (migration 0003), not from the matches; each record
/// counts its words once (a `tsvector` keeps distinct words), so its length is its number
/// of distinct words and every term frequency is 1.
pub(super) async fn search(
    db: &PgDatabase,
    lexical_max_rows: usize,
    tenant_id: &str,
    terms: &[String],
    filter: &MemoryFilter,
    limit: usize,
) -> Result<Vec<LexicalHit>> {
    let words = query_words(terms);
    if words.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let statistics = word_statistics(db, tenant_id, &words).await?;
    if statistics.records == 0 {
        return Ok(Vec::new());
    }
    let mut by_rarity: Vec<(&str, i64)> = words
        .iter()
        .map(|word| {
            let documents = statistics.documents.get(word).copied().unwrap_or(0);
            (word.as_str(), documents)
        })
        .collect();
    by_rarity.sort_by_key(|(_, documents)| *documents);
    let records = statistics.records as f64;
    let mut ideal = 0.0;
    let mut matched: Vec<(&str, f64)> = Vec::new();
    let mut postings = 0;
    for (word, documents) in by_rarity {
        if postings + documents > lexical_max_rows as i64 {
            break;
        }
        postings += documents;
        let idf = bm25::idf(records, documents as f64);
        // A word no record holds still counts in the ideal, as in the embedded profile.
        ideal += idf;
        if documents > 0 {
            matched.push((word, idf));
        }
    }
    if matched.is_empty() {
        return Ok(Vec::new());
    }
    let length = LengthNormalisation::new(statistics.average_length());

    // The tsqueries are computed once, in a row of their own: in a generic plan an
    // expression like `to_tsquery($1)` would be evaluated (parsed) again for every row.
    let mut builder = QueryBuilder::<Postgres>::new("SELECT m.id, ((0");
    for (i, (_, idf)) in matched.iter().enumerate() {
        builder.push(format_args!(" + CASE WHEN m.search @@ q.w{i} THEN "));
        builder.push_bind(*idf).push(" ELSE 0 END");
    }
    builder.push(") * ").push_bind((bm25::K1 + 1.0) / ideal);
    builder.push(" / (").push_bind(length.constant);
    builder.push(" + ").push_bind(length.per_word);
    builder.push(" * length(m.search)))::REAL AS relevance FROM (SELECT ");
    for (i, (word, _)) in matched.iter().enumerate() {
        builder.push("to_tsquery('simple', ");
        builder
            .push_bind(ts_query(&[word]))
            .push(format_args!(") AS w{i}, "));
    }
    builder.push("to_tsquery('simple', ");
    let all: Vec<&str> = matched.iter().map(|(word, _)| *word).collect();
    builder.push_bind(ts_query(&all));
    builder.push(") AS query OFFSET 0) q JOIN memories m ON m.search @@ q.query");
    builder
        .push(" WHERE m.tenant_id = ")
        .push_bind(tenant_id.to_string());
    push_filter(&mut builder, filter);
    builder.push(" ORDER BY relevance DESC, m.seq DESC LIMIT ");
    builder.push_bind(limit as i64);
    let rows = builder
        .build()
        .fetch_all(&db.pool)
        .await
        .map_err(failed("searching words"))?;
    rows.iter()
        .map(|row| {
            Ok(LexicalHit {
                id: parse_id(row.get::<&str, _>(0))?,
                relevance: row.get::<f32, _>(1).clamp(0.0, 1.0),
            })
        })
        .collect()
}

async fn word_statistics(
    db: &PgDatabase,
    tenant_id: &str,
    words: &[String],
) -> Result<WordStatistics> {
    // The tenant's row is the one without a word; every count is a sum over the shards.
    let rows = sqlx::query(
        "SELECT NULL::TEXT, COALESCE(sum(records), 0)::BIGINT, COALESCE(sum(words), 0)::BIGINT \
         FROM memory_tenant_counts WHERE tenant_id = $1 \
         UNION ALL SELECT word, sum(documents)::BIGINT, 0 FROM memory_word_counts \
         WHERE tenant_id = $1 AND word = ANY($2) GROUP BY word",
    )
    .bind(tenant_id)
    .bind(words)
    .fetch_all(&db.pool)
    .await
    .map_err(failed("reading word statistics"))?;
    let mut statistics = WordStatistics {
        records: 0,
        words: 0,
        documents: HashMap::with_capacity(rows.len()),
    };
    for row in &rows {
        match row.get::<Option<String>, _>(0) {
            None => (statistics.records, statistics.words) = (row.get(1), row.get(2)),
            Some(word) => {
                statistics.documents.insert(word, row.get(1));
            }
        }
    }
    Ok(statistics)
}

/// A tenant's BM25 statistics for the words of one query, read from the counters the writes
/// keep (migration 0003, sharded by 0005).
struct WordStatistics {
    records: i64,
    /// Σ distinct words over the tenant's records.
    words: i64,
    /// Records holding each query word (absent: none).
    documents: HashMap<String, i64>,
}

impl WordStatistics {
    fn average_length(&self) -> f64 {
        (self.words as f64 / self.records.max(1) as f64).max(1.0)
    }
}

/// [`bm25::saturation`] of a word found once in a record of `length` words, as SQL computes it
/// for every match: `(K1 + 1) / (constant + per_word × length)`.
#[derive(Debug, Clone, Copy)]
struct LengthNormalisation {
    constant: f64,
    per_word: f64,
}

impl LengthNormalisation {
    fn new(average_length: f64) -> Self {
        LengthNormalisation {
            constant: 1.0 + bm25::K1 * (1.0 - bm25::B),
            per_word: bm25::K1 * bm25::B / average_length,
        }
    }
}

/// The distinct words of the query terms: their letters and digits, lower-cased, as the
/// generated `search` column holds them. Each becomes a quoted `to_tsquery` operand, so nothing
/// a caller types is read as query syntax.
fn query_words(terms: &[String]) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for term in terms {
        for word in term
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let word = word.to_lowercase();
            if !words.contains(&word) && words.len() < MAX_QUERY_WORDS {
                words.push(word);
            }
        }
    }
    words
}

/// Words of a query searched at most (as the embedded profile's `max_query_terms`).
const MAX_QUERY_WORDS: usize = 32;

/// `'a' | 'b' …`.
fn ts_query(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::{LengthNormalisation, bm25, query_words, ts_query};

    #[test]
    fn query_words_cannot_inject_tsquery_syntax() {
        let terms = vec!["Foo".into(), "a|b".into(), "x'):*".into(), "foo".into()];
        assert_eq!(query_words(&terms), ["foo", "a", "b", "x"]);
        assert_eq!(ts_query(&["foo", "a"]), "'foo' | 'a'");
        assert!(query_words(&["!&|".into()]).is_empty());
    }

    #[test]
    fn the_sql_length_normalisation_is_bm25s_for_one_occurrence() {
        let average = 12.5;
        let length = LengthNormalisation::new(average);
        for words in [1.0, 6.0, 12.5, 40.0] {
            let sql = (bm25::K1 + 1.0) / (length.constant + length.per_word * words);
            let expected = bm25::saturation(1.0, words / average);
            assert!(
                (sql - expected).abs() < 1e-12,
                "{words} words: {sql} vs {expected}"
            );
        }
    }
}
