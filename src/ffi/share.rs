//! Work shared between the calling thread and the pool threads that wake up for it.
//!
//! A batch's requests are checked in blocks while the caller waits. The pool's threads sleep
//! through the GPU's part of every batch, and waking one takes tens of microseconds on an
//! idle many-core host; a parallel iterator that the caller hands to the pool waits for those
//! wake-ups (rayon wakes one thread after another as the work splits). Here the caller starts
//! on the blocks at once, the pool's threads take blocks as they wake, and the caller waits
//! only for blocks already taken: a thread that wakes after the last block was taken finds
//! nothing to do and touches nothing of the batch.

use crate::backend::{pool_threads, spawn_in_pool};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A task as the helpers see it: its lifetime erased (see [`Shared::task`]).
type Task = *const (dyn Fn(usize) + Sync + 'static);

/// What the caller and its helpers share.
struct Shared {
    /// The next block to take; past `blocks` once every block is taken.
    next: AtomicUsize,
    /// Blocks run to their end.
    finished: AtomicUsize,
    blocks: usize,
    /// The caller's task, valid until [`run`] returns: it is only called for a block taken
    /// below `blocks`, and `run` returns only once every such block has finished.
    task: Task,
}

// SAFETY: `task` points to a `Sync` closure, called only as the field's comment says; the
// rest is atomics and plain values.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// Takes and runs blocks until none is left.
    fn help(&self) {
        loop {
            let b = self.next.fetch_add(1, Ordering::AcqRel);
            if b >= self.blocks {
                return;
            }
            // SAFETY: block b was taken, so `run` has not returned (it waits for it).
            let task = unsafe { &*self.task };
            // A panicking block leaves its result unwritten (the caller sees a failure); it
            // must still count as finished, or the caller would wait for ever.
            let _ = catch_unwind(AssertUnwindSafe(|| task(b)));
            self.finished.fetch_add(1, Ordering::Release);
        }
    }
}

/// Runs `task(b)` exactly once for every block `b < blocks`, on this thread and on the pool
/// threads that wake up in time; returns when all have run. A panic in a block is caught
/// (that block's work is simply not done).
pub(crate) fn run(blocks: usize, task: &(dyn Fn(usize) + Sync)) {
    let task: *const (dyn Fn(usize) + Sync + '_) = task;
    // SAFETY: only the lifetime bound changes (same pointer, same vtable); the pointer is
    // used only while this call runs (see `Shared::task`).
    let task: Task = unsafe { std::mem::transmute(task) };
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(0),
        finished: AtomicUsize::new(0),
        blocks,
        task,
    });
    for _ in 0..pool_threads().min(blocks.saturating_sub(1)) {
        let helper = shared.clone();
        // `help` never panics (blocks are run inside catch_unwind).
        spawn_in_pool(move || helper.help());
    }
    shared.help();
    // Only blocks taken by helpers are left: each is a few microseconds of work.
    let mut spins = 0u32;
    while shared.finished.load(Ordering::Acquire) < blocks {
        spins += 1;
        if spins < 1 << 10 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::run;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_block_runs_once_even_when_one_panics() {
        for blocks in [0, 1, 5, 64, 1000] {
            let counts: Vec<AtomicUsize> = (0..blocks).map(|_| AtomicUsize::new(0)).collect();
            run(blocks, &|b| {
                counts[b].fetch_add(1, Ordering::Relaxed);
                if b == 3 {
                    panic!("contained");
                }
            });
            assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        }
    }
}
