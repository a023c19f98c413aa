//! tantivy's errors onto the core's: one arm per tantivy error kind, no wildcard.
//!
//! | tantivy                                                   | core                               |
//! |-----------------------------------------------------------|------------------------------------|
//! | `LockFailure(LockBusy)`                                   | `TextIndex { fault: Locked }`      |
//! | `LockFailure(IoError)`, `OpenDirectoryError`, `OpenWriteError`, `OpenReadError(IoError)`, `IoError` | `Io` (kind and OS error code kept) |
//! | `IndexAlreadyExists`                                      | `Io` (`AlreadyExists`)             |
//! | an `IoError` of kind `InvalidData` or `UnexpectedEof`     | `TextIndex { fault: Corrupt }`     |
//! | `DataCorruption`, `SchemaError`, `FieldNotFound`, `DeserializeError`, `OpenReadError(FileDoesNotExist)` | `TextIndex { fault: Corrupt }` |
//! | `IncompatibleIndex`, `OpenReadError(IncompatibleIndex)`   | `TextIndex { fault: Incompatible }` |
//! | `InvalidArgument`                                         | `InvalidArgument`                  |
//! | `Poisoned`, `ErrorInThread`, `SystemError`, `InternalError`, `IndexBuilderMissingArgument`, `AggregationError` | `TextIndex { fault: Internal }` |
//!
//! An I/O error whose kind says the bytes read were bad is damage, not the file
//! system refusing; so is a missing file the index's own metadata lists (an index
//! absent altogether is reported by [`TextIndex::open`](super::TextIndex::open) itself,
//! as a missing file).

use std::io;
use std::sync::Arc;

use tantivy::directory::error::{LockError, OpenDirectoryError, OpenReadError, OpenWriteError};
use tantivy::TantivyError;

use crate::error::{CoreError, TextFault};

fn text(fault: TextFault, detail: String) -> CoreError {
    CoreError::TextIndex { fault, detail }
}

/// The `io::Error` inside tantivy's `Arc`, its kind and OS error code kept (the code of
/// an I/O error it wraps, too: tantivy wraps some in another).
fn io_error(shared: Arc<io::Error>) -> io::Error {
    if let Some(code) = os_code(&shared) {
        return io::Error::from_raw_os_error(code);
    }
    match Arc::try_unwrap(shared) {
        Ok(e) => e,
        Err(shared) => io::Error::new(shared.kind(), shared.to_string()),
    }
}

