//! Threads: the memories of one conversation, session or ticket, in row order.
//!
//! [`Threads`] keeps, per row, its thread and its live neighbours before and after
//! in that thread: a doubly linked list over rows, appended to as rows are written
//! and unlinked as rows are removed, so a neighbour is always the nearest live
//! memory of the thread. [`Threads::spread`] is what text recall asks of it: a
//! pool of scored rows, each sharing its score with the neighbours within a window
//! (halved at each further place) and gaining a share of its thread's best score.

use std::collections::HashMap;

use crate::cue::CueIndex;
use crate::error::{CoreError, Result};

/// Marks "no thread" and "no neighbour".
const NONE: u32 = u32::MAX;

/// The widest window [`Threads::spread`] takes.
pub const MAX_WINDOW: usize = 64;

/// Thread and live neighbours of each row; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct Threads {
    codes: HashMap<Box<str>, u32>,
    thread: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Thread code -> its last live row.
    last: HashMap<u32, u32>,
}

/// How a pool's scores spread along threads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Share of a row's score its adjacent rows gain; halved at each further place.
    pub neighbour_share: f32,
    /// How many places before and after a row its score reaches.
    pub window: usize,
    /// Share of its thread's best pool score every row gains.
    pub thread_share: f32,
}

impl Threads {
    pub fn new() -> Self {
        Self::default()
    }

    /// The threads of `dimension`'s posting lists in `index` (rows in order).
    pub fn from_cues(index: &CueIndex, dimension: &str) -> Result<Self> {
        let d = index
            .dimensions()
            .find(|d| d.name() == dimension)
            .ok_or_else(|| CoreError::UnknownDimension(dimension.into()))?;
        let mut out = Self::new();
        for (value, rows) in d.iter() {
            if rows.is_empty() {
                continue;
            }
            let members: Vec<u32> = rows.iter().collect();
            let names = vec![value; members.len()];
            out.append(&members, &names)?;
        }
        Ok(out)
    }

    /// Whether any live row belongs to a thread.
    pub fn is_empty(&self) -> bool {
        self.last.is_empty()
    }

    /// Links `rows[i]` as the newest row of thread `names[i]`. Rows of one thread
    /// must come in increasing order, each later than that thread's last row.
    pub fn append<S: AsRef<str>>(&mut self, rows: &[u32], names: &[S]) -> Result<()> {
        if rows.len() != names.len() {
            return Err(CoreError::InvalidArgument {
                name: "names",
                reason: format!("{} names for {} rows", names.len(), rows.len()),
            });
        }
        // Check the whole batch first, so a bad one changes nothing.
        let mut last: HashMap<&str, u32> = HashMap::new();
        let mut taken = std::collections::HashSet::new();
        for (i, (&row, name)) in rows.iter().zip(names).enumerate() {
            let name = name.as_ref();
            let bad = |reason| {
                Err(CoreError::InvalidValue {
                    what: "rows",
                    index: i,
                    value: row.to_string(),
                    reason,
                })
            };
            if row == NONE {
                return bad("row out of range");
            }
            let before = last
                .get(name)
                .copied()
                .or_else(|| self.codes.get(name).and_then(|c| self.last.get(c).copied()));
            if before.is_some_and(|b| b >= row) {
                return bad("not after its thread's last row");
            }
            if self.thread(row).is_some() || !taken.insert(row) {
                return bad("row already in a thread");
            }
            last.insert(name, row);
        }
        for (&row, name) in rows.iter().zip(names) {
            let code = self.code(name.as_ref());
            let last = self.last.get(&code).copied().unwrap_or(NONE);
            self.grow(row as usize + 1);
            self.thread[row as usize] = code;
            self.prev[row as usize] = last;
            if last != NONE {
                self.next[last as usize] = row;
            }
            self.last.insert(code, row);
        }
        Ok(())
    }

    /// Unlinks `rows`: their neighbours become each other's. Rows in no thread are ignored.
    pub fn remove(&mut self, rows: &[u32]) {
        for &row in rows {
            let r = row as usize;
            let Some(&code) = self.thread.get(r) else {
                continue;
            };
            if code == NONE {
                continue;
            }
            let (p, n) = (self.prev[r], self.next[r]);
            if p != NONE {
                self.next[p as usize] = n;
            }
            if n != NONE {
                self.prev[n as usize] = p;
            } else if p != NONE {
                self.last.insert(code, p);
            } else {
                self.last.remove(&code);
            }
            self.thread[r] = NONE;
            self.prev[r] = NONE;
            self.next[r] = NONE;
        }
    }

    /// The thread code of `row`, if it is in one.
    pub fn thread(&self, row: u32) -> Option<u32> {
        self.thread
            .get(row as usize)
            .copied()
            .filter(|&c| c != NONE)
    }

    /// The live rows just before and after `row` in its thread.
    pub fn neighbours(&self, row: u32) -> (Option<u32>, Option<u32>) {
        let r = row as usize;
        if r >= self.thread.len() {
            return (None, None);
        }
        let some = |v: u32| (v != NONE).then_some(v);
        (some(self.prev[r]), some(self.next[r]))
    }

