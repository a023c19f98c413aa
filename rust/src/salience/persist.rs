//! The salience table file.
//!
//! Body (inside the [`crate::codec`] container, magic `CUEMSAL\0`, version 1): the
//! seven weights (f64) and half-lives in days (f64), the latest reference time
//! (f64), the row count (u64), then the rows as eight little-endian f32 each (seven
//! axes and the state lane: confidence, negative if protected, NaN if not live) and
//! the reference times (f64).

use std::fs;
use std::path::Path;

use super::axes::{Params, N_AXES};
use super::blocks::BlockMax;
use super::table::{Row, SalienceTable};
use crate::codec::{self, Reader, Writer};
use crate::cue::write_atomic;
use crate::error::{CoreError, Result};

const MAGIC: &[u8; 8] = b"CUEMSAL\0";
const VERSION: u32 = 1;

impl SalienceTable {
    /// The file image of this table.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        for weight in self.params.weights {
            w.f64(weight as f64);
        }
        for h in self.params.half_lives_days {
            w.f64(h);
        }
        w.f64(self.max_t);
        w.u64(self.rows.len() as u64);
        for row in &self.rows {
            for lane in row.0 {
                w.raw(&lane.to_le_bytes());
            }
        }
        for t in &self.times {
            w.f64(*t);
        }
        codec::seal(MAGIC, VERSION, &w.into_inner())
    }

    /// Reads a table back; any damage is [`CoreError::Corrupt`], never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(codec::open(MAGIC, VERSION, bytes)?);
        let mut weights = [0f32; N_AXES];
        for w in &mut weights {
            *w = r.f64()? as f32;
        }
        let mut half_lives = [0f64; N_AXES];
        for h in &mut half_lives {
            *h = r.f64()?;
        }
        let params =
            Params::new(weights, half_lives).map_err(|e| CoreError::Corrupt(e.to_string()))?;
        let max_t = r.f64()?;
        let n = r.u64()? as usize;
        if n.saturating_mul(32 + 8) != r.remaining() {
            return Err(CoreError::Corrupt(format!(
                "{n} rows do not fit the {} bytes left",
                r.remaining()
            )));
        }
        let lanes = r.take(n * 32)?;
        let rows: Vec<Row> = lanes
            .chunks_exact(32)
            .map(|c| {
                Row(std::array::from_fn(|i| {
                    f32::from_le_bytes(c[i * 4..i * 4 + 4].try_into().expect("4 bytes"))
                }))
            })
            .collect();
        let times: Vec<f64> = r
            .take(n * 8)?
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        r.finish()?;
        let valid = |row: &Row| {
            if !row.is_live() {
                return row.0[..N_AXES].iter().all(|&v| v == 0.0);
            }
            row.confidence() <= 1.0 && row.0[..N_AXES].iter().all(|v| v.is_finite() && *v >= 0.0)
        };
        if !rows.iter().all(valid) || times.iter().any(|t| !t.is_finite()) {
            return Err(CoreError::Corrupt("salience rows out of range".into()));
        }
        let live = rows.iter().filter(|row| row.is_live()).count();
        let mut table = SalienceTable::new(params);
        let epochs = table.epochs;
        for (row, t) in rows.iter().zip(&times) {
            if row.is_live() && !row.is_protected() {
                table.epoch_lo = table.epoch_lo.min(epochs.of(*t));
                table.epoch_hi = table.epoch_hi.max(epochs.of(*t));
            }
        }
        table.blocks = BlockMax::build(&rows, |r| epochs.of(times[r]));
        table.max_t = max_t;
        table.rows = rows;
        table.times = times;
        table.live = live;
        Ok(table)
    }

    /// Writes the table to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        write_atomic(path, &self.to_bytes())
    }

    /// Reads a table written by [`SalienceTable::save`].
    pub fn load(path: &Path) -> Result<Self> {
        Self::from_bytes(&fs::read(path)?)
    }
}
