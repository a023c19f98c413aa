//! The directory of a read-only text index: the files as they are, no lock files written.
//!
//! A reader takes tantivy's meta lock while it reloads, and taking it means creating
//! a lock file. On a read-only mount, or in a directory the reader may not write,
//! that fails, and with it every search. [`ReaderDirectory`] delegates everything to
//! the memory-mapped directory but takes a lock it cannot create as held: where the
//! reader cannot write, neither can a writer of its own process race it; a writer
//! elsewhere that can still takes its own locks, and a reload that meets its garbage
//! collection half-way fails as any damaged read does (a typed error, never a panic).

use std::io;
use std::path::Path;
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

/// A memory-mapped directory whose unwritable locks count as held (see the module docs).
#[derive(Clone, Debug)]
pub struct ReaderDirectory(pub MmapDirectory);

impl Directory for ReaderDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.0.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.0.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.0.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.0.open_write(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.0.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.0.atomic_write(path, data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.0.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        match self.0.acquire_lock(lock) {
            Err(LockError::IoError(e)) if unwritable(&e) => Ok(DirectoryLock::from(Box::new(()))),
            other => other,
        }
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.0.watch(watch_callback)
    }
}

/// `EROFS` on Linux and the BSDs (macOS included).
const EROFS: i32 = 30;

/// Whether `e` says the directory cannot be written here (read-only mount, no permission).
fn unwritable(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied || e.raw_os_error() == Some(EROFS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_directory_that_cannot_be_written_counts_a_lock_as_held() {
        assert!(unwritable(&io::Error::from_raw_os_error(EROFS)));
        assert!(unwritable(&io::Error::from(
            io::ErrorKind::PermissionDenied
        )));
        assert!(!unwritable(&io::Error::from(io::ErrorKind::NotFound)));
        assert!(!unwritable(&io::Error::from(io::ErrorKind::AlreadyExists)));
    }
}
