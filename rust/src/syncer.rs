//! A thread that syncs files while its caller goes on.
//!
//! The journal's group commit hands a [`Syncer`] a duplicate of the open segment's
//! descriptor as soon as a write's lines are appended ([`Syncer::start`]), applies the
//! records to its indexes meanwhile, and then waits for the outcome ([`Syncer::wait`]).
//! The worker is a plain OS thread: it needs nothing of its caller (no interpreter lock),
//! so the disk works while the caller computes. It is spawned by the first job, ends after
//! [`IDLE`] without one (the next job spawns another), and ends when the syncer is dropped.
//!
//! Jobs are numbered by the caller, increasing; one is outstanding (queued or running) at a
//! time. A wait for a job returns once it has finished, with its outcome; a wait for an
//! earlier job returns the first failure of any job so far (none: it synced), and a wait for
//! a job never started returns at once, with an error. On Unix a job is the `fsync(2)` a
//! Python `os.fsync` makes, and the descriptor's `close(2)` after it is checked too (a file
//! system may report a write-back error there).

use std::fs::File;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

/// How long the worker waits for a job before it ends.
pub const IDLE: Duration = Duration::from_secs(2);

/// What a failed sync reports: the OS error number (0 if none) and its message.
pub type Failure = (i32, String);

/// Syncs the files it is handed on a thread of its own (see the module docs).
pub struct Syncer {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The job waiting for the worker: the file to sync (closed after) and its number.
    job: Option<(File, u64)>,
    /// The highest job number handed over.
    queued: u64,
    /// The highest job number finished, and its outcome.
    finished: u64,
    outcome: Option<Failure>,
    /// The first failure of any job.
    first_failure: Option<Failure>,
    /// A worker thread is alive.
    worker: bool,
    /// The syncer was dropped: the worker ends.
    closed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned one still holds consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for Syncer {
    fn default() -> Self {
        Self::new()
    }
}

impl Syncer {
    /// A syncer with no worker yet.
    pub fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                changed: Condvar::new(),
            }),
        }
    }

    /// Hands `file` to the worker to sync (then close) as job `id`, spawning the worker if
    /// none is alive, and returns at once.
    ///
    /// # Errors
    /// `id` is not above every earlier job's, a job is still outstanding, or no thread can
    /// be spawned; `file` is closed unsynced then, and nothing else changes.
    pub fn start(&self, file: File, id: u64) -> io::Result<()> {
        let mut state = self.shared.lock();
        if id <= state.queued {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("sync job {id} is not after job {}", state.queued),
            ));
        }
        if state.finished < state.queued {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "a sync job is still outstanding",
            ));
        }
        if !state.worker {
            let shared = Arc::clone(&self.shared);
            thread::Builder::new()
                .name("cuemem-syncer".into())
                .spawn(move || work(&shared))?;
            state.worker = true;
        }
        state.job = Some((file, id));
        state.queued = id;
        self.shared.changed.notify_all();
        Ok(())
    }

    /// Blocks until job `id` has finished: `None` when it synced, its failure otherwise
    /// (for a job before the last finished one, the first failure of any job). A job never
    /// handed over is a failure at once.
    pub fn wait(&self, id: u64) -> Option<Failure> {
        let mut state = self.shared.lock();
        if id > state.queued {
            return Some((0, format!("sync job {id} was never started")));
        }
        while state.finished < id {
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if state.finished == id {
            state.outcome.clone()
        } else {
            state.first_failure.clone()
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        // `try_lock`: in a forked child the lock may be held by a thread that does not
        // exist there; its worker does not exist either, so there is no one to tell.
        if let Ok(mut state) = self.shared.state.try_lock() {
            state.closed = true;
            self.shared.changed.notify_all();
        }
    }
}

/// The worker: syncs each job, records its outcome, and ends when idle or closed.
fn work(shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if let Some((file, id)) = state.job.take() {
            drop(state);
            let outcome = sync_and_close(file).err().map(|e| {
                let errno = e.raw_os_error().unwrap_or(0);
                (errno, e.to_string())
            });
            state = shared.lock();
            state.finished = id;
            if state.first_failure.is_none() {
                state.first_failure.clone_from(&outcome);
            }
            state.outcome = outcome;
            shared.changed.notify_all();
            continue;
        }
        if state.closed {
            break;
        }
        let (next, timeout) = shared
            .changed
            .wait_timeout(state, IDLE)
            .unwrap_or_else(PoisonError::into_inner);
        state = next;
        if timeout.timed_out() && state.job.is_none() {
            break;
        }
    }
    state.worker = false;
}

