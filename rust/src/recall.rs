//! The full recall path: cue pruning, then the decayed composite's top k.

use crate::cue::{CueIndex, Query};
use crate::error::Result;
use crate::salience::{SalienceTable, TopK};

/// What one recall returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Recall {
    pub top: TopK,
    /// Rows matching the cues before ranking.
    pub total: u64,
    pub examined: u64,
    pub full_scan: u64,
}

/// Prunes `index` by `query`, then ranks the survivors in `table` at `now`.
pub fn recall(
    index: &CueIndex,
    table: &SalienceTable,
    query: &Query,
    now: f64,
    k: usize,
) -> Result<Recall> {
    let pruned = index.prune(query)?;
    let top = table.top_k_bitmap(&pruned.rows, now, k)?;
    Ok(Recall {
        top,
        total: pruned.rows.len(),
        examined: pruned.examined,
        full_scan: pruned.full_scan,
    })
}
