//! Scoring at `now`: per-query coefficients, composites and top-k.

use std::borrow::Cow;
use std::collections::BinaryHeap;

use super::axes::{gate, N_AXES};
use roaring::RoaringBitmap;

use super::blocks::BLOCK_SHIFT;
use super::table::{flush, Row, SalienceTable};
use crate::error::{CoreError, Result};
use crate::rank::Kept;

/// Epoch ranges up to this many get a precomputed coefficient table per query;
/// wider (pathological) ranges compute coefficients on demand.
const MAX_TABLE_EPOCHS: i64 = 4096;

/// Everything about `now` that is shared by all rows of one query.
pub(super) struct Clock {
    /// Per epoch from `lo`: `w_a * c_{e,a}` (lane 7 zero) and `c_{e,a}` (lane 7 zero).
    table: Option<Vec<([f32; 8], [f32; 8])>>,
    lo: i64,
    /// `w_a` for protected rows, lane 7 zero.
    weights: [f32; 8],
    /// No row has a reference time after `now`: the shared coefficients hold for all.
    all_past: bool,
    now: f64,
    epochs: super::epochs::Epochs,
    params: super::axes::Params,
}

impl Clock {
    fn check_now(now: f64) -> Result<()> {
        if !now.is_finite() {
            return Err(CoreError::InvalidArgument {
                name: "now",
                reason: format!("{now} is not a finite time"),
            });
        }
        Ok(())
    }

    pub(super) fn new(table: &SalienceTable, now: f64) -> Result<Self> {
        Self::check_now(now)?;
        let mut weights = [0f32; 8];
        weights[..N_AXES].copy_from_slice(&table.params.weights);
        let mut clock = Self {
            table: None,
            lo: table.epoch_lo,
            weights,
            all_past: now >= table.max_t,
            now,
            epochs: table.epochs,
            params: table.params,
        };
        if let Some((lo, top)) = table.walked(now) {
            // Walking back from the epoch holding `now`, each epoch's coefficients are
            // the next one's times 2^(-L/h): one exp2 per axis for the start and one for
            // the step, the rest products (f64; shrinking, so underflow means "decayed
            // to nothing", which is right). Epochs after `now` hold only rows written
            // after it, which never use these coefficients; they are computed directly.
            let hi = table.epoch_hi;
            let mut rows = vec![([0f32; 8], [0f32; 8]); (hi - lo + 1) as usize];
            let mut exact = clock.params.factors(now - clock.epochs.end(top));
            let step = clock.params.factors(clock.epochs.len);
            for e in (lo..=top).rev() {
                rows[(e - lo) as usize] = clock.lanes(&exact);
                for a in 0..N_AXES {
                    exact[a] *= step[a];
                }
            }
            for e in top + 1..=hi {
                rows[(e - lo) as usize] = clock.compute(e);
            }
            clock.table = Some(rows);
        }
        Ok(clock)
    }

    /// `(w_a * c_a, c_a)` as flushed f32 lanes, lane 7 zero.
    fn lanes(&self, exact: &[f64; N_AXES]) -> ([f32; 8], [f32; 8]) {
        let mut decayed = [0f32; 8];
        let mut factors = [0f32; 8];
        for a in 0..N_AXES {
            factors[a] = flush(exact[a].min(f32::MAX as f64) as f32);
            decayed[a] = flush((self.weights[a] as f64 * exact[a]).min(f32::MAX as f64) as f32);
        }
        (decayed, factors)
    }

    /// `(w_a * c_{e,a}, c_{e,a})` for epoch `e`, flushed, lane 7 zero.
    fn compute(&self, e: i64) -> ([f32; 8], [f32; 8]) {
        self.lanes(&self.params.factors(self.now - self.epochs.end(e)))
    }

