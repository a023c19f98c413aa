//! `GroupSync` for Python: the journal's group commit, synced on a thread that needs no GIL
//! (see `cuemem_core::groupsync` and `cuemem.store.groupsync`).

use std::fs::File;
use std::time::Duration;

use pyo3::prelude::*;

use super::errors::{invalid_argument, ForkedHandleError, StorageError};
use crate::groupsync::{syncs_made, Failure, GroupSync};

/// The tickets of one journal's appends; a worker of its own syncs them.
#[pyclass(module = "cuemem._core", name = "GroupSync", frozen)]
pub struct PyGroupSync {
    inner: GroupSync,
}

#[pymethods]
impl PyGroupSync {
    /// A group syncing each ticket at most `window` seconds after it was written (0: at once).
    ///
    /// Raises `InvalidArgumentError`: `window` is not a number of seconds from 0 to an hour.
    #[new]
    #[pyo3(signature = (window = 0.0))]
    fn new(py: Python<'_>, window: f64) -> PyResult<Self> {
        if !(0.0..=3600.0).contains(&window) {
            return Err(invalid_argument(
                py,
                format!("a sync window is 0 to 3600 seconds, not {window}"),
            ));
        }
        Ok(Self {
            inner: GroupSync::with_window(Duration::from_secs_f64(window)),
        })
    }

    /// A ticket for bytes just written to the open segment `fd`; their sync starts at once.
    /// The group duplicates `fd` for its worker (the first ticket after a flush).
    ///
    /// Raises `StorageError`: an earlier sync failed, or `fd` cannot be duplicated;
    /// `ForkedHandleError`: this is a child forked since the group was made.
    fn written(&self, fd: i32) -> PyResult<u64> {
        self.inner
            .written(i64::from(fd), || duplicate(fd))
            .map_err(|f| self.refused(&f, earlier))
    }

    /// Returns, with the GIL released while it waits, once `ticket`'s bytes are on disk.
    ///
    /// Raises `StorageError`: the sync covering `ticket` failed, or an earlier one did;
    /// `ForkedHandleError`: this is a child forked since the group was made.
    fn wait(&self, py: Python<'_>, ticket: u64) -> PyResult<()> {
        // Already decided (often, with several writers): no handing the GIL over and back.
        let outcome = match self.inner.try_wait(ticket) {
            Some(outcome) => outcome,
            None => py.detach(|| self.inner.wait(ticket)),
        };
        outcome.map_err(|f| self.refused(&f, failed))
    }

    /// Syncs every ticket, then lets the segment go (before its descriptor is closed).
    ///
    /// Raises `StorageError`: a sync failed, now or earlier.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.flush()).map_err(|f| failed(&f))
    }

    /// Raises `StorageError` if an earlier sync failed (call it before writing a byte);
    /// `ForkedHandleError` in a child forked since the group was made.
    fn check(&self) -> PyResult<()> {
        self.inner.check().map_err(|f| self.refused(&f, earlier))
    }
}

impl PyGroupSync {
    /// `failure` as `as_error` says, or `ForkedHandleError` in a forked child (which the group refuses).
    fn refused(&self, failure: &Failure, as_error: fn(&Failure) -> PyErr) -> PyErr {
        if self.inner.forked() {
            PyErr::new::<ForkedHandleError, _>(failure.1.clone())
        } else {
            as_error(failure)
        }
    }
}

/// How many syncs the groups of this process have made so far.
#[pyfunction]
pub fn group_syncs() -> u64 {
    syncs_made()
}

/// The failed sync a wait or flush reports.
fn failed((code, message): &Failure) -> PyErr {
    PyErr::new::<StorageError, _>((*code, format!("fsync failed: {message}")))
}

/// A write refused after a failed sync, or a ticket the group could not hand out.
fn earlier((code, message): &Failure) -> PyErr {
    PyErr::new::<StorageError, _>((
        *code,
        format!("an earlier journal sync failed, or this one cannot be made ({message}); reopen the home"),
    ))
}

#[cfg(unix)]
fn duplicate(fd: i32) -> std::io::Result<File> {
    use std::os::fd::BorrowedFd;
    if fd < 0 {
        return Err(std::io::Error::from_raw_os_error(EBADF));
    }
    // SAFETY: `fd` is the journal's open segment for the length of this call (the writer
    // holds it while it takes a ticket); an invalid one is only `EBADF` from `fcntl`.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    Ok(File::from(borrowed.try_clone_to_owned()?))
}

#[cfg(not(unix))]
fn duplicate(_fd: i32) -> std::io::Result<File> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no syncer thread on this platform",
    ))
}

/// `EBADF`, the same number on every Unix.
#[cfg(unix)]
const EBADF: i32 = 9;
