//! Storage of the salience table and its writes.

use rayon::prelude::*;

use super::axes::{is_protected, Params, DAY, N_AXES};
use super::blocks::BlockMax;
use crate::error::{CoreError, Result};

/// How far past the newest reference time the base is set, so that writes in
/// time order rebase the table about once a month of data time.
const SLACK: f64 = 32.0 * DAY;

/// Stored values and per-query coefficients below this are flushed to zero, so that
/// no product in the kernels is a subnormal float (which costs x86 a hundred cycles).
/// A contribution this small cannot matter to a ranking of values in [0, 1].
pub(super) const TINY: f32 = 1e-18;

/// Flushes `x` to zero below [`TINY`].
#[inline]
pub(super) fn flush(x: f32) -> f32 {
    if x < TINY { 0.0 } else { x }
}

/// Rows at or above this count are processed on all cores.
pub(super) const PARALLEL_ROWS: usize = 1 << 16;

/// One row: seven axes decayed to the table's base time, then a state lane.
///
/// Lane 7 holds the confidence, with its sign bit set for a protected row (so
/// `-0.0` is a protected row of confidence 0) and NaN for a row that is not live.
/// A row is thus self-contained: scoring a candidate touches one 32-byte line.
#[repr(C, align(32))]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row(pub [f32; 8]);

impl Default for Row {
    /// A row that is not live.
    fn default() -> Self {
        Row([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, f32::NAN])
    }
}

impl Row {
    #[inline]
    pub fn is_live(&self) -> bool {
        !self.0[7].is_nan()
    }

    #[inline]
    pub fn is_protected(&self) -> bool {
        self.0[7].is_sign_negative() && self.is_live()
    }

    #[inline]
    pub fn confidence(&self) -> f32 {
        self.0[7].abs()
    }

    /// The state lane for a live row.
    pub fn state(confidence: f32, protected: bool) -> f32 {
        if protected { -confidence.abs() } else { confidence.abs() }
    }
}

/// A row as written: axes undecayed, at its reference time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowState {
    pub axes: [f32; N_AXES],
    pub confidence: f32,
    /// Reference time, seconds since the Unix epoch.
    pub t: f64,
    pub protected: bool,
}

/// Columnar salience of dense rows; see the module docs for the stored form.
#[derive(Debug, Clone, Default)]
pub struct SalienceTable {
    pub(super) params: Params,
    /// Every unprotected row stores its axes decayed to this instant (seconds).
    pub(super) base: f64,
    /// No live row has a reference time after this.
    pub(super) max_t: f64,
    pub(super) rows: Vec<Row>,
    pub(super) times: Vec<f64>,
    pub(super) blocks: BlockMax,
    pub(super) live: usize,
}

