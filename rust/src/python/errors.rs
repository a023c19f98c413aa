//! `CoreError` -> the `cuemem.errors` hierarchy, one class per variant.
//!
//! Each class the binding raises is a Rust type (`import_exception!`), so a raise
//! site can only name a declared class. The Python classes are resolved lazily and
//! cached; [`check_classes`] resolves every one when `_core` is imported, so a class
//! missing from `cuemem.errors` fails that import rather than a later raise.
//!
//! Every entry point that calls into the core runs the call through [`guarded`] or
//! [`detached`], so a panic in the core or in tantivy is a typed error, never a
//! `PanicException`.

use pyo3::exceptions::{PyBaseException, PyImportError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

use crate::error::{catch_panic, CoreError, Result, TextFault};

/// Declares each raised class of `cuemem.errors` and the list [`check_classes`] walks.
macro_rules! raised_classes {
    ($($class:ident),+ $(,)?) => {
        $(pyo3::import_exception!(cuemem.errors, $class);)+

        /// Every `cuemem.errors` class the binding raises, by name.
        const RAISED: &[&str] = &[$(stringify!($class)),+];
    };
}

raised_classes!(
    CuememError,
    CueTypeError,
    UnknownDimensionError,
    InvalidDimensionError,
    ShapeError,
    InvalidValueError,
    InvalidArgumentError,
    CorruptIndexError,
    UnsupportedVersionError,
    StorageError,
    MissingFileError,
    HomeLockedError,
    ForkedHandleError,
);

/// Fails (an `ImportError`) unless `cuemem.errors` defines every raised class as an
/// exception class.
pub fn check_classes(py: Python<'_>) -> PyResult<()> {
    let module = py.import("cuemem.errors")?;
    for &name in RAISED {
        let found = module.getattr(name).ok();
        let ok = match found.as_ref().map(|c| c.cast::<PyType>()) {
            Some(Ok(cls)) => cls.is_subclass_of::<PyBaseException>()?,
            _ => false,
        };
        if !ok {
            return Err(PyImportError::new_err(format!(
                "cuemem.errors.{name} is not an exception class; the native core raises it"
            )));
        }
    }
    Ok(())
}

/// `OSError`-style arguments: `(errno, message)` when there is an OS error code, or
/// when the error's kind names one (an error passed on by a library's thread may keep
/// its kind and message but not its code: a full disk is still `ENOSPC`).
fn os_error<E: pyo3::PyTypeInfo>(py: Python<'_>, e: &std::io::Error, msg: String) -> PyErr {
    let coded = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<crate::files::OsCoded>())
        .and_then(|c| c.code);
    match e
        .raw_os_error()
        .or(coded)
        .or_else(|| errno_of(py, e.kind()))
        .or_else(|| crate::error::os_code_in_message(&e.to_string()))
    {
        Some(code) => PyErr::new::<E, _>((code, e.to_string())),
        None => PyErr::new::<E, _>((msg,)),
    }
}

/// The errno of this platform that an I/O error kind stands for, as Python's `errno` module has it.
fn errno_of(py: Python<'_>, kind: std::io::ErrorKind) -> Option<i32> {
    use std::io::ErrorKind;
    let name = match kind {
        ErrorKind::StorageFull => "ENOSPC",
        ErrorKind::ReadOnlyFilesystem => "EROFS",
        ErrorKind::PermissionDenied => "EACCES",
        ErrorKind::NotFound => "ENOENT",
        _ => return None,
    };
    py.import("errno")
        .and_then(|m| m.getattr(name))
        .and_then(|v| v.extract())
        .ok()
}

/// `errno.EWOULDBLOCK` of this platform, as Python's `errno` module has it.
fn ewouldblock(py: Python<'_>) -> Option<i32> {
    py.import("errno")
        .and_then(|m| m.getattr("EWOULDBLOCK"))
        .and_then(|v| v.extract())
        .ok()
}

