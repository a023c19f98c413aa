//! The files of a directory for Python: which entries of a notes directory a scan of
//! changes reads (`unseen_entries`), a batch of files staged then placed
//! (`write_pending`, `place_pending`), and the checksum of a file's bytes (`crc32`).

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use super::errors::detached;
use crate::error::CoreError;
use crate::files::{place_pending as place, stat_entries, write_pending as write, FileStat};

/// The CRC-32 (IEEE, zlib's) of `crc`'s bytes followed by `data`: `crc` is the CRC-32
/// of the bytes before `data` (0 for none), so a file's checksum is carried on chunk by
/// chunk. Computed with the GIL released.
#[pyfunction]
#[pyo3(signature = (data, crc = 0))]
pub fn crc32(py: Python<'_>, data: &[u8], crc: u32) -> u32 {
    py.detach(|| {
        let mut hasher = crc32fast::Hasher::new_with_initial(crc);
        hasher.update(data);
        hasher.finalize()
    })
}

/// The entries of `directory` a scan of changes must look at, and the keys of `expected`
/// no entry is named after (sorted; a key that is not a UTF-8 string is left out).
///
/// An entry is looked at when it is hidden, or ends in `suffix` and is not a regular
/// file (through a link, with `follow`) whose stem `expected` holds and `seen` maps to
/// `(size, mtime_ns, ctime_ns, inode, ...)` equal to its stat — with `digest`, followed by
/// the digest `expected` holds for the stem. Anything in `seen` that is not of that shape
/// only makes the file be looked at. The stats are taken with the GIL released, in
/// parallel; names that are not UTF-8 are looked at.
#[pyfunction]
#[pyo3(signature = (directory, suffix, seen, expected, *, digest, follow))]
pub fn unseen_entries(
    py: Python<'_>,
    directory: PathBuf,
    suffix: &str,
    seen: &Bound<'_, PyDict>,
    expected: &Bound<'_, PyDict>,
    digest: bool,
    follow: bool,
) -> PyResult<(Vec<OsString>, Vec<String>)> {
    let tail = suffix.as_bytes();
    let entries = py.detach(|| {
        stat_entries(&directory, follow, |name| {
            let bytes = name.as_encoded_bytes();
            !bytes.starts_with(b".") && bytes.ends_with(tail)
        })
    })?;
    let mut look = Vec::new();
    let mut stems = HashSet::with_capacity(entries.len());
    for (name, stat) in &entries {
        let bytes = name.as_encoded_bytes();
        if !bytes.starts_with(b".") && !bytes.ends_with(tail) {
            continue;
        }
        let stem = match name.to_str() {
            Some(n) if !n.starts_with('.') => &n[..n.len() - suffix.len()],
            _ => {
                look.push(name.clone());
                continue;
            }
        };
        stems.insert(stem);
        let same =
            stat.is_some_and(|s| as_seen(py, stem, &s, seen, expected, digest).unwrap_or(false));
        if !same {
            look.push(name.clone());
        }
    }
    // A key that is not a string of UTF-8 (a hostile cache) names no file: it is missing.
    let mut missing = Vec::new();
    for (key, _) in expected.iter() {
        let Some(key) = key
            .cast::<PyString>()
            .ok()
            .and_then(|k| k.to_str().ok().map(str::to_owned))
        else {
            continue;
        };
        if !stems.contains(key.as_str()) {
            missing.push(key);
        }
    }
    missing.sort_unstable();
    Ok((look, missing))
}

/// Whether `seen[stem]` holds `stat` (and, with `digest`, the digest `expected[stem]`).
fn as_seen(
    py: Python<'_>,
    stem: &str,
    stat: &FileStat,
    seen: &Bound<'_, PyDict>,
    expected: &Bound<'_, PyDict>,
    digest: bool,
) -> PyResult<bool> {
    let key = PyString::new(py, stem);
    let (Some(row), Some(wanted)) = (seen.get_item(&key)?, expected.get_item(&key)?) else {
        return Ok(false);
    };
    let row = row.cast::<PyTuple>()?;
    Ok(row.len() >= if digest { 5 } else { 4 }
        && row.get_item(0)?.extract::<u64>()? == stat.size
        && row.get_item(1)?.extract::<i64>()? == stat.mtime_ns
        && row.get_item(2)?.extract::<i64>()? == stat.ctime_ns
        && row.get_item(3)?.extract::<u64>()? == stat.inode
        && (!digest || row.get_item(4)?.eq(wanted)?))
}

/// Writes each `(name, data)` to `.{name}.pending` in `directory`, in parallel with the
/// GIL released: a new file gets `mode`, a replaced one keeps its permissions; with
/// `sync_each`, each is synced. See `cuemem.store.fsync.stage_files`.
///
/// Raises `StorageError` (naming the path; the batch's pending files are removed) when
/// something that is not a file stands at a name or the file system refuses.
#[pyfunction]
#[pyo3(signature = (directory, files, *, mode, sync_each))]
pub fn write_pending(
    py: Python<'_>,
    directory: PathBuf,
    files: Vec<(OsString, Vec<u8>)>,
    mode: u32,
    sync_each: bool,
) -> PyResult<()> {
    detached(py, "write_pending", move || {
        write(&directory, &files, mode, sync_each).map_err(CoreError::Io)
    })
}

/// A stat as a notes survey keeps it: `(size, mtime_ns, ctime_ns, inode)`.
type StatRow = (u64, i64, i64, u64);

/// Renames `.{name}.pending` over `name` in `directory` for each of `names`, in order,
/// with the GIL released; the stat of each placed file as `(size, mtime_ns, ctime_ns,
/// inode)`, or None where it failed.
///
/// Raises `StorageError` naming the pending file whose rename failed (those before it are
/// placed, the rest stay pending).
#[pyfunction]
pub fn place_pending(
    py: Python<'_>,
    directory: PathBuf,
    names: Vec<OsString>,
) -> PyResult<Vec<Option<StatRow>>> {
    let stats = detached(py, "place_pending", move || {
        place(&directory, &names).map_err(CoreError::Io)
    })?;
    Ok(stats
        .into_iter()
        .map(|s| s.map(|s| (s.size, s.mtime_ns, s.ctime_ns, s.inode)))
        .collect())
}
