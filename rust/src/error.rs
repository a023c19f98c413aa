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

    /// The file system said no.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Shorthand used across the core.
pub type Result<T> = std::result::Result<T, CoreError>;
