//! `Decoder` and `Decoded` for Python: the schema compiled once, journal runs decoded
//! with the GIL released, and the rows handed to the indexes without crossing back.

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use super::cue::PyCueIndex;
use super::errors::{detached, detached_if, guarded, invalid_argument, DETACH_BYTES, DETACH_ROWS};
use super::items::PyItems;
use super::salience::PySalienceTable;
use super::text::PyTextIndex;
use crate::error::CoreError;
use crate::records::{
    add_texts, index_cues, put_salience, CueSpec, Decoded, Decoder, Derive, FieldSpec, Found,
    IdRows, Line, RowRef, Rule, Schema, Seen, Val,
};
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// A field as Python declares it: name, rule, optional, limit, choices, required, default (JSON text; None: derived).
type FieldTuple = (
    String,
    String,
    bool,
    Option<usize>,
    Option<Vec<String>>,
    bool,
    Option<String>,
);
/// A cue as Python declares it: dimension, derivation, fields, folded, band floors, trust marks.
type CueTuple = (
    String,
    String,
    Vec<String>,
    bool,
    Option<Vec<(f64, String)>>,
    Option<(String, String)>,
);

/// What every stored episode holds, as Python declares it: field, values, other field, flag.
type ImpliedTuple = (String, Vec<String>, String, bool);

fn bad(reason: String) -> CoreError {
    CoreError::InvalidArgument {
        name: "schema",
        reason,
    }
}

/// The episode schema compiled, and the record kind it decodes.
#[pyclass(module = "cuemem._core", name = "Decoder", frozen)]
pub struct PyDecoder {
    pub(super) inner: Decoder,
    /// The cue dimensions' names, shared with every run it decodes.
    dimensions: Arc<[String]>,
}

#[pymethods]
impl PyDecoder {
    #[new]
    #[pyo3(signature = (fields, cues, axes, op, track=None, sparse=None, implied=None, versions=None))]
    #[allow(clippy::too_many_arguments)] // the Python constructor's parameters, each a part of the schema
    fn new(
        py: Python<'_>,
        fields: Vec<FieldTuple>,
        cues: Vec<CueTuple>,
        axes: Vec<String>,
        op: String,
        track: Option<(String, String, Vec<String>)>,
        sparse: Option<Vec<String>>,
        implied: Option<Vec<ImpliedTuple>>,
        versions: Option<String>,
    ) -> PyResult<Self> {
        guarded(py, "compiling the schema", || {
            let mut specs = Vec::with_capacity(fields.len());
            for (name, rule, optional, max, values, required, default) in fields {
                specs.push(FieldSpec {
                    rule: Rule::from_name(&rule, max, values, optional)?,
                    name,
                    required,
                    default,
                });
            }
            let mut derived = Vec::with_capacity(cues.len());
            for (dimension, how, fields, folded, floors, marks) in cues {
                let derive = match how.as_str() {
                    "value" => Derive::Value,
                    "values" => Derive::Values,
                    "buckets" => Derive::Buckets,
                    "band" => Derive::Band(
                        floors.ok_or_else(|| bad("the band cue needs its floors".into()))?,
                    ),
                    "trust" => {
                        let (q, t) =
                            marks.ok_or_else(|| bad("the trust cue needs its marks".into()))?;
                        Derive::Trust([q, t])
                    }
                    "meta" => Derive::Meta,
                    other => return Err(bad(format!("unknown cue derivation {other:?}"))),
                };
                derived.push(CueSpec {
                    dimension,
                    fields,
                    derive,
                    folded,
                });
            }
            let schema = Schema::new(specs, derived, axes)?;
            let dimensions = schema
                .dimensions()
                .map(str::to_owned)
                .collect::<Vec<_>>()
                .into();
            let mut inner = Decoder::new(schema, op, track)?
                .with_sparse(&sparse.unwrap_or_default())?
                .with_implied(implied.unwrap_or_default())?;
            if let Some(op) = versions {
                inner = inner.with_versions(op);
            }
            Ok(Self { inner, dimensions })
        })
    }

