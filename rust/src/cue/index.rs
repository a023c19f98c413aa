//! The cue index proper: dimensions, live rows, batch writes and the pruning plan.

use std::borrow::Cow;
use std::collections::HashMap;

use foldhash::fast::RandomState;
use roaring::RoaringBitmap;

use super::dimension::{add_sorted, Dimension};
use super::query::{Clause, Pruned, Query};
use crate::error::{CoreError, Result};

/// Rows from which [`CueIndex::insert_rows`] gathers a batch by posting before adding it.
pub const GROUPED_FROM: usize = 64;

/// The ranks of a dimension's cues in a row that a batch remembers the last value of
/// (an actor named fourth is looked up every time).
const RECENT_RANKS: usize = 4;

/// Dimension -> value -> posting list over dense `u32` rows.
///
/// The dimensions are fixed when the index is made; writing to or asking about any
/// other dimension is [`CoreError::UnknownDimension`]. Asking for a value that was
/// never written is not an error: its posting list is empty.
#[derive(Debug, Clone, Default)]
pub struct CueIndex {
    pub(super) dims: Vec<Dimension>,
    pub(super) by_name: HashMap<Box<str>, usize>,
    pub(super) live: RoaringBitmap,
}

/// Size figures of a [`CueIndex`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexStats {
    /// Live rows.
    pub rows: u64,
    pub dimensions: u64,
    /// Distinct values with at least one row, over all dimensions.
    pub values: u64,
    /// Sum of all posting list lengths.
    pub postings: u64,
    /// Approximate resident bytes: bitmaps, interned strings and table overhead.
    pub bytes: u64,
}

/// A resolved clause: the rows carrying any of its values.
type List<'a> = Cow<'a, RoaringBitmap>;

impl CueIndex {
    /// An empty index over `dimensions` (non-empty, distinct names).
    pub fn new<S: AsRef<str>>(dimensions: &[S]) -> Result<Self> {
        let mut index = Self::default();
        for name in dimensions {
            let name = name.as_ref();
            if name.is_empty() {
                return Err(CoreError::InvalidDimension {
                    name: name.into(),
                    reason: "empty name",
                });
            }
            if index.by_name.contains_key(name) {
                return Err(CoreError::InvalidDimension {
                    name: name.into(),
                    reason: "declared twice",
                });
            }
            index.by_name.insert(name.into(), index.dims.len());
            index.dims.push(Dimension::new(name));
        }
        Ok(index)
    }

    /// The declared dimensions, in declaration order.
    pub fn dimensions(&self) -> impl Iterator<Item = &Dimension> {
        self.dims.iter()
    }

    /// Rows written and not removed.
    pub fn live(&self) -> &RoaringBitmap {
        &self.live
    }

    pub(super) fn dim(&self, name: &str) -> Result<usize> {
        self.by_name
            .get(name)
            .copied()
            .ok_or_else(|| CoreError::UnknownDimension(name.into()))
    }

    /// The posting list of `value` in `dimension` (empty if never written).
    pub fn posting(&self, dimension: &str, value: &str) -> Result<Option<&RoaringBitmap>> {
        Ok(self.dims[self.dim(dimension)?].posting(value))
    }

    /// Adds `rows` to the posting list of `value` in `dimension`.
    pub fn insert(&mut self, dimension: &str, value: &str, rows: &[u32]) -> Result<()> {
        self.insert_column(dimension, &[value], &vec![0; rows.len()], rows)
    }

    /// Dictionary-encoded batch insert: row `rows[i]` gets `values[codes[i]]`.
    ///
    /// Validates everything before changing anything: on error the index is as it was.
    pub fn insert_column<S: AsRef<str>>(
        &mut self,
        dimension: &str,
        values: &[S],
        codes: &[u32],
        rows: &[u32],
    ) -> Result<()> {
        let d = self.dim(dimension)?;
        if codes.len() != rows.len() {
            return Err(CoreError::ShapeMismatch {
                what: "codes",
                expected: rows.len(),
                got: codes.len(),
            });
        }
        if let Some((i, v)) = values
            .iter()
            .enumerate()
            .find(|(_, v)| v.as_ref().is_empty())
        {
            return Err(CoreError::InvalidValue {
                what: "values",
                index: i,
                value: format!("{:?}", v.as_ref()),
                reason: "a cue value must not be empty",
            });
        }
        if let Some((i, &c)) = codes
            .iter()
            .enumerate()
            .find(|(_, &c)| c as usize >= values.len())
        {
            return Err(CoreError::InvalidValue {
                what: "codes",
                index: i,
                value: c.to_string(),
                reason: "code has no value",
            });
        }
        let (starts, mut grouped) = group_by_code(
            codes.iter().copied().zip(rows.iter().copied()),
            values.len(),
        );
        let dim = &mut self.dims[d];
        for (code, value) in values.iter().enumerate() {
            let group = &mut grouped[starts[code]..starts[code + 1]];
            if group.is_empty() {
                continue;
            }
            let group = sorted_unique(group);
            let id = dim.intern(value.as_ref());
            dim.add_sorted(id, group);
        }
        let mut all = rows.to_vec();
        let all = sorted_unique(&mut all);
        add_sorted(&mut self.live, all);
        Ok(())
    }

