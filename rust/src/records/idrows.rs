//! The row each id may be at, kept by seeded 64-bit hash: what finds a row by its id, or
//! proves an id absent, without a map of strings (which costs a large home a fifth of a
//! second to build, the first time anything asks for an id).
//!
//! The hashes are split by their top bits into [`SHARDS`] small maps: a large batch (a
//! home's million ids, taken at the first ask) is sorted into them and each is filled on
//! the core's pool, within the cache, where one large map would miss it at every insert.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use foldhash::quality::RandomState;
use rayon::prelude::*;

/// Where an id may be, by its hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// No row's id has this hash: the id is at no row.
    Absent,
    /// One row's id has it: the id is at this row, or at none (the caller compares).
    At(u32),
    /// Two rows' ids share it: only an exact map can say.
    Shared,
}

/// How many maps the hashes are split into (by their top bits).
pub const SHARDS: usize = 256;
const SHARD_SHIFT: u32 = 64 - SHARDS.trailing_zeros();
/// A batch this large is sorted into the shards and filled in parallel.
const PARALLEL_FROM: usize = 1 << 14;

/// The row a slot holds once two ids have met in it.
const SHARED: u32 = u32::MAX;

type Shard = HashMap<u64, u32, FixedState>;

/// Rows by the hash of their id, under a seed drawn for this map (so ids cannot be crafted
/// to share one).
#[derive(Debug)]
pub struct IdRows {
    seed: RandomState,
    // The hashes are uniform already: each map's own hashing of them need only be fast.
    shards: Vec<Shard>,
}

impl Default for IdRows {
    fn default() -> Self {
        Self::new()
    }
}

impl IdRows {
    pub fn new() -> Self {
        Self {
            seed: RandomState::default(),
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
        }
    }

    /// The hash an id is kept by (its UTF-8 bytes).
    pub fn hash(&self, id: &[u8]) -> u64 {
        self.seed.hash_one(id)
    }

    /// Takes row `row`'s id, by its [`hash`](Self::hash).
    pub fn push(&mut self, hash: u64, row: u32) {
        put(&mut self.shards[shard_of(hash)], hash, row);
    }

    /// Takes each `(hash, row)` of `rows`, as [`push`](Self::push) does, a large batch on
    /// the core's pool.
    pub fn extend(&mut self, rows: Vec<(u64, u32)>) {
        if rows.len() < PARALLEL_FROM {
            for (hash, row) in rows {
                self.push(hash, row);
            }
            return;
        }
        // A counting sort by shard, keeping each shard's rows in order (a repeat stays a repeat).
        let mut starts = vec![0usize; SHARDS + 1];
        for &(hash, _) in &rows {
            starts[shard_of(hash) + 1] += 1;
        }
        for s in 0..SHARDS {
            starts[s + 1] += starts[s];
        }
        let mut next = starts.clone();
        let mut sorted = vec![(0u64, 0u32); rows.len()];
        for &(hash, row) in &rows {
            let s = shard_of(hash);
            sorted[next[s]] = (hash, row);
            next[s] += 1;
        }
        drop(rows);
        crate::pool::install(|| {
            self.shards
                .par_iter_mut()
                .enumerate()
                .for_each(|(s, shard)| {
                    let part = &sorted[starts[s]..starts[s + 1]];
                    shard.reserve(part.len());
                    for &(hash, row) in part {
                        put(shard, hash, row);
                    }
                });
        });
    }

    /// Where `id` may be.
    pub fn find(&self, id: &[u8]) -> Found {
        let hash = self.hash(id);
        match self.shards[shard_of(hash)].get(&hash) {
            None => Found::Absent,
            Some(&SHARED) => Found::Shared,
            Some(&row) => Found::At(row),
        }
    }

    /// How many hashes two or more ids share (0 but for a copied id, in practice).
    #[cfg(test)]
    fn shared(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.values().filter(|&&r| r == SHARED).count())
            .sum()
    }
}

fn shard_of(hash: u64) -> usize {
    (hash >> SHARD_SHIFT) as usize
}

fn put(shard: &mut Shard, hash: u64, row: u32) {
    match shard.entry(hash) {
        Entry::Vacant(slot) => {
            slot.insert(row);
        }
        Entry::Occupied(mut slot) => {
            slot.insert(SHARED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(ids: &[&str]) -> IdRows {
        let mut rows = IdRows::new();
        let pairs = ids
            .iter()
            .enumerate()
            .map(|(row, id)| (rows.hash(id.as_bytes()), row as u32))
            .collect();
        rows.extend(pairs);
        rows
    }

    #[test]
    fn an_id_is_found_at_its_row_absent_ids_are_not_and_a_repeat_is_shared() {
        let mut rows = taken(&["ep-a", "ep-b", "ep-c"]);
        assert_eq!(rows.find(b"ep-b"), Found::At(1));
        assert_eq!(rows.find(b"ep-z"), Found::Absent);
        rows.push(rows.hash(b"ep-b"), 3); // a copied id: only the exact map can say which row
        assert_eq!(rows.find(b"ep-b"), Found::Shared);
        assert_eq!(rows.find(b"ep-a"), Found::At(0));
        assert_eq!(rows.shared(), 1);
        rows.push(rows.hash(b"ep-b"), 4);
        assert_eq!(rows.shared(), 1);
    }

    #[test]
    fn a_large_batch_sorted_into_the_shards_finds_what_one_by_one_finds() {
        let ids: Vec<String> = (0..PARALLEL_FROM * 2 + 7)
            .map(|i| format!("ep-{:x}", i % (PARALLEL_FROM * 2)))
            .collect(); // the last seven repeat the first seven
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let batch = taken(&refs);
        let mut single = IdRows::new();
        for (row, id) in ids.iter().enumerate() {
            single.push(single.hash(id.as_bytes()), row as u32);
        }
        for (row, id) in ids.iter().enumerate() {
            let expected = if !(7..PARALLEL_FROM * 2).contains(&row) {
                Found::Shared
            } else {
                Found::At(row as u32)
            };
            assert_eq!(batch.find(id.as_bytes()), expected, "{id}");
            assert_eq!(single.find(id.as_bytes()), expected, "{id}");
        }
        assert_eq!(batch.find(b"ep-none"), Found::Absent);
        assert_eq!(batch.shared(), 7);
    }
}