/// The exhaustive mapping: a new variant without a class does not compile.
pub fn to_py(py: Python<'_>, err: CoreError) -> PyErr {
    let msg = err.to_string();
    match err {
        CoreError::UnknownDimension(_) => PyErr::new::<UnknownDimensionError, _>((msg,)),
        CoreError::InvalidDimension { .. } => PyErr::new::<InvalidDimensionError, _>((msg,)),
        CoreError::ShapeMismatch { .. } => PyErr::new::<ShapeError, _>((msg,)),
        CoreError::InvalidValue { .. } => PyErr::new::<InvalidValueError, _>((msg,)),
        CoreError::InvalidArgument { .. } => PyErr::new::<InvalidArgumentError, _>((msg,)),
        CoreError::Corrupt(_) => PyErr::new::<CorruptIndexError, _>((msg,)),
        CoreError::UnsupportedVersion { .. } => PyErr::new::<UnsupportedVersionError, _>((msg,)),
        CoreError::TextIndex { fault, .. } => match fault {
            // A BlockingIOError, as the home's own writer lock raises it.
            TextFault::Locked => match ewouldblock(py) {
                Some(code) => PyErr::new::<HomeLockedError, _>((code, msg)),
                None => PyErr::new::<HomeLockedError, _>((msg,)),
            },
            TextFault::Corrupt => PyErr::new::<CorruptIndexError, _>((msg,)),
            TextFault::Incompatible => PyErr::new::<UnsupportedVersionError, _>((msg,)),
            TextFault::Internal => PyErr::new::<CuememError, _>((msg,)),
        },
        CoreError::Io(e) => {
            if e.kind() == std::io::ErrorKind::NotFound {
                os_error::<MissingFileError>(py, &e, msg)
            } else {
                os_error::<StorageError>(py, &e, msg)
            }
        }
        // Damaged bytes the engine trusted, nearly always: a rebuild is the remedy.
        CoreError::Panicked { .. } => PyErr::new::<CorruptIndexError, _>((msg,)),
    }
}

/// Runs `f`, a call into the core, with the GIL held; a panic inside it is a
/// `CorruptIndexError` naming `what` and the panic's message, never a
/// `pyo3_runtime.PanicException` (a `BaseException` that `except Exception` misses).
pub fn guarded<T>(
    py: Python<'_>,
    what: &'static str,
    f: impl FnOnce() -> Result<T>,
) -> PyResult<T> {
    catch_panic(what, f).or_raise(py)
}

/// [`guarded`] with the GIL released around `f` (the panic is caught inside the
/// detached closure, before the GIL is taken back).
pub fn detached<T, F>(py: Python<'_>, what: &'static str, f: F) -> PyResult<T>
where
    F: Send + FnOnce() -> Result<T>,
    T: Send,
{
    py.detach(move || catch_panic(what, f)).or_raise(py)
}

/// Rows of a batch from which a call lets the GIL go ([`detached_if`]).
pub const DETACH_ROWS: usize = 64;

/// Bytes of a batch from which a call lets the GIL go ([`detached_if`]).
pub const DETACH_BYTES: usize = 64 * 1024;

/// [`detached`] when `release` (the work is long enough to be worth it), [`guarded`] otherwise.
/// A call of a few microseconds that lets the GIL go hands it to a waiting thread, and then
/// waits to get it back: with several threads writing to one handle, each small step of a
/// write (its row's cues, its salience, its text) had become such a handoff.
pub fn detached_if<T, F>(py: Python<'_>, release: bool, what: &'static str, f: F) -> PyResult<T>
where
    F: Send + FnOnce() -> Result<T>,
    T: Send,
{
    if release {
        detached(py, what, f)
    } else {
        guarded(py, what, f)
    }
}

/// A wrong Python type at the boundary (including a wrong numpy dtype).
pub fn type_error(_py: Python<'_>, msg: String) -> PyErr {
    PyErr::new::<CueTypeError, _>((msg,))
}

/// An argument outside its domain, checked at the boundary, with `msg` exactly as given
/// (no `invalid argument {name}:` prefix, unlike [`CoreError::InvalidArgument`]).
pub fn invalid_argument(_py: Python<'_>, msg: String) -> PyErr {
    PyErr::new::<InvalidArgumentError, _>((msg,))
}

/// The text of a Python `str`, or an `InvalidArgumentError` naming `what()` when it is no
/// valid Unicode (a lone surrogate has no UTF-8), never Python's bare `UnicodeEncodeError`;
/// `what` is called only then (a recall reads every cue value through here).
pub fn utf8<'a>(
    py: Python<'_>,
    s: &'a Bound<'_, PyString>,
    what: impl FnOnce() -> String,
) -> PyResult<&'a str> {
    s.to_str().map_err(|_| {
        invalid_argument(
            py,
            format!("{} is not valid Unicode text (a lone surrogate)", what()),
        )
    })
}

/// `Result<T, CoreError>` -> `PyResult<T>`.
pub trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
