//! The current process id, cached. The serving and job paths read it on every call to tell a
//! forked child from its parent (issue #17), and a getpid system call each time was a
//! visible share of a single-item submit. A fork handler clears the cache in the child.
//! [`PerProcess`] keeps a value (a thread's cache, a handle) for the process that made it.

use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

/// The cached id; 0 until read, and again in a child right after fork().
static PID: AtomicU32 = AtomicU32::new(0);
/// 0: handler not registered yet; 1: registered (the cache may be used); 2: registration
/// failed, or 3: under way in another thread (either way this call asks the kernel). No lock:
/// a child forked mid-registration must not wait for a thread it does not have.
static HOOK: AtomicU8 = AtomicU8::new(0);

extern "C" fn forked_child() {
    // Only an atomic store: what may run in a child of a multithreaded process.
    PID.store(0, Ordering::SeqCst);
}

/// This process's id (`std::process::id()`), without a system call after the first.
pub fn id() -> u32 {
    let pid = PID.load(Ordering::SeqCst);
    if pid != 0 {
        return pid;
    }
    if HOOK
        .compare_exchange(0, 3, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        // SAFETY: registers a child handler that only stores to a static atomic; the
        // function pointer is valid for the life of the process.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(forked_child)) };
        HOOK.store(if rc == 0 { 1 } else { 2 }, Ordering::SeqCst);
    }
    let pid = std::process::id();
    if HOOK.load(Ordering::SeqCst) == 1 {
        PID.store(pid, Ordering::SeqCst);
    }
    pid
}

/// A value that belongs to the process that made it: a thread's cached randomness, a handle
/// to a dispatcher or helper threads, descriptors. fork() copies the calling thread's
/// thread-locals (and every static) into the child, which must not use its parent's: it would
/// hand out the same random bytes, or talk to threads and descriptors that are the parent's.
/// So the value is tagged with its process id, and a process that did not make it sees none
/// ([`get`](Self::get)) or resets it first ([`get_mut`](Self::get_mut)). One compare and a
/// branch per use.
pub struct PerProcess<T> {
    /// The process the value is for; 0 (none) until first set or reset.
    pid: u32,
    value: T,
}

impl<T> PerProcess<T> {
    /// `value`, for no process yet: reset (or replaced) on first use.
    pub const fn new(value: T) -> Self {
        PerProcess { pid: 0, value }
    }

    /// The value, if this process set or reset it.
    #[inline]
    pub fn get(&self) -> Option<&T> {
        self.get_in(id())
    }

    /// The value, passed to `reset` first if this process has not set or reset it.
    #[inline]
    pub fn get_mut(&mut self, reset: impl FnOnce(&mut T)) -> &mut T {
        self.get_mut_in(id(), reset)
    }

    /// Replaces the value with `value`, this process's.
    pub fn set(&mut self, value: T) {
        self.value = value;
        self.pid = id();
    }

    #[inline]
    fn get_in(&self, pid: u32) -> Option<&T> {
        (self.pid == pid).then_some(&self.value)
    }

    #[inline]
    fn get_mut_in(&mut self, pid: u32, reset: impl FnOnce(&mut T)) -> &mut T {
        if self.pid != pid {
            reset(&mut self.value);
            self.pid = pid;
        }
        &mut self.value
    }
}

/// This thread's ordinal: threads are numbered in the order they first ask. Sharded
/// structures (the dispatcher's queue, the jobs-in-flight counters) take it modulo their shard
/// count, so threads spread over the shards in turn.
pub fn thread_ordinal() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    thread_local! {
        static ORDINAL: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ORDINAL.with(|o| *o)
}

#[cfg(test)]
mod tests {
    use super::PerProcess;

    #[test]
    fn a_value_from_another_process_is_reset_once() {
        let (parent, child) = (100, 200);
        let mut v = PerProcess::new(vec![0u8]);
        assert_eq!(v.get_in(parent), None, "new: no process's yet");
        v.get_mut_in(parent, |v| v.clear()).push(1);
        assert_eq!(v.get_in(parent), Some(&vec![1]));
        assert_eq!(
            *v.get_mut_in(parent, |_| panic!("reset in its own process")),
            [1]
        );
        // The child's copy: not its own until reset.
        assert_eq!(v.get_in(child), None);
        let mut resets = 0;
        v.get_mut_in(child, |v| {
            resets += 1;
            v.clear()
        })
        .push(2);
        v.get_mut_in(child, |_| resets += 1);
        assert_eq!((v.get_in(child), resets), (Some(&vec![2]), 1));
        assert_eq!(v.get_in(parent), None);
    }

    #[test]
    fn a_forked_child_resets_its_parents_value() {
        let mut v = PerProcess::new(0u32);
        *v.get_mut(|x| *x = 1) += 1;
        assert_eq!(v.get(), Some(&2));
        // SAFETY: the child only reads and writes its own copy of `v` and exits without
        // unwinding.
        unsafe {
            match libc::fork() {
                0 => {
                    let ok = v.get().is_none() && *v.get_mut(|x| *x = 10) == 10;
                    let ok = ok && v.get() == Some(&10);
                    libc::_exit(if ok { 0 } else { 1 });
                }
                child if child > 0 => {
                    let mut status = 0;
                    assert_eq!(libc::waitpid(child, &mut status, 0), child);
                    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
                    assert_eq!(v.get(), Some(&2), "the parent's is untouched");
                }
                _ => panic!("fork failed"),
            }
        }
    }

    #[test]
    fn cached_id_is_the_process_id_and_a_child_sees_its_own() {
        assert_eq!(super::id(), std::process::id());
        assert_eq!(super::id(), std::process::id());
        // SAFETY: the child only reads its id, compares and exits without unwinding.
        unsafe {
            match libc::fork() {
                0 => {
                    let ok = super::id() == std::process::id() && super::id() != 0;
                    libc::_exit(if ok { 0 } else { 1 });
                }
                child if child > 0 => {
                    let mut status = 0;
                    assert_eq!(libc::waitpid(child, &mut status, 0), child);
                    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
                    assert_ne!(child as u32, super::id());
                }
                _ => panic!("fork failed"),
            }
        }
    }
}
