//! Epochs: the fixed grid of time windows that stored salience is decayed to.
//!
//! A row written at time `t` falls in epoch `e = floor(t / L)` and stores its axes
//! decayed to the end of that window, `B_e = (e + 1) L`:
//! `v_a = s_a * 2^(-(B_e - t) / h_a)`. Ranking at `now` then needs one coefficient
//! per epoch and axis, `c_{e,a} = 2^(-(now - B_e) / h_a)`, because
//! `v_a * c_{e,a} = s_a * 2^(-(now - t) / h_a)`: no `exp` per row.
//!
//! The window length `L` is 32 half-lives of the fastest axis (at most 64 days), so
//! a stored value is never smaller than `2^-32` of the value written: nothing falls
//! out of `f32`'s range however old the row or however far from it `now` is. A
//! row's stored value depends only on its own axes and time, never on what else the
//! table holds, so the same rows give the same bits in any write order.

use super::axes::{Params, DAY, N_AXES};

/// Longest epoch window.
const MAX_LEN: f64 = 64.0 * DAY;

/// Half-lives of the fastest axis per window.
const HALF_LIVES_PER_EPOCH: f64 = 32.0;

/// The epoch grid of one table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Epochs {
    /// Window length, seconds.
    pub len: f64,
}

impl Epochs {
    pub fn for_params(params: &Params) -> Self {
        let fastest = params
            .half_lives_s()
            .into_iter()
            .fold(f64::INFINITY, f64::min);
        Self {
            len: (fastest * HALF_LIVES_PER_EPOCH).min(MAX_LEN),
        }
    }

    /// The epoch holding time `t` (seconds).
    #[inline]
    pub fn of(&self, t: f64) -> i64 {
        (t / self.len).floor() as i64
    }

    /// The end of epoch `e`: what its rows are decayed to.
    #[inline]
    pub fn end(&self, e: i64) -> f64 {
        (e + 1) as f64 * self.len
    }

    /// `2^(-(end(e) - t) / h_a)`: the factor taking a value written at `t` to its epoch's end.
    pub fn to_end(self, params: &Params, t: f64) -> [f64; N_AXES] {
        params.factors(self.end(self.of(t)) - t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_windows_are_capped_at_64_days() {
        assert_eq!(Epochs::for_params(&Params::default()).len, 64.0 * DAY);
    }

    #[test]
    fn short_half_lives_shrink_the_window() {
        let mut p = Params::default();
        p.half_lives_days[1] = 0.25;
        assert_eq!(Epochs::for_params(&p).len, 8.0 * DAY);
    }

    #[test]
    fn a_time_lies_inside_its_epoch() {
        let e = Epochs::for_params(&Params::default());
        for t in [-1.0e9, -1.0, 0.0, 1.0, 1.7e9, 1.7e9 + 0.5] {
            let k = e.of(t);
            assert!(e.end(k - 1) <= t && t < e.end(k), "{t}");
        }
    }
}
