//! BM25, shared by the lexical searches of both profiles (the embedded [`LexicalIndex`] and
//! PostgreSQL's `tsvector` query), so a record scores alike wherever it is stored.
//!
//! A term's weight in a record is `idf × saturation`; a search's relevance is the sum over
//! the searched terms divided by their ideal (`Σ idf`: a record of average length holding each
//! term once), 0..1.
//!
//! [`LexicalIndex`]: super::lexical_index::LexicalIndex

/// Term-frequency saturation and length normalisation (the usual values, as FTS5's).
pub(crate) const K1: f64 = 1.2;
pub(crate) const B: f64 = 0.75;
/// idf is clamped to this from below (a term in more than half the records), as in FTS5.
const IDF_FLOOR: f64 = 1e-6;

/// Inverse document frequency of a term found in `frequency` of `documents` records.
pub(crate) fn idf(documents: f64, frequency: f64) -> f64 {
    ((documents - frequency + 0.5) / (frequency + 0.5))
        .ln()
        .max(IDF_FLOOR)
}

/// How much `frequency` occurrences count in a record `relative_length` times the average
/// length: 1 for one occurrence in an average record, saturating towards `K1 + 1`.
pub(crate) fn saturation(frequency: f64, relative_length: f64) -> f64 {
    frequency * (K1 + 1.0) / (frequency + K1 * (1.0 - B + B * relative_length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_terms_weigh_more_and_common_ones_stay_positive() {
        assert!(idf(1000.0, 1.0) > idf(1000.0, 100.0));
        assert!(idf(1000.0, 1000.0) > 0.0);
    }

    #[test]
    fn an_average_record_with_one_occurrence_weighs_one() {
        assert!((saturation(1.0, 1.0) - 1.0).abs() < 1e-12);
        assert!(saturation(1.0, 0.5) > 1.0, "shorter records weigh more");
        assert!(saturation(3.0, 1.0) < K1 + 1.0);
    }
}
