//! The fused recall path for Python: one call, GIL released, arrays out.

use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;

use super::arrays::count_k;
use super::cue::PyCueIndex;
use super::errors::detached;
use super::query;
use super::salience::{PySalienceTable, PyTopK};
use crate::recall::recall as run;

/// Cue pruning plus decayed-composite top k, with the work it took.
#[pyclass(module = "cuemem._core", name = "Recall", frozen)]
pub struct PyRecall {
    #[pyo3(get)]
    rows: Py<PyArray1<u32>>,
    #[pyo3(get)]
    scores: Py<PyArray1<f32>>,
    #[pyo3(get)]
    breakdown: Py<PyArray2<f32>>,
    /// Rows matching the cues before ranking.
    #[pyo3(get)]
    total: u64,
    /// Postings touched by the pruning plan.
    #[pyo3(get)]
    examined: u64,
    /// Live rows: what a scan would have visited.
    #[pyo3(get)]
    full_scan: u64,
}

#[pymethods]
impl PyRecall {
    fn __repr__(&self) -> String {
        format!(
            "Recall(total={}, examined={}, full_scan={})",
            self.total, self.examined, self.full_scan
        )
    }
}

#[pyfunction]
#[pyo3(signature = (index, table, cues, now, k=10, exclude=None))]
pub fn recall(
    py: Python<'_>,
    index: PyRef<'_, PyCueIndex>,
    table: PyRef<'_, PySalienceTable>,
    cues: Option<&Bound<'_, PyAny>>,
    now: f64,
    #[pyo3(from_py_with = count_k)] k: usize,
    exclude: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyRecall> {
    let q = query::parse(py, cues, exclude)?;
    let (index, table) = (&index.inner, &table.inner);
    let r = detached(py, "recall", || run(index, table, &q, now, k))?;
    let top = PyTopK::new(py, r.top);
    Ok(PyRecall {
        rows: top.rows,
        scores: top.scores,
        breakdown: top.breakdown,
        total: r.total,
        examined: r.examined,
        full_scan: r.full_scan,
    })
}
