//! The one error type of the core.
//!
//! Every fallible operation in `cue` and `salience` returns [`Result`]. The Python
//! binding maps each variant to its own exception class; adding a variant without a
//! mapping is a compile error there (the match is exhaustive).

use std::io;

/// What went wrong inside the core.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A query or an insert named a dimension the index was not built with.
    #[error("unknown dimension {0:?}")]
    UnknownDimension(String),

    /// The same dimension was declared twice, or a dimension name is empty.
    #[error("invalid dimension {name:?}: {reason}")]
    InvalidDimension { name: String, reason: &'static str },

    /// Parallel inputs disagree in length or shape.
    #[error("{what}: expected length {expected}, got {got}")]
    ShapeMismatch { what: &'static str, expected: usize, got: usize },

    /// A value outside its domain (NaN, infinite, outside [0, 1], code out of range).
    #[error("{what}[{index}] = {value} is invalid: {reason}")]
    InvalidValue { what: &'static str, index: usize, value: String, reason: &'static str },

    /// An argument outside its domain (k <= 0, a negative half-life, a bad floor).
    #[error("invalid argument {name}: {reason}")]
    InvalidArgument { name: &'static str, reason: String },

    /// Bytes that are not a cuemem index file: bad magic, checksum, truncated.
    #[error("corrupt index data: {0}")]
    Corrupt(String),

    /// A cuemem index file written by a format version this build cannot read.
    #[error("unsupported index format version {found} (this build reads {supported})")]
    UnsupportedVersion { found: u32, supported: u32 },

    /// The text index failed in a way that is neither the file system's nor a bad
    /// argument's (those are [`CoreError::Io`] and [`CoreError::InvalidArgument`]);
    /// `fault` says how, and picks the Python class.
    #[error("text index: {detail}")]
    TextIndex { fault: TextFault, detail: String },

    /// The file system said no.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// How the text index failed, for [`CoreError::TextIndex`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextFault {
    /// Another writer holds the index directory's lock: the index is busy, not damaged.
    Locked,
    /// Damaged or foreign index files: bad bytes, a schema not ours, a segment file missing.
    Corrupt,
    /// Index files in a format (or compression) this build's text engine cannot read.
    Incompatible,
    /// A failure inside the text engine: a worker thread died, a lock was poisoned.
    Internal,
}

/// Shorthand used across the core.
pub type Result<T> = std::result::Result<T, CoreError>;
