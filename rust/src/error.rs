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
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },

    /// A value outside its domain (NaN, infinite, outside [0, 1], code out of range).
    #[error("{what}[{index}] = {value} is invalid: {reason}")]
    InvalidValue {
        what: &'static str,
        index: usize,
        value: String,
        reason: &'static str,
    },

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

    /// Code inside the core (or its text engine) panicked during `what`: an assertion or
    /// bounds check failed, almost always on damaged index bytes the engine trusted.
    /// [`catch_panic`] makes it; the Python binding raises it as `CorruptIndexError`.
    #[error("{what}: the core panicked ({detail}); its index data is likely damaged, a rebuild restores it")]
    Panicked { what: &'static str, detail: String },
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

/// Runs `f`, turning a panic inside it into [`CoreError::Panicked`] named `what`.
///
/// Free on the path that does not panic (unwinding tables, no work). The caller
/// asserts unwind safety: a panic midway through a mutating call may leave that one
/// object half-updated, which is why the error says to rebuild. The panic hook still
/// runs (it prints the message to stderr).
pub fn catch_panic<T>(what: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        Err(CoreError::Panicked {
            what,
            detail: panic_message(payload.as_ref()),
        })
    })
}

/// The message a panic was raised with (`panic!` hands over a `&str` or a `String`).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// The OS error code at the end of an I/O error's message, as std writes one (`No space left
/// on device (os error 28)`): a library's thread may pass an error on as its message alone.
pub fn os_code_in_message(message: &str) -> Option<i32> {
    const MARK: &str = "(os error ";
    let inner = message.strip_suffix(')')?;
    let at = inner.rfind(MARK)?;
    inner[at + MARK.len()..]
        .parse()
        .ok()
        .filter(|&code| code > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_os_code_is_read_back_from_a_message_only_as_std_writes_it() {
        let full = std::io::Error::from_raw_os_error(28).to_string();
        assert_eq!(os_code_in_message(&full), Some(28));
        assert_eq!(
            os_code_in_message(&format!("writing a segment: {full}")),
            Some(28)
        );
        for other in [
            "No space left on device",
            "(os error )",
            "(os error -1)",
            "(os error 0)",
            "(os error 28) and more",
            "(os error 99999999999)",
        ] {
            assert_eq!(os_code_in_message(other), None, "{other}");
        }
    }

    #[test]
    fn a_panic_becomes_a_typed_error_naming_the_call_and_the_message() {
        let v: Vec<u32> = Vec::new();
        let index = v.len() + 3;
        match catch_panic("text recall", || Ok(v[index])) {
            Err(CoreError::Panicked { what, detail }) => {
                assert_eq!(what, "text recall");
                assert!(detail.contains("index out of bounds"), "{detail}");
            }
            other => panic!("expected Panicked, got {other:?}"),
        }
        let formatted = catch_panic::<()>("load", || panic!("bad {} bytes", 3));
        assert!(
            matches!(formatted, Err(CoreError::Panicked { ref detail, .. }) if detail == "bad 3 bytes")
        );
        let opaque = catch_panic::<()>("load", || std::panic::panic_any(7u8));
        assert!(
            matches!(opaque, Err(CoreError::Panicked { ref detail, .. }) if detail == "a panic without a message")
        );
        assert!(opaque
            .unwrap_err()
            .to_string()
            .starts_with("load: the core panicked"));
    }

    #[test]
    fn results_and_errors_pass_through() {
        assert_eq!(catch_panic("x", || Ok(5)).unwrap(), 5);
        assert!(matches!(
            catch_panic::<()>("x", || Err(CoreError::Corrupt("y".into()))),
            Err(CoreError::Corrupt(_))
        ));
    }
}
