//! `SalienceTable`, `TopK` and `DecayPass` for Python.

use std::path::PathBuf;

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadwriteArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::arrays::{array1, array2, count_k, slice1, slice2, vec1, vec2, Rows};
use super::cue::PyPruned;
use super::errors::{detached, guarded, type_error};
use crate::error::CoreError;
use crate::salience::{Params, SalienceTable, TopK, N_AXES};

/// A row as written: `(axes, confidence, t, protected)`.
type Written = ([f32; N_AXES], f32, f64, bool);

/// Seven decaying salience axes, confidence and reference time per row.
#[pyclass(module = "cuemem._core", name = "SalienceTable")]
pub struct PySalienceTable {
    pub(super) inner: SalienceTable,
}

/// Top k of `candidates` (numpy array, pyroaring bitmap or `Pruned`), GIL released.
fn top_k_of(
    table: &SalienceTable,
    candidates: &Bound<'_, PyAny>,
    now: f64,
    k: usize,
) -> PyResult<TopK> {
    let py = candidates.py();
    const WHAT: &str = "salience top k";
    if let Ok(pruned) = candidates.cast::<PyPruned>() {
        let rows = &pruned.get().0.rows;
        return detached(py, WHAT, || table.top_k_bitmap(rows, now, k));
    }
    match Rows::extract(candidates, "candidates")? {
        Rows::Array(a) => {
            // As a set: a row named twice is one candidate, as in a bitmap.
            let rows = slice1(&a);
            detached(py, WHAT, || {
                table.top_k_bitmap(&rows.iter().copied().collect(), now, k)
            })
        }
        Rows::Bitmap(b) => detached(py, WHAT, || table.top_k_bitmap(&b, now, k)),
    }
}

#[pymethods]
impl PySalienceTable {
    #[new]
    #[pyo3(signature = (weights=None, half_lives_days=None))]
    fn new(
        py: Python<'_>,
        weights: Option<[f32; N_AXES]>,
        half_lives_days: Option<[f64; N_AXES]>,
    ) -> PyResult<Self> {
        let d = Params::default();
        let inner = guarded(py, "creating a salience table", || {
            Ok(SalienceTable::new(Params::new(
                weights.unwrap_or(d.weights),
                half_lives_days.unwrap_or(d.half_lives_days),
            )?))
        })?;
        Ok(Self { inner })
    }

    #[getter]
    fn weights(&self) -> [f32; N_AXES] {
        self.inner.params().weights
    }

    #[getter]
    fn half_lives_days(&self) -> [f64; N_AXES] {
        self.inner.params().half_lives_days
    }

    #[getter]
    fn nbytes(&self, py: Python<'_>) -> PyResult<usize> {
        guarded(py, "salience table size", || Ok(self.inner.nbytes()))
    }

    #[getter]
    fn live(&self, py: Python<'_>) -> PyResult<usize> {
        guarded(py, "counting live salience rows", || Ok(self.inner.live()))
    }

    fn put(
        &mut self,
        py: Python<'_>,
        rows: &Bound<'_, PyAny>,
        axes: &Bound<'_, PyAny>,
        confidence: &Bound<'_, PyAny>,
        t: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let axes = array2::<f32>(axes, "axes", "float32")?;
        if axes.shape()[1] != N_AXES {
            return Err(super::errors::to_py(
                py,
                CoreError::ShapeMismatch {
                    what: "axes columns",
                    expected: N_AXES,
                    got: axes.shape()[1],
                },
            ));
        }
        let confidence = array1::<f32>(confidence, "confidence", "float32")?;
        let t = array1::<f64>(t, "t", "float64")?;
        let (rows, axes, confidence, t) = (
            slice1(&rows),
            slice2(&axes),
            slice1(&confidence),
            slice1(&t),
        );
        detached(py, "salience put", || {
            self.inner.put(&rows, &axes, &confidence, &t)
        })
    }

    fn remove(&mut self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        detached(py, "salience remove", || {
            self.inner.remove(&rows);
            Ok(())
        })
    }

    /// Removes `rows` and clears their reference times (nothing of them is left).
    fn erase(&mut self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        detached(py, "salience erase", || {
            self.inner.erase(&rows);
            Ok(())
        })
    }

    /// `(axes, confidence, t, protected)` as written, or None if the row is not live.
    fn get(&self, py: Python<'_>, row: i64) -> PyResult<Option<Written>> {
        let Ok(row) = u32::try_from(row) else {
            return Ok(None);
        };
        guarded(py, "reading a salience row", || {
            Ok(self
                .inner
                .get(row)
                .map(|s| (s.axes, s.confidence, s.t, s.protected)))
        })
    }

