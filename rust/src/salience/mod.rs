//! The salience table: seven decaying axes per memory, ranked at a given `now`.
//!
//! Each memory has seven axes in [0, 1] (see [`AXES`]), a confidence in [0, 1] and a
//! reference time `t` from which its axes decay, each axis with its own half-life:
//!
//! ```text
//! decayed_a(now) = s_a * 2^(-(max(now, t) - t) / h_a)
//! composite(now) = sum_a(w_a * decayed_a(now)) * (0.6 + 0.4 * confidence)
//! ```
//!
//! Protected memories (`risk >= 0.7` or `importance >= 0.7` when written) never decay.
//!
//! Storage: because `2^(-(now - t)/h) = 2^(-(now - B)/h) * 2^(-(B - t)/h)`, every row
//! stores its axes already decayed to the end `B` of its epoch, a fixed window of
//! time (see `epochs`). Ranking at `now` then multiplies by seven coefficients per
//! epoch instead of calling `exp` per row and axis. Rows are packed as eight `f32` lanes
//! (seven axes and confidence, 32 bytes, half a cache line), so gathering a sparse
//! candidate set touches one line per row and a full pass streams. Top-k over a
//! bitmap of candidates skips whole blocks of rows whose upper bound cannot beat the
//! current k-th score (see `blocks`).

mod axes;
mod blocks;
mod epochs;
mod pass;
mod persist;
mod score;
mod table;

pub use axes::{
    gate, is_protected, Params, AXES, DAY, IMPORTANCE, MAX_HALF_LIFE_DAYS, MIN_HALF_LIFE_DAYS,
    N_AXES, PROTECT_AT, RISK, URGENCY,
};
pub use blocks::BLOCK_ROWS;
pub use pass::DecayPass;
pub use score::TopK;
pub use table::{RowState, SalienceTable};
