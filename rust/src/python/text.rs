//! `TextIndex` and the text recall path for Python.

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::prelude::*;
use roaring::RoaringBitmap;

use super::arrays::{count_k, count_limit, count_pool, slice1, vec1, Rows, RowsScores};
use super::cue::{PyCueIndex, PyPruned};
use super::errors::{detached, guarded};
use super::query;
use super::salience::PySalienceTable;
use crate::error::CoreError;
use crate::text::{
    recall as run, Analyzer, Blend, Plan, TextHit, TextIndex, TextQuery, TAIL_LIMIT,
};

/// BM25 over row texts in a directory (tantivy inside the core).
#[pyclass(module = "cuemem._core", name = "TextIndex")]
pub struct PyTextIndex {
    pub(super) inner: TextIndex,
}

fn plan(py: Python<'_>, name: &str) -> PyResult<Plan> {
    match name {
        "auto" => Ok(Plan::Auto),
        "scan" => Ok(Plan::Scan),
        "seek" => Ok(Plan::Seek),
        other => Err(super::errors::to_py(
            py,
            CoreError::InvalidArgument {
                name: "plan",
                reason: format!("must be auto, scan or seek, got {other:?}"),
            },
        )),
    }
}

#[pymethods]
impl PyTextIndex {
    #[new]
    #[pyo3(signature = (path, analyzer="stem-bigram", writable=true))]
    fn new(py: Python<'_>, path: PathBuf, analyzer: &str, writable: bool) -> PyResult<Self> {
        let analyzer = guarded(py, "choosing the analyzer", || {
            Analyzer::from_name(analyzer)
        })?;
        let inner = detached(py, "opening the text index", || {
            TextIndex::open(&path, analyzer, writable)
        })?;
        Ok(PyTextIndex { inner })
    }

    /// Every analyzer's name.
    #[staticmethod]
    fn analyzers() -> Vec<&'static str> {
        Analyzer::ALL.iter().map(|a| a.name()).collect()
    }

    #[getter]
    fn analyzer(&self) -> &'static str {
        self.inner.analyzer().name()
    }

    /// Documents added since the last commit.
    #[getter]
    fn pending(&self) -> u64 {
        self.inner.pending()
    }

    /// Whether searches see every pending document (held in memory, at most `tail_limit`).
    #[getter]
    fn searches_pending(&self) -> bool {
        self.inner.searches_pending()
    }

    /// The most pending documents searched in memory before a commit is needed.
    #[classattr]
    fn tail_limit() -> usize {
        TAIL_LIMIT
    }

    /// Committed documents.
    #[getter]
    fn num_docs(&self, py: Python<'_>) -> PyResult<u64> {
        guarded(py, "counting text documents", || Ok(self.inner.num_docs()))
    }

    /// The payload of the last commit, or None.
    #[getter]
    fn payload(&self, py: Python<'_>) -> PyResult<Option<String>> {
        guarded(py, "reading the text index payload", || {
            self.inner.payload()
        })
    }

    fn add(&mut self, py: Python<'_>, rows: &Bound<'_, PyAny>, texts: Vec<String>) -> PyResult<()> {
        let rows: Vec<u32> = match Rows::extract(rows, "rows")? {
            Rows::Array(a) => slice1(&a).into_owned(),
            Rows::Bitmap(b) => b.iter().collect(),
        };
        let inner = &mut self.inner;
        detached(py, "adding to the text index", || inner.add(&rows, &texts))
    }

    fn commit(&mut self, py: Python<'_>, payload: &str) -> PyResult<()> {
        let inner = &mut self.inner;
        detached(py, "committing the text index", || inner.commit(payload))
    }

    /// Releases the writer and its lock; the index stays searchable.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        let inner = &mut self.inner;
        detached(py, "closing the text index", || inner.close())
    }

    /// Lets go of an inherited writer untouched (a forked child's): nothing is waited for,
    /// joined or removed.
    fn abandon(&mut self) {
        self.inner.abandon();
    }

    /// Erases the documents of `rows` (deleted, their segments merged without them);
    /// how many it removed.
    fn erase(&mut self, py: Python<'_>, rows: &Bound<'_, PyAny>, payload: &str) -> PyResult<u64> {
        let rows: RoaringBitmap = match Rows::extract(rows, "rows")? {
            Rows::Array(a) => slice1(&a).iter().copied().collect(),
            Rows::Bitmap(b) => b,
        };
        let inner = &mut self.inner;
        detached(py, "erasing from the text index", || {
            inner.erase(&rows, payload)
        })
    }

    /// Whether a term of `text` is still in any segment's term dictionary or the tail.
    fn holds_terms(&self, py: Python<'_>, text: &str) -> PyResult<bool> {
        let inner = &self.inner;
        detached(py, "reading the text index's terms", || {
            inner.holds_terms(text)
        })
    }

    fn rollback(&mut self, py: Python<'_>) -> PyResult<()> {
        let inner = &mut self.inner;
        detached(py, "rolling back the text index", || inner.rollback())
    }

    fn reload(&self, py: Python<'_>) -> PyResult<()> {
        let inner = &self.inner;
        detached(py, "reloading the text index", || inner.reload())
    }

    /// The distinct terms the analyzer makes of `text`.
    fn terms(&self, py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
        guarded(py, "analyzing text", || Ok(self.inner.query_terms(text)))
    }

    /// The best `limit` rows by BM25 (among `candidates`: uint32 array, pyroaring
    /// bitmap or Pruned), as (rows, scores) arrays, best first.
    #[pyo3(signature = (text, candidates=None, limit=10, plan="auto"))]
    fn search<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        candidates: Option<&Bound<'py, PyAny>>,
        #[pyo3(from_py_with = count_limit)] limit: usize,
        plan: &str,
    ) -> PyResult<RowsScores<'py>> {
        let plan = self::plan(py, plan)?;
        let bitmap = match candidates {
            None => None,
            Some(c) if c.is_none() => None,
            Some(c) => Some(match c.cast::<PyPruned>() {
                Ok(p) => p.get().0.rows.clone(),
                Err(_) => match Rows::extract(c, "candidates")? {
                    Rows::Array(a) => slice1(&a).iter().copied().collect(),
                    Rows::Bitmap(b) => b,
                },
            }),
        };
        let inner = &self.inner;
        let hits = detached(py, "text search", || {
            inner.search(text, bitmap.as_ref(), limit, plan)
        })?;
        Ok((
            vec1(py, hits.iter().map(|h| h.0).collect()),
            vec1(py, hits.iter().map(|h| h.1).collect()),
        ))
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        guarded(py, "counting text documents", || {
            Ok(self.inner.num_docs() as usize)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (analyzer, docs, pending) = (
            self.inner.analyzer().name(),
            self.num_docs(py)?,
            self.inner.pending(),
        );
        Ok(format!(
            "TextIndex(analyzer={analyzer:?}, docs={docs}, pending={pending})"
        ))
    }
}

