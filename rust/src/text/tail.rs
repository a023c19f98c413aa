//! The uncommitted tail: documents added since the last commit, searched in memory.
//!
//! A tantivy document becomes searchable only at a commit, which writes and syncs a
//! segment (tens of milliseconds). [`Tail`] keeps what a commit would make of each
//! pending document — its row, its field norm (the token count, coded as tantivy codes
//! it) and its terms with their frequencies — so a search scores the pending documents
//! beside the committed segments without one. Both sides are scored with the same
//! [`Bm25Weight`]s, built from [`Corpus`]: the committed index's statistics plus the
//! tail's (documents, tokens, per-term document frequency), exactly the statistics the
//! index has once the tail is committed. A search thus gives the same rows and scores
//! (up to the order of a float sum) whether or not a commit happened in between.
//!
//! The tail holds at most [`TAIL_LIMIT`] documents. Past that it lets go of its
//! contents and says so ([`Tail::covers`] is false): the documents stay pending in the
//! writer and become searchable at the next commit, which the caller makes before
//! searching. A commit, a rollback or closing the writer empties it.

use std::collections::HashMap;

use roaring::RoaringBitmap;
use tantivy::fieldnorm::FieldNormReader;
use tantivy::query::{Bm25StatisticsProvider, Bm25Weight};
use tantivy::schema::Field;
use tantivy::tokenizer::{TextAnalyzer, MAX_TOKEN_LEN};
use tantivy::{Searcher, Term};

/// The most pending documents searched in memory; past it, a commit makes them searchable.
pub const TAIL_LIMIT: usize = 2048;

/// One pending document: its row, its token count and its field norm id.
#[derive(Clone, Copy, Debug)]
struct Doc {
    row: u32,
    tokens: u32,
    fieldnorm_id: u8,
}

/// The pending documents and an inverted index of them; see the module docs.
pub(crate) struct Tail {
    analyzer: TextAnalyzer,
    docs: Vec<Doc>,
    /// Term -> (document index, term frequency), document indexes ascending.
    postings: HashMap<String, Vec<(u32, u32)>>,
    /// Tokens of every document held (tantivy's `total_num_tokens` of the tail).
    tokens: u64,
    /// Documents were added past the limit: the tail no longer holds every pending one.
    overflowed: bool,
}

impl Tail {
    pub(crate) fn new(analyzer: TextAnalyzer) -> Self {
        Tail {
            analyzer,
            docs: Vec::new(),
            postings: HashMap::new(),
            tokens: 0,
            overflowed: false,
        }
    }

    /// Whether the tail holds every document added since the last commit.
    pub(crate) fn covers(&self) -> bool {
        !self.overflowed
    }

    /// Documents held.
    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    /// Forgets every document (after a commit, a rollback, or closing the writer).
    pub(crate) fn clear(&mut self) {
        self.docs = Vec::new();
        self.postings = HashMap::new();
        self.tokens = 0;
        self.overflowed = false;
    }

    /// Takes one document the writer accepted, analyzed as the writer analyzes it:
    /// tokens longer than tantivy's limit are dropped, every other one counts.
    pub(crate) fn push(&mut self, row: u32, text: &str) {
        if self.overflowed {
            return;
        }
        if self.docs.len() >= TAIL_LIMIT {
            self.clear();
            self.overflowed = true;
            return;
        }
        let at = self.docs.len() as u32;
        let mut counts: HashMap<String, u32> = HashMap::new();
        let mut tokens = 0u32;
        let mut stream = self.analyzer.token_stream(text);
        while stream.advance() {
            let token = stream.token();
            if token.text.len() > MAX_TOKEN_LEN {
                continue;
            }
            tokens = tokens.saturating_add(1);
            *counts.entry(token.text.clone()).or_insert(0) += 1;
        }
        for (term, tf) in counts {
            self.postings.entry(term).or_default().push((at, tf));
        }
        self.tokens += u64::from(tokens);
        self.docs.push(Doc {
            row,
            tokens,
            fieldnorm_id: FieldNormReader::fieldnorm_to_id(tokens),
        });
    }

