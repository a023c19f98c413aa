//! Storage of the salience table and its writes.

use super::axes::{is_protected, Params, N_AXES};
use super::blocks::BlockMax;
use super::epochs::Epochs;
use crate::error::{CoreError, Result};

/// Stored values and per-query coefficients below this are flushed to zero, so that
/// no product in the kernels is a subnormal float (which costs x86 a hundred cycles).
/// A contribution this small cannot matter to a ranking of values in [0, 1].
pub(super) const TINY: f32 = 1e-18;

/// Flushes `x` to zero below [`TINY`].
#[inline]
pub(super) fn flush(x: f32) -> f32 {
    if x < TINY {
        0.0
    } else {
        x
    }
}

/// Reference times must lie in the years 1 to 9999 (seconds since the Unix epoch).
const MIN_T: f64 = -62_135_596_800.0;
const MAX_T: f64 = 253_402_300_799.0;

/// Rows at or above this count are processed on all cores.
pub(super) const PARALLEL_ROWS: usize = 1 << 16;

/// One row: seven axes decayed to the end of the row's epoch, then a state lane.
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
        if protected {
            -confidence.abs()
        } else {
            confidence.abs()
        }
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
#[derive(Debug, Clone)]
pub struct SalienceTable {
    pub(super) params: Params,
    pub(super) epochs: Epochs,
    /// No live row has a reference time after this.
    pub(super) max_t: f64,
    /// Every unprotected row written lies in an epoch of this range (empty: lo > hi).
    pub(super) epoch_lo: i64,
    pub(super) epoch_hi: i64,
    pub(super) rows: Vec<Row>,
    pub(super) times: Vec<f64>,
    pub(super) blocks: BlockMax,
    pub(super) live: usize,
}

impl SalienceTable {
    pub fn new(params: Params) -> Self {
        Self {
            params,
            epochs: Epochs::for_params(&params),
            max_t: f64::NEG_INFINITY,
            epoch_lo: i64::MAX,
            epoch_hi: i64::MIN,
            rows: Vec::new(),
            times: Vec::new(),
            blocks: BlockMax::default(),
            live: 0,
        }
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
        self.rows.capacity() * std::mem::size_of::<Row>()
            + self.times.capacity() * 8
            + self.blocks.nbytes()
    }

    pub(super) fn is_live(&self, row: u32) -> bool {
        self.rows.get(row as usize).is_some_and(Row::is_live)
    }

