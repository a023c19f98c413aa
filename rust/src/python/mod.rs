//! The binding layer: the only code that knows Python exists.
//!
//! Each submodule wraps one core concept as a `#[pyclass]`, converts arguments at
//! the boundary (numpy arrays borrowed without copies, pyroaring bitmaps through the
//! portable format), releases the GIL around every call that does O(n) work, and
//! maps [`crate::CoreError`] to `cuemem.errors` through [`errors`].

mod arrays;
mod cue;
mod errors;
mod files;
mod forks;
mod groupsync;
mod items;
mod query;
mod recall;
mod records;
mod salience;
mod text;
mod thread;
mod vector;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::salience::{Params, AXES};

#[pymodule]
#[pyo3(name = "_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    errors::check_classes(py)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("AXES", PyTuple::new(py, AXES)?)?;
    let defaults = Params::default();
    let weights = PyDict::new(py);
    let half_lives = PyDict::new(py);
    for (a, name) in AXES.iter().enumerate() {
        // The f32 weight, printed as the decimal it was written as (0.15, not 0.1500000059...).
        weights.set_item(
            name,
            format!("{}", defaults.weights[a])
                .parse::<f64>()
                .expect("a float prints as a float"),
        )?;
        half_lives.set_item(name, defaults.half_lives_days[a])?;
    }
    m.add("DEFAULT_WEIGHTS", weights)?;
    m.add("DEFAULT_HALF_LIVES_DAYS", half_lives)?;
    m.add_class::<cue::PyCueIndex>()?;
    m.add_class::<cue::PyPruned>()?;
    m.add_class::<cue::PyIndexStats>()?;
    m.add_class::<salience::PySalienceTable>()?;
    m.add_class::<salience::PyTopK>()?;
    m.add_class::<salience::PyDecayPass>()?;
    m.add_class::<recall::PyRecall>()?;
    m.add_function(wrap_pyfunction!(recall::recall, m)?)?;
    m.add_class::<records::PyDecoder>()?;
    m.add_class::<records::PyDecoded>()?;
    m.add_class::<records::PySeen>()?;
    m.add_class::<records::PyIdRows>()?;
    m.add_class::<items::PyItems>()?;
    m.add_class::<items::PyItemPlan>()?;
    m.add_class::<items::PyOwners>()?;
    m.add_function(wrap_pyfunction!(items::episode_id, m)?)?;
    m.add_function(wrap_pyfunction!(items::content_hash, m)?)?;
    m.add_function(wrap_pyfunction!(items::item_line, m)?)?;
    m.add_class::<text::PyTextIndex>()?;
    m.add_class::<text::PyTextRecall>()?;
    m.add_function(wrap_pyfunction!(text::text_recall, m)?)?;
    m.add_class::<thread::PyThreads>()?;
    m.add_function(wrap_pyfunction!(vector::cosine_top, m)?)?;
    m.add_function(wrap_pyfunction!(files::crc32, m)?)?;
    m.add_function(wrap_pyfunction!(files::unseen_entries, m)?)?;
    m.add_function(wrap_pyfunction!(files::write_pending, m)?)?;
    m.add_function(wrap_pyfunction!(files::place_pending, m)?)?;
    m.add_class::<groupsync::PyGroupSync>()?;
    m.add_function(wrap_pyfunction!(groupsync::group_syncs, m)?)?;
    m.add_function(wrap_pyfunction!(forks::fork_generation, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::count_py, m)?)?;
    Ok(())
}