    /// Adds rows `first`, `first + 1`, … with their cues: `rows[i]` holds the
    /// `(dimension, value)` pairs of row `first + i`, each dimension by its place in
    /// `dimensions` (names this index declares). A few rows (a write's) go cue by cue
    /// straight to their posting lists (one lookup, one insert, no grouping pass); a batch
    /// of at least [`GROUPED_FROM`] rows (a replay's, an import's) is gathered by posting
    /// first, each posting then appended to once. Either way the values are interned in the
    /// order met and the postings are the same. A row with a cue becomes live.
    ///
    /// Validates everything before changing anything: on error the index is as it was.
    ///
    /// # Errors
    /// [`CoreError::UnknownDimension`] for a name not declared; [`CoreError::InvalidArgument`]
    /// for a pair whose dimension is past `dimensions`; [`CoreError::InvalidValue`] for an
    /// empty value.
    pub fn insert_rows<S: AsRef<str>, V: AsRef<str>>(
        &mut self,
        dimensions: &[S],
        rows: &[&[(u16, V)]],
        first: u32,
    ) -> Result<()> {
        let dims = dimensions
            .iter()
            .map(|name| self.dim(name.as_ref()))
            .collect::<Result<Vec<usize>>>()?;
        for (i, (d, v)) in rows.iter().flat_map(|row| row.iter()).enumerate() {
            if *d as usize >= dims.len() {
                return Err(CoreError::InvalidArgument {
                    name: "dimensions",
                    reason: format!("a row has a cue of dimension {d}, of {} named", dims.len()),
                });
            }
            if v.as_ref().is_empty() {
                return Err(CoreError::InvalidValue {
                    what: "values",
                    index: i,
                    value: format!("{:?}", v.as_ref()),
                    reason: "a cue value must not be empty",
                });
            }
        }
        if rows.len() >= GROUPED_FROM {
            self.insert_grouped(&dims, rows, first);
            return Ok(());
        }
        for (i, cues) in rows.iter().enumerate() {
            let row = first + i as u32;
            for (d, v) in cues.iter() {
                self.dims[dims[*d as usize]].insert_row(v.as_ref(), row);
            }
            if !cues.is_empty() {
                self.live.insert(row);
            }
        }
        Ok(())
    }

    /// [`insert_rows`](Self::insert_rows) of a batch (checked): every cue interned in the
    /// order met and its row gathered under its posting (a counting sort keeps each
    /// posting's rows in order), then each posting appended to once. An insertion searches
    /// its posting; an append of rows past its end does not.
    ///
    /// A cue is first compared with the one met last at the same place of a row (its
    /// dimension, and its rank among the row's cues of that dimension): rows written one
    /// after another mostly repeat their day, month and year, their kind, tier and trust,
    /// and an equal value is the same posting without hashing it twice.
    fn insert_grouped<V: AsRef<str>>(&mut self, dims: &[usize], rows: &[&[(u16, V)]], first: u32) {
        let mut group_of: HashMap<(usize, u32), u32, RandomState> = HashMap::default();
        let mut postings: Vec<(usize, u32)> = Vec::new();
        let mut members: Vec<(u32, u32)> = Vec::with_capacity(rows.iter().map(|r| r.len()).sum());
        let mut live: Vec<u32> = Vec::with_capacity(rows.len());
        let mut recent: Vec<Option<(&str, u32)>> = vec![None; dims.len() * RECENT_RANKS];
        for (i, cues) in rows.iter().enumerate() {
            let row = first + i as u32;
            let (mut prev, mut rank) = (usize::MAX, 0);
            for (d, v) in cues.iter() {
                let (d, v) = (*d as usize, v.as_ref());
                rank = if d == prev { rank + 1 } else { 0 };
                prev = d;
                let place = (rank < RECENT_RANKS).then_some(d * RECENT_RANKS + rank);
                let group = match place.and_then(|p| recent[p]) {
                    Some((last, group)) if last == v => group,
                    _ => {
                        let dim = dims[d];
                        let id = self.dims[dim].intern(v);
                        let group = *group_of.entry((dim, id)).or_insert_with(|| {
                            postings.push((dim, id));
                            postings.len() as u32 - 1
                        });
                        if let Some(p) = place {
                            recent[p] = Some((v, group));
                        }
                        group
                    }
                };
                members.push((group, row));
            }
            if !cues.is_empty() {
                live.push(row);
            }
        }
        let (starts, mut grouped) = group_by_code(members.iter().copied(), postings.len());
        for (g, &(dim, id)) in postings.iter().enumerate() {
            // A row holding a value twice (an actor named twice) is one row of its posting.
            let group = sorted_unique(&mut grouped[starts[g]..starts[g + 1]]);
            self.dims[dim].add_sorted(id, group);
        }
        add_sorted(&mut self.live, &live);
    }

