//! The bookkeeping of `pqg_host_register` that every backend shares: the registered byte
//! ranges, sorted and disjoint, behind a lock that running batches hold for reading, so that
//! an unregister (the writer) waits for them. The GPU backend also pins the memory
//! (`gpu::hostmem`); the CPU backend keeps only this bookkeeping, so both give the same statuses.

use crate::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, RwLock, RwLockReadGuard};

/// Callers' buffers `[start, end)`, sorted by start and disjoint.
#[derive(Debug, Default)]
pub struct Registry {
    ranges: RwLock<Vec<(usize, usize)>>,
}

/// Held by a running batch: unregistering waits until it is dropped.
pub type BatchGuard<'a> = RwLockReadGuard<'a, Vec<(usize, usize)>>;

impl Registry {
    pub const fn new() -> Registry {
        Registry {
            ranges: RwLock::new(Vec::new()),
        }
    }

    /// For the duration of a batch (see the module comment).
    pub fn hold(&self) -> BatchGuard<'_> {
        self.ranges.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `[start, start + len)`. `InvalidArgument` when it is empty, wraps the address
    /// space, exceeds `isize::MAX` bytes or overlaps a registered range.
    pub fn register(&self, start: usize, len: usize) -> Result<(), Error> {
        let end = checked_end(start, len)?;
        let mut r = self.ranges.write().unwrap_or_else(|e| e.into_inner());
        if r.iter().any(|&(s, e)| s < end && start < e) {
            return Err(Error::InvalidArgument);
        }
        let at = r.partition_point(|&(s, _)| s < start);
        r.insert(at, (start, end));
        Ok(())
    }

    /// Forgets the range that starts at `start`, once no batch holds the registry.
    /// `InvalidArgument` when no registered range starts there.
    pub fn unregister(&self, start: usize) -> Result<(), Error> {
        let mut r = self.ranges.write().unwrap_or_else(|e| e.into_inner());
        let at = r
            .iter()
            .position(|&(s, _)| s == start)
            .ok_or(Error::InvalidArgument)?;
        r.remove(at);
        Ok(())
    }
}

/// The end of `[start, start + len)`: `InvalidArgument` when empty, longer than
/// `isize::MAX` (no Rust slice may be) or past the end of the address space.
pub fn checked_end(start: usize, len: usize) -> Result<usize, Error> {
    if len == 0 || len > isize::MAX as usize {
        return Err(Error::InvalidArgument);
    }
    start.checked_add(len).ok_or(Error::InvalidArgument)
}

/// The asynchronous jobs of one process, so that `pqg_host_unregister` can wait for every job
/// submitted before it (whatever backend runs it), output copies included. Per process (see
/// `cpu::process`): a child after `fork()` does not wait for its parent's jobs.
///
/// Every job (an asynchronous single item is one) enters and leaves it, from different
/// threads, so the common path is one atomic add on a counter of the entering thread's shard
/// (many submitting threads then rarely share a cache line) and one atomic subtract, or a
/// share of one: a thread reporting a batch subtracts once per counter ([`InFlight::holding`]).
/// Jobs count
/// in one of two sets of counters, and a waiter switches new jobs to the other set and waits
/// until the old one drains. Waiters take turns, so a waiter may also wait for jobs entered
/// between its call and its turn; never for one entered after its turn began.
#[derive(Debug, Default)]
pub struct InFlight {
    /// Running jobs per set and shard, each counter on its own cache line.
    running: [[Padded; SHARDS]; 2],
    /// The set new jobs enter.
    current: AtomicUsize,
    /// Threads waiting for a set to drain: a job that leaves wakes only when there are any
    /// (an unconditional wake is a system call per asynchronous single item).
    waiters: AtomicUsize,
    /// Whether a waiter is draining a set (waiters take turns); the waits sleep on it.
    turn: Mutex<bool>,
    drained: Condvar,
}

/// Counter shards of [`InFlight`].
const SHARDS: usize = 16;

#[derive(Debug, Default)]
#[repr(align(128))]
struct Padded(AtomicUsize);

/// A running job's place in [`InFlight`]; dropping it ends the job there.
#[derive(Debug)]
pub struct Ticket {
    owner: &'static InFlight,
    lease: Lease,
}

/// A running job's place in [`InFlight`] without an owner or a `Drop`: a job that ends from
/// a `&self` method keeps this and calls [`InFlight::leave`] exactly once.
#[derive(Clone, Copy, Debug)]
pub struct Lease {
    set: usize,
    shard: usize,
}

/// The calling thread's counter shard: threads are spread over the shards in turn.
fn my_shard() -> usize {
    crate::process::thread_ordinal() % SHARDS
}

