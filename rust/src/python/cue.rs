//! `CueIndex`, `Pruned` and `IndexStats` for Python.

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::arrays::{array1, slice1, to_pyroaring, vec1, Rows};
use super::errors::{detached, guarded, to_py};
use super::query;
use crate::cue::{CueIndex, IndexStats, Pruned};

/// A flat array and the end offset of each set's slice of it.
type Ragged<'py, T> = (Bound<'py, PyArray1<T>>, Bound<'py, PyArray1<u64>>);
/// Closed cue sets for Python: the vocabulary, then cue positions, supports and counters.
type ClosedSets<'py> = (
    Vec<(String, String)>,
    Ragged<'py, u32>,
    Ragged<'py, u32>,
    Ragged<'py, u32>,
);

#[derive(Default)]
struct Columns {
    cues: Vec<u32>,
    cue_ends: Vec<u64>,
    support: Vec<u32>,
    support_ends: Vec<u64>,
    counter: Vec<u32>,
    counter_ends: Vec<u64>,
}

fn bad_arg(name: &'static str, reason: &str) -> crate::CoreError {
    crate::CoreError::InvalidArgument {
        name,
        reason: reason.into(),
    }
}

/// Dimension -> value -> roaring posting list over dense uint32 rows.
#[pyclass(module = "cuemem._core", name = "CueIndex")]
pub struct PyCueIndex {
    pub(super) inner: CueIndex,
}

#[pymethods]
impl PyCueIndex {
    #[new]
    fn new(py: Python<'_>, dimensions: Vec<String>) -> PyResult<Self> {
        Ok(Self {
            inner: guarded(py, "creating a cue index", || CueIndex::new(&dimensions))?,
        })
    }

    fn dimensions(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        guarded(py, "listing dimensions", || Ok(self.names()))
    }

    /// The values of `dimension` with a row, sorted; only those from `start` on when given
    /// (a range of them made into strings, not all).
    #[pyo3(signature = (dimension, start=None))]
    fn values(
        &self,
        py: Python<'_>,
        dimension: &str,
        start: Option<&str>,
    ) -> PyResult<Vec<String>> {
        guarded(py, "listing cue values", || {
            let d = self
                .inner
                .dimensions()
                .find(|d| d.name() == dimension)
                .ok_or_else(|| crate::CoreError::UnknownDimension(dimension.into()))?;
            let from = start.unwrap_or("");
            let mut v: Vec<String> = d
                .iter()
                .filter(|(v, _)| *v >= from)
                .map(|(v, _)| v.to_owned())
                .collect();
            v.sort_unstable();
            Ok(v)
        })
    }

    fn insert(
        &mut self,
        py: Python<'_>,
        dimension: &str,
        value: &str,
        rows: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        detached(py, "cue insert", || {
            self.inner.insert(dimension, value, &rows)
        })
    }

    fn insert_column(
        &mut self,
        py: Python<'_>,
        dimension: &str,
        values: Vec<String>,
        codes: &Bound<'_, PyAny>,
        rows: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let codes = array1::<u32>(codes, "codes", "uint32")?;
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let (codes, rows) = (slice1(&codes), slice1(&rows));
        detached(py, "cue insert", || {
            self.inner.insert_column(dimension, &values, &codes, &rows)
        })
    }

    fn insert_values(
        &mut self,
        py: Python<'_>,
        dimension: &str,
        values: Vec<String>,
        rows: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        detached(py, "cue insert", || {
            self.inner.insert_values(dimension, &values, &rows)
        })
    }

    fn withdraw(
        &mut self,
        py: Python<'_>,
        dimension: &str,
        value: &str,
        rows: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        detached(py, "cue withdraw", || {
            self.inner.withdraw(dimension, value, &rows)
        })
    }

    fn remove(&mut self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        detached(py, "cue remove", || {
            self.inner.remove(&rows);
            Ok(())
        })
    }

    #[pyo3(signature = (cues, exclude=None))]
    fn prune(
        &self,
        py: Python<'_>,
        cues: &Bound<'_, PyAny>,
        exclude: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyPruned> {
        let q = query::parse(py, Some(cues), exclude)?;
        Ok(PyPruned(detached(py, "cue prune", || {
            self.inner.prune(&q)
        })?))
    }

    #[pyo3(signature = (cues, exclude=None))]
    fn count(
        &self,
        py: Python<'_>,
        cues: &Bound<'_, PyAny>,
        exclude: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let q = query::parse(py, Some(cues), exclude)?;
        detached(py, "cue count", || self.inner.count(&q))
    }

    /// Whether each of `rows` (uint32) passes `cues` and `exclude`, as a bool array.
    #[pyo3(signature = (cues, rows, exclude=None))]
    fn admits<'py>(
        &self,
        py: Python<'py>,
        cues: &Bound<'py, PyAny>,
        rows: &Bound<'py, PyAny>,
        exclude: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let q = query::parse(py, Some(cues), exclude)?;
        let rows = array1::<u32>(rows, "rows", "uint32")?;
        let rows = slice1(&rows);
        let inner = &self.inner;
        let found = detached(py, "cue membership", || inner.admits(&q, &rows))?;
        Ok(vec1(py, found))
    }