impl SalienceTable {
    pub fn new(params: Params) -> Self {
        Self { params, base: f64::NEG_INFINITY, max_t: f64::NEG_INFINITY, ..Self::default() }
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// One past the highest row ever written.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Rows written and not removed.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Resident bytes of the columns.
    pub fn nbytes(&self) -> usize {
        self.rows.capacity() * std::mem::size_of::<Row>() + self.times.capacity() * 8 + self.blocks.nbytes()
    }

    pub(super) fn is_live(&self, row: u32) -> bool {
        self.rows.get(row as usize).is_some_and(Row::is_live)
    }

    /// Writes (or overwrites) `rows`; `axes` is row-major `rows.len() x 7`.
    ///
    /// Everything is validated first: on error the table is unchanged.
    pub fn put(&mut self, rows: &[u32], axes: &[f32], confidence: &[f32], times: &[f64]) -> Result<()> {
        let n = rows.len();
        check_len("axes", n * N_AXES, axes.len())?;
        check_len("confidence", n, confidence.len())?;
        check_len("t", n, times.len())?;
        check_unit("axes", axes)?;
        check_unit("confidence", confidence)?;
        if let Some((i, t)) = times.iter().enumerate().find(|(_, t)| !t.is_finite()) {
            return Err(CoreError::InvalidValue { what: "t", index: i, value: t.to_string(), reason: "a time must be finite" });
        }
        let Some(newest) = times.iter().copied().reduce(f64::max) else { return Ok(()) };
        if newest > self.base {
            self.rebase(newest + SLACK);
        }
        let top = rows.iter().copied().max().expect("non-empty") as usize + 1;
        if top > self.rows.len() {
            self.rows.resize(top, Row::default());
            self.times.resize(top, 0.0);
            self.blocks.grow(top);
        }
        let half_lives = self.params.half_lives_s();
        let first_block = rows.iter().copied().min().expect("non-empty") as usize >> super::blocks::BLOCK_SHIFT;
        for (i, &r) in rows.iter().enumerate() {
            let r = r as usize;
            let s = &axes[i * N_AXES..(i + 1) * N_AXES];
            let protected = is_protected(s);
            let mut row = Row::default();
            for a in 0..N_AXES {
                row.0[a] = if protected { s[a] } else { flush((s[a] as f64 * (-(self.base - times[i]) / half_lives[a]).exp2()) as f32) };
            }
            row.0[7] = Row::state(confidence[i], protected);
            if !self.rows[r].is_live() {
                self.live += 1;
            }
            self.rows[r] = row;
            self.times[r] = times[i];
            self.blocks.note(r, &row);
        }
        self.blocks.refresh(first_block);
        self.max_t = self.max_t.max(newest);
        Ok(())
    }

    /// Forgets `rows`; unknown or already removed rows are ignored.
    pub fn remove(&mut self, rows: &[u32]) {
        for &r in rows {
            let r = r as usize;
            if r < self.rows.len() && self.rows[r].is_live() {
                self.rows[r] = Row::default();
                self.blocks.forget(r as u32);
                self.live -= 1;
            }
        }
    }

    /// The row as written (axes undecayed), or `None` if it is not live.
    pub fn get(&self, row: u32) -> Option<RowState> {
        if !self.is_live(row) {
            return None;
        }
        let r = row as usize;
        let protected = self.rows[r].is_protected();
        let back = self.params.factors(self.times[r] - self.base);
        let mut axes = [0f32; N_AXES];
        for a in 0..N_AXES {
            axes[a] = if protected { self.rows[r].0[a] } else { (self.rows[r].0[a] as f64 * back[a]) as f32 };
        }
        Some(RowState { axes, confidence: self.rows[r].confidence(), t: self.times[r], protected })
    }

    /// Moves the base time forward to `base`, re-decaying every unprotected row.
    fn rebase(&mut self, base: f64) {
        if self.base.is_finite() {
            let f = self.params.factors(base - self.base).map(|x| x as f32);
            let work = |row: &mut Row| {
                if row.is_live() && !row.is_protected() {
                    for a in 0..N_AXES {
                        row.0[a] = flush(row.0[a] * f[a]);
                    }
                }
            };
            if self.rows.len() >= PARALLEL_ROWS {
                self.rows.par_iter_mut().for_each(work);
            } else {
                self.rows.iter_mut().for_each(work);
            }
            self.blocks.scale_unprotected(&f);
        }
        self.base = base;
    }
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected != got {
        return Err(CoreError::ShapeMismatch { what, expected, got });
    }
    Ok(())
}

fn check_unit(what: &'static str, values: &[f32]) -> Result<()> {
    match values.iter().enumerate().find(|(_, v)| !(0.0..=1.0).contains(*v)) {
        Some((i, v)) => Err(CoreError::InvalidValue { what, index: i, value: v.to_string(), reason: "must be in [0, 1] (NaN is not)" }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table_with(axes: [f32; 7], t: f64) -> SalienceTable {
        let mut tab = SalienceTable::new(Params::default());
        tab.put(&[0], &axes, &[1.0], &[t]).unwrap();
        tab
    }

    #[test]
    fn get_returns_what_was_put() {
        let axes = [0.5, 0.4, 0.3, 0.2, 0.1, 0.6, 0.65];
        let got = table_with(axes, 1.0e9).get(0).unwrap();
        for a in 0..N_AXES {
            assert!((got.axes[a] - axes[a]).abs() < 1e-6);
        }
        assert!(!got.protected);
    }

    #[test]
    fn rebase_keeps_rows_as_written() {
        let mut tab = table_with([0.5; 7], 1.0e9);
        tab.put(&[1], &[0.5; 7], &[1.0], &[1.0e9 + 400.0 * DAY]).unwrap();
        let got = tab.get(0).unwrap();
        assert!((got.axes[3] - 0.5).abs() < 1e-5, "{got:?}");
    }

    #[test]
    fn bad_rows_change_nothing() {
        let mut tab = table_with([0.5; 7], 1.0e9);
        let before = tab.rows.clone();
        assert!(tab.put(&[0, 1], &[0.5; 14], &[1.0, f32::NAN], &[0.0, 0.0]).is_err());
        assert!(tab.put(&[0], &[1.5; 7], &[1.0], &[0.0]).is_err());
        assert!(tab.put(&[0], &[0.5; 6], &[1.0], &[0.0]).is_err());
        assert!(tab.put(&[0], &[0.5; 7], &[1.0], &[f64::INFINITY]).is_err());
        assert_eq!(tab.rows, before);
    }

    #[test]
    fn remove_is_idempotent() {
        let mut tab = table_with([0.5; 7], 0.0);
        tab.remove(&[0, 0, 9]);
        assert_eq!(tab.live(), 0);
        assert!(tab.get(0).is_none());
    }
}
