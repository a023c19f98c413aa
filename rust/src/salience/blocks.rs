//! Block maxima: an upper bound on the composite of the unprotected rows of a block.
//!
//! Rows are grouped in aligned blocks of [`BLOCK_ROWS`]. Each block keeps the maximum
//! of every stored lane (seven axes, and confidence in lane 7) over its unprotected
//! rows. At `now` the composite of any such row is at most
//! `sum_a(k_a * max_a) * gate(max_confidence)` with the query's coefficients `k`, so
//! top-k can skip a whole block whose bound is below the k-th best score found so far
//! (block-max pruning, as search engines do with impacts). Protected rows never
//! decay, so they would keep old blocks' bounds high; they are kept aside in a bitmap
//! and scored first, which also sets a high threshold early. Walking the remaining
//! candidates newest row first finds high scores early, because in a journal row
//! order is time order and recent rows have decayed least.
//!
//! Prefix maxima (lane maxima over every block up to and including `b`) bound all
//! blocks at or before `b` at once: walking newest first, top-k stops as soon as the
//! prefix bound falls below the k-th score, without visiting the older candidates.
//!
//! Maxima only ever grow on writes (an overwrite or a removal leaves them as upper
//! bounds) and scale with the rows on a rebase; they are rebuilt exactly on load.

use roaring::RoaringBitmap;

use super::axes::{gate, N_AXES};
use super::table::{flush, Row};

/// log2 of the rows per block.
pub(super) const BLOCK_SHIFT: u32 = 6;
/// Rows per block.
pub const BLOCK_ROWS: usize = 1 << BLOCK_SHIFT;

/// Per-block lane maxima of unprotected rows, and the protected rows.
#[derive(Debug, Clone, Default)]
pub(super) struct BlockMax {
    unprotected: Vec<[f32; 8]>,
    /// `prefix[b]`: lane maxima of `unprotected[..=b]`.
    prefix: Vec<[f32; 8]>,
    protected: RoaringBitmap,
}

impl BlockMax {
    /// Maxima of `rows`, computed from scratch.
    pub(super) fn build(rows: &[Row]) -> Self {
        let mut b = Self::default();
        b.grow(rows.len());
        for (r, row) in rows.iter().enumerate() {
            b.note(r, row);
        }
        b.refresh(0);
        b
    }

    /// Recomputes the prefix maxima from block `from` on (after writes to it or later).
    pub(super) fn refresh(&mut self, from: usize) {
        self.prefix.resize(self.unprotected.len(), [0.0; 8]);
        for b in from..self.unprotected.len() {
            let mut m = self.unprotected[b];
            if b > 0 {
                for (lane, prev) in m.iter_mut().zip(&self.prefix[b - 1]) {
                    *lane = lane.max(*prev);
                }
            }
            self.prefix[b] = m;
        }
    }

    /// Makes room for `n_rows` rows.
    pub(super) fn grow(&mut self, n_rows: usize) {
        let n = n_rows.div_ceil(BLOCK_ROWS);
        if n > self.unprotected.len() {
            self.unprotected.resize(n, [0.0; 8]);
        }
    }

    /// Covers `row`, written at row `r`: raises its block's maxima or records it as protected.
    #[inline]
    pub(super) fn note(&mut self, r: usize, row: &Row) {
        if !row.is_live() {
            return;
        }
        if row.is_protected() {
            self.protected.insert(r as u32);
            return;
        }
        self.protected.remove(r as u32);
        let m = &mut self.unprotected[r >> BLOCK_SHIFT];
        for a in 0..N_AXES {
            m[a] = m[a].max(row.0[a]);
        }
        m[7] = m[7].max(row.confidence());
    }

    /// Forgets row `r` (its block's maxima stay, as an upper bound).
    pub(super) fn forget(&mut self, r: u32) {
        self.protected.remove(r);
    }

    /// Live protected rows.
    pub(super) fn protected(&self) -> &RoaringBitmap {
        &self.protected
    }

    /// Scales the unprotected maxima as a rebase scales the rows.
    pub(super) fn scale_unprotected(&mut self, f: &[f32; N_AXES]) {
        for m in &mut self.unprotected {
            for a in 0..N_AXES {
                m[a] = flush(m[a] * f[a]);
            }
        }
        self.refresh(0);
    }

    /// The bound on the unprotected rows of block `b` under coefficients `decayed`.
    #[inline]
    pub(super) fn bound(&self, b: usize, decayed: &[f32; 8]) -> f32 {
        bound(&self.unprotected[b], decayed)
    }

    /// The bound on the unprotected rows of every block up to and including `b`.
    #[inline]
    pub(super) fn bound_upto(&self, b: usize, decayed: &[f32; 8]) -> f32 {
        bound(&self.prefix[b], decayed)
    }

    pub(super) fn nbytes(&self) -> usize {
        (self.unprotected.capacity() + self.prefix.capacity()) * 32 + self.protected.serialized_size()
    }
}

#[inline]
fn bound(m: &[f32; 8], decayed: &[f32; 8]) -> f32 {
    {
        let mut s = 0f32;
        for a in 0..N_AXES {
            s += decayed[a] * m[a];
        }
        // Inflated a little so that rounding in a row's own sum can never exceed it.
        s * gate(m[7]) * (1.0 + 1e-5)
    }
}
