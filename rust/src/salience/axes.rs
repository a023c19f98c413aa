//! The seven axes, their default weights and half-lives, and the composite's pieces.

use crate::error::{CoreError, Result};

/// Number of salience axes.
pub const N_AXES: usize = 7;

/// Axis names, in column order.
///
/// | axis | weight | half-life (days) | what it measures |
/// |---|---|---|---|
/// | importance | 0.25 | 180 | how much the memory matters to the agent's goals |
/// | urgency | 0.15 | 7 | time pressure; the fastest to fade |
/// | risk | 0.20 | 90 | cost of forgetting it (failure, harm, money) |
/// | novelty | 0.10 | 14 | surprise against what was known |
/// | affect | 0.10 | 30 | emotional charge in the interaction |
/// | actionability | 0.10 | 21 | whether it asks for or enables an action |
/// | reinforcement | 0.10 | 60 | how often it was recalled, confirmed or repeated |
pub const AXES: [&str; N_AXES] = [
    "importance",
    "urgency",
    "risk",
    "novelty",
    "affect",
    "actionability",
    "reinforcement",
];

pub const IMPORTANCE: usize = 0;
pub const URGENCY: usize = 1;
pub const RISK: usize = 2;

/// A memory with importance or risk at or above this is protected from decay.
pub const PROTECT_AT: f32 = 0.7;

/// Seconds in a day; half-lives are given in days, times in seconds.
pub const DAY: f64 = 86_400.0;

const DEFAULT_WEIGHTS: [f32; N_AXES] = [0.25, 0.15, 0.20, 0.10, 0.10, 0.10, 0.10];
const DEFAULT_HALF_LIVES: [f64; N_AXES] = [180.0, 7.0, 90.0, 14.0, 30.0, 21.0, 60.0];

/// Weights and half-lives of the axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub weights: [f32; N_AXES],
    pub half_lives_days: [f64; N_AXES],
}

/// The shortest half-life an axis may have: one minute.
pub const MIN_HALF_LIFE_DAYS: f64 = 1.0 / 1440.0;
/// The longest half-life an axis may have (about 2.7 million years).
pub const MAX_HALF_LIFE_DAYS: f64 = 1e9;

impl Default for Params {
    fn default() -> Self {
        Self {
            weights: DEFAULT_WEIGHTS,
            half_lives_days: DEFAULT_HALF_LIVES,
        }
    }
}

impl Params {
    /// Checked constructor: weights finite and >= 0, half-lives between
    /// [`MIN_HALF_LIFE_DAYS`] and [`MAX_HALF_LIFE_DAYS`] (outside them the epoch
    /// arithmetic degenerates: a window of 32 half-lives shorter than a second puts
    /// `now` in an epoch past `i64`).
    pub fn new(weights: [f32; N_AXES], half_lives_days: [f64; N_AXES]) -> Result<Self> {
        for (a, w) in weights.iter().enumerate() {
            if !w.is_finite() || *w < 0.0 {
                return Err(CoreError::InvalidValue {
                    what: "weights",
                    index: a,
                    value: w.to_string(),
                    reason: "a weight must be finite and >= 0",
                });
            }
        }
        for (a, h) in half_lives_days.iter().enumerate() {
            if !(MIN_HALF_LIFE_DAYS..=MAX_HALF_LIFE_DAYS).contains(h) {
                return Err(CoreError::InvalidValue {
                    what: "half_lives",
                    index: a,
                    value: format!("{h:?}"),
                    reason: "a half-life must be between one minute (1/1440 days) and 1e9 days",
                });
            }
        }
        Ok(Self {
            weights,
            half_lives_days,
        })
    }

    /// Half-lives in seconds.
    pub fn half_lives_s(&self) -> [f64; N_AXES] {
        self.half_lives_days.map(|d| d * DAY)
    }

    /// `2^(-dt / h_a)` per axis, for an age `dt` in seconds.
    pub fn factors(&self, dt: f64) -> [f64; N_AXES] {
        self.half_lives_s().map(|h| (-dt / h).exp2())
    }
}

/// The confidence gate: `0.6 + 0.4 * confidence`.
#[inline]
pub fn gate(confidence: f32) -> f32 {
    0.6 + 0.4 * confidence
}

/// `risk >= 0.7 or importance >= 0.7`.
#[inline]
pub fn is_protected(axes: &[f32]) -> bool {
    axes[RISK] >= PROTECT_AT || axes[IMPORTANCE] >= PROTECT_AT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_weights_sum_to_one() {
        let sum: f32 = Params::default().weights.iter().sum();
        assert!((sum - 1.0).abs() < 1e-6);
    }

    #[test]
    fn degenerate_half_lives_are_refused() {
        for bad in [
            0.0,
            1e-300,
            MIN_HALF_LIFE_DAYS / 2.0,
            2e9,
            f64::NAN,
            f64::INFINITY,
            -1.0,
        ] {
            let mut h = DEFAULT_HALF_LIVES;
            h[URGENCY] = bad;
            assert!(Params::new(DEFAULT_WEIGHTS, h).is_err(), "{bad} accepted");
        }
        let mut h = DEFAULT_HALF_LIVES;
        h[URGENCY] = MIN_HALF_LIFE_DAYS;
        assert!(Params::new(DEFAULT_WEIGHTS, h).is_ok());
    }

    #[test]
    fn seed_half_lives() {
        let p = Params::default();
        assert_eq!(p.half_lives_days[URGENCY], 7.0);
        assert_eq!(p.half_lives_days[IMPORTANCE], 180.0);
    }

    #[test]
    fn one_half_life_halves() {
        let f = Params::default().factors(7.0 * DAY);
        assert!((f[URGENCY] - 0.5).abs() < 1e-12);
    }

    #[test]
    fn bad_params_rejected() {
        assert!(Params::new([f32::NAN; 7], DEFAULT_HALF_LIVES).is_err());
        assert!(Params::new(DEFAULT_WEIGHTS, [0.0; 7]).is_err());
    }

    #[test]
    fn protection_threshold_is_inclusive() {
        assert!(is_protected(&[0.7, 0., 0., 0., 0., 0., 0.]));
        assert!(is_protected(&[0., 0., 0.7, 0., 0., 0., 0.]));
        assert!(!is_protected(&[0.69, 1., 0.69, 1., 1., 1., 1.]));
    }
}
