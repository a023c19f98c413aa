//! Closed cue sets: the combinations of cues that the rows of a subset share.
//!
//! A cause behind an outcome is a combination of cues shared by several outcome
//! rows ("type=deal, actor=acme, tag=late-legal-review"). Mining asks, within a set
//! of rows `within` (say, the negative outcomes), for every combination carried by at
//! least `min_support` of them. Only *closed* combinations are reported: those to
//! which no further cue can be added without losing a supporting row. A closed set
//! stands for all its subsets of equal support, so the answer stays readable.
//!
//! The search is a prefix-preserving closure extension: cues get a fixed order; a set
//! is extended only by cues after its core cue, and an extension whose closure brings
//! in an earlier cue is skipped, because that closed set is reached from elsewhere.
//! Every closed set is produced exactly once, without a table of those already seen.
//! Support is the length of a roaring intersection; the per-row cue lists only find
//! which extensions can reach `min_support` before any bitmap is intersected.

use std::collections::HashMap;

use roaring::RoaringBitmap;

use super::index::CueIndex;
use crate::error::{CoreError, Result};

/// A combination of cues and the rows that carry all of them.
#[derive(Debug, Clone, PartialEq)]
pub struct CueSet {
    /// Positions in [`Mined::cues`], ascending: by dimension in the order asked, then by value.
    pub cues: Vec<u32>,
    /// Rows of `within` carrying every cue.
    pub support: RoaringBitmap,
    /// Rows of `against` carrying every cue (the counter-examples).
    pub counter: RoaringBitmap,
}

/// The closed cue sets of a mining run and the work it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Mined {
    /// Every `(dimension, value)` with enough support, by dimension in the order asked,
    /// then by value; the sets name cues by position here.
    pub cues: Vec<(String, String)>,
    pub sets: Vec<CueSet>,
    /// Bitmap intersections computed for supports.
    pub intersections: u64,
}

/// One candidate cue, its rows renumbered densely within `within`.
struct Item<'a> {
    /// Dimension, by its position among those asked for.
    dim: usize,
    value: &'a str,
    posting: &'a RoaringBitmap,
    local: RoaringBitmap,
}

struct Miner<'a> {
    items: Vec<Item<'a>>,
    /// Cues of local row `r`: `row_items[starts[r]..starts[r + 1]]`, ascending.
    starts: Vec<usize>,
    row_items: Vec<u32>,
    min_support: u64,
    max_depth: usize,
    counts: Vec<u32>,
    found: Vec<(Vec<u32>, RoaringBitmap)>,
    intersections: u64,
}

impl CueIndex {
    /// Every closed set of cues from `dimensions` carried by at least `min_support`
    /// rows of `within`, with its counter-examples among `against`.
    ///
    /// `max_depth` bounds how many cues are added by extension beyond the cues all of
    /// `within` shares; closure may add more, which are kept, so a cause is never
    /// truncated. Sets come out in a deterministic order for the same index content.
    pub fn closed_sets<S: AsRef<str>>(
        &self,
        dimensions: &[S],
        within: &RoaringBitmap,
        against: &RoaringBitmap,
        min_support: u64,
        max_depth: usize,
    ) -> Result<Mined> {
        if min_support == 0 {
            return Err(CoreError::InvalidArgument {
                name: "min_support",
                reason: "must be at least 1".into(),
            });
        }
        let mut dims = Vec::with_capacity(dimensions.len());
        for name in dimensions {
            let d = self.dim(name.as_ref())?;
            if !dims.contains(&d) {
                dims.push(d);
            }
        }
        let within: RoaringBitmap = within & &self.live;
        let mut miner = Miner::new(self, &dims, &within, min_support, max_depth);
        miner.run(within.len());
        let rows: Vec<u32> = within.iter().collect();
        // The vocabulary in canonical order, and each search item's place in it.
        let mut order: Vec<usize> = (0..miner.items.len()).collect();
        order.sort_by(|&a, &b| {
            (miner.items[a].dim, miner.items[a].value)
                .cmp(&(miner.items[b].dim, miner.items[b].value))
        });
        let mut place = vec![0u32; order.len()];
        for (p, &i) in order.iter().enumerate() {
            place[i] = p as u32;
        }
        let cues = order
            .iter()
            .map(|&i| {
                (
                    self.dims[dims[miner.items[i].dim]].name().to_owned(),
                    miner.items[i].value.to_owned(),
                )
            })
            .collect();
        let sets = miner
            .found
            .iter()
            .map(|(items, local)| {
                let members: Vec<&Item<'_>> =
                    items.iter().map(|&i| &miner.items[i as usize]).collect();
                let mut cues: Vec<u32> = items.iter().map(|&i| place[i as usize]).collect();
                cues.sort_unstable();
                CueSet {
                    cues,
                    support: local.iter().map(|l| rows[l as usize]).collect(),
                    counter: counter_examples(&members, against),
                }
            })
            .collect();
        Ok(Mined {
            cues,
            sets,
            intersections: miner.intersections,
        })
    }
}

