//! The bookkeeping of `pqg_host_register` that every backend shares: the registered byte
//! ranges, sorted and disjoint, behind a lock that running batches hold for reading, so that
//! an unregister (the writer) waits for them. The GPU backend also pins the memory
//! (`gpu::hostmem`); the CPU backend keeps only this bookkeeping, so both give the same statuses.

use crate::Error;
use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard};

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
#[derive(Debug, Default)]
pub struct InFlight {
    state: Mutex<Epochs>,
    ended: Condvar,
}

#[derive(Debug, Default)]
struct Epochs {
    /// The next job's epoch.
    next: u64,
    /// How many jobs of each epoch are still running.
    running: BTreeMap<u64, usize>,
    /// Threads in `wait_for_earlier`: an ending job wakes only when there are any (an
    /// unconditional wake is a system call per asynchronous single item).
    waiters: usize,
}

/// A running job's place in [`InFlight`]; dropping it ends the job there.
#[derive(Debug)]
pub struct Ticket {
    owner: &'static InFlight,
    epoch: u64,
}

impl InFlight {
    fn lock(&self) -> MutexGuard<'_, Epochs> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Enters a job (at submit time, on the caller's thread).
    pub fn enter(&'static self) -> Ticket {
        let mut s = self.lock();
        let epoch = s.next;
        *s.running.entry(epoch).or_insert(0) += 1;
        Ticket { owner: self, epoch }
    }

    /// Waits until every job entered before this call has ended (later ones do not delay it).
    pub fn wait_for_earlier(&self) {
        let mut s = self.lock();
        let mine = s.next;
        s.next += 1;
        s.waiters += 1;
        while s.running.range(..=mine).next().is_some() {
            s = self.ended.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.waiters -= 1;
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut s = self.owner.lock();
        let mut emptied = false;
        if let Some(c) = s.running.get_mut(&self.epoch) {
            *c -= 1;
            if *c == 0 {
                s.running.remove(&self.epoch);
                emptied = true;
            }
        }
        let wake = emptied && s.waiters > 0;
        drop(s);
        if wake {
            self.owner.ended.notify_all();
        }
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
}