    /// The cue dimensions, in the schema's order.
    #[getter]
    fn dimensions(&self) -> Vec<String> {
        self.dimensions.to_vec()
    }

    /// The journal line of a write's episode — `values`, one per field in the schema's
    /// order, `None` for a field left out — when the core proves every value valid and in
    /// the form validation leaves it in; `None` otherwise (the caller validates in full).
    fn encode<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> Option<Bound<'py, PyBytes>> {
        let items: Vec<Bound<'py, PyAny>> = values.cast::<PyList>().ok()?.iter().collect();
        let line = self.inner.encode(&vals(&items)?)?;
        Some(PyBytes::new(py, &line))
    }

    /// [`encode`](Self::encode)'s line with what [`decode`](Self::decode) of that line
    /// gives, worked out from the values rather than read back (a live write's row).
    fn encode_decoded<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> Option<(Bound<'py, PyBytes>, PyDecoded)> {
        let items: Vec<Bound<'py, PyAny>> = values.cast::<PyList>().ok()?.iter().collect();
        let (line, decoded) = self.inner.encode_decoded(&vals(&items)?)?;
        Some((PyBytes::new(py, &line), self.wrap(decoded)))
    }

    /// The items of a chunk of an import's JSONL lines, each a JSON object of the fields
    /// `keys` (see `Items`).
    fn read_items(slf: Bound<'_, Self>, chunk: &[u8], keys: Vec<String>) -> PyItems {
        PyItems::read(slf, chunk, keys)
    }

    /// Decodes a run of whole journal lines (the GIL released); with `narratives_only`, a
    /// row is any line of the record kind, holding its id and narrative only.
    #[pyo3(signature = (run, narratives_only=false))]
    fn decode(&self, py: Python<'_>, run: &[u8], narratives_only: bool) -> PyResult<PyDecoded> {
        let inner = &self.inner;
        let decoded = detached_if(
            py,
            run.len() >= DETACH_BYTES,
            "decoding journal lines",
            || Ok(inner.decode(run, narratives_only)),
        )?;
        Ok(self.wrap(decoded))
    }
}

impl PyDecoder {
    /// `decoded` for Python, its cue dimensions named as this decoder's schema names them.
    pub(super) fn wrap(&self, decoded: Decoded) -> PyDecoded {
        PyDecoded {
            inner: decoded,
            dimensions: Arc::clone(&self.dimensions),
        }
    }
}

/// A decoded run: its lines in order (rows and deferred byte ranges) and the rows.
#[pyclass(module = "cuemem._core", name = "Decoded", frozen)]
pub struct PyDecoded {
    inner: Decoded,
    dimensions: Arc<[String]>,
}

impl PyDecoded {
    fn rows(&self, lo: usize, hi: usize) -> Result<Vec<RowRef<'_>>, CoreError> {
        let out_of_range = || CoreError::InvalidArgument {
            name: "rows",
            reason: format!(
                "{lo}..{hi} is not within the {} rows decoded",
                self.inner.len()
            ),
        };
        if lo > hi {
            return Err(out_of_range());
        }
        Ok(self.inner.rows(lo, hi).ok_or_else(out_of_range)?.collect())
    }
}

#[pymethods]
impl PyDecoded {
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// The `version` records the decoder proved among the lines it left to the caller (a
    /// decoder made with `versions`), in order: `(start, subject, id, supersedes, valid_from,
    /// at)`, each field as the line holds it, `start` where the line starts in the run.
    #[allow(clippy::type_complexity)]
    fn versions(&self) -> Vec<(usize, &str, &str, Option<&str>, &str, &str)> {
        self.inner
            .versions()
            .map(|v| (v.start, v.subject, v.id, v.supersedes, v.valid_from, v.at))
            .collect()
    }

