//! Text recall: BM25 over narratives, meeting cue candidates and salience in the core.
//!
//! [`TextIndex`] keeps one tantivy document per home row (the row in a fast field),
//! and searches the documents added since its last commit in memory (`tail.rs`);
//! [`Analyzer`] says how text becomes terms (words, and CJK character n-grams);
//! [`blend()`](blend::blend) mixes BM25 with the salience table's decayed composite
//! and a freshness term; [`recall`] is the whole path: cues prune, text ranks, the
//! blend re-ranks.

mod blend;
mod erase;
mod fault;
mod index;
mod readonly;
mod stem;
mod tail;
mod tokenize;

pub use blend::{blend, rank, Blend, TextHit};
pub use index::{Plan, TextIndex};
pub use tail::TAIL_LIMIT;
pub use tokenize::{is_cjk, terms, Analyzer, CueTokenizer};

use crate::cue::{CueIndex, Query};
use crate::error::Result;
use crate::salience::SalienceTable;

/// What a text recall asks: the words, the blend, the instant and how many hits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextQuery<'a> {
    pub text: &'a str,
    pub weights: Blend,
    pub now: f64,
    pub k: usize,
    /// The BM25 the text part is relative to; `None`: the pool's best. A caller that
    /// merges pools of one query (a narrower one into a wider one) passes the wider
    /// pool's best, so both pools' scores are on one scale.
    pub scale: Option<f32>,
}

/// What a text recall returns.
#[derive(Debug, Clone, PartialEq)]
pub struct TextRecall {
    pub hits: Vec<TextHit>,
    /// Rows matching the cues (every live row when there are none).
    pub total: u64,
    pub examined: u64,
    pub full_scan: u64,
}

/// Cues prune (when `query` has any clause), the text ranks by BM25, the blend re-ranks.
pub fn recall(
    index: &CueIndex,
    table: &SalienceTable,
    text_index: &TextIndex,
    query: &Query,
    ask: &TextQuery<'_>,
) -> Result<TextRecall> {
    ask.weights.validate()?;
    if query.include.is_empty() && query.exclude.is_empty() {
        let live = index.live();
        let full_scan = live.len();
        // The live rows are the candidates: removed (retired) rows stay in the text
        // index but must not come back through it.
        let hits = rank(text_index, table, Some(live), ask)?;
        return Ok(TextRecall {
            hits,
            total: full_scan,
            examined: 0,
            full_scan,
        });
    }
    let pruned = index.prune(query)?;
    let hits = rank(text_index, table, Some(&pruned.rows), ask)?;
    Ok(TextRecall {
        hits,
        total: pruned.rows.len(),
        examined: pruned.examined,
        full_scan: pruned.full_scan,
    })
}