    /// Batch insert with one value per posting: row `rows[i]` gets `values[i]`.
    ///
    /// The same as [`CueIndex::insert_column`] without the caller encoding values.
    pub fn insert_values<S: AsRef<str>>(
        &mut self,
        dimension: &str,
        values: &[S],
        rows: &[u32],
    ) -> Result<()> {
        if values.len() != rows.len() {
            return Err(CoreError::ShapeMismatch {
                what: "values",
                expected: rows.len(),
                got: values.len(),
            });
        }
        let mut code_of: HashMap<&str, u32> = HashMap::new();
        let mut distinct: Vec<&str> = Vec::new();
        let codes: Vec<u32> = values
            .iter()
            .map(|v| {
                let v = v.as_ref();
                *code_of.entry(v).or_insert_with(|| {
                    distinct.push(v);
                    distinct.len() as u32 - 1
                })
            })
            .collect();
        self.insert_column(dimension, &distinct, &codes, rows)
    }

    /// Removes `rows` from the posting list of `value` in `dimension` only; they stay live
    /// and keep every other cue (a quarantined memory, once accepted, loses its mark).
    pub fn withdraw(&mut self, dimension: &str, value: &str, rows: &[u32]) -> Result<()> {
        let d = self.dim(dimension)?;
        let gone: RoaringBitmap = rows.iter().copied().collect();
        self.dims[d].withdraw(value, &gone);
        Ok(())
    }

    /// Removes `rows` from every posting list and from the live set.
    pub fn remove(&mut self, rows: &[u32]) {
        let gone: RoaringBitmap = rows.iter().copied().collect();
        for dim in &mut self.dims {
            dim.remove(&gone);
        }
        self.live -= &gone;
    }