    /// The run in order: `(True, lo, hi)` for rows `lo..hi`, `(False, start, end)` for a
    /// line left to the caller (its bytes `start..end` of the run).
    fn plan(&self) -> Vec<(bool, usize, usize)> {
        let mut out: Vec<(bool, usize, usize)> = Vec::new();
        for line in &self.inner.lines {
            match *line {
                Line::Row(i) => match out.last_mut() {
                    Some((true, _, hi)) if *hi == i as usize => *hi += 1,
                    _ => out.push((true, i as usize, i as usize + 1)),
                },
                Line::Deferred { start, end } => out.push((false, start, end)),
            }
        }
        out
    }

    /// Rows `lo..hi` on their own (rows `0 .. hi - lo` of what it answers), their narratives
    /// left out: what is kept of rows whose text is indexed already.
    fn without_narratives(&self, py: Python<'_>, lo: usize, hi: usize) -> PyResult<PyDecoded> {
        guarded(py, "keeping decoded rows", || self.rows(lo, hi).map(drop))?;
        let inner = &self.inner;
        let kept = detached(py, "keeping decoded rows", || {
            Ok(inner.without_narratives(lo, hi).unwrap_or_default())
        })?;
        Ok(PyDecoded {
            inner: kept,
            dimensions: Arc::clone(&self.dimensions),
        })
    }

    /// The ids of rows `lo..hi`.
    fn ids(&self, py: Python<'_>, lo: usize, hi: usize) -> PyResult<Vec<&str>> {
        let rows = guarded(py, "reading decoded ids", || self.rows(lo, hi))?;
        Ok(rows.iter().map(RowRef::id).collect())
    }

