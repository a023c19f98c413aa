//! `CoreError` -> the `cuemem.errors` hierarchy, one class per variant.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::error::CoreError;

/// Instantiates `cuemem.errors.<class>(*args)` as a `PyErr`.
fn raise<'py>(py: Python<'py>, class: &str, args: impl pyo3::call::PyCallArgs<'py>) -> PyErr {
    let made = py
        .import("cuemem.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|cls| cls.call1(args));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(import_failed) => PyRuntimeError::new_err(format!("cuemem.errors.{class} unavailable: {import_failed}")),
    }
}

/// The exhaustive mapping: a new variant without a class does not compile.
pub fn to_py(py: Python<'_>, err: CoreError) -> PyErr {
    let msg = err.to_string();
    match err {
        CoreError::UnknownDimension(_) => raise(py, "UnknownDimensionError", (msg,)),
        CoreError::InvalidDimension { .. } => raise(py, "InvalidDimensionError", (msg,)),
        CoreError::ShapeMismatch { .. } => raise(py, "ShapeError", (msg,)),
        CoreError::InvalidValue { .. } => raise(py, "InvalidValueError", (msg,)),
        CoreError::InvalidArgument { .. } => raise(py, "InvalidArgumentError", (msg,)),
        CoreError::Corrupt(_) => raise(py, "CorruptIndexError", (msg,)),
        CoreError::UnsupportedVersion { .. } => raise(py, "UnsupportedVersionError", (msg,)),
        CoreError::Io(e) => {
            let class = if e.kind() == std::io::ErrorKind::NotFound { "MissingFileError" } else { "StorageError" };
            match e.raw_os_error() {
                Some(code) => raise(py, class, (code, e.to_string())),
                None => raise(py, class, (msg,)),
            }
        }
    }
}

/// A wrong Python type at the boundary (including a wrong numpy dtype).
pub fn type_error(py: Python<'_>, msg: String) -> PyErr {
    raise(py, "CueTypeError", (msg,))
}

/// `Result<T, CoreError>` -> `PyResult<T>`.
pub trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for crate::error::Result<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
