//! Group commit: one `fsync` of the journal's open segment serves every append waiting for it.
//!
//! A writer appends its lines, takes a ticket ([`GroupSync::written`]) and, once it has done
//! whatever follows its append (a commit applies its records to the indexes), waits for that
//! ticket ([`GroupSync::wait`]). The syncs are made by a worker of the group's own, a plain OS
//! thread that needs nothing of its callers (no interpreter lock): whenever a ticket is unsynced
//! it syncs the segment, and each sync covers every ticket handed out before it began. So the
//! disk works from the moment a line is appended, while the writer goes on; while one sync runs
//! the other writers append, and the next sync, which starts as soon as the last one ends,
//! covers them all. No writer leads a sync, so none has to be scheduled for the next to start.
//!
//! A group may also have a *window* (`fsync="interval"`): the worker then syncs a ticket at most
//! that long after it was written, one sync for every ticket of the window, and writers do not
//! wait (a [`GroupSync::flush`] still syncs at once). With no window (`fsync="always"`) it syncs
//! as soon as a ticket is unsynced.
//!
//! The worker syncs its own duplicate of the open segment's descriptor, made by the first ticket
//! after a [`GroupSync::flush`]; the writer flushes before it closes a segment (a rotation, a
//! rewind, a close), so a sync never meets a closed or reused descriptor.
//!
//! Handing work to a sleeping thread costs its wake-up (tens of microseconds on a virtual
//! machine, where an idle core is halted), which on a fast disk is a large part of a sync: so
//! a waiter whose sync should end soon polls for it before it sleeps, and the worker polls a
//! while for the next ticket after a sync while tickets come soon after one. Both polls are
//! bounded ([`SPIN_WAIT`], [`SPIN_IDLE`]) and skipped where they would not pay: a slow disk,
//! sparse writes, a window, several writers (tickets of different threads, or a waiter asleep:
//! their threads need the cores), a process on one core. One waiter and one worker of the
//! process poll at a time, whatever their groups (writers of several homes are several too).
//!
//! A sync that fails fails every ticket it had not covered, and every later one: what the kernel
//! kept of those bytes is unknown, so the writer appends no more ([`GroupSync::check`] before a
//! write). A ticket an earlier sync covered stays good. The worker is spawned by the first
//! ticket, ends after [`IDLE`] without one (the next ticket spawns another), and ends when the
//! group is dropped. Every sync made is counted for the process ([`syncs_made`]).
//!
//! A forked child has none of the group's threads (its worker, or one that held its lock at the
//! fork): there the group hands out no ticket and waits for none ([`GroupSync::forked`]).

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// How long the worker waits for a ticket before it ends.
pub const IDLE: Duration = Duration::from_secs(2);

/// The longest a waiter polls for its sync before it sleeps: it polls only when its sync is
/// expected to end within this (the recent syncs' mean length tells).
pub const SPIN_WAIT: Duration = Duration::from_micros(250);

/// The longest the worker polls for the next ticket after a sync before it sleeps: it polls
/// only while tickets have recently come within this of a sync's end.
pub const SPIN_IDLE: Duration = Duration::from_micros(100);

/// What a failed sync reports: the OS error number (0 if none) and its message.
pub type Failure = (i32, String);

/// The syncs every group of this process has made.
static SYNCS: AtomicU64 = AtomicU64::new(0);

/// A waiter polls, and a worker polls: one of each in the process at a time, whatever the
/// group (threads writing to several homes are several writers too).
static WAITER_POLLS: AtomicBool = AtomicBool::new(false);
static WORKER_POLLS: AtomicBool = AtomicBool::new(false);

/// How many syncs the groups of this process have made so far.
pub fn syncs_made() -> u64 {
    SYNCS.load(Ordering::Relaxed)
}

/// How a sync is made: `fsync(2)` of the file (a test slows it or fails it).
type SyncFn = fn(&File) -> io::Result<()>;

/// The tickets of one journal's appends and the worker that syncs them (see the module docs).
pub struct GroupSync {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the worker: a ticket was handed out, or the group dropped.
    work: Condvar,
    /// Wakes the waiters of a sync as it ends, by the parity of its number: a sync's end wakes
    /// the waiters it covered (and a flush), not those appended meanwhile, whom the next covers.
    done: [Condvar; 2],
    sync: SyncFn,
    /// How long a ticket may wait for its sync (zero: none).
    window: Duration,
    /// [`State::written`], or `u64::MAX` once closed: what a polling worker reads.
    written_hint: AtomicU64,
    /// [`State::synced`], or `u64::MAX` once a sync failed: what a polling waiter reads.
    synced_hint: AtomicU64,
    /// Polls may pay: the process may run on more than one core (a poll on the only core
    /// would keep the thread it waits for off it).
    may_poll: bool,
    /// The process that made the group (a forked child has none of its threads), and its
    /// fork generation ([`crate::forks`]).
    pid: u32,
    generation: u64,
    /// How many waits polled (what the tests read).
    #[cfg(test)]
    polls: AtomicU64,
}