    /// Where each of rows `lo..hi` starts: `base` plus its offset in the run.
    fn offsets<'py>(
        &self,
        py: Python<'py>,
        lo: usize,
        hi: usize,
        base: u64,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let rows = guarded(py, "reading decoded offsets", || self.rows(lo, hi))?;
        Ok(rows
            .iter()
            .map(|r| base + r.start() as u64)
            .collect::<Vec<u64>>()
            .into_pyarray(py))
    }

    /// `(i, kept values)` of the tracked rows among `lo..hi` (`i` counted from `lo`).
    fn tracked(&self, py: Python<'_>, lo: usize, hi: usize) -> PyResult<Vec<(usize, Vec<&str>)>> {
        let rows = guarded(py, "reading tracked rows", || self.rows(lo, hi))?;
        Ok(rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.tracked().map(|t| (i, t.collect())))
            .collect())
    }

    /// The byte range `(start, end)` of each of rows `lo..hi` in the run.
    fn spans(&self, py: Python<'_>, lo: usize, hi: usize) -> PyResult<Vec<(usize, usize)>> {
        let rows = guarded(py, "reading decoded spans", || self.rows(lo, hi))?;
        Ok(rows.iter().map(|r| (r.start(), r.end())).collect())
    }

    /// `(i, sources)` of the rows among `lo..hi` that cite others.
    fn citing(&self, py: Python<'_>, lo: usize, hi: usize) -> PyResult<Vec<(usize, Vec<&str>)>> {
        let rows = guarded(py, "reading decoded sources", || self.rows(lo, hi))?;
        Ok(rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.sources().len() > 0)
            .map(|(i, r)| (i, r.sources().collect()))
            .collect())
    }

    /// The values of cue `dimension` among rows `lo..hi`, and each one's row (counted from `lo`).
    fn values<'py>(
        &self,
        py: Python<'py>,
        dimension: &str,
        lo: usize,
        hi: usize,
    ) -> PyResult<(Vec<&str>, Bound<'py, PyArray1<u32>>)> {
        let rows = guarded(py, "reading decoded cues", || self.rows(lo, hi))?;
        let d = guarded(py, "reading decoded cues", || {
            self.dimensions
                .iter()
                .position(|n| n == dimension)
                .ok_or_else(|| CoreError::UnknownDimension(dimension.into()))
        })?;
        let mut names = Vec::new();
        let mut at = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            for (cd, v) in row.cues() {
                if cd as usize == d {
                    names.push(v);
                    at.push(i as u32);
                }
            }
        }
        Ok((names, at.into_pyarray(py)))
    }

    /// Adds rows `lo..hi` as rows `first ..` of the cue index and the salience table.
    fn feed(
        &self,
        py: Python<'_>,
        lo: usize,
        hi: usize,
        first: u32,
        cues: &Bound<'_, PyCueIndex>,
        salience: &Bound<'_, PySalienceTable>,
    ) -> PyResult<()> {
        let rows = guarded(py, "feeding decoded rows", || self.rows(lo, hi))?;
        let dimensions = &self.dimensions;
        let release = rows.len() >= DETACH_ROWS;
        {
            let mut cues = cues.borrow_mut();
            let index = &mut cues.inner;
            detached_if(py, release, "indexing decoded cues", || {
                index_cues(index, dimensions, &rows, first)
            })?;
        }
        let mut salience = salience.borrow_mut();
        let table = &mut salience.inner;
        detached_if(py, release, "putting decoded salience", || {
            put_salience(table, &rows, first)
        })
    }

    /// Takes the ids of rows `lo..hi` as met by `seen` if none of them may have been (see
    /// `Seen.claim`); returns whether it did.
    fn claim_ids(
        &self,
        py: Python<'_>,
        lo: usize,
        hi: usize,
        seen: &Bound<'_, PySeen>,
    ) -> PyResult<bool> {
        let rows = guarded(py, "claiming decoded ids", || self.rows(lo, hi))?;
        let mut seen = seen.borrow_mut();
        let inner = &mut seen.inner;
        detached_if(
            py,
            rows.len() >= DETACH_ROWS,
            "claiming decoded ids",
            || Ok(inner.claim(rows.iter().map(|r| r.id().as_bytes()))),
        )
    }

    /// Adds the narratives of rows `lo..hi` as documents of rows `first ..` of `text`.
    fn feed_text(
        &self,
        py: Python<'_>,
        lo: usize,
        hi: usize,
        first: u32,
        text: &Bound<'_, PyTextIndex>,
    ) -> PyResult<()> {
        let rows = guarded(py, "feeding decoded narratives", || self.rows(lo, hi))?;
        let mut text = text.borrow_mut();
        let index = &mut text.inner;
        detached_if(
            py,
            rows.len() >= DETACH_ROWS,
            "indexing decoded narratives",
            || add_texts(index, &rows, first),
        )
    }
}

/// The values of a write, each as the core proves it (`None`: one is not proven).
fn vals<'a>(items: &'a [Bound<'_, PyAny>]) -> Option<Vec<Val<'a>>> {
    items.iter().map(val).collect()
}

/// A Python value as the core proves it: None, a bool, a float or an int (not a bool), a
/// str (an enum's value among them, borrowed), a list or tuple of str, a dict of str to
/// numbers; anything else is `None` (not proven).
fn val<'a>(obj: &'a Bound<'_, PyAny>) -> Option<Val<'a>> {
    if obj.is_none() {
        return Some(Val::Null);
    }
    if let Ok(b) = obj.cast_exact::<PyBool>() {
        return Some(Val::Bool(b.is_true()));
    }
    if obj.is_exact_instance_of::<PyFloat>() || obj.is_exact_instance_of::<PyInt>() {
        return obj.extract::<f64>().ok().map(Val::Num);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s.to_str().ok().map(|s| Val::Str(Cow::Borrowed(s)));
    }
    if obj.is_exact_instance_of::<PyList>() || obj.is_exact_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in obj.try_iter().ok()? {
            let item = item.ok()?;
            let s = item.cast::<PyString>().ok()?;
            items.push(Cow::Owned(s.to_str().ok()?.to_owned()));
        }
        return Some(Val::Strs(items));
    }
    if let Ok(d) = obj.cast_exact::<PyDict>() {
        let mut members = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k.cast_exact::<PyString>().ok()?.to_str().ok()?.to_owned();
            if !(v.is_exact_instance_of::<PyFloat>() || v.is_exact_instance_of::<PyInt>()) {
                return None;
            }
            members.push((Cow::Owned(key), Val::Num(v.extract::<f64>().ok()?)));
        }
        return Some(Val::Object(members));
    }
    None
}

