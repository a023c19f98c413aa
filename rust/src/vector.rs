//! Vectors: cosine similarity of a query against the rows' embeddings, brute force.
//!
//! The embeddings are a row-major `n x dim` matrix of `f32` (row `r` is home row
//! `r`), unit length as embedders give them, so the dot product is the cosine.
//! [`cosine_top`] scores only the candidates (the rows the cues let through) and
//! keeps the best `k`; at a million rows of 384 dimensions that is one pass over
//! the candidates' rows, which the memory bandwidth bounds.

use std::collections::BinaryHeap;

use roaring::RoaringBitmap;

use crate::error::{CoreError, Result};
use crate::rank::Kept;

/// The best `k` candidates by `matrix[row] . query`, best first; ties to the later row.
/// Candidates beyond the matrix's rows (not embedded yet) are skipped.
pub fn cosine_top(
    matrix: &[f32],
    dim: usize,
    query: &[f32],
    candidates: &RoaringBitmap,
    k: usize,
) -> Result<Vec<(u32, f32)>> {
    if dim == 0 || query.len() != dim || !matrix.len().is_multiple_of(dim) {
        return Err(CoreError::InvalidArgument {
            name: "query",
            reason: format!(
                "a query of {} dimensions against a matrix of {} values in rows of {dim}",
                query.len(),
                matrix.len()
            ),
        });
    }
    if !query.iter().all(|x| x.is_finite()) {
        return Err(CoreError::InvalidArgument {
            name: "query",
            reason: "must hold finite values".into(),
        });
    }
    let rows = (matrix.len() / dim) as u32;
    let mut heap: BinaryHeap<Kept> = BinaryHeap::with_capacity(k.min(1 << 16) + 1);
    for row in candidates.iter() {
        if row >= rows {
            break;
        }
        let v = &matrix[row as usize * dim..(row as usize + 1) * dim];
        let score: f32 = v.iter().zip(query).map(|(a, b)| a * b).sum();
        let s = Kept {
            score: if score.is_finite() {
                score
            } else {
                f32::NEG_INFINITY
            },
            row,
        };
        if heap.len() < k {
            heap.push(s);
        } else if heap.peek().is_some_and(|worst| s < *worst) {
            heap.pop();
            heap.push(s);
        }
    }
    Ok(heap
        .into_sorted_vec()
        .into_iter()
        .map(|s| (s.row, s.score))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_candidates_by_dot_product_and_skips_the_rest() {
        let m = [1.0, 0.0, 0.0, 1.0, 0.6, 0.8, 0.6, 0.8];
        let all: RoaringBitmap = (0..6).collect();
        assert_eq!(
            cosine_top(&m, 2, &[0.6, 0.8], &all, 3).unwrap(),
            vec![(3, 1.0), (2, 1.0), (1, 0.8)]
        );
        let some: RoaringBitmap = [0, 1].into_iter().collect();
        assert_eq!(
            cosine_top(&m, 2, &[1.0, 0.0], &some, 5).unwrap(),
            vec![(0, 1.0), (1, 0.0)]
        );
        assert!(cosine_top(&m, 2, &[1.0], &all, 1).is_err());
        assert!(cosine_top(&m, 3, &[1.0, 0.0, 0.0], &all, 1).is_err());
        assert!(cosine_top(&m, 2, &[f32::NAN, 0.0], &all, 1).is_err());
    }
}
