//! Erasing rows from the text index: a query that matches documents by their row.
//!
//! The row is a fast field (not indexed), so no term names a document. [`RowsQuery`]
//! matches the documents whose row is in a bitmap by reading each segment's row
//! column; [`TextIndex::erase`](super::TextIndex::erase) deletes what it matches and
//! merges the segments that held them, so that their terms leave the index files.

use roaring::RoaringBitmap;
use tantivy::query::{ConstScorer, EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::{DocId, DocSet, Score, SegmentReader, TantivyError, TERMINATED};

/// The documents whose `row` fast field is in `rows`.
#[derive(Debug, Clone)]
pub(crate) struct RowsQuery {
    pub rows: RoaringBitmap,
}

impl Query for RowsQuery {
    fn weight(&self, _scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(RowsWeight {
            rows: self.rows.clone(),
        }))
    }
}

struct RowsWeight {
    rows: RoaringBitmap,
}

impl RowsWeight {
    fn docs(&self, reader: &SegmentReader) -> tantivy::Result<Vec<DocId>> {
        let column = reader.fast_fields().u64("row")?;
        Ok((0..reader.max_doc())
            .filter(|&doc| {
                column
                    .first(doc)
                    .and_then(|r| u32::try_from(r).ok())
                    .is_some_and(|r| self.rows.contains(r))
            })
            .collect())
    }
}

impl Weight for RowsWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        Ok(Box::new(ConstScorer::new(
            Docs {
                docs: self.docs(reader)?,
                at: 0,
            },
            boost,
        )))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        if self.docs(reader)?.binary_search(&doc).is_ok() {
            Ok(Explanation::new("row in the erased set", 1.0))
        } else {
            Err(TantivyError::InvalidArgument(format!(
                "document {doc} is not of an erased row"
            )))
        }
    }
}

/// A segment's matching documents, ascending.
struct Docs {
    docs: Vec<DocId>,
    at: usize,
}

impl DocSet for Docs {
    fn advance(&mut self) -> DocId {
        self.at = (self.at + 1).min(self.docs.len());
        self.doc()
    }

    fn doc(&self) -> DocId {
        self.docs.get(self.at).copied().unwrap_or(TERMINATED)
    }

    fn size_hint(&self) -> u32 {
        (self.docs.len() - self.at) as u32
    }
}