/// The ids a replay has met, as seeded hashes (`records::Seen`): a hash never met proves
/// an id new; one met means it may repeat, which the caller's exact check decides.
#[pyclass(module = "cuemem._core", name = "Seen")]
#[derive(Default)]
pub struct PySeen {
    inner: Seen,
}

#[pymethods]
impl PySeen {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Takes `id` (its UTF-8 bytes) as met.
    fn add(&mut self, id: &[u8]) {
        self.inner.add(id);
    }
}

/// The row each id of the indexes may be at, by seeded hash (`records::IdRows`): what finds
/// a row by its id, or proves an id absent, without a map of strings. Shared between threads
/// behind a lock (a lookup waits for a fill, never fails for it).
#[pyclass(module = "cuemem._core", name = "IdRows", frozen)]
#[derive(Default)]
pub struct PyIdRows {
    inner: Mutex<IdRows>,
}

/// [`PyIdRows::find`]'s answer for an id at no row.
const ABSENT: i64 = -1;
/// [`PyIdRows::find`]'s answer for an id whose hash two rows' ids share.
const SHARED: i64 = -2;

#[pymethods]
impl PyIdRows {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Takes `ids` as the ids of rows `first`, `first + 1`, ... (hashed with the GIL held,
    /// then filed with it let go).
    ///
    /// Raises `InvalidArgumentError`: a row of 2**32 - 1 or more; `TypeError`: an id that is
    /// not a `str`.
    fn extend(&self, py: Python<'_>, ids: &Bound<'_, PyList>, first: u64) -> PyResult<()> {
        let end = first.checked_add(ids.len() as u64);
        if end.is_none_or(|end| end > u64::from(u32::MAX)) {
            return Err(invalid_argument(
                py,
                format!(
                    "{} ids from row {first} go past the last row an id may have (2**32 - 2)",
                    ids.len()
                ),
            ));
        }
        let mut inner = self.lock(py);
        let mut rows = Vec::with_capacity(ids.len());
        for (k, id) in ids.iter().enumerate() {
            let id = id.cast_into::<PyString>()?;
            let hash = match id.to_str() {
                Ok(text) => inner.hash(text.as_bytes()),
                // Not UTF-8 (a lone surrogate): its lossy form, which may meet another id's
                // hash; a shared hash sends the lookup to the exact map.
                Err(_) => inner.hash(id.to_string_lossy().as_bytes()),
            };
            rows.push((hash, (first + k as u64) as u32));
        }
        let filed = &mut *inner;
        detached_if(py, rows.len() >= DETACH_ROWS, "filing ids", || {
            filed.extend(rows);
            Ok(())
        })
    }

    /// The row `id` may be at (the caller compares that row's id), -1: at none, -2: two
    /// rows' ids share its hash (ask an exact map).
    fn find(&self, py: Python<'_>, id: &Bound<'_, PyString>) -> i64 {
        let Ok(text) = id.to_str() else {
            return SHARED; // not UTF-8: only the exact map can say
        };
        match self.lock(py).find(text.as_bytes()) {
            Found::Absent => ABSENT,
            Found::Shared => SHARED,
            Found::At(row) => i64::from(row),
        }
    }
}

impl PyIdRows {
    /// The rows, once no other thread files ids: waited for with the GIL let go (the filer
    /// takes it back before it lets the rows go).
    fn lock(&self, py: Python<'_>) -> std::sync::MutexGuard<'_, IdRows> {
        loop {
            match self.inner.try_lock() {
                Ok(inner) => return inner,
                Err(std::sync::TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => py.detach(|| {
                    drop(self.inner.lock());
                }),
            }
        }
    }
}
