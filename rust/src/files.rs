//! The entries of one directory and what a stat says of each, the stats taken in
//! parallel: what a scan of note files compares with what it last saw. The caller
//! decides what a stat means; this module only makes the system calls.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::Path;

use rayon::prelude::*;

/// What a stat (following links, as reading the file would) says of a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStat {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub inode: u64,
}

/// Every entry of `dir`, with the stat of those `wanted` holds for when it is a regular
/// file (None for anything else: a folder, a FIFO, a broken link, a failed stat). With
/// `follow`, a link is stat'ed through, as reading it would; without, a link is no file.
///
/// # Errors
/// The directory cannot be listed.
pub fn stat_entries(
    dir: &Path,
    follow: bool,
    wanted: impl Fn(&OsStr) -> bool + Sync,
) -> io::Result<Vec<(OsString, Option<FileStat>)>> {
    let names = fs::read_dir(dir)?
        .map(|entry| entry.map(|e| e.file_name()))
        .collect::<io::Result<Vec<_>>>()?;
    Ok(crate::pool::install(|| {
        names
            .into_par_iter()
            .map(|name| {
                let stat = if wanted(&name) {
                    file_stat(&dir.join(&name), follow)
                } else {
                    None
                };
                (name, stat)
            })
            .collect()
    }))
}

#[cfg(unix)]
fn file_stat(path: &Path, follow: bool) -> Option<FileStat> {
    use std::os::unix::fs::MetadataExt;
    let m = if follow {
        fs::metadata(path)
    } else {
        fs::symlink_metadata(path)
    }
    .ok()?;
    if !m.is_file() {
        return None;
    }
    // A time past what nanoseconds in an i64 hold (after 2262) matches nothing kept: the file is read.
    let ns = |s: i64, n: i64| s.checked_mul(1_000_000_000)?.checked_add(n);
    Some(FileStat {
        size: m.size(),
        mtime_ns: ns(m.mtime(), m.mtime_nsec())?,
        ctime_ns: ns(m.ctime(), m.ctime_nsec())?,
        inode: m.ino(),
    })
}

/// No stat a caller could have kept matches off Unix: every file is read.
#[cfg(not(unix))]
fn file_stat(_path: &Path, _follow: bool) -> Option<FileStat> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_the_wanted_regular_files_only() {
        let dir = std::env::temp_dir().join(format!("cuemem-files-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub.md")).unwrap();
        fs::write(dir.join("a.md"), b"abc").unwrap();
        fs::write(dir.join("b.txt"), b"x").unwrap();
        let mut found = stat_entries(&dir, true, |n| n.to_string_lossy().ends_with(".md")).unwrap();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        fs::remove_dir_all(&dir).unwrap();
        let got: Vec<_> = found
            .iter()
            .map(|(n, s)| (n.to_string_lossy().into_owned(), s.map(|s| s.size)))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a.md".into(), Some(3)),
                ("b.txt".into(), None),
                ("sub.md".into(), None)
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_a_file_only_when_followed() {
        let dir = std::env::temp_dir().join(format!("cuemem-links-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("a.md"), b"abc").unwrap();
        std::os::unix::fs::symlink(dir.join("a.md"), dir.join("b.md")).unwrap();
        let stat = |follow| {
            let found = stat_entries(&dir, follow, |n| n == "b.md").unwrap();
            found
                .into_iter()
                .find(|(n, _)| n == "b.md")
                .and_then(|(_, s)| s)
                .map(|s| s.size)
        };
        let (followed, not) = (stat(true), stat(false));
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!((followed, not), (Some(3), None));
    }
}
