//! Block maxima: an upper bound on the composite of the unprotected rows of a block.
//!
//! Rows are grouped in aligned blocks of [`BLOCK_ROWS`]. Each block keeps the maximum
//! of every stored lane (seven axes, and confidence in lane 7) over its unprotected
//! rows, and the range of their epochs. At `now` the composite of any such row is at
//! most `sum_a(k_a * max_a) * gate(max_confidence)`, with `k` the coefficients of the
//! block's latest epoch (later epochs decay least), so top-k can skip a whole block
//! whose bound is below the k-th best score found so far (block-max pruning, as search
//! engines do with impacts). Protected rows never decay, so they would keep old
//! blocks' bounds high; they are kept aside in a bitmap and scored first, which also
//! sets a high threshold early.
//!
//! Prefix maxima (over every block up to and including `b`) bound all blocks at or
//! before `b` at once: walking newest first, top-k stops as soon as the prefix bound
//! falls below the k-th score, without visiting the older candidates.
//!
//! A block whose rows share one epoch (the usual case: rows are written in time
//! order) also tells scoring that epoch, so a candidate's coefficients come without
//! reading its time. Maxima and epoch ranges only widen on writes (an overwrite or a
//! removal leaves them as upper bounds); they are rebuilt exactly on load.

use roaring::RoaringBitmap;

use super::axes::{gate, N_AXES};
use super::table::Row;

/// log2 of the rows per block.
pub(super) const BLOCK_SHIFT: u32 = 6;
/// Rows per block.
pub const BLOCK_ROWS: usize = 1 << BLOCK_SHIFT;

/// Lane maxima and epoch range of a set of unprotected rows.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub max: [f32; 8],
    pub lo: i64,
    pub hi: i64,
}

impl Default for Span {
    fn default() -> Self {
        Span {
            max: [0.0; 8],
            lo: i64::MAX,
            hi: i64::MIN,
        }
    }
}

impl Span {
    fn cover(&mut self, other: &Span) {
        for (m, o) in self.max.iter_mut().zip(&other.max) {
            *m = m.max(*o);
        }
        self.lo = self.lo.min(other.lo);
        self.hi = self.hi.max(other.hi);
    }

    /// The bound under per-epoch coefficients `coef(epoch)`; zero for no rows.
    #[inline]
    pub fn bound(&self, coef: impl Fn(i64) -> [f32; 8]) -> f32 {
        if self.hi < self.lo {
            return 0.0;
        }
        let k = coef(self.hi);
        let mut s = 0f32;
        for (k, m) in k.iter().zip(&self.max[..N_AXES]) {
            s += k * m;
        }
        // Inflated a little so that rounding in a row's own sum can never exceed it.
        s * gate(self.max[7]) * (1.0 + 1e-5)
    }
}

/// Per-block spans of unprotected rows, their prefix spans, and the protected rows.
#[derive(Debug, Clone, Default)]
pub(super) struct BlockMax {
    blocks: Vec<Span>,
    /// `prefix[b]`: the span of `blocks[..=b]`.
    prefix: Vec<Span>,
    protected: RoaringBitmap,
}

impl BlockMax {
    /// Spans of `rows` (with their epochs), computed from scratch.
    pub(super) fn build(rows: &[Row], epoch: impl Fn(usize) -> i64) -> Self {
        let mut b = Self::default();
        b.grow(rows.len());
        for (r, row) in rows.iter().enumerate() {
            if row.is_live() {
                b.note(r, row, epoch(r), false);
            }
        }
        b.refresh(0);
        b
    }

    /// Reserves room for `n_rows` rows; false when the memory cannot be had.
    pub(super) fn reserve(&mut self, n_rows: usize) -> bool {
        let n = n_rows.div_ceil(BLOCK_ROWS);
        self.blocks
            .try_reserve(n.saturating_sub(self.blocks.len()))
            .is_ok()
    }

    /// Makes room for `n_rows` rows.
    pub(super) fn grow(&mut self, n_rows: usize) {
        let n = n_rows.div_ceil(BLOCK_ROWS);
        if n > self.blocks.len() {
            self.blocks.resize(n, Span::default());
        }
    }

    /// Covers `row`, written at row `r` in `epoch`: widens its block's span or records it as
    /// protected. `was_live`: row `r` held a live row before (only such a row can be protected:
    /// a row that is no longer live was forgotten).
    #[inline]
    pub(super) fn note(&mut self, r: usize, row: &Row, epoch: i64, was_live: bool) {
        if !row.is_live() {
            return;
        }
        if row.is_protected() {
            self.protected.insert(r as u32);
            return;
        }
        if was_live {
            self.protected.remove(r as u32);
        }
        let mut one = Span {
            max: row.0,
            lo: epoch,
            hi: epoch,
        };
        one.max[7] = row.confidence();
        self.blocks[r >> BLOCK_SHIFT].cover(&one);
    }

    /// Forgets row `r` (its block's span stays, as an upper bound).
    pub(super) fn forget(&mut self, r: u32) {
        self.protected.remove(r);
    }

    /// Recomputes the prefix spans from block `from` on (after writes to it or later).
    pub(super) fn refresh(&mut self, from: usize) {
        self.prefix.resize(self.blocks.len(), Span::default());
        for b in from..self.blocks.len() {
            let mut span = self.blocks[b];
            if b > 0 {
                span.cover(&self.prefix[b - 1]);
            }
            self.prefix[b] = span;
        }
    }

    /// Live protected rows.
    pub(super) fn protected(&self) -> &RoaringBitmap {
        &self.protected
    }

    /// The span of the unprotected rows of block `b`.
    #[inline]
    pub(super) fn block(&self, b: usize) -> &Span {
        &self.blocks[b]
    }

    /// The span of the unprotected rows of every block up to and including `b`.
    #[inline]
    pub(super) fn upto(&self, b: usize) -> &Span {
        &self.prefix[b]
    }

    /// The epoch every unprotected row of row `r`'s block shares, if they share one.
    #[inline]
    pub(super) fn uniform_epoch(&self, r: usize) -> Option<i64> {
        let span = self.blocks.get(r >> BLOCK_SHIFT)?;
        (span.lo == span.hi).then_some(span.lo)
    }

    /// Reads the span of row `r`'s block (read again when scoring `r`): its bits, to be discarded.
    #[inline]
    pub(super) fn touch(&self, r: usize) -> u32 {
        self.blocks[r >> BLOCK_SHIFT].max[7].to_bits()
    }

    pub(super) fn nbytes(&self) -> usize {
        (self.blocks.capacity() + self.prefix.capacity()) * std::mem::size_of::<Span>()
            + self.protected.serialized_size()
    }
}