    /// The coefficients of epoch `e`: weighted (for scores) and plain (for decayed axes).
    #[inline]
    pub(super) fn coefficients(&self, e: i64) -> ([f32; 8], [f32; 8]) {
        match &self.table {
            Some(t) => t[(e - self.lo) as usize],
            None => self.compute(e),
        }
    }

    /// The weighted coefficients of epoch `e`.
    #[inline]
    pub(super) fn decayed(&self, e: i64) -> [f32; 8] {
        self.coefficients(e).0
    }

    /// The axis weights; lane 7 zero.
    pub(super) fn weights8(&self) -> [f32; 8] {
        self.weights
    }

    /// No row was written after `now`.
    #[inline]
    pub(super) fn all_past(&self) -> bool {
        self.all_past
    }

    /// Whether row `r` was written after `now` (and so counts as written, undecayed).
    #[inline]
    pub(super) fn is_future(&self, table: &SalienceTable, r: usize) -> bool {
        !self.all_past && table.times[r] > self.now
    }

    /// Per-axis decayed values of one live row at `now` (undecayed if protected).
    #[inline(always)]
    pub(super) fn axes(&self, table: &SalienceTable, r: usize) -> [f32; N_AXES] {
        let row = &table.rows[r];
        let mut out = [0f32; N_AXES];
        if row.is_protected() {
            out.copy_from_slice(&row.0[..N_AXES]);
        } else if !self.is_future(table, r) {
            let (_, c) = self.coefficients(table.epoch_of_row(r));
            for a in 0..N_AXES {
                out[a] = flush(row.0[a] * c[a]);
            }
        } else {
            // Written after `now`: no negative age, the row counts as written.
            let back = self.epochs.to_end(&self.params, table.times[r]);
            for a in 0..N_AXES {
                out[a] = flush((row.0[a] as f64 / back[a]) as f32);
            }
        }
        out
    }

    /// The composite of one live row at `now`.
    #[inline]
    pub(super) fn score(&self, table: &SalienceTable, r: usize) -> f32 {
        let row: &Row = &table.rows[r];
        let state = row.0[7];
        let protected = state.is_sign_negative();
        if !protected && self.is_future(table, r) {
            return self.weighted(&self.axes(table, r), row.confidence());
        }
        let k = if protected {
            self.weights
        } else {
            self.decayed(table.epoch_of_row(r))
        };
        let mut lanes = [0f32; 8];
        for a in 0..8 {
            lanes[a] = k[a] * row.0[a];
        }
        let sum = (lanes[0] + lanes[4])
            + (lanes[1] + lanes[5])
            + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
        sum * gate(state.abs())
    }

    /// `sum_a(w_a * axes_a) * gate(confidence)` over the first seven lanes of `axes`.
    #[inline]
    pub(super) fn weighted(&self, axes: &[f32], confidence: f32) -> f32 {
        let mut sum = 0f32;
        for (w, x) in self.weights.iter().zip(&axes[..N_AXES]) {
            sum += w * x;
        }
        sum * gate(confidence)
    }

    /// Per-axis contributions `w_a * decayed_a * gate`; they sum to the composite.
    pub(super) fn breakdown(&self, table: &SalienceTable, r: usize) -> [f32; N_AXES] {
        let g = gate(table.rows[r].confidence());
        let axes = self.axes(table, r);
        let mut out = [0f32; N_AXES];
        for a in 0..N_AXES {
            out[a] = self.weights[a] * axes[a] * g;
        }
        out
    }
}

/// Candidates are scored in batches of this many, each batch's rows loaded before any is
/// scored, which hides most of the memory latency of a sparse gather.
const BLOCK: usize = 32;

/// The best `k` rows of a candidate set, best first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TopK {
    pub rows: Vec<u32>,
    pub scores: Vec<f32>,
    /// Row-major `rows.len() x 7`: each winner's per-axis contribution.
    pub breakdown: Vec<f32>,
}

/// The best `k` rows offered so far.
struct Best {
    heap: BinaryHeap<Kept>,
    k: usize,
    worst: f32,
}

