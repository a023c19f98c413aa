//! One cue dimension: interned values, each with its posting list.

use std::collections::HashMap;

use foldhash::fast::RandomState;
use roaring::RoaringBitmap;

/// The values of one dimension and their posting lists.
///
/// Values are interned to dense ids in first-seen order; `postings[id]` holds the
/// rows carrying `values[id]`. The value map hashes with foldhash, seeded per map:
/// every cue of every row added is looked up in it, and on short strings it is faster
/// than the standard library's SipHash, while a set of values crafted to collide still
/// cannot be written without knowing the seed.
#[derive(Debug, Clone, Default)]
pub struct Dimension {
    name: Box<str>,
    ids: HashMap<Box<str>, u32, RandomState>,
    values: Vec<Box<str>>,
    postings: Vec<RoaringBitmap>,
}

impl Dimension {
    pub fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The id of `value`, interning it on first sight.
    pub fn intern(&mut self, value: &str) -> u32 {
        if let Some(&id) = self.ids.get(value) {
            return id;
        }
        let id = self.values.len() as u32;
        self.ids.insert(value.into(), id);
        self.values.push(value.into());
        self.postings.push(RoaringBitmap::new());
        id
    }

    /// The posting list of `value`, if the value was ever seen.
    pub fn posting(&self, value: &str) -> Option<&RoaringBitmap> {
        self.ids.get(value).map(|&id| &self.postings[id as usize])
    }

    /// Adds `row` to the posting list of `value`, interning the value on first sight.
    pub fn insert_row(&mut self, value: &str, row: u32) {
        let id = self.intern(value);
        self.postings[id as usize].insert(row);
    }

    /// Adds strictly increasing `rows` to the posting list of `id`.
    pub fn add_sorted(&mut self, id: u32, rows: &[u32]) {
        add_sorted(&mut self.postings[id as usize], rows);
    }

    /// Replaces the posting list of `id` (used when loading).
    pub(crate) fn set_posting(&mut self, id: u32, rows: RoaringBitmap) {
        self.postings[id as usize] = rows;
    }

    /// Drops `rows` from the posting list of `value` (nothing if it was never seen).
    pub fn withdraw(&mut self, value: &str, rows: &RoaringBitmap) {
        if let Some(&id) = self.ids.get(value) {
            self.postings[id as usize] -= rows;
        }
    }

    /// Drops `rows` from every posting list.
    pub fn remove(&mut self, rows: &RoaringBitmap) {
        for posting in &mut self.postings {
            if !posting.is_disjoint(rows) {
                *posting -= rows;
            }
        }
    }

    /// `(value, posting)` for every value with at least one row, in interning order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &RoaringBitmap)> {
        self.values
            .iter()
            .zip(&self.postings)
            .filter(|(_, p)| !p.is_empty())
            .map(|(v, p)| (&**v, p))
    }

    /// Number of values with at least one row.
    pub fn len(&self) -> usize {
        self.postings.iter().filter(|p| !p.is_empty()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Rows past the bitmap's end that [`add_sorted`] inserts one by one rather than by a
/// union: a union walks the whole container it meets, an insertion one binary search.
const INSERT_ONE_BY_ONE: usize = 64;

/// Adds strictly increasing `rows` to `bitmap`: those past its last row are appended;
/// the others are inserted one by one when they are few (the common case of a row that
/// is already there: the live set is given each new row once per dimension) and
/// merged by one union otherwise.
pub(crate) fn add_sorted(bitmap: &mut RoaringBitmap, rows: &[u32]) {
    if rows.is_empty() {
        return;
    }
    let cut = match bitmap.max() {
        Some(max) => rows.partition_point(|&r| r <= max),
        None => 0,
    };
    let (inside, after) = rows.split_at(cut);
    if inside.len() <= INSERT_ONE_BY_ONE {
        for &r in inside {
            bitmap.insert(r);
        }
    } else {
        *bitmap |= RoaringBitmap::from_sorted_iter(inside.iter().copied())
            .expect("rows are strictly increasing");
    }
    if !after.is_empty() {
        bitmap
            .append(after.iter().copied())
            .expect("rows are strictly increasing");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable() {
        let mut d = Dimension::new("actor");
        let a = d.intern("acme");
        let b = d.intern("globex");
        assert_eq!(d.intern("acme"), a);
        assert_ne!(a, b);
    }

    #[test]
    fn add_sorted_merges_out_of_order_batches() {
        let mut bm = RoaringBitmap::new();
        add_sorted(&mut bm, &[10, 20]);
        add_sorted(&mut bm, &[30]);
        add_sorted(&mut bm, &[5, 25]);
        assert_eq!(bm.iter().collect::<Vec<_>>(), vec![5, 10, 20, 25, 30]);
        add_sorted(&mut bm, &[30, 31]); // one already there, one past the end
        assert_eq!(bm.iter().collect::<Vec<_>>(), vec![5, 10, 20, 25, 30, 31]);
        let many: Vec<u32> = (0..200).map(|i| i * 3).collect(); // a union, straddling the end
        add_sorted(&mut bm, &many);
        let mut want: Vec<u32> = many.clone();
        want.extend([5, 10, 20, 25, 31]);
        want.sort_unstable();
        want.dedup();
        assert_eq!(bm.iter().collect::<Vec<_>>(), want);
    }

    #[test]
    fn empty_values_are_hidden_from_iteration() {
        let mut d = Dimension::new("type");
        let id = d.intern("deal");
        d.add_sorted(id, &[1, 2]);
        d.intern("note");
        assert_eq!(d.len(), 1);
        d.remove(&RoaringBitmap::from_iter([1, 2]));
        assert!(d.is_empty());
    }
}
