//! Near-duplicate detection across layers, by word-shingle containment.
//!
//! A candidate is redundant when most of its 3-word shingles already occur in what has been
//! selected. Why shingles rather than embedding cosine:
//! * the question is asymmetric — "does this add anything to what is already in?" — and
//!   containment answers it (a memory quoted inside a longer one is redundant, the longer one
//!   is not); cosine is symmetric;
//! * duplicates across layers are copies (promotion from project to team, the same note saved
//!   twice), which shingles catch exactly, while the default hashing embedder's cosine is a
//!   bag of words that ignores order;
//! * it costs no embedding call per assembly (a remote embedder would put network latency in
//!   every `context_assemble`), and search results do not carry their stored vectors.

use foldhash::HashSet;

use crate::text::shingles;

/// The shingles of everything selected so far.
#[derive(Debug, Default)]
pub struct Redundancy {
    seen: HashSet<u64>,
    hashes: HashSet<String>,
}

impl Redundancy {
    pub fn new() -> Self {
        Self::default()
    }

    /// The shingles of `text`, for [`Redundancy::is_redundant`] and [`Redundancy::add`].
    pub fn fingerprint(text: &str) -> Vec<u64> {
        shingles(text)
    }

    /// True when the content hash was seen, or at least `threshold` of the shingles were.
    /// Text without words is never redundant by shingles.
    pub fn is_redundant(
        &self,
        content_hash: Option<&str>,
        fingerprint: &[u64],
        threshold: f32,
    ) -> bool {
        if content_hash.is_some_and(|hash| self.hashes.contains(hash)) {
            return true;
        }
        if fingerprint.is_empty() {
            return false;
        }
        let contained = fingerprint.iter().filter(|s| self.seen.contains(s)).count();
        contained as f32 >= threshold * fingerprint.len() as f32
    }

    /// Records a selected text.
    pub fn add(&mut self, content_hash: Option<&str>, fingerprint: &[u64]) {
        if let Some(hash) = content_hash {
            self.hashes.insert(hash.to_owned());
        }
        self.seen.extend(fingerprint.iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(selected: &[&str], candidate: &str) -> bool {
        let mut redundancy = Redundancy::new();
        for text in selected {
            redundancy.add(None, &Redundancy::fingerprint(text));
        }
        redundancy.is_redundant(None, &Redundancy::fingerprint(candidate), 0.8)
    }

    #[test]
    fn copies_and_reformatted_copies_are_redundant() {
        let note = "Use cargo nextest for the integration tests; the plain runner times out.";
        assert!(check(&[note], note));
        assert!(check(&[note], &note.to_uppercase().replace(';', ",")));
    }

    #[test]
    fn a_quote_is_redundant_but_the_longer_text_is_not() {
        let long = "The deploy script needs AWS_PROFILE set. Use cargo nextest for the \
                    integration tests; the plain runner times out. Releases are tagged on main.";
        let quote = "Use cargo nextest for the integration tests; the plain runner times out.";
        assert!(check(&[long], quote));
        assert!(!check(&[quote], long));
    }

    #[test]
    fn related_but_different_statements_are_kept() {
        assert!(!check(
            &["The API server listens on port 8080 in development."],
            "The metrics server listens on port 9090 in production."
        ));
    }

    #[test]
    fn the_union_of_selected_texts_counts() {
        let a = "Migrations run at start-up from the migrations directory.";
        let b = "Tokens are compared in constant time by the auth layer.";
        let both = format!("{a} {b}");
        assert!(check(&[a, b], &both));
        assert!(!check(&[a], &both));
    }

    #[test]
    fn equal_content_hashes_are_redundant_even_without_words() {
        let mut redundancy = Redundancy::new();
        redundancy.add(Some("abc"), &[]);
        assert!(redundancy.is_redundant(Some("abc"), &[], 0.8));
        assert!(!redundancy.is_redundant(Some("def"), &[], 0.8));
    }
}