/// `fsync(2)` then `close(2)` of `file`'s descriptor, each checked: what Python's `os.fsync`
/// does (Rust's `sync_all` is `F_FULLFSYNC` on Apple systems, which Python's is not).
#[cfg(unix)]
fn sync_and_close(file: File) -> io::Result<()> {
    use std::os::fd::IntoRawFd;
    use std::os::raw::c_int;
    extern "C" {
        fn fsync(fd: c_int) -> c_int;
        fn close(fd: c_int) -> c_int;
    }
    let fd = file.into_raw_fd();
    // SAFETY: `fd` was just taken out of a `File` that owned it; it is closed once, here.
    let synced = if unsafe { fsync(fd) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    };
    // SAFETY: as above; nothing uses `fd` after this.
    let closed = if unsafe { close(fd) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    };
    synced.and(closed)
}

/// `sync_all`, then the file is dropped (closed).
#[cfg(not(unix))]
fn sync_and_close(file: File) -> io::Result<()> {
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_started_sync_finishes_and_reports_success() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = File::create(dir.path().join("j")).unwrap();
        file.write_all(b"line\n").unwrap();
        let syncer = Syncer::new();
        syncer.start(file, 1).unwrap();
        assert_eq!(syncer.wait(1), None);
        let again = File::options()
            .append(true)
            .open(dir.path().join("j"))
            .unwrap();
        syncer.start(again, 2).unwrap();
        assert_eq!(syncer.wait(2), None);
        assert_eq!(syncer.wait(1), None); // an earlier job: already finished
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_sync_reports_the_os_error() {
        // fsync of a pipe is EINVAL on Linux.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let file = File::from(std::os::fd::OwnedFd::from(writer));
        let syncer = Syncer::new();
        syncer.start(file, 1).unwrap();
        let failure = syncer.wait(1).expect("fsync of a pipe fails");
        assert_eq!(failure.0, 22);
    }

    #[test]
    fn jobs_out_of_order_and_unknown_waits_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let syncer = Syncer::new();
        assert!(syncer.wait(1).is_some());
        syncer
            .start(File::create(dir.path().join("a")).unwrap(), 3)
            .unwrap();
        let err = syncer
            .start(File::create(dir.path().join("b")).unwrap(), 3)
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(syncer.wait(3), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_earlier_jobs_wait_reports_the_first_failure() {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let dir = tempfile::tempdir().unwrap();
        let syncer = Syncer::new();
        syncer
            .start(File::from(std::os::fd::OwnedFd::from(writer)), 1)
            .unwrap();
        assert!(syncer.wait(1).is_some());
        syncer
            .start(File::create(dir.path().join("a")).unwrap(), 2)
            .unwrap();
        assert_eq!(syncer.wait(2), None);
        assert_eq!(syncer.wait(1).map(|f| f.0), Some(22)); // not job 2's success
    }

    #[test]
    fn a_second_job_waits_for_the_first_to_be_finished() {
        let dir = tempfile::tempdir().unwrap();
        let syncer = Syncer::new();
        let first = syncer.start(File::create(dir.path().join("a")).unwrap(), 1);
        let second = syncer.start(File::create(dir.path().join("b")).unwrap(), 2);
        assert!(first.is_ok());
        assert_eq!(syncer.wait(1), None);
        // Refused while job 1 was outstanding, or taken once it had finished.
        if let Err(e) = second {
            assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        } else {
            assert_eq!(syncer.wait(2), None);
        }
    }

    #[test]
    fn the_worker_ends_when_the_syncer_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let syncer = Syncer::new();
        syncer
            .start(File::create(dir.path().join("a")).unwrap(), 1)
            .unwrap();
        assert_eq!(syncer.wait(1), None);
        let shared = Arc::clone(&syncer.shared);
        drop(syncer);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while shared.lock().worker && std::time::Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        assert!(!shared.lock().worker);
    }
}
