//! `GroupSync` for Python: the journal's group commit, synced on a thread that needs no GIL
//! (see `cuemem_core::groupsync` and `cuemem.store.groupsync`).

use std::fs::File;

use pyo3::prelude::*;

use super::errors::StorageError;
use crate::groupsync::{syncs_made, Failure, GroupSync};

/// The tickets of one journal's appends; a worker of its own syncs them.
#[pyclass(module = "cuemem._core", name = "GroupSync", frozen)]
pub struct PyGroupSync {
    inner: GroupSync,
}

#[pymethods]
impl PyGroupSync {
    #[new]
    fn new() -> Self {
        Self {
            inner: GroupSync::new(),
        }
    }

    /// A ticket for bytes just written to the open segment `fd`; their sync starts at once.
    /// The group duplicates `fd` for its worker (the first ticket after a flush).
    ///
    /// Raises `StorageError`: an earlier sync failed, or `fd` cannot be duplicated.
    fn written(&self, fd: i32) -> PyResult<u64> {
        self.inner
            .written(i64::from(fd), || duplicate(fd))
            .map_err(|f| earlier(&f))
    }

    /// Returns, with the GIL released while it waits, once `ticket`'s bytes are on disk.
    ///
    /// Raises `StorageError`: the sync covering `ticket` failed, or an earlier one did.
    fn wait(&self, py: Python<'_>, ticket: u64) -> PyResult<()> {
        // Already decided (often, with several writers): no handing the GIL over and back.
        let outcome = match self.inner.try_wait(ticket) {
            Some(outcome) => outcome,
            None => py.detach(|| self.inner.wait(ticket)),
        };
        outcome.map_err(|f| failed(&f))
    }

    /// Syncs every ticket, then lets the segment go (before its descriptor is closed).
    ///
    /// Raises `StorageError`: a sync failed, now or earlier.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.flush()).map_err(|f| failed(&f))
    }

    /// Raises `StorageError` if an earlier sync failed (call it before writing a byte).
    fn check(&self) -> PyResult<()> {
        self.inner.check().map_err(|f| earlier(&f))
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