impl Best {
    fn new(k: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(k.min(1 << 12) + 1),
            k,
            worst: f32::NEG_INFINITY,
        }
    }

    fn is_full(&self) -> bool {
        self.heap.len() == self.k
    }

    #[inline]
    fn offer(&mut self, score: f32, row: u32) {
        if self.heap.len() < self.k {
            self.heap.push(Kept { score, row });
            if self.heap.len() == self.k {
                self.worst = self.heap.peek().expect("full").score;
            }
        } else if score > self.worst
            || (score == self.worst && row > self.heap.peek().expect("full").row)
        {
            *self.heap.peek_mut().expect("full") = Kept { score, row };
            self.worst = self.heap.peek().expect("full").score;
        }
    }

    /// Scores the live rows of `block` (loaded first) and offers them.
    #[inline]
    fn offer_block(&mut self, table: &SalienceTable, clock: &Clock, block: &[u32]) {
        // Loads, not prefetch hints: a hint that misses the TLB may be dropped, while the
        // independent loads of a batch overlap their page walks and cache misses.
        let mut touched = 0u32;
        for &r in block {
            touched ^= table.rows[r as usize].0[7].to_bits() ^ table.blocks.touch(r as usize);
        }
        std::hint::black_box(touched);
        for &row in block {
            let r = row as usize;
            if table.rows[r].is_live() {
                self.offer(clock.score(table, r), row);
            }
        }
    }

    fn finish(self, table: &SalienceTable, clock: &Clock) -> TopK {
        let kept = self.heap.into_sorted_vec();
        let mut out = TopK {
            rows: Vec::with_capacity(kept.len()),
            scores: Vec::with_capacity(kept.len()),
            breakdown: Vec::with_capacity(kept.len() * N_AXES),
        };
        for Kept { score, row } in kept {
            out.rows.push(row);
            out.scores.push(score);
            out.breakdown
                .extend_from_slice(&clock.breakdown(table, row as usize));
        }
        out
    }
}

impl SalienceTable {
    /// The epochs whose coefficients a query at `now` walks (`lo` up to `top`, see
    /// [`Clock::new`]), or `None` when it computes each epoch's directly (no unprotected
    /// row, or a pathological range).
    fn walked(&self, now: f64) -> Option<(i64, i64)> {
        let (lo, hi) = (self.epoch_lo, self.epoch_hi);
        (hi >= lo && hi - lo < MAX_TABLE_EPOCHS).then(|| (lo, hi.min(self.epochs.of(now)).max(lo)))
    }

    /// What the scores at `now` depend on besides each row: the epoch the coefficients are
    /// walked back from, or `None` when each is computed directly. An epoch's coefficient is
    /// the walk's start times one step per epoch back from it, so where the walk ends does not
    /// change it. Two queries at the same `now` that get the same key score every row they
    /// both hold bit for bit, whatever rows were put between them: a row in a later epoch
    /// than any, up to `now`'s, moves the start. A ranking kept at `now` is extended by
    /// scoring new rows alone while the key stands.
    pub fn score_key(&self, now: f64) -> Result<Option<i64>> {
        Clock::check_now(now)?;
        Ok(self.walked(now).map(|(_, top)| top))
    }

    fn check_rows(&self, max_row: Option<u32>) -> Result<()> {
        match max_row {
            Some(r) if r as usize >= self.rows.len() => Err(CoreError::InvalidValue {
                what: "candidates",
                index: 0,
                value: r.to_string(),
                reason: "row has no salience entry",
            }),
            _ => Ok(()),
        }
    }

    /// Composites of `rows` at `now`; rows removed from the table score 0.
    pub fn composite(&self, rows: &[u32], now: f64) -> Result<Vec<f32>> {
        self.check_rows(rows.iter().copied().max())?;
        let clock = Clock::new(self, now)?;
        Ok(rows
            .iter()
            .map(|&r| {
                if self.is_live(r) {
                    clock.score(self, r as usize)
                } else {
                    0.0
                }
            })
            .collect())
    }

