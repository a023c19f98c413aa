//! The blend: text ranks, decayed salience and freshness break the near-ties.
//!
//! ```text
//! score = text      * bm25 / max_bm25                  (max over the pool, in (0, 1])
//!       + salience  * composite(now)                   (the salience table's, in [0, 1])
//!       + freshness * 2^(-max(now - t, 0) / half_life)  (t: the row's reference time)
//! ```
//!
//! The pool is the `pool` best rows by BM25 (at least `k`), so the blend re-ranks a
//! bounded list and its cost does not grow with the matches. Freshness is a plain
//! recency term from the reference time until a memory carries a freshness value of
//! its own.

use super::index::TextIndex;
use crate::error::{CoreError, Result};
use crate::salience::SalienceTable;

/// Seconds in a day.
const DAY: f64 = 86_400.0;

/// Weights of the blend; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blend {
    pub text: f32,
    pub salience: f32,
    pub freshness: f32,
    pub freshness_half_life_days: f64,
    /// Rows taken by BM25 before the blend re-ranks them.
    pub pool: usize,
}

impl Default for Blend {
    fn default() -> Self {
        Blend {
            text: 1.0,
            salience: 0.3,
            freshness: 0.0,
            freshness_half_life_days: 30.0,
            pool: 100,
        }
    }
}

impl Blend {
    /// Checks every weight is finite and >= 0, the half-life > 0 and the pool >= 1.
    pub fn validate(&self) -> Result<()> {
        for (name, w) in [
            ("text", self.text),
            ("salience", self.salience),
            ("freshness", self.freshness),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                return Err(CoreError::InvalidArgument {
                    name: "blend weight",
                    reason: format!("{name} must be finite and >= 0, got {w}"),
                });
            }
        }
        if !(self.freshness_half_life_days.is_finite() && self.freshness_half_life_days > 0.0) {
            return Err(CoreError::InvalidArgument {
                name: "freshness_half_life_days",
                reason: format!(
                    "must be finite and > 0, got {}",
                    self.freshness_half_life_days
                ),
            });
        }
        if self.pool == 0 {
            return Err(CoreError::InvalidArgument {
                name: "pool",
                reason: "must be >= 1".into(),
            });
        }
        Ok(())
    }
}

/// One blended hit and its parts (the weighted parts sum to `score`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextHit {
    pub row: u32,
    pub score: f32,
    pub bm25: f32,
    /// `text * bm25 / max_bm25`.
    pub text: f32,
    /// `salience * composite(now)`.
    pub salience: f32,
    /// `freshness * recency`.
    pub freshness: f32,
}

/// Blends BM25 hits (row, bm25) with `table` at `now`; the best `k`, ties to the later row
/// (the newer memory). The text part is relative to `scale`, or to the best BM25 of `hits`.
pub fn blend(
    hits: &[(u32, f32)],
    table: &SalienceTable,
    blend: &Blend,
    now: f64,
    k: usize,
    scale: Option<f32>,
) -> Result<Vec<TextHit>> {
    blend.validate()?;
    if !now.is_finite() {
        return Err(CoreError::InvalidArgument {
            name: "now",
            reason: format!("must be finite, got {now}"),
        });
    }
    if let Some(s) = scale {
        if !(s.is_finite() && s > 0.0) {
            return Err(CoreError::InvalidArgument {
                name: "scale",
                reason: format!("must be finite and > 0, got {s}"),
            });
        }
    }
    let rows: Vec<u32> = hits.iter().map(|h| h.0).collect();
    let composite = table.composite(&rows, now)?;
    let max = scale.unwrap_or_else(|| hits.iter().map(|h| h.1).fold(0f32, f32::max));
    let h = blend.freshness_half_life_days * DAY;
    let mut out: Vec<TextHit> = hits
        .iter()
        .zip(composite)
        .map(|(&(row, bm25), c)| {
            let text = if max > 0.0 {
                blend.text * bm25 / max
            } else {
                0.0
            };
            let salience = blend.salience * c;
            let freshness = match table.get(row) {
                Some(state) if blend.freshness > 0.0 => {
                    blend.freshness * (-(now - state.t).max(0.0) / h).exp2() as f32
                }
                _ => 0.0,
            };
            TextHit {
                row,
                score: text + salience + freshness,
                bm25,
                text,
                salience,
                freshness,
            }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.row.cmp(&a.row)));
    out.truncate(k);
    Ok(out)
}

/// The BM25 pool of the query's text among `candidates` (all rows when `None`), blended.
pub fn rank(
    index: &TextIndex,
    table: &SalienceTable,
    candidates: Option<&roaring::RoaringBitmap>,
    ask: &super::TextQuery<'_>,
) -> Result<Vec<TextHit>> {
    ask.weights.validate()?;
    let pool = index.search(
        ask.text,
        candidates,
        ask.weights.pool.max(ask.k),
        super::Plan::Auto,
    )?;
    blend(&pool, table, &ask.weights, ask.now, ask.k, ask.scale)
}