#[derive(Default)]
struct State {
    /// The segment the unsynced tickets are in: the caller's name for it (its descriptor) and
    /// the worker's duplicate.
    segment: Option<(i64, Arc<File>)>,
    /// Tickets handed out.
    written: u64,
    /// Tickets on disk.
    synced: u64,
    /// Syncs started, the running one included (its number).
    started: u64,
    /// The last ticket the running sync covers.
    target: u64,
    /// When the first ticket no started sync covers was handed out (what a window counts from).
    pending_since: Option<Instant>,
    /// A flush waits: the next sync is due at once, whatever the window.
    flushing: usize,
    /// The worker waits for a ticket (a new one wakes it).
    idle: bool,
    /// The worker waits for the end of a window (only a flush or a drop wakes it).
    windowing: bool,
    /// The first sync that failed: no ticket after [`State::synced`] will be.
    failed: Option<Failure>,
    /// A worker thread is alive.
    worker: bool,
    /// The group was dropped: the worker ends once nothing is left to sync.
    closed: bool,
    /// Waiters asleep until a sync's end (several writers: the cores are theirs, no one polls).
    sleeping: usize,
    /// The thread that took the last ticket.
    last_writer: Option<thread::ThreadId>,
    /// How many tickets in a row (after its first) that thread has taken.
    run: u32,
    /// When the running sync began (None: the worker is not inside a sync, and the segment's
    /// duplicate is not in use).
    began: Option<Instant>,
    /// The recent syncs' mean length (a moving average, in nanoseconds; each counted up to
    /// four times the mean before it, or twice [`SPIN_WAIT`] if more).
    sync_ns: u64,
    /// When the last sync ended with nothing owed (until the next ticket).
    idle_since: Option<Instant>,
    /// The recent gaps from a sync that left nothing owed to the next ticket (a moving
    /// average, in nanoseconds; each gap counted up to [`GAP_CAP`]).
    gap_ns: u64,
}

/// How many tickets in a row one thread takes before it is taken to write alone ([`State::solo`]).
const SOLO: u32 = 4;

/// The longest gap the moving average of [`State::gap_ns`] counts: one long pause does not
/// stop the worker polling for long.
const GAP_CAP: Duration = Duration::from_millis(1);

/// The next value of a moving average (weight 1/4 to the new sample).
fn averaged(mean: u64, sample: Duration) -> u64 {
    let sample = u64::try_from(sample.as_nanos()).unwrap_or(u64::MAX);
    mean - mean / 4 + sample / 4
}

impl State {
    /// Whether a ticket waits for a sync the worker can make.
    fn owed(&self) -> bool {
        self.failed.is_none() && self.synced < self.written && self.segment.is_some()
    }

    /// Whether one writer writes: its thread took the last [`SOLO`] tickets in a row and its
    /// next write follows its wait (with several, the cores are their threads': no one polls;
    /// two writers' tickets in a row by one thread are common, several are not).
    fn solo(&self) -> bool {
        self.run + 1 >= SOLO
    }

    /// Whether the worker is inside a sync.
    fn syncing(&self) -> bool {
        self.began.is_some()
    }

    /// Whether the running sync covers `ticket` (else the next one will).
    fn running_covers(&self, ticket: u64) -> bool {
        self.syncing() && ticket <= self.target
    }

    /// How long `ticket` (an unsynced one) is expected to wait: what is left of the running
    /// sync if it covers it, else that and one more. A sync that has run longer than the mean
    /// is a slow one: as much again is left of it, not nothing.
    fn expected_wait(&self, ticket: u64) -> Duration {
        let mean = Duration::from_nanos(self.sync_ns);
        let left = self.began.map_or(Duration::ZERO, |began| {
            let run = began.elapsed();
            if run < mean {
                mean - run
            } else {
                mean
            }
        });
        if self.running_covers(ticket) {
            left
        } else {
            left + mean
        }
    }