    /// Per-axis values of `row` decayed to `now`, or `None` if it is not live.
    pub fn decayed(&self, row: u32, now: f64) -> Result<Option<[f32; N_AXES]>> {
        let clock = Clock::new(self, now)?;
        Ok(self.is_live(row).then(|| clock.axes(self, row as usize)))
    }

    /// The `k` best live rows among `candidates`, by composite at `now`, best first.
    ///
    /// Ties go to the later row (the newer memory). `max_row` is the largest candidate, checked against
    /// the table before any work. Candidates may come in any order.
    pub fn top_k<I: IntoIterator<Item = u32>>(
        &self,
        candidates: I,
        max_row: Option<u32>,
        now: f64,
        k: usize,
    ) -> Result<TopK> {
        check_k(k)?;
        self.check_rows(max_row)?;
        let clock = Clock::new(self, now)?;
        let mut best = Best::new(k);
        let mut batch = Batch::default();
        // Internal iteration (for_each) lets a roaring iterator run container by container.
        candidates
            .into_iter()
            .for_each(|row| batch.push(row, &mut best, self, &clock));
        batch.flush(&mut best, self, &clock);
        Ok(best.finish(self, &clock))
    }

    /// [`SalienceTable::top_k`] over a bitmap, skipping blocks that cannot make the top k.
    ///
    /// Scores the protected candidates first, then walks the others newest first;
    /// once `k` rows are kept, a block whose upper bound is below the k-th score is
    /// skipped without touching its rows, and the walk stops when no older block can
    /// win.
    /// Same result as [`SalienceTable::top_k`], usually a fraction of the work.
    pub fn top_k_bitmap(&self, candidates: &RoaringBitmap, now: f64, k: usize) -> Result<TopK> {
        check_k(k)?;
        self.check_rows(candidates.max())?;
        let clock = Clock::new(self, now)?;
        if !clock.all_past() || candidates.len() <= SMALL {
            // Rows written after `now` do not follow the shared decay: no bound holds.
            // A handful of candidates is cheapest to score outright.
            return self.top_k(candidates.iter(), candidates.max(), now, k);
        }
        let mut best = Best::new(k);
        let mut batch = Batch::default();
        // Protected candidates first: they never decay, so they often set the bar.
        let protected = candidates & self.blocks.protected();
        protected
            .iter()
            .for_each(|row| batch.push(row, &mut best, self, &clock));
        batch.flush(&mut best, self, &clock);
        let rest = if protected.is_empty() {
            Cow::Borrowed(candidates)
        } else {
            Cow::Owned(candidates - &protected)
        };
        let rest: &RoaringBitmap = &rest;
        // Newest first, a chunk of blocks at a time; stop when nothing older can win.
        let mut top = rest.max();
        while let Some(hi) = top {
            let b = (hi >> BLOCK_SHIFT) as usize;
            if best.is_full() && self.blocks.upto(b).bound(|e| clock.decayed(e)) < best.worst {
                break;
            }
            let start = ((b >> CHUNK_SHIFT) << (CHUNK_SHIFT + BLOCK_SHIFT)) as u32;
            let mut block = usize::MAX;
            let mut skip = false;
            rest.range(start..=hi).rev().for_each(|row| {
                let b = (row >> BLOCK_SHIFT) as usize;
                if b != block {
                    block = b;
                    skip = best.is_full()
                        && self.blocks.block(b).bound(|e| clock.decayed(e)) < best.worst;
                }
                if !skip {
                    batch.push(row, &mut best, self, &clock);
                }
            });
            top = if start == 0 {
                None
            } else {
                rest.range(..start).next_back()
            };
        }
        batch.flush(&mut best, self, &clock);
        Ok(best.finish(self, &clock))
    }
}

/// Candidate sets up to this size are scored outright.
const SMALL: u64 = 256;

