//! The cue index: per dimension, a map from value to a roaring posting list of rows.
//!
//! A memory is a dense `u32` row number. Each cue dimension (actor, user, type,
//! outcome, time bucket, ...) interns its values and keeps, per value, the rows that
//! carry it. A [`Query`] names dimensions with one or more values (a union within the
//! dimension) and optionally values to exclude; [`CueIndex::prune`] intersects the
//! per-dimension lists smallest first and stops as soon as the result is empty, so
//! its cost follows the most selective cue rather than the number of memories.
//!
//! Every [`Pruned`] result reports `examined`, the postings the plan touched, next
//! to `full_scan`, the live rows a scan would have visited. For a plain conjunction
//! `examined` is the length of the smallest list plus the survivors carried into
//! each further probe; unions add the lengths of the lists they merge.
//!
//! [`CueIndex::closed_sets`] mines the other way round: the cue combinations a set
//! of rows shares, with supports counted by intersecting the same posting lists.

mod dimension;
mod index;
mod mine;
mod persist;
mod query;

pub use dimension::Dimension;
pub use index::{CueIndex, IndexStats, GROUPED_FROM};
pub use mine::{CueSet, Mined};
pub(crate) use persist::write_atomic;
pub use query::{Clause, Pruned, Query};
