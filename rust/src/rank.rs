//! The one ordering of scored rows every top-k in the core keeps: a higher score is
//! better, and of equal scores the later row (the newer memory) is.

use std::cmp::Ordering;

/// A scored row as a heap entry: greater is *worse*, so a max-heap of them keeps the
/// worst kept row on top (the one a better row replaces), and `into_sorted_vec`
/// comes out best first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Kept {
    pub score: f32,
    pub row: u32,
}

impl Eq for Kept {}

impl Ord for Kept {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(other.row.cmp(&self.row))
    }
}

impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn higher_scores_then_later_rows_sort_first() {
        let mut v = [
            Kept { score: 1.0, row: 1 },
            Kept { score: 2.0, row: 0 },
            Kept { score: 1.0, row: 5 },
        ];
        v.sort();
        assert_eq!(v.iter().map(|k| k.row).collect::<Vec<_>>(), vec![0, 5, 1]);
    }
}
