//! Whether this is a process forked since something was made: the one rule of fork safety,
//! read by the core's thread pool ([`crate::pool`]), the journal's group commit
//! ([`crate::groupsync`]) and, through the binding, every handle of the Python package
//! (`cuemem.home.forks.Birth`).
//!
//! A forked child inherits a copy of its parent's memory but none of its threads: a pool or
//! a syncer made before the fork has no workers there, and a lock one of them held stays held.
//! What such a thing keeps is the [`generation`] it was made in; a fork moves the child's on
//! (a `pthread_atfork` handler, registered at the first look), so a child tells what its
//! parent made from what it made itself. Unlike a process id, a generation cannot come back:
//! a child whose id is its parent's (the first process of a new PID namespace) is still
//! another generation.

use std::sync::atomic::{AtomicU64, Ordering};

/// The forks this process's line has gone through since the core first looked.
static FORKS: AtomicU64 = AtomicU64::new(0);

/// The fork generation of this process: what a thing made now keeps, and compares with a
/// later reading to learn whether it is in a child forked since.
pub fn generation() -> u64 {
    #[cfg(unix)]
    watch();
    FORKS.load(Ordering::Acquire)
}

/// Registers, once, the handler that moves a forked child's generation on.
#[cfg(unix)]
fn watch() {
    use std::os::raw::c_int;
    use std::sync::Once;

    type Handler = Option<unsafe extern "C" fn()>;
    extern "C" {
        fn pthread_atfork(prepare: Handler, parent: Handler, child: Handler) -> c_int;
    }
    /// In the child, right after the fork (only an atomic add: async-signal-safe).
    unsafe extern "C" fn forked() {
        FORKS.fetch_add(1, Ordering::AcqRel);
    }
    static WATCH: Once = Once::new();
    WATCH.call_once(|| {
        // SAFETY: a handler of static lifetime that only adds to an atomic. Should the
        // registration fail (out of memory), the generation never moves: forks go unseen,
        // as they would with no check at all.
        let _ = unsafe { pthread_atfork(None, None, Some(forked)) };
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_generation_stays_in_one_process() {
        let first = super::generation();
        assert_eq!(first, super::generation());
        assert_eq!(first, std::thread::spawn(super::generation).join().unwrap());
    }
}