/// The OS error code of `e`, or of the first I/O error down its chain of causes (what
/// it wraps, and their sources: tantivy wraps some in errors of its own).
fn os_code(e: &io::Error) -> Option<i32> {
    if let Some(code) = e.raw_os_error() {
        return Some(code);
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = e
        .get_ref()
        .map(|inner| inner as &(dyn std::error::Error + 'static));
    while let Some(c) = cause {
        if let Some(code) = c.downcast_ref::<io::Error>().and_then(os_code) {
            return Some(code);
        }
        cause = c.source();
    }
    None
}

/// An I/O error, unless its kind says the bytes read were bad (then corruption).
fn from_io(shared: Arc<io::Error>) -> CoreError {
    match shared.kind() {
        io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => {
            text(TextFault::Corrupt, shared.to_string())
        }
        _ => CoreError::Io(io_error(shared)),
    }
}

/// Maps a tantivy error onto the core's error kinds (see the module docs).
pub(crate) fn tantivy_error(e: TantivyError) -> CoreError {
    match e {
        TantivyError::LockFailure(LockError::LockBusy, _) => text(
            TextFault::Locked,
            "another writer holds the index lock (in this process or another)".into(),
        ),
        TantivyError::LockFailure(LockError::IoError(io), _) => CoreError::Io(io_error(io)),
        TantivyError::IoError(io) => from_io(io),
        TantivyError::OpenDirectoryError(e) => match e {
            OpenDirectoryError::DoesNotExist(path) => CoreError::Io(io::Error::new(
                io::ErrorKind::NotFound,
                format!("directory {} does not exist", path.display()),
            )),
            OpenDirectoryError::NotADirectory(path) => CoreError::Io(io::Error::other(format!(
                "{} is not a directory",
                path.display()
            ))),
            OpenDirectoryError::FailedToCreateTempDir(io)
            | OpenDirectoryError::IoError { io_error: io, .. } => CoreError::Io(io_error(io)),
        },
        TantivyError::OpenWriteError(e) => match e {
            OpenWriteError::FileAlreadyExists(path) => CoreError::Io(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("text index file {} already exists", path.display()),
            )),
            OpenWriteError::IoError { io_error: io, .. } => CoreError::Io(io_error(io)),
        },
        TantivyError::OpenReadError(e) => match e {
            OpenReadError::FileDoesNotExist(path) => text(
                TextFault::Corrupt,
                format!("index file {} is missing", path.display()),
            ),
            OpenReadError::IoError { io_error: io, .. } => from_io(io),
            OpenReadError::IncompatibleIndex(why) => {
                text(TextFault::Incompatible, format!("{why:?}"))
            }
        },
        TantivyError::IndexAlreadyExists => CoreError::Io(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "text index already exists (created by another writer)",
        )),
        e @ (TantivyError::DataCorruption(_)
        | TantivyError::SchemaError(_)
        | TantivyError::FieldNotFound(_)
        | TantivyError::DeserializeError(_)) => text(TextFault::Corrupt, e.to_string()),
        TantivyError::IncompatibleIndex(why) => text(TextFault::Incompatible, format!("{why:?}")),
        TantivyError::InvalidArgument(reason) => CoreError::InvalidArgument {
            name: "text index",
            reason,
        },
        e @ (TantivyError::Poisoned
        | TantivyError::ErrorInThread(_)
        | TantivyError::SystemError(_)
        | TantivyError::InternalError(_)
        | TantivyError::IndexBuilderMissingArgument(_)
        | TantivyError::AggregationError(_)) => text(TextFault::Internal, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use tantivy::directory::error::Incompatibility;
    use tantivy::error::DataCorruption;

    use super::*;

    fn fault(e: TantivyError) -> Option<TextFault> {
        match tantivy_error(e) {
            CoreError::TextIndex { fault, .. } => Some(fault),
            _ => None,
        }
    }

    fn io_kind(e: TantivyError) -> (io::ErrorKind, Option<i32>) {
        match tantivy_error(e) {
            CoreError::Io(io) => (io.kind(), io.raw_os_error()),
            other => panic!("expected an I/O error, got {other:?}"),
        }
    }

    #[test]
    fn a_busy_lock_is_not_corruption() {
        assert_eq!(
            fault(TantivyError::LockFailure(
                LockError::LockBusy,
                Some("held".into())
            )),
            Some(TextFault::Locked)
        );
        let io = LockError::wrap_io_error(io::Error::from_raw_os_error(13));
        assert_eq!(io_kind(TantivyError::LockFailure(io, None)).1, Some(13));
    }

    #[test]
    fn damage_and_foreign_indexes_are_corrupt() {
        assert_eq!(
            fault(DataCorruption::comment_only("bad footer").into()),
            Some(TextFault::Corrupt)
        );
        assert_eq!(
            fault(TantivyError::SchemaError("no field row".into())),
            Some(TextFault::Corrupt)
        );
        assert_eq!(
            fault(TantivyError::FieldNotFound("row".into())),
            Some(TextFault::Corrupt)
        );
        assert_eq!(
            fault(OpenReadError::FileDoesNotExist(PathBuf::from("a.idx")).into()),
            Some(TextFault::Corrupt)
        );
        assert_eq!(
            fault(io::Error::new(io::ErrorKind::InvalidData, "Fst data is corrupted").into()),
            Some(TextFault::Corrupt)
        );
        assert_eq!(
            fault(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
            Some(TextFault::Corrupt)
        );
    }

    #[test]
    fn another_format_is_incompatible() {
        let why = Incompatibility::CompressionMismatch {
            library_compression_format: "lz4".into(),
            index_compression_format: "zstd".into(),
        };
        assert_eq!(
            fault(TantivyError::IncompatibleIndex(why.clone())),
            Some(TextFault::Incompatible)
        );
        assert_eq!(
            fault(OpenReadError::IncompatibleIndex(why).into()),
            Some(TextFault::Incompatible)
        );
    }

    #[test]
    fn io_errors_keep_their_kind_and_code() {
        assert_eq!(io_kind(io::Error::from_raw_os_error(28).into()).1, Some(28));
        let wrapped = Arc::new(io::Error::other(io::Error::from_raw_os_error(28)));
        let _other_owner = Arc::clone(&wrapped);
        assert_eq!(io_error(wrapped).raw_os_error(), Some(28));
        // An error of another type between them: the code is found down the sources.
        #[derive(Debug)]
        struct Wrapper(io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "writing a segment: {}", self.0)
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let deep = Arc::new(io::Error::other(Wrapper(io::Error::from_raw_os_error(28))));
        assert_eq!(io_error(deep).raw_os_error(), Some(28));
        let shared = Arc::new(io::Error::from_raw_os_error(2));
        let kept = shared.clone();
        assert_eq!(
            io_kind(TantivyError::IoError(shared)),
            (io::ErrorKind::NotFound, Some(2))
        );
        drop(kept);
        let read = OpenReadError::wrap_io_error(
            io::Error::from_raw_os_error(5),
            PathBuf::from("meta.json"),
        );
        assert_eq!(io_kind(read.into()).1, Some(5));
        assert_eq!(
            io_kind(OpenDirectoryError::DoesNotExist(PathBuf::from("/nowhere")).into()).0,
            io::ErrorKind::NotFound
        );
        assert_eq!(
            io_kind(OpenWriteError::FileAlreadyExists(PathBuf::from("x")).into()).0,
            io::ErrorKind::AlreadyExists
        );
        assert_eq!(
            io_kind(TantivyError::IndexAlreadyExists).0,
            io::ErrorKind::AlreadyExists
        );
    }

    #[test]
    fn engine_failures_are_internal_and_arguments_stay_arguments() {
        assert_eq!(fault(TantivyError::Poisoned), Some(TextFault::Internal));
        assert_eq!(
            fault(TantivyError::ErrorInThread("worker died".into())),
            Some(TextFault::Internal)
        );
        assert_eq!(
            fault(TantivyError::SystemError("no thread".into())),
            Some(TextFault::Internal)
        );
        assert!(matches!(
            tantivy_error(TantivyError::InvalidArgument("x".into())),
            CoreError::InvalidArgument {
                name: "text index",
                ..
            }
        ));
    }
}
