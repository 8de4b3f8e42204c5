//! The current process id, cached. The serving and job paths read it on every call to tell a
//! forked child from its parent (issue #17), and a getpid system call each time was a
//! visible share of a single-item submit. A fork handler clears the cache in the child.

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
