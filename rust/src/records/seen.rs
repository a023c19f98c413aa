//! The ids a replay has met, kept as seeded 64-bit hashes: what proves a run's ids new
//! without a map of strings. An id is its UTF-8 bytes (a decoded row's, or Python's).

use std::collections::HashSet;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use foldhash::quality::RandomState;

/// Ids met so far, each as its hash under a seed drawn for this set (so ids cannot be
/// crafted to share one). A hash never met proves its id new; a hash met says only that
/// the id *may* repeat (two ids can share a hash), which the caller's exact check decides.
#[derive(Debug, Default)]
pub struct Seen {
    seed: RandomState,
    // The hashes are uniform already: the set's own hashing of them need only be fast.
    hashes: HashSet<u64, FixedState>,
}

impl Seen {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes every id of `ids` as met if none of them may have been, among themselves or
    /// before; returns whether it did. When it did not, nothing changed.
    pub fn claim<'a>(&mut self, ids: impl IntoIterator<Item = &'a [u8]>) -> bool {
        let mut taken: Vec<u64> = Vec::new();
        for id in ids {
            let h = self.seed.hash_one(id);
            if !self.hashes.insert(h) {
                for h in &taken {
                    self.hashes.remove(h);
                }
                return false;
            }
            taken.push(h);
        }
        true
    }

    /// Takes `id` as met (one the caller found new by its own check).
    pub fn add(&mut self, id: &[u8]) {
        self.hashes.insert(self.seed.hash_one(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_takes_all_or_nothing() {
        let mut seen = Seen::new();
        assert!(seen.claim([&b"a"[..], b"b"]));
        assert!(!seen.claim([&b"c"[..], b"a"])); // a was met: c is not taken either
        assert!(seen.claim([&b"c"[..]]));
        assert!(!seen.claim([&b"d"[..], b"d"])); // a repeat among the claimed
        assert!(seen.claim([&b"d"[..]]));
        seen.add(b"e");
        assert!(!seen.claim([&b"e"[..]]));
        assert_eq!(seen.hashes.len(), 5);
    }
}
