//! Cosine top-k over an embedding matrix, for Python.

use numpy::PyUntypedArrayMethods;
use pyo3::prelude::*;

use super::arrays::{array1, array2, count_k, slice1, slice2, vec1, Rows, RowsScores};
use super::cue::PyPruned;
use super::errors::detached;
use crate::vector::cosine_top as run;

/// The best `k` of `candidates` (uint32 array, pyroaring bitmap or Pruned) by the dot
/// product of their rows of `matrix` (float32, n x dim) with `query` (float32, dim):
/// (rows, scores), best first.
#[pyfunction]
#[pyo3(signature = (matrix, query, candidates, k=10))]
pub fn cosine_top<'py>(
    py: Python<'py>,
    matrix: &Bound<'py, PyAny>,
    query: &Bound<'py, PyAny>,
    candidates: &Bound<'py, PyAny>,
    #[pyo3(from_py_with = count_k)] k: usize,
) -> PyResult<RowsScores<'py>> {
    let matrix = array2::<f32>(matrix, "matrix", "float32")?;
    let dim = matrix.shape()[1];
    let query = array1::<f32>(query, "query", "float32")?;
    let bitmap = match candidates.cast::<PyPruned>() {
        Ok(p) => p.get().0.rows.clone(),
        Err(_) => match Rows::extract(candidates, "candidates")? {
            Rows::Array(a) => slice1(&a).iter().copied().collect(),
            Rows::Bitmap(b) => b,
        },
    };
    let (m, q) = (slice2(&matrix), slice1(&query));
    let out = detached(py, "cosine top-k", || run(&m, dim, &q, &bitmap, k))?;
    Ok((
        vec1(py, out.iter().map(|p| p.0).collect()),
        vec1(py, out.iter().map(|p| p.1).collect()),
    ))
}
