//! Block maxima: an upper bound on the composite of every row in a block of rows.
//!
//! Rows are grouped in aligned blocks of [`BLOCK_ROWS`]. Each block keeps, separately
//! for its unprotected and its protected rows, the maximum of every stored lane
//! (seven axes, and confidence in lane 7). At `now` the composite of any row in the
//! block is at most `sum_a(k_a * max_a) * gate(max_confidence)` with the query's
//! coefficients `k`, so top-k can skip a whole block whose bound is below the k-th
//! best score found so far (block-max pruning, as search engines do with impacts).
//! Walking candidates newest row first finds high scores early, because in a
//! journal row order is time order and recent rows have decayed least.
//!
//! Maxima only ever grow on writes (an overwrite or a removal leaves them as upper
//! bounds) and scale with the rows on a rebase; they are rebuilt exactly on load.

use super::axes::{gate, N_AXES};
use super::table::{flush, Row};

/// log2 of the rows per block.
pub(super) const BLOCK_SHIFT: u32 = 6;
/// Rows per block.
pub const BLOCK_ROWS: usize = 1 << BLOCK_SHIFT;

/// Per-block lane maxima of unprotected and protected rows.
#[derive(Debug, Clone, Default)]
pub(super) struct BlockMax {
    unprotected: Vec<[f32; 8]>,
    protected: Vec<[f32; 8]>,
}

impl BlockMax {
    /// Maxima of `rows`, computed from scratch.
    pub(super) fn build(rows: &[Row]) -> Self {
        let mut b = Self::default();
        b.grow(rows.len());
        for (r, row) in rows.iter().enumerate() {
            b.note(r, row);
        }
        b
    }

    /// Makes room for `n_rows` rows.
    pub(super) fn grow(&mut self, n_rows: usize) {
        let n = n_rows.div_ceil(BLOCK_ROWS);
        if n > self.unprotected.len() {
            self.unprotected.resize(n, [0.0; 8]);
            self.protected.resize(n, [0.0; 8]);
        }
    }

    /// Raises the maxima of row `r`'s block to cover `row`.
    #[inline]
    pub(super) fn note(&mut self, r: usize, row: &Row) {
        if !row.is_live() {
            return;
        }
        let b = r >> BLOCK_SHIFT;
        let m = if row.is_protected() { &mut self.protected[b] } else { &mut self.unprotected[b] };
        for a in 0..N_AXES {
            m[a] = m[a].max(row.0[a]);
        }
        m[7] = m[7].max(row.confidence());
    }

    /// Scales the unprotected maxima as a rebase scales the rows.
    pub(super) fn scale_unprotected(&mut self, f: &[f32; N_AXES]) {
        for m in &mut self.unprotected {
            for a in 0..N_AXES {
                m[a] = flush(m[a] * f[a]);
            }
        }
    }

    /// The bound of block `b` with coefficients `decayed` (unprotected) and `weights` (protected).
    #[inline]
    pub(super) fn bound(&self, b: usize, decayed: &[f32; 8], weights: &[f32; 8]) -> f32 {
        let dot = |k: &[f32; 8], m: &[f32; 8]| -> f32 {
            let mut s = 0f32;
            for a in 0..N_AXES {
                s += k[a] * m[a];
            }
            s * gate(m[7])
        };
        // Inflated by a few ulps so that rounding in the row's own sum can never exceed it.
        dot(decayed, &self.unprotected[b]).max(dot(weights, &self.protected[b])) * (1.0 + 1e-5)
    }

    pub(super) fn nbytes(&self) -> usize {
        (self.unprotected.capacity() + self.protected.capacity()) * 32
    }
}
