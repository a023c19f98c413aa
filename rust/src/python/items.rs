//! An import's items for Python: a JSONL chunk read by the core (`Decoder.read_items`),
//! its plain items admitted in order under an `ItemPlan`; and the formulas of a new
//! episode's id and of a memory's content hash.

use std::collections::{HashMap, HashSet};

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::errors::{detached, guarded};
use super::records::{PyDecoded, PyDecoder};
use crate::records::{self, Items, Owners, Plan, Verdict};

/// A verdict by (origin, tier, taint claim): (taint, reviewed, tier, confidence cap).
type Verdicts = HashMap<(String, String, bool), (bool, bool, String, f64)>;

/// What `Items.admit` answers: the lines, what decoding them gives, the ids, the next line,
/// the users not answered for, and how many lines after the next no plan makes plain.
type AdmitResult<'py> = (
    Bound<'py, PyBytes>,
    PyDecoded,
    Vec<String>,
    usize,
    Vec<String>,
    usize,
);

/// What the caller decided once for an import's plain writes (see `Items.admit`).
#[pyclass(module = "cuemem._core", name = "ItemPlan", frozen)]
pub struct PyItemPlan {
    inner: Plan,
}

#[pymethods]
impl PyItemPlan {
    /// The plan of an import written at `stamp` (ISO) in `session`: `verdicts` maps
    /// (origin, tier, taint claim) to (taint, reviewed, tier, confidence cap); `forgotten`
    /// holds the content hashes a forget took out.
    #[new]
    fn new(
        stamp: String,
        session: Option<String>,
        verdicts: Verdicts,
        forgotten: HashSet<String>,
    ) -> Self {
        let verdicts = verdicts
            .into_iter()
            .map(|(key, (taint, reviewed, tier, cap))| {
                let verdict = Verdict {
                    taint,
                    reviewed,
                    tier,
                    cap,
                };
                (key, verdict)
            })
            .collect();
        PyItemPlan {
            inner: Plan {
                stamp,
                session,
                verdicts,
                forgotten,
            },
        }
    }
}

/// Whose an import's items are, by the user they name, as the caller answers it: kept for
/// the whole import and grown as users are answered (never converted again per call).
#[pyclass(module = "cuemem._core", name = "Owners")]
#[derive(Default)]
pub struct PyOwners {
    inner: Owners,
}

#[pymethods]
impl PyOwners {
    #[new]
    fn new() -> Self {
        PyOwners::default()
    }

    /// Answers for the items naming `user` (None: naming none): written as `owner`, or
    /// refused (None).
    fn answer(&mut self, user: Option<String>, owner: Option<String>) {
        match user {
            None => self.inner.unnamed = Some(owner),
            Some(user) => {
                self.inner.named.insert(user, owner);
            }
        }
    }

    /// How many users are answered for (the items naming none among them).
    fn __len__(&self) -> usize {
        self.inner.named.len() + usize::from(self.inner.unnamed.is_some())
    }
}

/// The items of a chunk, one per line (see `Decoder.read_items`).
#[pyclass(module = "cuemem._core", name = "Items", frozen)]
pub struct PyItems {
    inner: Items,
    decoder: Py<PyDecoder>,
}

impl PyItems {
    pub fn read(decoder: Bound<'_, PyDecoder>, chunk: &[u8], keys: Vec<String>) -> Self {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let inner = Items::new(&decoder.get().inner, chunk, &keys);
        PyItems {
            inner,
            decoder: decoder.unbind(),
        }
    }
}

#[pymethods]
impl PyItems {
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Admits the plain items from line `start` on, in order (the GIL released): their
    /// journal lines end to end, what decoding those lines gives (as `Decoder.decode` of
    /// them), their ids, the first line not admitted, the users named in
    /// the block it stopped in that `owners` does not answer for, and how many lines after
    /// the first not admitted no plan makes plain. `counter` is
    /// the first one's id counter; `owners` answers whose an item is by the user it names.
    fn admit<'py>(
        &self,
        py: Python<'py>,
        start: usize,
        counter: u64,
        plan: &PyItemPlan,
        owners: PyRef<'py, PyOwners>,
    ) -> PyResult<AdmitResult<'py>> {
        let decoder = self.decoder.get();
        let (items, plan, answers) = (&self.inner, &plan.inner, &owners.inner);
        let admitted = detached(py, "admitting import items", || {
            Ok(decoder
                .inner
                .admit_items(items, start, counter, plan, answers))
        })?;
        Ok((
            PyBytes::new(py, &admitted.lines),
            decoder.wrap(admitted.decoded),
            admitted.ids,
            admitted.next,
            admitted.missing,
            admitted.unplain,
        ))
    }
}

