//! `Syncer` for Python: the journal's syncs on a thread that needs no GIL (see
//! `cuemem_core::syncer` and `cuemem.store.groupsync`).

use std::fs::File;

use pyo3::prelude::*;

use crate::syncer::{Failure, Syncer};

/// Syncs descriptors on a thread of its own; `start` hands one over, `wait` waits for it.
#[pyclass(module = "cuemem._core", name = "Syncer", frozen)]
pub struct PySyncer {
    inner: Syncer,
}

#[pymethods]
impl PySyncer {
    #[new]
    fn new() -> Self {
        Self {
            inner: Syncer::new(),
        }
    }

    /// Takes `fd` (a descriptor the caller gives up: it is closed here, synced or not) and
    /// syncs it as job `job` on the worker; returns at once. `None` when it was handed
    /// over, else why not (the file is closed unsynced). Unix only: elsewhere nothing is
    /// taken and the answer is a failure (the caller syncs itself).
    fn start(&self, fd: i32, job: u64) -> Option<Failure> {
        if fd < 0 {
            return Some((EBADF, format!("not a descriptor: {fd}")));
        }
        let file = match owned(fd) {
            Ok(file) => file,
            Err(failure) => return Some(failure),
        };
        self.inner
            .start(file, job)
            .err()
            .map(|e| (e.raw_os_error().unwrap_or(0), e.to_string()))
    }

    /// Waits, with the GIL released, until job `job` has finished: `None` when it synced,
    /// else `(errno, message)` of its failure.
    fn wait(&self, py: Python<'_>, job: u64) -> Option<Failure> {
        py.detach(|| self.inner.wait(job))
    }
}

/// `EBADF`, the same number on every Unix.
const EBADF: i32 = 9;

#[cfg(unix)]
fn owned(fd: i32) -> Result<File, Failure> {
    use std::os::fd::FromRawFd;
    // SAFETY: the caller hands over a descriptor it opened (a `dup` of the journal's
    // segment) and never uses or closes again; from here the `File` owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

#[cfg(not(unix))]
fn owned(_fd: i32) -> Result<File, Failure> {
    Err((0, "no syncer thread on this platform".to_owned()))
}
