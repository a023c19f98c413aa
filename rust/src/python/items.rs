//! An import's items for Python: a JSONL chunk read by the core (`Decoder.read_items`),
//! its plain items admitted in order under an `ItemPlan`; and the formulas of a new
//! episode's id and of a memory's content hash.

use std::collections::{HashMap, HashSet};

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::{detached, guarded};
use super::records::PyDecoder;
use crate::records::{self, Items, Owners, Plan, Verdict};

/// A verdict by (origin, tier, taint claim): (taint, reviewed, tier, confidence cap).
type Verdicts = HashMap<(String, String, bool), (bool, bool, String, f64)>;

/// What `Items.admit` answers: the lines, the ids, the next line, the users not answered for.
type AdmitResult<'py> = (Bound<'py, PyBytes>, Vec<String>, usize, Vec<String>);

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
    /// journal lines end to end, their ids, the first line not admitted, and the users
    /// named in the block it stopped in that `owners` does not answer for. `counter` is
    /// the first one's id counter; `owners` answers whose an item is by the user it names
    /// (None: none), a user refused mapped to None.
    fn admit<'py>(
        &self,
        py: Python<'py>,
        start: usize,
        counter: u64,
        plan: &PyItemPlan,
        owners: HashMap<Option<String>, Option<String>>,
    ) -> PyResult<AdmitResult<'py>> {
        let decoder = &self.decoder.get().inner;
        let (items, plan) = (&self.inner, &plan.inner);
        let mut answers = Owners::default();
        for (named, owner) in owners {
            match named {
                None => answers.unnamed = Some(owner),
                Some(user) => {
                    answers.named.insert(user, owner);
                }
            }
        }
        let admitted = detached(py, "admitting import items", || {
            Ok(decoder.admit_items(items, start, counter, plan, &answers))
        })?;
        Ok((
            PyBytes::new(py, &admitted.lines),
            admitted.ids,
            admitted.next,
            admitted.missing,
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