impl Mined {
    /// The `(dimension, value)` pairs of `set`.
    pub fn cues_of(&self, set: &CueSet) -> Vec<(&str, &str)> {
        set.cues
            .iter()
            .map(|&c| {
                (
                    self.cues[c as usize].0.as_str(),
                    self.cues[c as usize].1.as_str(),
                )
            })
            .collect()
    }

    /// Keeps only *productive* sets: a set is dropped when a smaller kept set inside it
    /// is at least as precise (share of its rows in `within` rather than `against`).
    /// Smaller sets are decided first; subsets are looked up, not searched for.
    pub fn productive(mut self) -> Mined {
        fn precision(s: &CueSet) -> f64 {
            s.support.len() as f64 / (s.support.len() + s.counter.len()) as f64
        }
        self.sets
            .sort_by(|a, b| (a.cues.len(), &a.cues).cmp(&(b.cues.len(), &b.cues)));
        let mut kept: HashMap<Vec<u32>, f64> = HashMap::new();
        let mut out = Vec::with_capacity(self.sets.len());
        for set in self.sets {
            let p = precision(&set);
            let n = set.cues.len();
            let beaten = if n <= 16 {
                (1u32..(1 << n) - 1).any(|mask| {
                    let sub: Vec<u32> = (0..n)
                        .filter(|b| mask & (1 << b) != 0)
                        .map(|b| set.cues[b])
                        .collect();
                    kept.get(&sub).is_some_and(|&q| q >= p)
                })
            } else {
                kept.iter().any(|(k, &q)| {
                    q >= p && k.len() < n && k.iter().all(|c| set.cues.binary_search(c).is_ok())
                })
            };
            if !beaten {
                kept.insert(set.cues.clone(), p);
                out.push(set);
            }
        }
        self.sets = out;
        self
    }
}