    /// The pool's rows with their spread scores, the pool first (in its order), then
    /// the rows its scores reached, in the order first reached.
    pub fn spread(&self, pool: &[(u32, f32)], how: &Spread) -> Result<Vec<(u32, f32)>> {
        for (name, w) in [
            ("neighbour_share", how.neighbour_share),
            ("thread_share", how.thread_share),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                return Err(CoreError::InvalidArgument {
                    name: "spread",
                    reason: format!("{name} must be finite and >= 0, got {w}"),
                });
            }
        }
        if how.window > MAX_WINDOW {
            return Err(CoreError::InvalidArgument {
                name: "window",
                reason: format!("must be at most {MAX_WINDOW}, got {}", how.window),
            });
        }
        let room = pool.len().saturating_mul(1 + 2 * how.window).min(1 << 20);
        let mut slot: HashMap<u32, usize> = HashMap::with_capacity(room);
        let mut out: Vec<(u32, f32)> = Vec::with_capacity(room);
        for &(row, score) in pool {
            if slot.insert(row, out.len()).is_some() {
                return Err(CoreError::InvalidValue {
                    what: "pool",
                    index: out.len(),
                    value: row.to_string(),
                    reason: "row listed twice",
                });
            }
            out.push((row, score));
        }
        if how.neighbour_share > 0.0 {
            for &(row, score) in pool {
                for side in [&self.prev, &self.next] {
                    let (mut at, mut share) = (row, how.neighbour_share);
                    for _ in 0..how.window {
                        at = match side.get(at as usize) {
                            Some(&n) if n != NONE => n,
                            _ => break,
                        };
                        let i = *slot.entry(at).or_insert_with(|| {
                            out.push((at, 0.0));
                            out.len() - 1
                        });
                        out[i].1 += share * score;
                        share /= 2.0;
                    }
                }
            }
        }
        if how.thread_share > 0.0 {
            let mut best: HashMap<u32, f32> = HashMap::new();
            for &(row, score) in pool {
                if let Some(t) = self.thread(row) {
                    let b = best.entry(t).or_insert(f32::NEG_INFINITY);
                    *b = b.max(score);
                }
            }
            for (row, score) in out.iter_mut() {
                if let Some(b) = self.thread(*row).and_then(|t| best.get(&t)) {
                    *score += how.thread_share * b;
                }
            }
        }
        Ok(out)
    }

    fn code(&mut self, name: &str) -> u32 {
        if let Some(&c) = self.codes.get(name) {
            return c;
        }
        let c = self.codes.len() as u32;
        self.codes.insert(name.into(), c);
        c
    }

    fn grow(&mut self, rows: usize) {
        if rows > self.thread.len() {
            self.thread.resize(rows, NONE);
            self.prev.resize(rows, NONE);
            self.next.resize(rows, NONE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_skip_removed_rows_and_spread_reaches_the_window() {
        let mut t = Threads::new();
        t.append(&[0, 2, 3, 5, 7], &["a", "a", "b", "a", "a"])
            .unwrap();
        assert_eq!(t.neighbours(2), (Some(0), Some(5)));
        t.remove(&[5]);
        assert_eq!(t.neighbours(2), (Some(0), Some(7)));
        assert_eq!(t.neighbours(7), (Some(2), None));
        let out = t
            .spread(
                &[(2, 1.0)],
                &Spread {
                    neighbour_share: 0.5,
                    window: 2,
                    thread_share: 0.0,
                },
            )
            .unwrap();
        assert_eq!(out, vec![(2, 1.0), (0, 0.5), (7, 0.5)]);
        let out = t
            .spread(
                &[(0, 1.0), (3, 0.4)],
                &Spread {
                    neighbour_share: 0.5,
                    window: 2,
                    thread_share: 0.5,
                },
            )
            .unwrap();
        // 0 -> 2 (0.5), 7 (0.25); every row of thread a gains 0.5 * 1.0; 3 (thread b) gains 0.5 * 0.4.
        assert_eq!(out, vec![(0, 1.5), (3, 0.6), (2, 1.0), (7, 0.75)]);
    }

    #[test]
    fn bad_input_is_an_error_and_changes_nothing() {
        let mut t = Threads::new();
        t.append(&[4], &["a"]).unwrap();
        assert!(t.append(&[3], &["a"]).is_err());
        assert!(t.append(&[1, 2], &["a"]).is_err());
        assert!(t
            .spread(
                &[(1, 1.0), (1, 1.0)],
                &Spread {
                    neighbour_share: 0.5,
                    window: 1,
                    thread_share: 0.0
                }
            )
            .is_err());
        assert!(t
            .spread(
                &[],
                &Spread {
                    neighbour_share: f32::NAN,
                    window: 1,
                    thread_share: 0.0
                }
            )
            .is_err());
        assert!(t
            .spread(
                &[(4, 1.0)],
                &Spread {
                    neighbour_share: 0.5,
                    window: 1 << 40,
                    thread_share: 0.0
                }
            )
            .is_err());
        assert_eq!(t.neighbours(4), (None, None));
        assert_eq!(t.thread(4), Some(0));
    }
}