    /// The number of the sync that covers `ticket` (an unsynced one): the running sync if it
    /// does, else the next.
    fn covering(&self, ticket: u64) -> u64 {
        if self.running_covers(ticket) {
            self.started
        } else {
            self.started + 1
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned one still holds consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for the end of the sync that covers `ticket` (or of any, for a failure).
    fn wait_for<'a>(&self, state: MutexGuard<'a, State>, ticket: u64) -> MutexGuard<'a, State> {
        let parity = (state.covering(ticket) % 2) as usize;
        self.done[parity]
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for GroupSync {
    fn default() -> Self {
        Self::new()
    }
}

impl GroupSync {
    /// A group with no ticket and no worker yet, syncing each ticket at once.
    pub fn new() -> Self {
        Self::with_window(Duration::ZERO)
    }

    /// A group whose worker syncs a ticket at most `window` after it was handed out.
    pub fn with_window(window: Duration) -> Self {
        Self::with_sync(sync_file, window)
    }

    fn with_sync(sync: SyncFn, window: Duration) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                work: Condvar::new(),
                done: [Condvar::new(), Condvar::new()],
                sync,
                window,
                written_hint: AtomicU64::new(0),
                synced_hint: AtomicU64::new(0),
                may_poll: thread::available_parallelism().is_ok_and(|n| n.get() > 1),
                pid: std::process::id(),
                generation: crate::forks::generation(),
                #[cfg(test)]
                polls: AtomicU64::new(0),
            }),
        }
    }

    /// A ticket for bytes just written to the segment `segment` names (the writer's descriptor);
    /// the worker starts syncing them at once. `duplicate` opens the worker's own handle on the
    /// segment; it is called when the group holds none (the first ticket after a flush).
    ///
    /// # Errors
    /// An earlier sync failed (its failure); `duplicate` failed, or no thread could be spawned
    /// (no ticket is handed out then, and a later one may still be); `segment` is not the one
    /// the unsynced tickets are in (the writer changed segments without a flush).
    pub fn written(
        &self,
        segment: i64,
        duplicate: impl FnOnce() -> io::Result<File>,
    ) -> Result<u64, Failure> {
        self.here()?;
        let mut state = self.shared.lock();
        if let Some(failure) = &state.failed {
            return Err(failure.clone());
        }
        match &state.segment {
            Some((held, _)) if *held == segment => {}
            Some(_) if state.syncing() || state.synced < state.written => {
                return Err((
                    0,
                    "a new segment before the tickets of the last one were synced".to_owned(),
                ));
            }
            _ => {
                let file = duplicate().map_err(|e| failure(&e))?;
                state.segment = Some((segment, Arc::new(file)));
            }
        }
        if !state.worker {
            let shared = Arc::clone(&self.shared);
            thread::Builder::new()
                .name("cuemem-syncer".into())
                .spawn(move || work(&shared))
                .map_err(|e| failure(&e))?;
            state.worker = true;
        }
        let writer = thread::current().id();
        state.run = if state.last_writer == Some(writer) {
            state.run.saturating_add(1)
        } else {
            0
        };
        state.last_writer = Some(writer);
        state.written += 1;
        self.shared
            .written_hint
            .store(state.written, Ordering::Release);
        if state.pending_since.is_none() {
            state.pending_since = Some(Instant::now());
        }
        if let Some(since) = state.idle_since.take() {
            state.gap_ns = averaged(state.gap_ns, since.elapsed().min(GAP_CAP));
        }
        if state.idle {
            self.shared.work.notify_one(); // a busy worker looks again after its sync
        }
        Ok(state.written)
    }

    /// Blocks until `ticket`'s bytes are on disk: `Ok`, or the failure of the sync that should
    /// have covered them (or of an earlier one). A ticket never handed out counts as the last one.
    ///
    /// While one thread writes, a waiter whose sync is expected to end within [`SPIN_WAIT`]
    /// polls for it (spinning) before it sleeps, one waiter of the process at a time: a sleeping
    /// thread is woken late (tens of microseconds, on a virtual machine's idle core), which a
    /// fast disk's sync would double. The answer is still the one read under the lock.
    ///
    /// # Errors
    /// The sync covering `ticket` failed, or an earlier one did; the group belongs to the
    /// process this one was forked from.
    pub fn wait(&self, ticket: u64) -> Result<(), Failure> {
        self.here()?;
        let shared = &self.shared;
        let mut state = shared.lock();
        let ticket = ticket.min(state.written);
        if state.synced < ticket
            && state.failed.is_none()
            && shared.may_poll
            && shared.window.is_zero()
            && state.solo()
            && state.sleeping == 0
            && state.expected_wait(ticket) <= SPIN_WAIT
            && !WAITER_POLLS.swap(true, Ordering::Acquire)
        {
            drop(state);
            #[cfg(test)]
            shared.polls.fetch_add(1, Ordering::Relaxed);
            poll(SPIN_WAIT, || {
                shared.synced_hint.load(Ordering::Acquire) >= ticket
            });
            WAITER_POLLS.store(false, Ordering::Release);
            state = shared.lock();
        }
        loop {
            if state.synced >= ticket {
                return Ok(());
            }
            if let Some(failure) = &state.failed {
                return Err(failure.clone());
            }
            state.sleeping += 1;
            state = self.shared.wait_for(state, ticket);
            state.sleeping -= 1;
        }
    }

    /// [`GroupSync::wait`]'s answer if it needs no waiting: `ticket` is synced, or a sync failed.
    pub fn try_wait(&self, ticket: u64) -> Option<Result<(), Failure>> {
        if let Err(forked) = self.here() {
            return Some(Err(forked));
        }
        let state = self.shared.lock();
        if state.synced >= ticket.min(state.written) {
            Some(Ok(()))
        } else {
            state.failed.clone().map(Err)
        }
    }

    /// Waits until every ticket is synced, then lets the segment go (call it before the
    /// segment's descriptor is closed). The duplicate's `close(2)` is checked: a file system
    /// may report a write-back error there, and it fails the group as a sync would.
    ///
    /// In a forked child it does nothing: the tickets are the parent's, and so is the worker.
    ///
    /// # Errors
    /// A sync failed (now or earlier), or the close did.
    pub fn flush(&self) -> Result<(), Failure> {
        if self.forked() {
            return Ok(());
        }
        let mut state = self.shared.lock();
        state.flushing += 1;
        if state.windowing {
            self.shared.work.notify_one(); // due now, not at the window's end
        }
        while state.syncing() || state.owed() {
            let last = state.written;
            state = self.shared.wait_for(state, last);
        }
        state.flushing -= 1;
        if let Some((_, file)) = state.segment.take() {
            if let Err(e) = close(file) {
                if state.failed.is_none() {
                    state.failed = Some(failure(&e));
                    self.shared.synced_hint.store(u64::MAX, Ordering::Release);
                }
            }
        }
        match &state.failed {
            Some(failure) => Err(failure.clone()),
            None => Ok(()),
        }
    }

    /// The failure of an earlier sync, if one failed (call it before writing a byte).
    ///
    /// # Errors
    /// That failure; the group belongs to the process this one was forked from.
    pub fn check(&self) -> Result<(), Failure> {
        self.here()?;
        match &self.shared.lock().failed {
            Some(failure) => Err(failure.clone()),
            None => Ok(()),
        }
    }

    /// Whether this process is a child forked since the group was made: it has none of the
    /// group's threads (its worker, or one that held its lock), so it may take no ticket.
    pub fn forked(&self) -> bool {
        crate::forks::generation() != self.shared.generation
    }

    /// Refuses a forked child ([`GroupSync::forked`]).
    fn here(&self) -> Result<(), Failure> {
        if self.forked() {
            Err((
                0,
                format!(
                    "the journal's group commit belongs to process {}; this is a child forked from it",
                    self.shared.pid
                ),
            ))
        } else {
            Ok(())
        }
    }
}