/// Rows of `against` in every posting of `cues`, intersecting smallest first (and
/// copying only the smallest posting, never the whole of `against`).
fn counter_examples(cues: &[&Item<'_>], against: &RoaringBitmap) -> RoaringBitmap {
    let mut postings: Vec<&RoaringBitmap> = cues.iter().map(|c| c.posting).collect();
    postings.push(against);
    postings.sort_by_key(|p| p.len());
    let mut rows = postings[0].clone();
    for p in &postings[1..] {
        if rows.is_empty() {
            break;
        }
        rows &= *p;
    }
    rows
}

impl<'a> Miner<'a> {
    fn new(
        index: &'a CueIndex,
        dims: &[usize],
        within: &RoaringBitmap,
        min_support: u64,
        max_depth: usize,
    ) -> Self {
        let rows: Vec<u32> = within.iter().collect();
        let mut items = Vec::new();
        for (rank, &d) in dims.iter().enumerate() {
            for (value, posting) in index.dims[d].iter() {
                if posting.intersection_len(within) < min_support {
                    continue;
                }
                // Renumber to 0..|within| so row lists and bitmaps stay dense.
                let local: RoaringBitmap = (posting & within)
                    .iter()
                    .map(|r| rows.partition_point(|&x| x < r) as u32)
                    .collect();
                items.push(Item {
                    dim: rank,
                    value,
                    posting,
                    local,
                });
            }
        }
        // Most frequent first: closures then tend to pull in earlier cues less often.
        items.sort_by(|a, b| {
            b.local
                .len()
                .cmp(&a.local.len())
                .then((a.dim, a.value).cmp(&(b.dim, b.value)))
        });
        let mut starts = vec![0usize; rows.len() + 1];
        for item in &items {
            for r in &item.local {
                starts[r as usize + 1] += 1;
            }
        }
        for r in 1..starts.len() {
            starts[r] += starts[r - 1];
        }
        let mut cursor = starts.clone();
        let mut row_items = vec![0u32; starts[rows.len()]];
        for (i, item) in items.iter().enumerate() {
            for r in &item.local {
                row_items[cursor[r as usize]] = i as u32;
                cursor[r as usize] += 1;
            }
        }
        let counts = vec![0; items.len()];
        Self {
            items,
            starts,
            row_items,
            min_support,
            max_depth,
            counts,
            found: Vec::new(),
            intersections: 0,
        }
    }

    fn cues_of(&self, row: u32) -> &[u32] {
        &self.row_items[self.starts[row as usize]..self.starts[row as usize + 1]]
    }

    /// The cues every row of `rows` carries (ascending), read off its first row.
    fn closure(&self, rows: &RoaringBitmap) -> Vec<u32> {
        match rows.min() {
            Some(first) => self
                .cues_of(first)
                .iter()
                .copied()
                .filter(|&i| rows.is_subset(&self.items[i as usize].local))
                .collect(),
            None => Vec::new(),
        }
    }

    fn run(&mut self, within: u64) {
        if within < self.min_support {
            return;
        }
        let all: RoaringBitmap = (0..within as u32).collect();
        let root = self.closure(&all);
        if !root.is_empty() {
            self.found.push((root.clone(), all.clone()));
        }
        self.extend(&root, &all, None, 0);
    }

    fn extend(&mut self, set: &[u32], rows: &RoaringBitmap, core: Option<u32>, depth: usize) {
        if depth >= self.max_depth {
            return;
        }
        let first = core.map_or(0, |c| c + 1);
        // Count, over the rows, each later cue: only those reaching min_support are
        // intersected.
        let mut touched = Vec::new();
        for r in rows {
            for k in self.starts[r as usize]..self.starts[r as usize + 1] {
                let i = self.row_items[k];
                if i < first {
                    continue;
                }
                if self.counts[i as usize] == 0 {
                    touched.push(i);
                }
                self.counts[i as usize] += 1;
            }
        }
        let mut extensions: Vec<u32> = touched
            .iter()
            .copied()
            .filter(|&i| {
                u64::from(self.counts[i as usize]) >= self.min_support
                    && set.binary_search(&i).is_err()
            })
            .collect();
        for &i in &touched {
            self.counts[i as usize] = 0;
        }
        extensions.sort_unstable();
        for i in extensions {
            let narrowed = rows & &self.items[i as usize].local;
            self.intersections += 1;
            let closed = self.closure(&narrowed);
            // Prefix-preserving: no cue before `i` may join that the set lacked.
            if closed
                .iter()
                .take_while(|&&j| j < i)
                .any(|j| set.binary_search(j).is_err())
            {
                continue;
            }
            self.found.push((closed.clone(), narrowed.clone()));
            self.extend(&closed, &narrowed, Some(i), depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> CueIndex {
        let mut ix = CueIndex::new(&["type", "actor", "tag", "outcome"]).unwrap();
        // rows 0-2: failed acme deals with a late legal review; 3-5: good deals; 6: noise
        ix.insert("type", "deal", &[0, 1, 2, 3, 4, 5]).unwrap();
        ix.insert("actor", "acme", &[0, 1, 2, 3]).unwrap();
        ix.insert("tag", "late-legal-review", &[0, 1, 2]).unwrap();
        ix.insert("actor", "globex", &[4, 5, 6]).unwrap();
        ix.insert("type", "meeting", &[6]).unwrap();
        ix.insert("outcome", "negative", &[0, 1, 2, 6]).unwrap();
        ix.insert("outcome", "positive", &[3, 4, 5]).unwrap();
        ix
    }

    fn names(mined: &Mined) -> Vec<Vec<String>> {
        mined
            .sets
            .iter()
            .map(|s| {
                mined
                    .cues_of(s)
                    .iter()
                    .map(|(d, v)| format!("{d}={v}"))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_shared_cause_is_one_closed_set_with_its_counter_examples() {
        let ix = index();
        let neg = ix.posting("outcome", "negative").unwrap().unwrap().clone();
        let pos = ix.posting("outcome", "positive").unwrap().unwrap().clone();
        let mined = ix
            .closed_sets(&["type", "actor", "tag"], &neg, &pos, 2, 3)
            .unwrap();
        assert_eq!(
            names(&mined),
            vec![vec!["type=deal", "actor=acme", "tag=late-legal-review"]]
        );
        assert_eq!(
            mined.sets[0].support.iter().collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert_eq!(mined.sets[0].counter.len(), 0);
    }

    #[test]
    fn nested_sets_are_both_closed_when_support_differs() {
        let ix = index();
        let pos = ix.posting("outcome", "positive").unwrap().unwrap().clone();
        let neg = ix.posting("outcome", "negative").unwrap().unwrap().clone();
        let mined = ix
            .closed_sets(&["type", "actor"], &pos, &neg, 2, 3)
            .unwrap();
        assert_eq!(
            names(&mined),
            vec![vec!["type=deal"], vec!["type=deal", "actor=globex"]]
        );
        assert_eq!(
            mined.sets[0].counter.iter().collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert_eq!(mined.sets[1].counter.len(), 0);
    }

    #[test]
    fn productive_drops_a_superset_no_more_precise() {
        let mut ix = CueIndex::new(&["type", "actor", "outcome"]).unwrap();
        // acme fails every time (4 of 4); acme deals too (2 of 2): nothing more explained.
        ix.insert("actor", "acme", &[0, 1, 2, 3]).unwrap();
        ix.insert("type", "deal", &[0, 1, 4]).unwrap();
        ix.insert("type", "call", &[2, 3]).unwrap();
        let neg: RoaringBitmap = [0, 1, 2, 3].into_iter().collect();
        let pos: RoaringBitmap = [4].into_iter().collect();
        let mined = ix
            .closed_sets(&["type", "actor"], &neg, &pos, 2, 3)
            .unwrap();
        assert_eq!(names(&mined).len(), 3);
        assert_eq!(names(&mined.productive()), vec![vec!["actor=acme"]]);
    }

    #[test]
    fn bad_arguments_are_errors() {
        let ix = index();
        let all = ix.live().clone();
        assert!(matches!(
            ix.closed_sets(&["nope"], &all, &all, 2, 3),
            Err(CoreError::UnknownDimension(_))
        ));
        assert!(matches!(
            ix.closed_sets(&["type"], &all, &all, 0, 3),
            Err(CoreError::InvalidArgument { .. })
        ));
    }

    #[test]
    fn too_few_rows_yield_nothing() {
        let ix = index();
        let one: RoaringBitmap = [6].into_iter().collect();
        assert!(ix
            .closed_sets(&["type", "actor"], &one, &RoaringBitmap::new(), 2, 3)
            .unwrap()
            .sets
            .is_empty());
    }
}