impl InFlight {
    /// Enters a job (at submit time, on the caller's thread).
    pub fn enter(&'static self) -> Ticket {
        Ticket {
            owner: self,
            lease: self.lease(),
        }
    }

    /// Enters a job that will [`leave`](Self::leave) by hand.
    pub fn lease(&self) -> Lease {
        // SeqCst (here and in the waiter): a job whose enter returned before a waiter
        // switched sets is seen in the set that waiter drains.
        let (set, shard) = (self.current.load(Ordering::SeqCst), my_shard());
        self.running[set][shard].0.fetch_add(1, Ordering::SeqCst);
        Lease { set, shard }
    }

    /// Ends a job entered with [`lease`](Self::lease); once per lease. Inside
    /// [`holding`](Self::holding) of this tracker on this thread, it is given back at the
    /// scope's end instead.
    pub fn leave(&self, l: Lease) {
        let held = HELD
            .try_with(|h| {
                let mut h = h.borrow_mut();
                let mine = h.owner.is_some_and(|o| std::ptr::eq(o, self));
                if mine {
                    h.counts[l.set][l.shard] += 1;
                }
                mine
            })
            .unwrap_or(false);
        if !held {
            self.sub(l.set, l.shard, 1);
        }
    }

    /// Runs `f`, in which this thread ends many jobs (it reports a batch), with their leaves
    /// added up per counter and subtracted once each when `f` returns (or unwinds): one
    /// atomic per counter and batch instead of one per job, on lines the submitting threads
    /// write. Jobs still count as running until then (microseconds past their completion), so
    /// `pqg_host_unregister` may wait that much longer. Within an outer scope (of any
    /// tracker) this adds nothing.
    pub fn holding<R>(&'static self, f: impl FnOnce() -> R) -> R {
        struct Flush;
        impl Drop for Flush {
            fn drop(&mut self) {
                flush_held(true);
            }
        }
        let outermost = HELD
            .try_with(|h| {
                let mut h = h.borrow_mut();
                h.owner.is_none() && {
                    h.owner = Some(self);
                    true
                }
            })
            .unwrap_or(false);
        // `then`, not `then_some`: an unused Flush must not even be built (its drop flushes).
        let _flush = outermost.then(|| Flush);
        f()
    }

    /// Subtracts `n` ended jobs from a counter; one that empties wakes the waiter, which
    /// checks all of them.
    fn sub(&self, set: usize, shard: usize, n: usize) {
        let left = self.running[set][shard].0.fetch_sub(n, Ordering::SeqCst) - n;
        if left == 0 && self.waiters.load(Ordering::SeqCst) > 0 {
            drop(self.turn.lock().unwrap_or_else(|e| e.into_inner()));
            self.drained.notify_all();
        }
    }

    fn drained(&self, set: usize) -> bool {
        self.running[set]
            .iter()
            .all(|c| c.0.load(Ordering::SeqCst) == 0)
    }

    /// Waits until every job entered before this call has ended.
    pub fn wait_for_earlier(&self) {
        // Jobs this thread ended in a `holding` scope (a completion callback may call this)
        // must not wait for their own scope's end.
        flush_held(false);
        let mut draining = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        // One waiter drains at a time (the sets must not switch under it).
        while *draining {
            draining = self
                .drained
                .wait(draining)
                .unwrap_or_else(|e| e.into_inner());
        }
        *draining = true;
        let old = self.current.fetch_xor(1, Ordering::SeqCst);
        self.waiters.fetch_add(1, Ordering::SeqCst);
        // Checked under `turn`, which a leaving job takes before it wakes: no lost wake-up.
        while !self.drained(old) {
            draining = self
                .drained
                .wait(draining)
                .unwrap_or_else(|e| e.into_inner());
        }
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        *draining = false;
        drop(draining);
        // The next waiter's turn.
        self.drained.notify_all();
    }
}

/// Leaves held back on one thread ([`InFlight::holding`]): the tracker (while a scope is
/// open) and a count per set and shard.
struct Held {
    owner: Option<&'static InFlight>,
    counts: [[usize; SHARDS]; 2],
}

thread_local! {
    static HELD: std::cell::RefCell<Held> = const {
        std::cell::RefCell::new(Held { owner: None, counts: [[0; SHARDS]; 2] })
    };
}