impl Drop for GroupSync {
    fn drop(&mut self) {
        // In a forked child the lock may be held by a thread that does not exist there; its
        // worker does not exist either, so there is no one to tell.
        if !self.forked() {
            let mut state = self.shared.lock();
            state.closed = true;
            self.shared.written_hint.store(u64::MAX, Ordering::Release);
            self.shared.work.notify_one();
        }
    }
}

/// The worker: syncs while a ticket is owed (once its window is over, or at once when a flush
/// waits), each sync covering every ticket handed out before it began; ends when idle for
/// [`IDLE`], or once the group is dropped and nothing is owed.
fn work(shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if state.owed() {
            let due = state.pending_since.map(|since| since + shared.window);
            let wait = due.and_then(|due| due.checked_duration_since(Instant::now()));
            if let Some(wait) =
                wait.filter(|w| !w.is_zero() && state.flushing == 0 && !state.closed)
            {
                state.windowing = true;
                state = shared
                    .work
                    .wait_timeout(state, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                state.windowing = false;
                continue;
            }
            let target = state.written;
            let file = state.segment.as_ref().map(|(_, f)| Arc::clone(f));
            state.started += 1;
            state.target = target;
            state.pending_since = None; // every ticket so far is this sync's
            let number = state.started;
            let began = Instant::now();
            state.began = Some(began);
            drop(state);
            let outcome = file.map_or(Ok(()), |f| (shared.sync)(&f));
            SYNCS.fetch_add(1, Ordering::Relaxed);
            state = shared.lock();
            state.began = None;
            // A rare slow sync (counted up to four times the mean) does not stop the polls for
            // long; a slow disk's syncs raise the mean to their length within a few.
            let cap = (Duration::from_nanos(state.sync_ns) * 4).max(SPIN_WAIT * 2);
            state.sync_ns = averaged(state.sync_ns, began.elapsed().min(cap));
            match outcome {
                Ok(()) => {
                    state.synced = state.synced.max(target);
                    if state.synced == state.written {
                        state.idle_since = Some(Instant::now());
                    }
                    shared.synced_hint.store(state.synced, Ordering::Release);
                    shared.done[(number % 2) as usize].notify_all();
                }
                Err(e) => {
                    // Every waiter learns of it, whichever sync it waited for.
                    state.failed = Some(failure(&e));
                    shared.synced_hint.store(u64::MAX, Ordering::Release);
                    shared.done.iter().for_each(Condvar::notify_all);
                }
            }
            continue;
        }
        if state.closed {
            break;
        }
        if shared.may_poll
            && shared.window.is_zero()
            && state.solo()
            && state.sleeping == 0
            && state.idle_since.is_some()
            && state.gap_ns <= u64::try_from(SPIN_IDLE.as_nanos()).unwrap_or(u64::MAX)
            && !WORKER_POLLS.swap(true, Ordering::Acquire)
        {
            // Tickets have been coming soon after a sync's end (a writer's next write): poll
            // for the next a while, rather than sleep and be woken late.
            let seen = state.written;
            drop(state);
            poll(SPIN_IDLE, || {
                shared.written_hint.load(Ordering::Acquire) != seen
            });
            WORKER_POLLS.store(false, Ordering::Release);
            state = shared.lock();
            if state.owed() || state.closed {
                continue;
            }
        }
        state.idle = true;
        let (next, timeout) = shared
            .work
            .wait_timeout(state, IDLE)
            .unwrap_or_else(PoisonError::into_inner);
        state = next;
        state.idle = false;
        if timeout.timed_out() && !state.owed() {
            break;
        }
    }
    state.worker = false;
}