    fn composite<'py>(
        &self,
        py: Python<'py>,
        rows: &Bound<'py, PyAny>,
        now: f64,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        let out = detached(py, "salience composite", || {
            self.inner.composite(&rows, now)
        })?;
        Ok(vec1(py, out))
    }

    /// What the scores at `now` depend on besides each row (constant work: the GIL is kept).
    fn score_key(&self, py: Python<'_>, now: f64) -> PyResult<Option<i64>> {
        guarded(py, "salience score key", || self.inner.score_key(now))
    }

    fn top_k(
        &self,
        py: Python<'_>,
        candidates: &Bound<'_, PyAny>,
        now: f64,
        #[pyo3(from_py_with = count_k)] k: usize,
    ) -> PyResult<PyTopK> {
        let top = top_k_of(&self.inner, candidates, now, k)?;
        Ok(PyTopK::new(py, top))
    }

    #[pyo3(signature = (now, floor=0.35, out=None))]
    fn decay_pass(
        &self,
        py: Python<'_>,
        now: f64,
        floor: f32,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDecayPass> {
        match out {
            None => {
                let (axes, pass) =
                    detached(py, "decay pass", || self.inner.decay_pass(now, floor))?;
                Ok(PyDecayPass {
                    axes: vec2(py, axes, N_AXES).unbind(),
                    below: vec1(py, pass.below).unbind(),
                })
            }
            Some(obj) => {
                let array = obj
                    .cast::<PyArray2<f32>>()
                    .map_err(|_| type_error(py, "out must be a 2-D numpy float32 array".into()))?;
                let mut rw: PyReadwriteArray2<f32> = array.try_readwrite()?;
                if !rw.is_c_contiguous() {
                    return Err(type_error(
                        py,
                        "out must be a C-contiguous (row-major) float32 array".into(),
                    ));
                }
                let slice = rw
                    .as_slice_mut()
                    .map_err(|_| type_error(py, "out must be C-contiguous".into()))?;
                let pass = detached(py, "decay pass", || {
                    self.inner.decay_pass_into(now, floor, slice)
                })?;
                drop(rw);
                Ok(PyDecayPass {
                    axes: array.clone().unbind(),
                    below: vec1(py, pass.below).unbind(),
                })
            }
        }
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = detached(py, "serializing the salience table", || {
            Ok(self.inner.to_bytes())
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: detached(py, "reading a salience table", || {
                SalienceTable::from_bytes(data)
            })?,
        })
    }

    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        detached(py, "saving the salience table", || self.inner.save(&path))
    }

    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        Ok(Self {
            inner: detached(py, "loading the salience table", || {
                SalienceTable::load(&path)
            })?,
        })
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        guarded(py, "counting salience rows", || Ok(self.inner.len()))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        guarded(py, "salience table repr", || {
            Ok(format!(
                "SalienceTable(rows={}, live={})",
                self.inner.len(),
                self.inner.live()
            ))
        })
    }
}

/// The best rows of a candidate set, best first.
#[pyclass(module = "cuemem._core", name = "TopK", frozen)]
pub struct PyTopK {
    /// Row numbers, uint32.
    #[pyo3(get)]
    pub(super) rows: Py<PyArray1<u32>>,
    /// Composite salience at `now`, float32.
    #[pyo3(get)]
    pub(super) scores: Py<PyArray1<f32>>,
    /// Per-axis contributions, float32 `len x 7`; each row sums to its score.
    #[pyo3(get)]
    pub(super) breakdown: Py<PyArray2<f32>>,
}

impl PyTopK {
    pub(super) fn new(py: Python<'_>, top: TopK) -> Self {
        Self {
            rows: vec1(py, top.rows).unbind(),
            scores: vec1(py, top.scores).unbind(),
            breakdown: vec2(py, top.breakdown, N_AXES).unbind(),
        }
    }
}

#[pymethods]
impl PyTopK {
    fn __len__(&self, py: Python<'_>) -> usize {
        self.rows.bind(py).len()
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        format!("TopK(len={})", self.rows.bind(py).len())
    }
}

/// The weekly pass: every row decayed to `now`, and the rows below the floor.
#[pyclass(module = "cuemem._core", name = "DecayPass", frozen)]
pub struct PyDecayPass {
    /// float32 `rows x 7`: axes decayed to `now` (protected rows unchanged, removed rows zero).
    #[pyo3(get)]
    axes: Py<PyArray2<f32>>,
    /// uint32: live, unprotected rows whose composite is below the floor.
    #[pyo3(get)]
    below: Py<PyArray1<u32>>,
}
