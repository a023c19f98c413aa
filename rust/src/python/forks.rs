//! The core's fork generation for Python (see `cuemem_core::forks`): the one rule by which a
//! handle learns that it is in a process forked since it was made.

use pyo3::prelude::*;

/// This process's fork generation: a forked child's is moved on by a `pthread_atfork`
/// handler inside `fork` itself, before any code of the child runs (whatever forked it,
/// and whatever at-fork hooks Python runs after), and it never comes back as a process id can.
#[pyfunction]
pub fn fork_generation() -> u64 {
    crate::forks::generation()
}
