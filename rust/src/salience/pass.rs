//! The full decay pass: every row decayed to `now`, and which fall below a floor.

use rayon::prelude::*;

use super::axes::gate;
use super::axes::N_AXES;
use super::blocks::BLOCK_ROWS;
use super::score::Clock;
use super::table::{Row, SalienceTable, PARALLEL_ROWS};
use crate::error::{CoreError, Result};

/// The weekly distillation's kernel output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecayPass {
    /// Live, unprotected rows whose composite at `now` is below the floor, ascending.
    pub below: Vec<u32>,
}

const CHUNK: usize = 4096;

/// Decays `rows` (starting at row `start`) into `out` and collects those below `floor`.
///
/// The fast path, for when no row was written after `now`: one multiply per axis
/// by the coefficients of the row's epoch (looked up once per block of rows that
/// share one), no branch on the row's state beyond picking the coefficients.
fn run(
    table: &SalienceTable,
    clock: &Clock,
    rows: &[Row],
    out: &mut [f32],
    start: usize,
    floor: f32,
    below: &mut Vec<u32>,
) {
    let mut keep = [1f32; 8];
    keep[7] = 0.0;
    let weights = clock.weights8();
    for (b, (block, dst)) in rows
        .chunks(BLOCK_ROWS)
        .zip(out.chunks_mut(BLOCK_ROWS * N_AXES))
        .enumerate()
    {
        let first = start + b * BLOCK_ROWS;
        let shared = table
            .blocks
            .uniform_epoch(first)
            .map(|e| clock.coefficients(e).1);
        for (i, (row, dst)) in block.iter().zip(dst.chunks_exact_mut(N_AXES)).enumerate() {
            let state = row.0[7];
            let protected = state.is_sign_negative();
            let f = if protected {
                keep
            } else if !row.is_live() {
                [0.0; 8]
            } else {
                shared.unwrap_or_else(|| clock.coefficients(table.epoch_of_row(first + i)).1)
            };
            let mut d = [0f32; 8];
            for a in 0..8 {
                d[a] = row.0[a] * f[a];
            }
            dst.copy_from_slice(&d[..N_AXES]);
            let mut sum = 0f32;
            for a in 0..N_AXES {
                sum += weights[a] * d[a];
            }
            // NaN marks a removed row: never reported.
            if !protected && !state.is_nan() && sum * gate(state) < floor {
                below.push((first + i) as u32);
            }
        }
    }
}

impl SalienceTable {
    /// Decays every row to `now` into `out` (row-major `len() x 7`).
    ///
    /// Protected rows keep their axes; removed rows get zeros. Returns the live,
    /// unprotected rows whose composite falls below `floor`.
    pub fn decay_pass_into(&self, now: f64, floor: f32, out: &mut [f32]) -> Result<DecayPass> {
        if !floor.is_finite() {
            return Err(CoreError::InvalidArgument {
                name: "floor",
                reason: format!("{floor} is not finite"),
            });
        }
        if out.len() != self.len() * N_AXES {
            return Err(CoreError::ShapeMismatch {
                what: "out",
                expected: self.len() * N_AXES,
                got: out.len(),
            });
        }
        let clock = Clock::new(self, now)?;
        let chunk = |(c, out): (usize, &mut [f32])| -> Vec<u32> {
            let start = c * CHUNK;
            let rows = &self.rows[start..start + out.len() / N_AXES];
            let mut below = Vec::new();
            if clock.all_past() {
                run(self, &clock, rows, out, start, floor, &mut below);
                return below;
            }
            for (i, (row, dst)) in rows.iter().zip(out.chunks_exact_mut(N_AXES)).enumerate() {
                if !row.is_live() {
                    dst.fill(0.0);
                    continue;
                }
                let axes = clock.axes(self, start + i);
                dst.copy_from_slice(&axes);
                if !row.is_protected() && clock.weighted(&axes, row.confidence()) < floor {
                    below.push((start + i) as u32);
                }
            }
            below
        };
        let parts: Vec<Vec<u32>> = if self.len() >= PARALLEL_ROWS {
            crate::pool::install(|| {
                out.par_chunks_mut(CHUNK * N_AXES)
                    .enumerate()
                    .map(chunk)
                    .collect()
            })
        } else {
            out.chunks_mut(CHUNK * N_AXES)
                .enumerate()
                .map(chunk)
                .collect()
        };
        Ok(DecayPass {
            below: parts.concat(),
        })
    }

    /// [`SalienceTable::decay_pass_into`] with a freshly allocated output.
    pub fn decay_pass(&self, now: f64, floor: f32) -> Result<(Vec<f32>, DecayPass)> {
        let mut out = vec![0f32; self.len() * N_AXES];
        let pass = self.decay_pass_into(now, floor, &mut out)?;
        Ok((out, pass))
    }
}

#[cfg(test)]
mod tests {
    use super::super::axes::{Params, DAY};
    use super::*;

    #[test]
    fn pass_agrees_with_composite_and_exempts_protected() {
        let mut tab = SalienceTable::new(Params::default());
        let rows: Vec<u32> = (0..200).collect();
        let axes: Vec<f32> = (0..200 * 7)
            .map(|i| ((i * 37) % 100) as f32 / 100.0)
            .collect();
        let conf: Vec<f32> = (0..200).map(|i| (i % 10) as f32 / 9.0).collect();
        let times: Vec<f64> = (0..200).map(|i| i as f64 * DAY).collect();
        tab.put(&rows, &axes, &conf, &times).unwrap();
        tab.remove(&[3]);
        let now = 300.0 * DAY;
        let (out, pass) = tab.decay_pass(now, 0.35).unwrap();
        let comp = tab.composite(&rows, now).unwrap();
        for r in 0..200usize {
            let state = tab.get(r as u32);
            let expect_below = state.is_some_and(|s| !s.protected) && comp[r] < 0.35;
            assert_eq!(pass.below.contains(&(r as u32)), expect_below, "row {r}");
            if let Some(s) = state.filter(|s| s.protected) {
                for a in 0..7 {
                    assert!((out[r * 7 + a] - s.axes[a]).abs() < 1e-6);
                }
            }
        }
        assert!(out[3 * 7..4 * 7].iter().all(|&x| x == 0.0));
    }

    #[test]
    fn wrong_output_length_is_rejected() {
        let tab = SalienceTable::new(Params::default());
        assert!(tab.decay_pass_into(0.0, 0.35, &mut [0.0; 3]).is_err());
    }
}
