//! The core's thread pool, one per process: made anew in a forked child.
//!
//! A forked child inherits a copy of its parent's memory but none of its threads, so a
//! pool made before the fork would wait forever for workers that do not exist. Every
//! parallel kernel runs through [`install`], which keeps the pool with the fork generation
//! it was made in ([`crate::forks`]) and makes another when that is not the current one. A
//! pool outlives its process's use of it (it is never freed), so the lookup takes no
//! lock a fork could leave held.

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use rayon::{ThreadPool, ThreadPoolBuilder};

struct Owned {
    generation: u64,
    pool: ThreadPool,
}

static POOL: AtomicPtr<Owned> = AtomicPtr::new(ptr::null_mut());

/// The pool of this process, made on first use; None when no thread can be started.
fn pool() -> Option<&'static ThreadPool> {
    let generation = crate::forks::generation();
    let current = POOL.load(Ordering::Acquire);
    // SAFETY: a pointer stored in POOL comes from `Box::leak` below and is never freed.
    if let Some(owned) = unsafe { current.as_ref() } {
        if owned.generation == generation {
            return Some(&owned.pool);
        }
    }
    // First use here, or a forked child holding its parent's pool (whose threads it lacks):
    // that pool is left as it is, never touched again.
    let pool = ThreadPoolBuilder::new()
        .thread_name(|i| format!("cuemem-{i}"))
        .build()
        .ok()?;
    let fresh: *mut Owned = Box::leak(Box::new(Owned { generation, pool }));
    match POOL.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
        // SAFETY: `fresh` was just leaked and is never freed.
        Ok(_) => Some(unsafe { &(*fresh).pool }),
        Err(won) => match unsafe { won.as_ref() } {
            // Another thread made this process's pool first: that one is used, and ours,
            // never published, is freed (its threads stop).
            Some(owned) if owned.generation == generation => {
                // SAFETY: `fresh` came from `Box::leak` above and no other thread has seen it.
                drop(unsafe { Box::from_raw(fresh) });
                Some(&owned.pool)
            }
            // SAFETY: `fresh` was just leaked and is never freed.
            _ => Some(unsafe { &(*fresh).pool }),
        },
    }
}

/// Runs `f` on this process's pool (its parallel iterators use that pool's threads); on
/// the calling thread alone when the pool cannot be made.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match pool() {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

#[cfg(test)]
mod tests {
    use rayon::prelude::*;

    #[test]
    fn runs_parallel_work_on_one_pool_per_process() {
        let sum: u64 = super::install(|| (0..10_000u64).into_par_iter().sum());
        assert_eq!(sum, 49_995_000);
        let first = super::pool().map(|p| p as *const _);
        assert_eq!(first, super::pool().map(|p| p as *const _));
    }
}