    /// Writes (or overwrites) `rows`; `axes` is row-major `rows.len() x 7`.
    ///
    /// Everything is validated first: on error the table is unchanged.
    pub fn put(
        &mut self,
        rows: &[u32],
        axes: &[f32],
        confidence: &[f32],
        times: &[f64],
    ) -> Result<()> {
        let n = rows.len();
        check_len("axes", n * N_AXES, axes.len())?;
        check_len("confidence", n, confidence.len())?;
        check_len("t", n, times.len())?;
        check_unit("axes", axes)?;
        check_unit("confidence", confidence)?;
        if let Some((i, t)) = times
            .iter()
            .enumerate()
            .find(|(_, t)| !(MIN_T..=MAX_T).contains(*t))
        {
            return Err(CoreError::InvalidValue {
                what: "t",
                index: i,
                value: t.to_string(),
                reason: "a time must lie in the years 1 to 9999",
            });
        }
        let Some(newest) = times.iter().copied().reduce(f64::max) else {
            return Ok(());
        };
        let top = rows.iter().copied().max().expect("non-empty") as usize + 1;
        if top > self.rows.len() {
            // The table is dense: a row far past the end asks for room for every row before
            // it, which a failed allocation must refuse (a typed error), not abort the process.
            // (Reserved as a push reserves: growing by doubling, so a row at a time is not a
            // copy of the table each time.)
            let more = top - self.rows.len();
            if self.rows.try_reserve(more).is_err()
                || self.times.try_reserve(more).is_err()
                || !self.blocks.reserve(top)
            {
                let at = rows
                    .iter()
                    .position(|&r| r as usize + 1 == top)
                    .unwrap_or(0);
                return Err(CoreError::InvalidValue {
                    what: "rows",
                    index: at,
                    value: (top - 1).to_string(),
                    reason: "the table cannot grow to hold this row: there is not enough memory for every row before it",
                });
            }
            self.rows.resize(top, Row::default());
            self.times.resize(top, 0.0);
            self.blocks.grow(top);
        }
        let first_block =
            rows.iter().copied().min().expect("non-empty") as usize >> super::blocks::BLOCK_SHIFT;
        for (i, &r) in rows.iter().enumerate() {
            let r = r as usize;
            let s = &axes[i * N_AXES..(i + 1) * N_AXES];
            let protected = is_protected(s);
            let epoch = self.epochs.of(times[i]);
            let to_end = self.epochs.to_end(&self.params, times[i]);
            let mut row = Row::default();
            for a in 0..N_AXES {
                row.0[a] = if protected {
                    s[a]
                } else {
                    flush((s[a] as f64 * to_end[a]) as f32)
                };
            }
            row.0[7] = Row::state(confidence[i], protected);
            let was_live = self.rows[r].is_live();
            if !was_live {
                self.live += 1;
            }
            self.rows[r] = row;
            self.times[r] = times[i];
            self.blocks.note(r, &row, epoch, was_live);
            if !protected {
                self.epoch_lo = self.epoch_lo.min(epoch);
                self.epoch_hi = self.epoch_hi.max(epoch);
            }
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

    /// Forgets `rows` as [`remove`](Self::remove) does and clears their reference times,
    /// so that nothing of them is left in the table (or in its file): an erased row is
    /// the same as one written empty and removed.
    pub fn erase(&mut self, rows: &[u32]) {
        self.remove(rows);
        for &r in rows {
            if let Some(t) = self.times.get_mut(r as usize) {
                *t = 0.0;
            }
        }
        self.max_t = self.times.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    }

    /// The row as written (axes undecayed), or `None` if it is not live.
    pub fn get(&self, row: u32) -> Option<RowState> {
        if !self.is_live(row) {
            return None;
        }
        let r = row as usize;
        let protected = self.rows[r].is_protected();
        let back = self.epochs.to_end(&self.params, self.times[r]);
        let mut axes = [0f32; N_AXES];
        for a in 0..N_AXES {
            axes[a] = if protected {
                self.rows[r].0[a]
            } else {
                (self.rows[r].0[a] as f64 / back[a]) as f32
            };
        }
        Some(RowState {
            axes,
            confidence: self.rows[r].confidence(),
            t: self.times[r],
            protected,
        })
    }

    /// The epoch of unprotected row `r`.
    #[inline]
    pub(super) fn epoch_of_row(&self, r: usize) -> i64 {
        self.blocks
            .uniform_epoch(r)
            .unwrap_or_else(|| self.epochs.of(self.times[r]))
    }
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected != got {
        return Err(CoreError::ShapeMismatch {
            what,
            expected,
            got,
        });
    }
    Ok(())
}

fn check_unit(what: &'static str, values: &[f32]) -> Result<()> {
    match values
        .iter()
        .enumerate()
        .find(|(_, v)| !(0.0..=1.0).contains(*v))
    {
        Some((i, v)) => Err(CoreError::InvalidValue {
            what,
            index: i,
            value: v.to_string(),
            reason: "must be in [0, 1] (NaN is not)",
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::axes::{DAY, IMPORTANCE};
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
        for (g, want) in got.axes.iter().zip(axes) {
            assert!((g - want).abs() < 1e-6);
        }
        assert!(!got.protected);
    }

    #[test]
    fn a_row_written_again_is_protected_as_its_last_write_says() {
        let mut protected = [0.1; 7];
        protected[IMPORTANCE] = 0.9;
        let mut tab = table_with(protected, 1.0e9);
        tab.put(&[1], &protected, &[1.0], &[1.0e9]).unwrap();
        assert_eq!(tab.blocks.protected().iter().collect::<Vec<_>>(), [0, 1]);
        tab.put(&[0], &[0.1; 7], &[1.0], &[1.0e9]).unwrap(); // live, no longer protected
        tab.remove(&[1]); // removed: not protected, and written again as it was
        assert_eq!(tab.blocks.protected().iter().count(), 0);
        tab.put(&[1], &protected, &[1.0], &[1.0e9]).unwrap();
        assert_eq!(tab.blocks.protected().iter().collect::<Vec<_>>(), [1]);
        assert!(!tab.get(0).unwrap().protected && tab.get(1).unwrap().protected);
    }

    #[test]
    fn rows_far_apart_keep_what_was_written() {
        let mut tab = table_with([0.5; 7], 1.0e9);
        tab.put(&[1], &[0.5; 7], &[1.0], &[1.0e9 + 4000.0 * DAY])
            .unwrap();
        let got = tab.get(0).unwrap();
        assert!((got.axes[1] - 0.5).abs() < 1e-6, "{got:?}");
    }

    #[test]
    fn stored_bits_do_not_depend_on_write_order() {
        let axes = [0.3, 0.6, 0.2, 0.5, 0.1, 0.4, 0.25];
        let mut a = SalienceTable::new(Params::default());
        a.put(&[0], &axes, &[0.9], &[1.0e9]).unwrap();
        a.put(&[1], &axes, &[0.9], &[1.0e9 + 900.0 * DAY]).unwrap();
        let mut b = SalienceTable::new(Params::default());
        b.put(
            &[1, 0],
            &[axes, axes].concat(),
            &[0.9, 0.9],
            &[1.0e9 + 900.0 * DAY, 1.0e9],
        )
        .unwrap();
        assert_eq!(a.rows, b.rows);
        assert_eq!(a.to_bytes(), b.to_bytes());
    }

    #[test]
    fn bad_rows_change_nothing() {
        let mut tab = table_with([0.5; 7], 1.0e9);
        let before = tab.rows.clone();
        assert!(tab
            .put(&[0, 1], &[0.5; 14], &[1.0, f32::NAN], &[0.0, 0.0])
            .is_err());
        assert!(tab.put(&[0], &[1.5; 7], &[1.0], &[0.0]).is_err());
        assert!(tab.put(&[0], &[0.5; 6], &[1.0], &[0.0]).is_err());
        assert!(tab.put(&[0], &[0.5; 7], &[1.0], &[f64::INFINITY]).is_err());
        assert_eq!(tab.rows, before);
    }

    #[test]
    fn erase_leaves_what_an_empty_write_leaves() {
        let mut a = table_with([0.5; 7], 1_000.0);
        a.erase(&[0]);
        let mut b = table_with([0.5; 7], 1_000.0);
        b.remove(&[0]);
        assert!(a.get(0).is_none());
        assert_eq!(a.times[0], 0.0);
        assert_eq!(a.max_t, 0.0);
        assert_ne!(a.to_bytes(), b.to_bytes());
        let mut empty = table_with([0.0; 7], 0.0);
        empty.remove(&[0]);
        assert_eq!(a.to_bytes(), empty.to_bytes());
    }

    #[test]
    fn remove_is_idempotent() {
        let mut tab = table_with([0.5; 7], 0.0);
        tab.remove(&[0, 0, 9]);
        assert_eq!(tab.live(), 0);
        assert!(tab.get(0).is_none());
    }
}