/// Polls `done` for up to `limit`, whether it came true: spinning between looks, with a pause
/// for the core (a sibling hyperthread keeps its pace). Not yielding the core: measured, a
/// yielding poll let the scheduler put the writer and the worker on one core half the time.
fn poll(limit: Duration, done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        for _ in 0..16 {
            std::hint::spin_loop();
        }
    }
}

fn failure(e: &io::Error) -> Failure {
    (e.raw_os_error().unwrap_or(0), e.to_string())
}

/// `fsync(2)` of `file`'s descriptor: what Python's `os.fsync` does (Rust's `sync_all` is
/// `F_FULLFSYNC` on Apple systems, which Python's is not).
#[cfg(unix)]
fn sync_file(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::raw::c_int;
    extern "C" {
        fn fsync(fd: c_int) -> c_int;
    }
    loop {
        // SAFETY: the descriptor belongs to `file`, which is open for the whole call.
        if unsafe { fsync(file.as_raw_fd()) } == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error); // a signal's interruption is tried again, as `os.fsync` does
        }
    }
}

/// `sync_all`.
#[cfg(not(unix))]
fn sync_file(file: &File) -> io::Result<()> {
    file.sync_all()
}

/// Closes the segment's duplicate, checked (unchecked, by the drop, if the worker still holds it).
#[cfg(unix)]
fn close(file: Arc<File>) -> io::Result<()> {
    use std::os::fd::IntoRawFd;
    use std::os::raw::c_int;
    extern "C" {
        fn close(fd: c_int) -> c_int;
    }
    let Ok(file) = Arc::try_unwrap(file) else {
        return Ok(());
    };
    let fd = file.into_raw_fd();
    // SAFETY: `fd` was just taken out of the `File` that owned it; it is closed once, here.
    if unsafe { close(fd) } == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    // Interrupted by a signal, the descriptor is closed all the same (Linux): not a failure.
    if error.kind() == io::ErrorKind::Interrupted {
        Ok(())
    } else {
        Err(error)
    }
}

