//! The files of one directory, many at a time: the entries and what a stat says of each
//! (what a scan of note files compares with what it last saw), and a batch of files
//! written beside their names then renamed over them (a job's notes). The caller decides
//! what a stat means and when a batch is durable; this module only makes the system calls.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Write};
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

/// The hidden file a staged write of `name` goes to: `.{name}.pending`, beside it.
pub fn pending_name(name: &OsStr) -> OsString {
    let mut out = OsString::with_capacity(name.len() + 9);
    out.push(".");
    out.push(name);
    out.push(".pending");
    out
}

/// Writes each `(name, data)` of `files` to its pending file in `dir` ([`pending_name`]),
/// in parallel; nothing is renamed yet ([`place_pending`] does). A pending file gets the
/// permissions of the file it will replace, or `mode` for a new one (on Unix), whatever
/// the umask; with `sync_each`, each is synced before it is closed.
///
/// # Errors
/// Something that is not a regular file (a folder, a broken link) stands at a name, or
/// the file system refused; every pending file of the batch this call wrote is removed
/// and the error names the path.
pub fn write_pending(
    dir: &Path,
    files: &[(OsString, Vec<u8>)],
    mode: u32,
    sync_each: bool,
) -> io::Result<()> {
    let results: Vec<io::Result<()>> = crate::pool::install(|| {
        files
            .par_iter()
            .map(|(name, data)| write_one(dir, name, data, mode, sync_each))
            .collect()
    });
    if let Some(at) = results.iter().position(Result::is_err) {
        for ((name, _), result) in files.iter().zip(&results) {
            if result.is_ok() {
                let _ = fs::remove_file(dir.join(pending_name(name)));
            }
        }
        let mut results = results;
        return results.swap_remove(at);
    }
    Ok(())
}

fn write_one(dir: &Path, name: &OsStr, data: &[u8], mode: u32, sync: bool) -> io::Result<()> {
    let target = dir.join(one_name(name)?);
    let keep = match fs::metadata(&target) {
        Ok(m) if m.is_file() => permissions_of(&m).unwrap_or(mode),
        Ok(_) => return Err(not_a_file(&target)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if fs::symlink_metadata(&target).is_ok() {
                return Err(not_a_file(&target)); // a link to nothing
            }
            mode
        }
        Err(e) => return Err(at_path(e, "cannot write", &target)),
    };
    let pending = dir.join(pending_name(name));
    let written = (|| {
        let mut options = fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            options.mode(keep);
            let file = options.open(&pending)?;
            // The umask and an old pending file do not decide them.
            file.set_permissions(fs::Permissions::from_mode(keep))?;
            finish(file, data, sync)
        }
        #[cfg(not(unix))]
        {
            let _ = keep;
            finish(options.open(&pending)?, data, sync)
        }
    })();
    written.map_err(|e| {
        let _ = fs::remove_file(&pending);
        at_path(e, "cannot write", &pending)
    })
}

fn finish(mut file: fs::File, data: &[u8], sync: bool) -> io::Result<()> {
    file.write_all(data)?;
    if sync {
        file.sync_all()?;
    }
    Ok(())
}

/// Renames the pending file of each of `names` in `dir` over its name, in order, and
/// says what a stat of each placed file reads (None where the stat failed).
///
/// # Errors
/// The file system refused a rename: the files before it are placed, it and those after
/// it stay pending; the error names the path.
pub fn place_pending(dir: &Path, names: &[OsString]) -> io::Result<Vec<Option<FileStat>>> {
    let mut stats = Vec::with_capacity(names.len());
    for name in names {
        let target = dir.join(one_name(name)?);
        let pending = dir.join(pending_name(name));
        fs::rename(&pending, &target).map_err(|e| at_path(e, "cannot place", &pending))?;
        stats.push(file_stat(&target, false));
    }
    Ok(stats)
}

/// `name` when it names an entry of a directory (no separator, not `.` or `..`).
fn one_name(name: &OsStr) -> io::Result<&OsStr> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(std::path::Component::Normal(n)), None) if n == name => Ok(name),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a file name of one directory entry"),
        )),
    }
}

#[cfg(unix)]
fn permissions_of(m: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn permissions_of(_m: &fs::Metadata) -> Option<u32> {
    None
}

fn not_a_file(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "cannot write {}: something that is not a file stands there (move it away)",
            path.display()
        ),
    )
}

/// `e` with `what` and the path in its message, its OS error code kept.
fn at_path(e: io::Error, what: &str, path: &Path) -> io::Error {
    let message = format!("{what} {}: {e}", path.display());
    io::Error::new(
        e.kind(),
        OsCoded {
            code: e.raw_os_error(),
            message,
        },
    )
}

/// An error message that keeps the OS error code it stands for (read back by the binding:
/// an error made with a message has no `raw_os_error` of its own).
#[derive(Debug)]
pub struct OsCoded {
    pub code: Option<i32>,
    pub message: String,
}

impl std::fmt::Display for OsCoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OsCoded {}

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

    #[test]
    fn a_batch_is_staged_hidden_then_placed() {
        let dir = std::env::temp_dir().join(format!("cuemem-stage-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("old.md"), b"old").unwrap();
        let files = vec![
            (OsString::from("new.md"), b"new".to_vec()),
            (OsString::from("old.md"), b"replaced".to_vec()),
        ];
        write_pending(&dir, &files, 0o600, false).unwrap();
        let staged = fs::read(dir.join(".old.md.pending")).unwrap();
        let before = fs::read(dir.join("old.md")).unwrap();
        let names: Vec<OsString> = files.iter().map(|(n, _)| n.clone()).collect();
        let stats = place_pending(&dir, &names).unwrap();
        let after = (
            fs::read(dir.join("new.md")).unwrap(),
            fs::read(dir.join("old.md")).unwrap(),
        );
        let left = fs::read_dir(&dir).unwrap().count();
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!((staged, before), (b"replaced".to_vec(), b"old".to_vec()));
        assert_eq!(after, (b"new".to_vec(), b"replaced".to_vec()));
        assert_eq!(left, 2);
        assert_eq!(
            stats.iter().map(|s| s.map(|s| s.size)).collect::<Vec<_>>(),
            vec![Some(3), Some(8)]
        );
    }

    #[test]
    fn a_batch_meeting_a_folder_leaves_no_pending_file() {
        let dir = std::env::temp_dir().join(format!("cuemem-blocked-{}", std::process::id()));
        fs::create_dir_all(dir.join("b.md")).unwrap();
        let files: Vec<(OsString, Vec<u8>)> = ["a.md", "b.md", "c.md"]
            .iter()
            .map(|n| (OsString::from(n), b"x".to_vec()))
            .collect();
        let err = write_pending(&dir, &files, 0o644, false).unwrap_err();
        let left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        fs::remove_dir_all(&dir).unwrap();
        assert!(err.to_string().contains("b.md"), "{err}");
        assert_eq!(left, vec![OsString::from("b.md")]);
    }

    #[test]
    fn only_names_of_one_entry_are_written() {
        for name in ["../x.md", "a/b.md", "..", ".", ""] {
            assert!(one_name(OsStr::new(name)).is_err(), "{name}");
        }
        assert!(one_name(OsStr::new(".hidden.md")).is_ok());
    }
}