/// log2 of the blocks walked between two tests of the prefix bound.
const CHUNK_SHIFT: u32 = 4;

/// Candidates waiting to be scored as one batch. A batch may span
/// blocks, so the threshold a block is tested against can lag: it never prunes
/// wrongly, it only prunes a little later.
#[derive(Default)]
struct Batch {
    rows: [u32; BLOCK],
    n: usize,
}

impl Batch {
    #[inline]
    fn push(&mut self, row: u32, best: &mut Best, table: &SalienceTable, clock: &Clock) {
        self.rows[self.n] = row;
        self.n += 1;
        if self.n == BLOCK {
            self.flush(best, table, clock);
        }
    }

    fn flush(&mut self, best: &mut Best, table: &SalienceTable, clock: &Clock) {
        best.offer_block(table, clock, &self.rows[..self.n]);
        self.n = 0;
    }
}

fn check_k(k: usize) -> Result<()> {
    if k == 0 {
        return Err(CoreError::InvalidArgument {
            name: "k",
            reason: "k must be at least 1".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::axes::{Params, DAY, URGENCY};
    use super::*;

    fn oracle(axes: &[f32; 7], conf: f32, t: f64, now: f64) -> f32 {
        let p = Params::default();
        let age = (now - t).max(0.0);
        let mut sum = 0.0f64;
        for a in 0..7 {
            let d = if axes[0] >= 0.7 || axes[2] >= 0.7 {
                1.0
            } else {
                (-age / (p.half_lives_days[a] * DAY)).exp2()
            };
            sum += p.weights[a] as f64 * axes[a] as f64 * d;
        }
        (sum * (0.6 + 0.4 * conf as f64)) as f32
    }

    fn sample() -> (SalienceTable, Vec<[f32; 7]>, Vec<f32>, Vec<f64>) {
        let mut tab = SalienceTable::new(Params::default());
        let axes: Vec<[f32; 7]> = (0..50)
            .map(|i| std::array::from_fn(|a| ((i * 7 + a * 3) % 11) as f32 / 10.0 * 0.69))
            .collect();
        let conf: Vec<f32> = (0..50).map(|i| (i % 5) as f32 / 4.0).collect();
        let times: Vec<f64> = (0..50).map(|i| 1.7e9 + i as f64 * 3.0 * DAY).collect();
        let rows: Vec<u32> = (0..50).collect();
        tab.put(&rows, axes.concat().as_slice(), &conf, &times)
            .unwrap();
        (tab, axes, conf, times)
    }

    #[test]
    fn composite_matches_oracle_past_present_future() {
        let (tab, axes, conf, times) = sample();
        let rows: Vec<u32> = (0..50).collect();
        for now in [1.7e9, 1.7e9 + 60.0 * DAY, 1.7e9 + 400.0 * DAY] {
            let got = tab.composite(&rows, now).unwrap();
            for i in 0..50 {
                let want = oracle(&axes[i], conf[i], times[i], now);
                assert!(
                    (got[i] - want).abs() <= 1e-5 * want.abs().max(1e-3),
                    "row {i} now {now}: {} vs {want}",
                    got[i]
                );
            }
        }
    }

    #[test]
    fn rows_put_under_one_score_key_leave_every_score_as_it_was() {
        let (mut tab, ..) = sample();
        let now = 1.7e9 + 400.0 * DAY;
        let rows: Vec<u32> = (0..50).collect();
        let before = tab.composite(&rows, now).unwrap();
        let key = tab.score_key(now).unwrap();
        assert!(key.is_some());
        // Within the epochs walked, or earlier than any: the key stands, every score too.
        for (row, t) in [
            (50, 1.7e9 + 10.0 * DAY),
            (51, 1.7e9 + 100.0 * DAY),
            (52, 1.0e9),
        ] {
            tab.put(&[row], &[0.5; 7], &[0.5], &[t]).unwrap();
            assert_eq!(tab.score_key(now).unwrap(), key);
        }
        let after = tab.composite(&rows, now).unwrap();
        assert_eq!(
            before.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
            after.iter().map(|s| s.to_bits()).collect::<Vec<_>>()
        );
        // A later epoch (up to `now`'s, or past it) moves the walk's start; once it is
        // `now`'s epoch, later rows leave it there.
        tab.put(&[53], &[0.5; 7], &[0.5], &[now + 90.0 * DAY])
            .unwrap();
        let reached = tab.score_key(now).unwrap();
        assert_ne!(reached, key);
        tab.put(&[54], &[0.5; 7], &[0.5], &[now + 900.0 * DAY])
            .unwrap();
        assert_eq!(tab.score_key(now).unwrap(), reached);
        assert!(tab.score_key(f64::NAN).is_err());
        let empty = SalienceTable::new(Params::default());
        assert_eq!(empty.score_key(now).unwrap(), None);
    }

    #[test]
    fn protected_rows_do_not_decay() {
        let mut tab = SalienceTable::new(Params::default());
        tab.put(&[0], &[0.9, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], &[1.0], &[0.0])
            .unwrap();
        let now = tab.composite(&[0], 0.0).unwrap()[0];
        let later = tab.composite(&[0], 1000.0 * DAY).unwrap()[0];
        assert_eq!(now, later);
    }

    #[test]
    fn urgency_halves_in_a_week() {
        let mut tab = SalienceTable::new(Params::default());
        tab.put(&[0], &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], &[1.0], &[0.0])
            .unwrap();
        let d = tab.decayed(0, 7.0 * DAY).unwrap().unwrap();
        assert!((d[URGENCY] - 0.5).abs() < 1e-6);
    }

    #[test]
    fn top_k_is_sorted_and_breakdown_sums_to_score() {
        let (tab, ..) = sample();
        let now = 1.7e9 + 200.0 * DAY;
        let top = tab.top_k(0..50, Some(49), now, 5).unwrap();
        assert_eq!(top.rows.len(), 5);
        let all = tab.composite(&(0..50).collect::<Vec<_>>(), now).unwrap();
        let mut order: Vec<u32> = (0..50).collect();
        order.sort_by(|&a, &b| all[b as usize].total_cmp(&all[a as usize]).then(b.cmp(&a)));
        assert_eq!(top.rows, order[..5]);
        for (i, s) in top.scores.iter().enumerate() {
            let sum: f32 = top.breakdown[i * 7..i * 7 + 7].iter().sum();
            assert!((sum - s).abs() < 1e-5);
        }
    }

    #[test]
    fn coefficients_hold_across_a_thousand_days_of_short_half_lives() {
        let mut p = Params::default();
        p.half_lives_days[URGENCY] = 0.125;
        let mut tab = SalienceTable::new(p);
        tab.put(
            &[0, 1],
            &[[0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0; 7]].concat(),
            &[1.0, 1.0],
            &[1.7e9 - 1000.0 * DAY, 1.7e9],
        )
        .unwrap();
        let d = tab.decayed(0, 1.7e9 - 1000.0 * DAY).unwrap().unwrap();
        assert!((d[URGENCY] - 0.5).abs() < 1e-6, "{d:?}");
        let (out, _) = tab
            .decay_pass(1.7e9 - 1000.0 * DAY + 3.0 * 3600.0, 0.0)
            .unwrap();
        assert!((out[URGENCY] - 0.25).abs() < 1e-6, "{out:?}");
    }

    #[test]
    fn top_k_rejects_bad_arguments() {
        let (tab, ..) = sample();
        assert!(tab.top_k([1u32], Some(1), 0.0, 0).is_err());
        assert!(tab.top_k([99u32], Some(99), 0.0, 1).is_err());
        assert!(tab.top_k([1u32], Some(1), f64::NAN, 1).is_err());
    }
}