/// The id of an episode written at `stamp` with `text` (UTF-8 bytes), the home holding `n`
/// rows before it: the one formula (`Home.new_id`, an import's items).
#[pyfunction]
pub fn episode_id(py: Python<'_>, n: u64, stamp: &[u8], text: &[u8]) -> PyResult<String> {
    guarded(py, "making an episode id", || {
        Ok(records::episode_id(n, stamp, text))
    })
}

/// The hash of `user`'s memory `narrative` (UTF-8 bytes) a forget keeps: the one formula.
#[pyfunction]
pub fn content_hash(py: Python<'_>, user: &[u8], narrative: &[u8]) -> PyResult<String> {
    guarded(py, "hashing a memory's content", || {
        Ok(records::content_hash(user, narrative))
    })
}

/// `obj` as a line of an import (its JSON and `\n`) when it is a dict the core reads as
/// Python's own path reads it (see `json_object`); `None` for any other object, which that
/// path reads itself.
#[pyfunction]
pub fn item_line<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let line = guarded(py, "writing an import item as a line", || {
        let mut out = Vec::with_capacity(512);
        Ok(json_object(obj, &mut out).map(|()| {
            out.push(b'\n');
            out
        }))
    })?;
    Ok(line.map(|line| PyBytes::new(py, &line)))
}

/// `obj` as a JSON object when it is a `dict` (no subclass) of `str` keys whose values are
/// `None`, a `bool`, an `int` of 64 bits, a finite `float`, a `str`, a `list` or `tuple` of
/// `str`, or a `dict` of `str` to `int` or finite `float` — exactly these types, no subclass
/// (an enum member, a datetime, a UUID take the full path), no lone surrogate; else `None`.
fn json_object(obj: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> Option<()> {
    json_members(obj.cast_exact::<PyDict>().ok()?, out, |v, out| {
        json_value(v, out, true)
    })
}

/// `dict` as a JSON object of `str` keys (no subclass, no lone surrogate), each value written by `value`.
fn json_members(
    dict: &Bound<'_, PyDict>,
    out: &mut Vec<u8>,
    value: impl Fn(&Bound<'_, PyAny>, &mut Vec<u8>) -> Option<()>,
) -> Option<()> {
    out.push(b'{');
    for (i, (key, v)) in dict.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_string(out, &key)?;
        out.push(b':');
        value(&v, out)?;
    }
    out.push(b'}');
    Some(())
}

fn json_value(v: &Bound<'_, PyAny>, out: &mut Vec<u8>, top: bool) -> Option<()> {
    if v.is_none() {
        out.extend_from_slice(b"null");
    } else if let Ok(b) = v.cast_exact::<PyBool>() {
        out.extend_from_slice(if b.is_true() { b"true" } else { b"false" });
    } else if v.is_exact_instance_of::<PyInt>() {
        serde_json::to_writer(&mut *out, &v.extract::<i64>().ok()?).ok()?;
    } else if v.is_exact_instance_of::<PyFloat>() {
        let x = v.extract::<f64>().ok()?;
        if !x.is_finite() {
            return None; // JSON has none: written as null, it would read as another value
        }
        serde_json::to_writer(&mut *out, &x).ok()?;
    } else if v.is_exact_instance_of::<PyString>() {
        json_string(out, v)?;
    } else if top && (v.is_exact_instance_of::<PyList>() || v.is_exact_instance_of::<PyTuple>()) {
        out.push(b'[');
        for (i, item) in v.try_iter().ok()?.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            json_string(out, &item.ok()?)?;
        }
        out.push(b']');
    } else if top {
        // An object of numbers, as the core reads the salience axes.
        json_members(v.cast_exact::<PyDict>().ok()?, out, |n, out| {
            let number = n.is_exact_instance_of::<PyInt>() || n.is_exact_instance_of::<PyFloat>();
            number.then(|| json_value(n, out, false))?
        })?;
    } else {
        return None;
    }
    Some(())
}

/// `s` as a JSON string when it is a `str` (no subclass) holding no lone surrogate.
fn json_string(out: &mut Vec<u8>, s: &Bound<'_, PyAny>) -> Option<()> {
    let s = s.cast_exact::<PyString>().ok()?.to_str().ok()?;
    serde_json::to_writer(&mut *out, s).ok()
}
