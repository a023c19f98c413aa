//! `Threads` for Python: a thread's rows in order, and the spread of a pool's scores.

use pyo3::prelude::*;

use super::arrays::{array1, slice1, vec1, RowsScores};
use super::cue::PyCueIndex;
use super::errors::{detached, guarded};
use crate::thread::{Spread, Threads};

/// Thread and live neighbours of each row (see `cuemem_core::thread`).
#[pyclass(module = "cuemem._core", name = "Threads")]
pub struct PyThreads {
    inner: Threads,
}

#[pymethods]
impl PyThreads {
    #[new]
    fn new() -> Self {
        Self {
            inner: Threads::new(),
        }
    }

    /// The threads of `dimension`'s posting lists in `index`.
    #[staticmethod]
    fn from_cues(py: Python<'_>, index: PyRef<'_, PyCueIndex>, dimension: &str) -> PyResult<Self> {
        let index = &index.inner;
        Ok(Self {
            inner: detached(py, "building threads", || {
                Threads::from_cues(index, dimension)
            })?,
        })
    }

    /// Links `rows[i]` (uint32) as the newest row of thread `names[i]`.
    fn append(
        &mut self,
        py: Python<'_>,
        rows: &Bound<'_, PyAny>,
        names: Vec<String>,
    ) -> PyResult<()> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        let inner = &mut self.inner;
        detached(py, "appending to threads", || inner.append(&rows, &names))
    }

    /// Unlinks `rows` (uint32) from their threads.
    fn remove(&mut self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        let inner = &mut self.inner;
        detached(py, "removing from threads", || {
            inner.remove(&rows);
            Ok(())
        })
    }

    /// The thread code of `row`, or None.
    fn thread(&self, py: Python<'_>, row: u32) -> PyResult<Option<u32>> {
        guarded(py, "reading a thread", || Ok(self.inner.thread(row)))
    }

    /// The live rows just before and after `row` in its thread (None where there is none).
    fn neighbours(&self, py: Python<'_>, row: u32) -> PyResult<(Option<u32>, Option<u32>)> {
        guarded(py, "reading neighbours", || Ok(self.inner.neighbours(row)))
    }

    /// The pool (uint32 rows, float32 scores) with spread scores: the pool first, then
    /// the rows its scores reached.
    #[pyo3(signature = (rows, scores, *, neighbour_share, window, thread_share))]
    fn spread<'py>(
        &self,
        py: Python<'py>,
        rows: &Bound<'py, PyAny>,
        scores: &Bound<'py, PyAny>,
        neighbour_share: f32,
        window: usize,
        thread_share: f32,
    ) -> PyResult<RowsScores<'py>> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let scores = array1::<f32>(scores, "scores", "float32")?;
        let (rows, scores) = (slice1(&rows), slice1(&scores));
        if rows.len() != scores.len() {
            return Err(super::errors::to_py(
                py,
                crate::CoreError::InvalidArgument {
                    name: "scores",
                    reason: format!("{} scores for {} rows", scores.len(), rows.len()),
                },
            ));
        }
        let pool: Vec<(u32, f32)> = rows.iter().copied().zip(scores.iter().copied()).collect();
        let how = Spread {
            neighbour_share,
            window,
            thread_share,
        };
        let inner = &self.inner;
        let out = detached(py, "spreading scores", || inner.spread(&pool, &how))?;
        Ok((
            vec1(py, out.iter().map(|p| p.0).collect()),
            vec1(py, out.iter().map(|p| p.1).collect()),
        ))
    }

    /// Whether no live row belongs to a thread.
    fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    fn __repr__(&self) -> String {
        format!("Threads(empty={})", self.inner.is_empty())
    }
}
