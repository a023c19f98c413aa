//! Python mappings of cues -> [`Query`].

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use super::errors::{type_error, utf8};
use crate::cue::{Clause, Query};

fn values(py: Python<'_>, dimension: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let what = || format!("a value of cue {dimension:?}");
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(vec![utf8(py, s, what)?.to_owned()]);
    }
    let bad = || {
        type_error(
            py,
            format!(
                "cue {dimension:?} must be a string or a list of strings, got {}",
                v.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ),
        )
    };
    if v.is_instance_of::<PyDict>() || v.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(bad());
    }
    let items = v.try_iter().map_err(|_| bad())?;
    items
        .map(|item| {
            let item = item?;
            let s = item.cast::<PyString>().map_err(|_| bad())?;
            utf8(py, s, what).map(str::to_owned)
        })
        .collect()
}

fn clauses(py: Python<'_>, cues: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Clause>> {
    let dict;
    let mapping = match cues.cast::<PyDict>() {
        Ok(d) => d,
        Err(_) => {
            let not_mapping = || {
                type_error(
                    py,
                    format!("{what} must be a mapping of dimension -> value(s)"),
                )
            };
            let items = cues.call_method0("items").map_err(|_| not_mapping())?;
            dict = PyDict::from_sequence(&items).map_err(|_| not_mapping())?;
            &dict
        }
    };
    let mut out = Vec::with_capacity(mapping.len());
    for (k, v) in mapping.iter() {
        let key = k
            .cast::<PyString>()
            .map_err(|_| type_error(py, format!("{what} keys must be dimension names (str)")))?;
        let dimension = utf8(py, key, || format!("a dimension of {what}"))?.to_owned();
        let values = values(py, &dimension, &v)?;
        out.push(Clause { dimension, values });
    }
    Ok(out)
}

/// `cues` (required) and `exclude` (optional) mappings as one [`Query`].
pub fn parse(
    py: Python<'_>,
    cues: Option<&Bound<'_, PyAny>>,
    exclude: Option<&Bound<'_, PyAny>>,
) -> PyResult<Query> {
    let include = match cues {
        Some(c) if !c.is_none() => clauses(py, c, "cues")?,
        _ => Vec::new(),
    };
    let exclude = match exclude {
        Some(e) if !e.is_none() => clauses(py, e, "exclude")?,
        _ => Vec::new(),
    };
    Ok(Query { include, exclude })
}