    /// Drops the documents of `rows` (an erasure): their terms leave the tail with them.
    pub(crate) fn remove(&mut self, rows: &RoaringBitmap) {
        if !self.docs.iter().any(|d| rows.contains(d.row)) {
            return;
        }
        let mut renumber = vec![u32::MAX; self.docs.len()];
        let mut kept = Vec::with_capacity(self.docs.len());
        for (i, d) in self.docs.iter().enumerate() {
            if rows.contains(d.row) {
                self.tokens -= u64::from(d.tokens);
            } else {
                renumber[i] = kept.len() as u32;
                kept.push(*d);
            }
        }
        self.docs = kept;
        self.postings.retain(|_, list| {
            list.retain_mut(|(doc, _)| {
                *doc = renumber[*doc as usize];
                *doc != u32::MAX
            });
            !list.is_empty()
        });
    }

    /// How many held documents have `term`.
    pub(crate) fn doc_freq(&self, term: &str) -> u64 {
        self.postings.get(term).map_or(0, |l| l.len() as u64)
    }

    /// Whether a held document has `term`.
    pub(crate) fn holds(&self, term: &str) -> bool {
        self.postings.contains_key(term)
    }

    /// Each held document matching a term, among `candidates` when given, with its
    /// BM25: the sum, in the order of `weights`, of each matched term's score.
    pub(crate) fn scores(
        &self,
        weights: &[(String, Bm25Weight)],
        candidates: Option<&RoaringBitmap>,
    ) -> Vec<(u32, f32)> {
        let mut score = vec![0f32; self.docs.len()];
        let mut matched = vec![false; self.docs.len()];
        for (term, weight) in weights {
            for &(doc, tf) in self.postings.get(term).map_or(&[][..], Vec::as_slice) {
                let d = &self.docs[doc as usize];
                score[doc as usize] += weight.score(d.fieldnorm_id, tf);
                matched[doc as usize] = true;
            }
        }
        self.docs
            .iter()
            .zip(score)
            .zip(matched)
            .filter(|((d, _), m)| *m && candidates.is_none_or(|c| c.contains(d.row)))
            .map(|((d, s), _)| (d.row, s))
            .collect()
    }
}

/// BM25 statistics of the committed segments and the tail together: those the index
/// has once the tail is committed.
pub(crate) struct Corpus<'a> {
    pub searcher: &'a Searcher,
    pub tail: &'a Tail,
}

impl Bm25StatisticsProvider for Corpus<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        Ok(Bm25StatisticsProvider::total_num_tokens(self.searcher, field)? + self.tail.tokens)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(Bm25StatisticsProvider::total_num_docs(self.searcher)? + self.tail.docs.len() as u64)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let tail = term.value().as_str().map_or(0, |t| self.tail.doc_freq(t));
        Ok(self.searcher.doc_freq(term)? + tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Analyzer;

    #[test]
    fn counts_terms_and_tokens_and_forgets_erased_rows() {
        let mut t = Tail::new(Analyzer::StemBigram.build());
        t.push(7, "the adoption agency called about the adoption");
        t.push(8, "lunch with the team");
        assert_eq!((t.len(), t.tokens), (2, 7));
        assert_eq!(
            (t.doc_freq("adopt"), t.doc_freq("lunch"), t.doc_freq("the")),
            (1, 1, 0)
        );
        assert_eq!(t.postings["adopt"], [(0, 2)]);
        t.remove(&[7].into_iter().collect());
        assert_eq!((t.len(), t.tokens), (1, 2));
        assert!(!t.holds("adopt") && t.holds("lunch"));
        assert_eq!(t.postings["lunch"], [(0, 1)]);
    }

    #[test]
    fn past_the_limit_it_lets_go_and_says_so() {
        let mut t = Tail::new(Analyzer::StemBigram.build());
        for row in 0..=TAIL_LIMIT as u32 {
            t.push(row, "word");
        }
        assert!(!t.covers());
        assert_eq!(t.len(), 0);
        t.push(99_999, "more");
        assert_eq!(t.len(), 0);
        t.clear();
        assert!(t.covers());
    }
}