/// Blended text hits and the work the recall took.
#[pyclass(module = "cuemem._core", name = "TextRecall", frozen)]
pub struct PyTextRecall {
    #[pyo3(get)]
    rows: Py<PyArray1<u32>>,
    /// The blended scores.
    #[pyo3(get)]
    scores: Py<PyArray1<f32>>,
    #[pyo3(get)]
    bm25: Py<PyArray1<f32>>,
    /// Weighted parts of each score: text, salience, freshness.
    #[pyo3(get)]
    text: Py<PyArray1<f32>>,
    #[pyo3(get)]
    salience: Py<PyArray1<f32>>,
    #[pyo3(get)]
    freshness: Py<PyArray1<f32>>,
    #[pyo3(get)]
    total: u64,
    #[pyo3(get)]
    examined: u64,
    #[pyo3(get)]
    full_scan: u64,
}

#[pymethods]
impl PyTextRecall {
    fn __repr__(&self) -> String {
        format!(
            "TextRecall(total={}, examined={}, full_scan={})",
            self.total, self.examined, self.full_scan
        )
    }
}

fn column(py: Python<'_>, hits: &[TextHit], f: impl Fn(&TextHit) -> f32) -> Py<PyArray1<f32>> {
    vec1(py, hits.iter().map(f).collect()).unbind()
}

/// Cues prune, text ranks by BM25, the blend re-ranks (one call, GIL released).
///
/// With `whole_pool`, every blended row of the pool comes back (at least `k`), for a
/// caller that re-ranks the pool further; with `scale`, the text part is relative to
/// that BM25 rather than the pool's best.
#[pyfunction]
#[pyo3(signature = (index, table, text_index, cues, text, now, k=10, exclude=None, *, text_weight=1.0, salience_weight=0.3, freshness_weight=0.0, freshness_half_life_days=30.0, pool=100, whole_pool=false, scale=None))]
#[allow(clippy::too_many_arguments)]
pub fn text_recall(
    py: Python<'_>,
    index: PyRef<'_, PyCueIndex>,
    table: PyRef<'_, PySalienceTable>,
    text_index: PyRef<'_, PyTextIndex>,
    cues: Option<&Bound<'_, PyAny>>,
    text: &str,
    now: f64,
    #[pyo3(from_py_with = count_k)] k: usize,
    exclude: Option<&Bound<'_, PyAny>>,
    text_weight: f32,
    salience_weight: f32,
    freshness_weight: f32,
    freshness_half_life_days: f64,
    #[pyo3(from_py_with = count_pool)] pool: usize,
    whole_pool: bool,
    scale: Option<f32>,
) -> PyResult<PyTextRecall> {
    let weights = Blend {
        text: text_weight,
        salience: salience_weight,
        freshness: freshness_weight,
        freshness_half_life_days,
        pool,
    };
    let k = if whole_pool { k.max(pool) } else { k };
    let q = query::parse(py, cues, exclude)?;
    let (index, table, text_index) = (&index.inner, &table.inner, &text_index.inner);
    let ask = TextQuery {
        text,
        weights,
        now,
        k,
        scale,
    };
    let r = detached(py, "text recall", || {
        run(index, table, text_index, &q, &ask)
    })?;
    Ok(PyTextRecall {
        rows: vec1(py, r.hits.iter().map(|h| h.row).collect()).unbind(),
        scores: column(py, &r.hits, |h| h.score),
        bm25: column(py, &r.hits, |h| h.bm25),
        text: column(py, &r.hits, |h| h.text),
        salience: column(py, &r.hits, |h| h.salience),
        freshness: column(py, &r.hits, |h| h.freshness),
        total: r.total,
        examined: r.examined,
        full_scan: r.full_scan,
    })
}
