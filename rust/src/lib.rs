//! cuemem's native core: the roaring cue index and the salience kernels.
//!
//! This crate knows nothing of Python. [`cue`] answers "which memories carry these
//! cues" by intersecting roaring posting lists smallest first; [`salience`] stores
//! seven decaying axes per memory and ranks candidates by their composite at a given
//! `now`; [`recall`] joins the two into the full recall path; [`text`] ranks by BM25
//! and [`thread`] spreads scores along conversations; [`vector`] ranks by cosine; [`files`]
//! stats a directory's files in parallel; every parallel kernel runs on the `pool` module's threads,
//! one pool per process, made anew in a forked child (`forks`: the one rule of what a fork leaves behind). The optional `python`
//! feature adds the one binding layer (`src/python/`) that maturin builds into
//! `cuemem._core`.
//! [`records`] decodes runs of journal lines into index rows under the schema Python declares.
//! [`groupsync`] syncs the journal on a thread of its own: one sync for every append waiting.
//!
//! Invariants: no wall clock (every time-dependent call takes `now`); bad input is a
//! [`CoreError`] and leaves the structure unchanged; saved files are canonical, so the
//! same content always serializes to the same bytes.

pub(crate) mod codec;
pub mod cue;
pub mod error;
pub mod files;
pub(crate) mod forks;
pub mod groupsync;
pub(crate) mod pool;
pub(crate) mod rank;
pub mod recall;
pub mod records;
pub mod salience;
pub mod text;
pub mod thread;
pub mod vector;

#[cfg(feature = "python")]
mod python;

pub use error::{CoreError, Result, TextFault};
