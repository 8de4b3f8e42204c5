//! Completion notification for event loops: a per-context callback and an eventfd.

use crate::Error;
use std::cell::RefCell;
use std::sync::{Arc, OnceLock, RwLock};

/// Called with a job's identity (its C handle's address) when the job's results are written.
pub type Callback = Arc<dyn Fn(usize) + Send + Sync>;

/// A Linux eventfd, closed on drop.
#[derive(Debug)]
pub struct EventFd(i32);

impl EventFd {
    fn new() -> Result<EventFd, Error> {
        // SAFETY: plain system call, no pointers.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error::Device);
        }
        Ok(EventFd(fd))
    }

    /// Adds `count` completions to the counter.
    fn signal(&self, count: u64) {
        // SAFETY: writes 8 bytes from a live u64 to our own descriptor. A full counter
        // (EAGAIN) already means readable, so the result is not needed.
        let _ = unsafe { libc::write(self.0, (&count as *const u64).cast(), 8) };
    }
}

impl Drop for EventFd {
    fn drop(&mut self) {
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(self.0) };
    }
}

/// The notification settings of one context, shared with its outstanding jobs.
#[derive(Default)]
pub struct Notify {
    callback: RwLock<Option<Callback>>,
    event: OnceLock<EventFd>,
}

impl Notify {
    pub fn set_callback(&self, cb: Option<Callback>) {
        *self.callback.write().unwrap_or_else(|e| e.into_inner()) = cb;
    }

    /// The context's eventfd, created at the first call.
    pub fn event_fd(&self) -> Result<i32, Error> {
        if let Some(e) = self.event.get() {
            return Ok(e.0);
        }
        let fresh = EventFd::new()?;
        // A racing creator may have won; its descriptor is kept and ours closed.
        Ok(self.event.get_or_init(|| fresh).0)
    }

    /// Runs the callback for job `id` (its results are written, it is not yet complete).
    pub fn before_complete(&self, id: usize) {
        let cb = self
            .callback
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(cb) = cb {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cb(id)));
        }
    }

    /// Makes the eventfd readable (after the job completed). Inside [`coalesced`] the
    /// signal is held back and added with the others when the batch has been reported.
    pub fn after_complete(self: &Arc<Self>) {
        let Some(e) = self.event.get() else { return };
        let unheld = HELD.with(|h| {
            let Held::On(slot, _) = &mut *h.borrow_mut() else {
                return true;
            };
            match slot {
                Some((n, count)) if Arc::ptr_eq(n, self) => *count += 1,
                // The first, or another context's job in the same batch (the first context's
                // count is written now).
                _ => {
                    if let Some((n, count)) = slot.replace((self.clone(), 1)) {
                        n.flush(count);
                    }
                }
            }
            false
        });
        if unheld {
            e.signal(1);
        }
    }

    fn flush(&self, count: u64) {
        if let Some(e) = self.event.get() {
            e.signal(count);
        }
    }
}

/// Whether this thread holds back eventfd signals, and the ones held (one context at a time),
/// with the hooks to run when the batch has been reported ([`at_batch_end`]).
enum Held {
    Off,
    On(Option<(Arc<Notify>, u64)>, Vec<fn()>),
}

thread_local! {
    static HELD: RefCell<Held> = const { RefCell::new(Held::Off) };
}

/// Runs `f` (which reports a batch's items) with this thread's eventfd signals added up and
/// written once at the end: one system call per batch instead of one per completed job. Every
/// job is complete before its count is written, as without it; a panic in `f` still writes.
pub fn coalesced<R>(f: impl FnOnce() -> R) -> R {
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            let held = HELD.with(|h| std::mem::replace(&mut *h.borrow_mut(), Held::Off));
            if let Held::On(signal, hooks) = held {
                if let Some((n, count)) = signal {
                    n.flush(count);
                }
                for f in hooks {
                    // A hook that panics must not stop the others (nor unwind out of a drop).
                    let _ = std::panic::catch_unwind(f);
                }
            }
        }
    }
    // Nested scopes leave the holding (and the release) to the outermost.
    let outermost = HELD.with(|h| {
        let mut h = h.borrow_mut();
        let off = matches!(*h, Held::Off);
        if off {
            *h = Held::On(None, Vec::new());
        }
        off
    });
    // `then`, not `then_some`: an unused Release must not even be built (its drop releases).
    let _release = outermost.then(|| Release);
    f()
}

/// Runs `f` when the batch being reported on this thread has been reported (after its items
/// have completed and the eventfd signals above are written), so a submitter with wake-ups of
/// its own (the OpenSSL provider's) can hold them back and give them at once; true if so.
/// Outside a batch it keeps nothing and returns false: the caller wakes at once. Each call
/// adds one run; callers register once per batch.
pub fn at_batch_end(f: fn()) -> bool {
    HELD.with(|h| match &mut *h.borrow_mut() {
        Held::On(_, hooks) => {
            hooks.push(f);
            true
        }
        Held::Off => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eventfd's counter, read (and reset) without blocking: 0 when unreadable.
    fn take(fd: i32) -> u64 {
        let mut v = 0u64;
        // SAFETY: reads 8 bytes into a live u64 from a descriptor this test owns.
        let r = unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) };
        if r == 8 {
            v
        } else {
            0
        }
    }

    #[test]
    fn signals_are_held_inside_a_batch_and_added_up_after_it() {
        let (a, b) = (Arc::new(Notify::default()), Arc::new(Notify::default()));
        let (fa, fb) = (a.event_fd().unwrap(), b.event_fd().unwrap());
        a.after_complete();
        assert_eq!(take(fa), 1, "outside a batch: at once");
        coalesced(|| {
            a.after_complete();
            a.after_complete();
            coalesced(|| a.after_complete());
            assert_eq!(take(fa), 0, "held, also after a nested scope");
            // Another context's job in the same batch releases the first context's count.
            b.after_complete();
            assert_eq!(take(fa), 3);
            a.after_complete();
            assert_eq!(take(fb), 1, "and back");
        });
        assert_eq!((take(fa), take(fb)), (1, 0), "written when the batch ends");
        let r = std::panic::catch_unwind(|| {
            coalesced(|| {
                b.after_complete();
                panic!("a batch that dies");
            })
        });
        assert!(r.is_err());
        assert_eq!(take(fb), 1, "a panic still writes");
        b.after_complete();
        assert_eq!(take(fb), 1, "the thread holds nothing afterwards");
    }

    #[test]
    fn batch_end_hooks_run_after_the_batch_and_only_inside_one() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        fn hook() {
            RUNS.fetch_add(1, Ordering::SeqCst);
        }
        fn panics() {
            panic!("a hook that dies");
        }
        assert!(!at_batch_end(hook), "outside a batch nothing is kept");
        coalesced(|| {
            assert!(at_batch_end(panics));
            assert!(
                coalesced(|| at_batch_end(hook)),
                "a nested scope holds for the outer"
            );
            assert_eq!(RUNS.load(Ordering::SeqCst), 0, "held until the batch ends");
        });
        assert_eq!(
            RUNS.load(Ordering::SeqCst),
            1,
            "run once, past a panicking hook"
        );
        coalesced(|| {});
        assert_eq!(RUNS.load(Ordering::SeqCst), 1, "not kept past its batch");
    }
}