    /// Closed cue sets in columns: the cue vocabulary, then per set its cue positions,
    /// support rows and counter rows as flat arrays with offsets.
    #[pyo3(signature = (dimensions, within, against=None, min_support=2, max_depth=3, productive=false))]
    #[allow(clippy::too_many_arguments)]
    fn closed_sets<'py>(
        &self,
        py: Python<'py>,
        dimensions: Vec<String>,
        within: &Bound<'py, PyAny>,
        against: Option<&Bound<'py, PyAny>>,
        min_support: i64,
        max_depth: i64,
        productive: bool,
    ) -> PyResult<ClosedSets<'py>> {
        let within = Rows::extract(within, "within")?.into_bitmap();
        let against = match against {
            Some(a) => Rows::extract(a, "against")?.into_bitmap(),
            None => roaring::RoaringBitmap::new(),
        };
        let min_support = u64::try_from(min_support)
            .map_err(|_| to_py(py, bad_arg("min_support", "must be at least 1")))?;
        let max_depth = usize::try_from(max_depth)
            .map_err(|_| to_py(py, bad_arg("max_depth", "must not be negative")))?;
        let (vocabulary, columns) = detached(py, "mining closed cue sets", || {
            let mined =
                self.inner
                    .closed_sets(&dimensions, &within, &against, min_support, max_depth)?;
            let mined = if productive {
                mined.productive()
            } else {
                mined
            };
            let mut c = Columns::default();
            for set in &mined.sets {
                c.cues.extend_from_slice(&set.cues);
                c.cue_ends.push(c.cues.len() as u64);
                c.support.extend(set.support.iter());
                c.support_ends.push(c.support.len() as u64);
                c.counter.extend(set.counter.iter());
                c.counter_ends.push(c.counter.len() as u64);
            }
            Ok((mined.cues, c))
        })?;
        let c = columns;
        Ok((
            vocabulary,
            (vec1(py, c.cues), vec1(py, c.cue_ends)),
            (vec1(py, c.support), vec1(py, c.support_ends)),
            (vec1(py, c.counter), vec1(py, c.counter_ends)),
        ))
    }

    fn posting<'py>(
        &self,
        py: Python<'py>,
        dimension: &str,
        value: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        match guarded(py, "reading a posting list", || {
            self.inner.posting(dimension, value)
        })? {
            Some(p) => to_pyroaring(py, p),
            None => to_pyroaring(py, &roaring::RoaringBitmap::new()),
        }
    }

    fn live<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_pyroaring(
            py,
            guarded(py, "reading the live rows", || Ok(self.inner.live()))?,
        )
    }

    fn stats(&self, py: Python<'_>) -> PyResult<PyIndexStats> {
        guarded(py, "cue index stats", || {
            Ok(PyIndexStats(self.inner.stats()))
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = detached(py, "serializing the cue index", || {
            Ok(self.inner.to_bytes())
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: detached(py, "reading a cue index", || CueIndex::from_bytes(data))?,
        })
    }

    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        detached(py, "saving the cue index", || self.inner.save(&path))
    }

    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        Ok(Self {
            inner: detached(py, "loading the cue index", || CueIndex::load(&path))?,
        })
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        guarded(py, "counting live rows", || {
            Ok(self.inner.live().len() as usize)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        guarded(py, "cue index repr", || {
            let s = self.inner.stats();
            Ok(format!(
                "CueIndex(dimensions={:?}, rows={}, values={})",
                self.names(),
                s.rows,
                s.values
            ))
        })
    }
}

impl PyCueIndex {
    fn names(&self) -> Vec<String> {
        self.inner
            .dimensions()
            .map(|d| d.name().to_owned())
            .collect()
    }
}

/// The rows a query leaves (a bitmap held in the core) and the work it took.
#[pyclass(module = "cuemem._core", name = "Pruned", frozen)]
pub struct PyPruned(pub(super) Pruned);

#[pymethods]
impl PyPruned {
    /// Matching rows as a numpy uint32 array, ascending.
    #[getter]
    fn rows<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        let rows: Vec<u32> = py.detach(|| self.0.rows.iter().collect());
        vec1(py, rows)
    }

    #[getter]
    fn examined(&self) -> u64 {
        self.0.examined
    }

    #[getter]
    fn full_scan(&self) -> u64 {
        self.0.full_scan
    }

    /// Matching rows as a `pyroaring.BitMap`.
    fn bitmap<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_pyroaring(py, &self.0.rows)
    }

    fn __len__(&self) -> usize {
        self.0.rows.len() as usize
    }

    fn __repr__(&self) -> String {
        format!(
            "Pruned(len={}, examined={}, full_scan={})",
            self.0.rows.len(),
            self.0.examined,
            self.0.full_scan
        )
    }
}

/// Size figures of a cue index.
#[pyclass(module = "cuemem._core", name = "IndexStats", frozen, eq)]
#[derive(PartialEq)]
pub struct PyIndexStats(IndexStats);

#[pymethods]
impl PyIndexStats {
    #[getter]
    fn rows(&self) -> u64 {
        self.0.rows
    }
    #[getter]
    fn dimensions(&self) -> u64 {
        self.0.dimensions
    }
    #[getter]
    fn values(&self) -> u64 {
        self.0.values
    }
    #[getter]
    fn postings(&self) -> u64 {
        self.0.postings
    }
    #[getter]
    fn bytes(&self) -> u64 {
        self.0.bytes
    }
    fn __repr__(&self) -> String {
        let s = &self.0;
        format!(
            "IndexStats(rows={}, dimensions={}, values={}, postings={}, bytes={})",
            s.rows, s.dimensions, s.values, s.postings, s.bytes
        )
    }
}