#[cfg(not(unix))]
fn close(file: Arc<File>) -> io::Result<()> {
    drop(file);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    fn file(dir: &tempfile::TempDir, name: &str) -> File {
        File::options()
            .create(true)
            .append(true)
            .open(dir.path().join(name))
            .unwrap()
    }

    fn twin(f: &File) -> impl FnOnce() -> io::Result<File> + '_ {
        move || f.try_clone()
    }

    /// Waits (up to 5 s) until `done` holds of the group's state.
    fn eventually(group: &GroupSync, done: impl Fn(&State) -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if done(&group.shared.lock()) {
                return true;
            }
            thread::sleep(Duration::from_millis(1));
        }
        false
    }

    #[test]
    fn a_ticket_is_synced_without_anyone_waiting_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = file(&dir, "j");
        f.write_all(b"line\n").unwrap();
        let group = GroupSync::with_sync(slow, Duration::ZERO);
        let ticket = group.written(1, twin(&f)).unwrap();
        assert_eq!(group.try_wait(ticket), None); // 50 ms to go
        assert!(eventually(&group, |s| s.synced >= ticket));
        assert_eq!(group.try_wait(ticket), Some(Ok(())));
        assert_eq!(group.wait(ticket), Ok(()));
        assert_eq!(group.flush(), Ok(()));
        assert!(group.shared.lock().segment.is_none());
    }

    /// The end of the file at the start of each sync, by the coverage test's sync (`I`).
    static COVERED: [Mutex<Vec<u64>>; 3] = [const { Mutex::new(Vec::new()) }; 3];

    /// A sync that takes at least `MICROS` and records the end of the file as it began.
    fn recorded<const I: usize, const MICROS: u64>(f: &File) -> io::Result<()> {
        let size = f.metadata()?.len();
        thread::sleep(Duration::from_micros(MICROS));
        sync_file(f)?;
        COVERED[I].lock().unwrap().push(size);
        Ok(())
    }

    /// A sync that takes a millisecond every fourth time (longer than a waiter polls, while the
    /// mean stays short enough for it to poll), and records as [`recorded`] does.
    fn jittery<const I: usize>(f: &File) -> io::Result<()> {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let slow = CALLS.fetch_add(1, Ordering::Relaxed) % 4 == 3;
        let size = f.metadata()?.len();
        thread::sleep(Duration::from_micros(if slow { 1000 } else { 0 }));
        sync_file(f)?;
        COVERED[I].lock().unwrap().push(size);
        Ok(())
    }

    #[test]
    fn every_wait_returns_after_a_sync_that_covers_its_bytes_and_waiters_share_syncs() {
        // Slow: the waiters sleep. Quick: a waiter polls while no other sleeps, and with one
        // writer the worker polls for its next ticket too.
        covered_by_syncs_made_after_it::<0>(recorded::<0, 3000>, 8, 2);
        covered_by_syncs_made_after_it::<1>(recorded::<1, 0>, 8, 1);
        covered_by_syncs_made_after_it::<2>(jittery::<2>, 1, 1); // a poll runs out now and then
    }

    /// `threads` threads append 10 lines each and wait: each wait must return after a sync that
    /// began once its bytes were written, and the waiters share syncs (at most `lines / sharing`).
    fn covered_by_syncs_made_after_it<const I: usize>(sync: SyncFn, threads: u64, sharing: u64) {
        let dir = tempfile::tempdir().unwrap();
        let f = Mutex::new(file(&dir, "j"));
        let group = GroupSync::with_sync(sync, Duration::ZERO);
        let short = Mutex::new(Vec::new());
        thread::scope(|scope| {
            for n in 0..threads {
                let (f, group, short) = (&f, &group, &short);
                scope.spawn(move || {
                    for i in 0..10 {
                        let (end, ticket) = {
                            let mut f = f.lock().unwrap(); // the journal's writer: one append at a time
                            writeln!(f, "{n} {i}").unwrap();
                            let end = f.metadata().unwrap().len();
                            (end, group.written(7, twin(&f)).unwrap())
                        };
                        let waited = Instant::now();
                        group.wait(ticket).unwrap();
                        // Woken by the sync, not by the worker's idle timeout (a lost wake-up).
                        assert!(waited.elapsed() < IDLE / 2, "{:?}", waited.elapsed());
                        let covered = COVERED[I].lock().unwrap().iter().copied().max();
                        if covered.unwrap_or(0) < end {
                            short.lock().unwrap().push((n, i));
                        }
                    }
                });
            }
        });
        assert_eq!(short.into_inner().unwrap(), vec![]);
        let syncs = COVERED[I].lock().unwrap().len() as u64;
        assert!(
            syncs <= threads * 10 / sharing,
            "{syncs} syncs for {} tickets",
            threads * 10
        );
    }

    static BROKEN: AtomicBool = AtomicBool::new(false);

    fn breakable(f: &File) -> io::Result<()> {
        if BROKEN.load(Ordering::SeqCst) {
            return Err(io::Error::from_raw_os_error(5));
        }
        sync_file(f)
    }

    #[test]
    fn a_failed_sync_fails_its_waiters_and_later_writes_not_earlier_tickets() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(&dir, "j");
        let group = GroupSync::with_sync(breakable, Duration::ZERO);
        let first = group.written(1, twin(&f)).unwrap();
        assert_eq!(group.wait(first), Ok(()));
        BROKEN.store(true, Ordering::SeqCst);
        let second = group.written(1, twin(&f)).unwrap();
        let failure = group.wait(second).unwrap_err();
        assert_eq!(failure.0, 5);
        assert_eq!(group.written(1, twin(&f)).unwrap_err().0, 5);
        assert_eq!(group.check().unwrap_err().0, 5);
        assert_eq!(group.wait(first), Ok(())); // on disk before the failure
        assert_eq!(group.try_wait(first), Some(Ok(())));
        assert_eq!(group.try_wait(second).map(|r| r.unwrap_err().0), Some(5));
        assert_eq!(group.flush().unwrap_err().0, 5);
    }

    fn slow(f: &File) -> io::Result<()> {
        thread::sleep(Duration::from_millis(50));
        sync_file(f)
    }

    #[test]
    fn a_new_segment_is_taken_only_once_the_last_ones_tickets_are_synced() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (file(&dir, "a"), file(&dir, "b"));
        let group = GroupSync::with_sync(slow, Duration::ZERO);
        let ticket = group.written(1, twin(&a)).unwrap();
        let refused = group.written(2, twin(&b)).unwrap_err();
        assert!(refused.1.contains("new segment"), "{refused:?}");
        assert_eq!(group.flush(), Ok(()));
        assert_eq!(group.wait(ticket), Ok(()));
        let next = group.written(2, twin(&b)).unwrap();
        assert_eq!(group.wait(next), Ok(()));
        assert_eq!(group.wait(next + 5), Ok(())); // never handed out: the last one's
    }

    #[test]
    fn a_descriptor_that_cannot_be_duplicated_hands_out_no_ticket_and_blocks_no_one() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(&dir, "j");
        let group = GroupSync::new();
        let refused = group
            .written(1, || Err(io::Error::from_raw_os_error(24)))
            .unwrap_err();
        assert_eq!(refused.0, 24);
        assert_eq!(group.check(), Ok(()));
        let ticket = group.written(1, twin(&f)).unwrap();
        assert_eq!(ticket, 1);
        assert_eq!(group.wait(ticket), Ok(()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_fsync_reports_the_os_error() {
        // fsync of a pipe is EINVAL on Linux.
        let (reader, writer) = std::io::pipe().unwrap();
        let writer = File::from(std::os::fd::OwnedFd::from(writer));
        let group = GroupSync::new();
        let ticket = group.written(3, twin(&writer)).unwrap();
        assert_eq!(group.wait(ticket).map_err(|f| f.0), Err(22));
        drop(reader);
    }

    static WINDOWED: AtomicU64 = AtomicU64::new(0);

    fn counted(f: &File) -> io::Result<()> {
        WINDOWED.fetch_add(1, Ordering::SeqCst);
        sync_file(f)
    }

    #[test]
    fn a_window_syncs_its_tickets_once_when_it_ends_and_a_flush_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = file(&dir, "j");
        let group = GroupSync::with_sync(counted, Duration::from_millis(200));
        let start = Instant::now();
        for _ in 0..100 {
            f.write_all(b"x\n").unwrap();
            group.written(1, twin(&f)).unwrap();
        }
        if start.elapsed() < Duration::from_millis(150) {
            assert_eq!(WINDOWED.load(Ordering::SeqCst), 0); // not before the window ends
        }
        assert!(eventually(&group, |s| s.synced == 100));
        assert!(start.elapsed() >= Duration::from_millis(200));
        thread::sleep(Duration::from_millis(300));
        assert_eq!(WINDOWED.load(Ordering::SeqCst), 1); // one sync for the window, none after

        let slow = GroupSync::with_sync(counted, Duration::from_secs(60));
        f.write_all(b"y\n").unwrap();
        let ticket = slow.written(1, twin(&f)).unwrap();
        let asked = Instant::now();
        assert_eq!(slow.flush(), Ok(()));
        assert!(asked.elapsed() < Duration::from_secs(30));
        assert_eq!(slow.wait(ticket), Ok(()));
        assert_eq!(WINDOWED.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_poll_is_bounded_and_ends_when_its_condition_holds() {
        let start = Instant::now();
        assert!(!poll(Duration::from_millis(2), || false));
        assert!(start.elapsed() >= Duration::from_millis(2));
        assert!(
            start.elapsed() < Duration::from_millis(500),
            "{:?}",
            start.elapsed()
        );
        assert!(poll(Duration::from_secs(60), || true));
    }

    static BROKEN_WHILE_POLLED: AtomicBool = AtomicBool::new(false);

    fn quick_then_broken(_: &File) -> io::Result<()> {
        thread::sleep(Duration::from_micros(100));
        if BROKEN_WHILE_POLLED.load(Ordering::SeqCst) {
            return Err(io::Error::from_raw_os_error(5));
        }
        Ok(())
    }

    #[test]
    fn a_sync_that_fails_while_its_waiter_polls_fails_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(&dir, "j");
        let mut polled = 0;
        for _ in 0..5 {
            BROKEN_WHILE_POLLED.store(false, Ordering::SeqCst);
            let group = GroupSync::with_sync(quick_then_broken, Duration::ZERO);
            for _ in 0..8 {
                let ticket = group.written(3, twin(&f)).unwrap(); // one writer: the waits poll
                let waited = Instant::now();
                assert_eq!(group.wait(ticket), Ok(()));
                assert!(waited.elapsed() < IDLE / 2, "{:?}", waited.elapsed()); // no lost wake-up
            }
            BROKEN_WHILE_POLLED.store(true, Ordering::SeqCst);
            let ticket = group.written(3, twin(&f)).unwrap();
            assert_eq!(group.wait(ticket).map_err(|(code, _)| code), Err(5));
            polled += group.shared.polls.load(Ordering::Relaxed);
        }
        if group_may_poll() {
            assert!(polled > 0);
        }
    }

    fn group_may_poll() -> bool {
        GroupSync::new().shared.may_poll
    }

    fn slow_sync(_: &File) -> io::Result<()> {
        thread::sleep(Duration::from_millis(3));
        Ok(())
    }

    fn quick_sync(_: &File) -> io::Result<()> {
        thread::sleep(Duration::from_micros(50)); // long enough to be waited for
        Ok(())
    }

    #[test]
    fn a_lone_writer_s_waits_poll_on_a_fast_disk_and_sleep_on_a_slow_one() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(&dir, "j");
        // `work`: what the writer does between its append and its wait (a commit's apply).
        let polls = |sync: SyncFn, work: Duration| {
            let group = GroupSync::with_sync(sync, Duration::ZERO);
            let mut late = 0;
            for i in 0..30 {
                let before = group.shared.polls.load(Ordering::Relaxed);
                let ticket = group.written(4, twin(&f)).unwrap();
                thread::sleep(work);
                let waited = Instant::now();
                assert_eq!(group.wait(ticket), Ok(()));
                assert!(waited.elapsed() < IDLE / 2, "{:?}", waited.elapsed()); // no lost wake-up
                if i >= 15 {
                    late += group.shared.polls.load(Ordering::Relaxed) - before;
                }
            }
            late
        };
        // 3 ms syncs: the mean learns it within a few, then no one spins through them, not
        // even a waiter that comes 300 µs into one.
        assert_eq!(polls(slow_sync, Duration::ZERO), 0);
        assert_eq!(polls(slow_sync, Duration::from_micros(300)), 0);
        if group_may_poll() {
            assert!(polls(quick_sync, Duration::ZERO) > 0);
        }
    }

    #[test]
    fn the_worker_ends_when_the_group_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(&dir, "j");
        let group = GroupSync::new();
        let ticket = group.written(1, twin(&f)).unwrap();
        assert_eq!(group.wait(ticket), Ok(()));
        let shared = Arc::clone(&group.shared);
        let dropped = Instant::now();
        drop(group);
        while shared.lock().worker && dropped.elapsed() < Duration::from_secs(5) {
            thread::sleep(Duration::from_millis(1));
        }
        assert!(!shared.lock().worker);
        // Told by the drop, not timed out idle.
        assert!(dropped.elapsed() < IDLE / 4, "{:?}", dropped.elapsed());
    }
}