    fn resolve<'a>(&'a self, clause: &Clause, examined: &mut u64) -> Result<List<'a>> {
        let dim = &self.dims[self.dim(&clause.dimension)?];
        if clause.values.is_empty() {
            return Err(CoreError::InvalidArgument {
                name: "query",
                reason: format!("cue {:?} has no values", clause.dimension),
            });
        }
        // A value named twice in one clause is one list, merged and counted once.
        let values = &clause.values;
        let mut found = values
            .iter()
            .enumerate()
            .filter(|(i, v)| !values[..*i].contains(v))
            .filter_map(|(_, v)| dim.posting(v));
        let rows = match (found.next(), found.next()) {
            (None, _) => Cow::Owned(RoaringBitmap::new()),
            (Some(one), None) => Cow::Borrowed(one),
            (Some(a), Some(b)) => {
                let mut union = a | b;
                *examined += a.len() + b.len();
                for more in found {
                    *examined += more.len();
                    union |= more;
                }
                Cow::Owned(union)
            }
        };
        Ok(rows)
    }

    /// Validates `query` and resolves it to include lists (ascending size) and exclude lists.
    fn plan<'a>(
        &'a self,
        query: &Query,
        examined: &mut u64,
    ) -> Result<(Vec<List<'a>>, Vec<List<'a>>)> {
        let mut include = query
            .include
            .iter()
            .map(|c| self.resolve(c, examined))
            .collect::<Result<Vec<_>>>()?;
        let mut exclude = query
            .exclude
            .iter()
            .map(|c| self.resolve(c, examined))
            .collect::<Result<Vec<_>>>()?;
        exclude.retain(|l| !l.is_empty()); // leaving out nothing is no step (recall always leaves out the quarantined)
        include.sort_by_key(|l| l.len());
        Ok((include, exclude))
    }

    /// The rows satisfying `query`: smallest-first intersection, early exit on empty.
    ///
    /// With no include clause the plan starts from every live row (a scan, and
    /// `examined` says so).
    pub fn prune(&self, query: &Query) -> Result<Pruned> {
        let mut examined = 0;
        let (include, exclude) = self.plan(query, &mut examined)?;
        let full_scan = self.live.len();
        let mut include = include.into_iter();
        let first = include.next();
        // The first list is streamed once; every later probe carries the survivors.
        examined += first.as_ref().map_or(full_scan, |l| l.len());
        let mut steps = include
            .map(|l| (l, true))
            .chain(exclude.into_iter().map(|l| (l, false)));
        let mut rows = match (first, steps.next()) {
            (None, None) => self.live.clone(),
            (Some(only), None) => only.into_owned(),
            // Intersect the two smallest lists straight into a new bitmap: no clone.
            (Some(a), Some((b, true))) => &*a & &*b,
            (Some(a), Some((b, false))) => &*a - &*b,
            (None, Some((b, _))) => &self.live - &*b,
        };
        for (list, keep) in steps {
            if rows.is_empty() {
                break;
            }
            examined += rows.len();
            if keep {
                rows &= &*list;
            } else {
                rows -= &*list;
            }
        }
        Ok(Pruned {
            rows,
            examined,
            full_scan,
        })
    }

    /// Whether each of `rows` satisfies `query` (live rows only; every live row when
    /// `query` has no clause): a membership test, so a caller learns which of a few
    /// rows a cue lets through without the posting lists crossing to it.
    pub fn admits(&self, query: &Query, rows: &[u32]) -> Result<Vec<bool>> {
        if query.include.is_empty() && query.exclude.is_empty() {
            return Ok(rows.iter().map(|&r| self.live.contains(r)).collect());
        }
        let pruned = self.prune(query)?;
        Ok(rows.iter().map(|&r| pruned.rows.contains(r)).collect())
    }

    /// How many rows satisfy `query`, without materializing the last intersection.
    ///
    /// This is the support count of a cue combination (the policy distiller's
    /// counting primitive).
    pub fn count(&self, query: &Query) -> Result<u64> {
        let mut examined = 0;
        let (include, exclude) = self.plan(query, &mut examined)?;
        if !exclude.is_empty() || include.is_empty() {
            return Ok(self.prune(query)?.rows.len());
        }
        let (last, init) = include.split_last().expect("non-empty");
        let Some((first, middle)) = init.split_first() else {
            return Ok(last.len());
        };
        if middle.is_empty() {
            return Ok(first.intersection_len(last));
        }
        let mut acc = first.clone().into_owned();
        for list in middle {
            acc &= &**list;
            if acc.is_empty() {
                return Ok(0);
            }
        }
        Ok(acc.intersection_len(last))
    }

    /// Size figures; `bytes` is an estimate of resident memory.
    pub fn stats(&self) -> IndexStats {
        let mut values = 0;
        let mut postings = 0;
        let mut bytes = self.live.serialized_size() as u64;
        for dim in &self.dims {
            for (value, posting) in dim.iter() {
                values += 1;
                postings += posting.len();
                bytes += posting.serialized_size() as u64;
                // interned string twice (map key, value list), map slot, bitmap header
                bytes += 2 * value.len() as u64 + 2 * std::mem::size_of::<Box<str>>() as u64 + 8;
                bytes += std::mem::size_of::<RoaringBitmap>() as u64;
            }
        }
        IndexStats {
            rows: self.live.len(),
            dimensions: self.dims.len() as u64,
            values,
            postings,
            bytes,
        }
    }
}

/// The rows of `(code, row)` pairs grouped by code, each group in the order given (a
/// counting sort): group `c` is `grouped[starts[c]..starts[c + 1]]`, for codes below `codes`.
fn group_by_code(
    pairs: impl Iterator<Item = (u32, u32)> + Clone,
    codes: usize,
) -> (Vec<usize>, Vec<u32>) {
    let mut starts = vec![0usize; codes + 1];
    for (c, _) in pairs.clone() {
        starts[c as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut cursor = starts.clone();
    let mut grouped = vec![0u32; starts[codes]];
    for (c, r) in pairs {
        grouped[cursor[c as usize]] = r;
        cursor[c as usize] += 1;
    }
    (starts, grouped)
}

/// Sorts and dedups in place; returns the unique prefix.
fn sorted_unique(rows: &mut [u32]) -> &[u32] {
    if !rows.windows(2).all(|w| w[0] < w[1]) {
        rows.sort_unstable();
    }
    let mut n = 0;
    for i in 0..rows.len() {
        if n == 0 || rows[i] != rows[n - 1] {
            rows[n] = rows[i];
            n += 1;
        }
    }
    &rows[..n]
}