/// Gives this thread's held leaves back to their tracker; `end`: the scope ends.
fn flush_held(end: bool) {
    let Ok((owner, counts)) = HELD.try_with(|h| {
        let mut h = h.borrow_mut();
        let owner = if end { h.owner.take() } else { h.owner };
        (owner, std::mem::replace(&mut h.counts, [[0; SHARDS]; 2]))
    }) else {
        return;
    };
    let Some(jobs) = owner else { return };
    for (set, shards) in counts.iter().enumerate() {
        for (shard, &n) in shards.iter().enumerate() {
            if n > 0 {
                jobs.sub(set, shard, n);
            }
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.owner.leave(self.lease);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaps_duplicates_and_unknown_pointers_are_rejected() {
        let r = Registry::new();
        assert_eq!(r.register(100, 100), Ok(()));
        assert_eq!(r.register(300, 10), Ok(()));
        assert_eq!(r.register(100, 100), Err(Error::InvalidArgument));
        assert_eq!(r.register(150, 10), Err(Error::InvalidArgument));
        assert_eq!(r.register(50, 51), Err(Error::InvalidArgument));
        assert_eq!(r.register(199, 102), Err(Error::InvalidArgument));
        assert_eq!(r.register(200, 100), Ok(()));
        assert_eq!(r.register(0, 0), Err(Error::InvalidArgument));
        assert_eq!(r.register(1000, usize::MAX), Err(Error::InvalidArgument));
        assert_eq!(r.register(usize::MAX - 5, 10), Err(Error::InvalidArgument));
        assert_eq!(r.unregister(150), Err(Error::InvalidArgument));
        assert_eq!(r.unregister(100), Ok(()));
        assert_eq!(r.unregister(100), Err(Error::InvalidArgument));
        assert_eq!(r.register(100, 100), Ok(()));
        assert_eq!(*r.hold(), vec![(100, 200), (200, 300), (300, 310)]);
    }

    #[test]
    fn leaves_held_while_reporting_count_until_the_scope_ends() {
        static JOBS: once_cell::sync::Lazy<InFlight> =
            once_cell::sync::Lazy::new(InFlight::default);
        let (a, b) = (JOBS.lease(), JOBS.lease());
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = JOBS.holding(|| {
            JOBS.leave(a);
            // Nested scopes add nothing (the outer one flushes).
            JOBS.holding(|| JOBS.leave(b));
            let waiter = std::thread::spawn(move || {
                JOBS.wait_for_earlier();
                tx.send(()).unwrap();
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(rx.try_recv().is_err(), "held leaves were given back early");
            waiter
        });
        rx.recv_timeout(std::time::Duration::from_secs(2))
            .expect("the scope's end gave the leaves back");
        waiter.join().unwrap();
        // A thread in a scope may wait itself: its own held leaves go back first.
        let c = JOBS.lease();
        JOBS.holding(|| {
            JOBS.leave(c);
            JOBS.wait_for_earlier();
        });
        // Another tracker's leaves are not held by this scope.
        static OTHER: once_cell::sync::Lazy<InFlight> =
            once_cell::sync::Lazy::new(InFlight::default);
        let d = OTHER.lease();
        JOBS.holding(|| {
            OTHER.leave(d);
            assert!(OTHER.drained(0) && OTHER.drained(1));
        });
    }

    #[test]
    fn unregister_waits_for_earlier_jobs_only() {
        static JOBS: once_cell::sync::Lazy<InFlight> =
            once_cell::sync::Lazy::new(InFlight::default);
        let early = JOBS.enter();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            JOBS.wait_for_earlier();
            tx.send(()).unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        let late = JOBS.enter(); // after the wait began (or not: then it is waited for too)
        assert!(rx.try_recv().is_err(), "returned while an earlier job ran");
        drop(early);
        let waited = rx.recv_timeout(std::time::Duration::from_secs(2));
        drop(late);
        waited.unwrap();
        waiter.join().unwrap();
    }

    #[test]
    fn waiters_take_turns_and_none_is_lost() {
        static JOBS: once_cell::sync::Lazy<InFlight> =
            once_cell::sync::Lazy::new(InFlight::default);
        let a = JOBS.enter();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiters: Vec<_> = (0..2)
            .map(|i| {
                let tx = tx.clone();
                let w = std::thread::spawn(move || {
                    JOBS.wait_for_earlier();
                    tx.send(i).unwrap();
                });
                std::thread::sleep(std::time::Duration::from_millis(30));
                w
            })
            .collect();
        let b = JOBS.enter();
        assert!(rx.try_recv().is_err(), "returned while job a ran");
        drop(a);
        // The first waiter returns; the second may also wait for b (entered before its turn).
        let first = rx.recv_timeout(std::time::Duration::from_secs(2)).unwrap();
        assert_eq!(first, 0);
        drop(b);
        assert_eq!(
            rx.recv_timeout(std::time::Duration::from_secs(2)).unwrap(),
            1
        );
        waiters.into_iter().for_each(|w| w.join().unwrap());
        // With nothing running a waiter returns at once.
        JOBS.wait_for_earlier();
    }
}
