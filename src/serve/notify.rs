//! Completion notification for event loops: a per-context callback and an eventfd.

use crate::Error;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

/// Called with a job's identity (its C handle's address) when the job's results are written.
/// A callback that was replaced may still be held (not called) by threads that completed
/// jobs under it, until they complete another: it must own nothing whose drop matters.
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

/// The notification settings of one context, shared with its outstanding jobs. Aligned past
/// a cache line, so that the `Arc`'s count (written as jobs start and end) is on a line of its
/// own, away from the fields read as they complete.
#[repr(align(128))]
pub struct Notify {
    callback: RwLock<Option<Callback>>,
    /// Names the current `callback`: drawn from [`SETTINGS`], so no two settings of any
    /// context share one. Completing threads keep the last callback they read under it.
    setting: AtomicU64,
    event: OnceLock<EventFd>,
}

/// A context's notify state held without a reference count of its own: an asynchronous
/// single item's job keeps one of these instead of a clone of the `Arc`.
pub type NotifyRef = super::uncounted::Uncounted<Arc<Notify>>;

/// Callback settings made so far, in all contexts.
static SETTINGS: AtomicU64 = AtomicU64::new(0);

fn next_setting() -> u64 {
    SETTINGS.fetch_add(1, Ordering::Relaxed) + 1
}

thread_local! {
    /// The callback this thread last read, and the setting it belongs to: jobs completing
    /// one after another on a thread (a batch's items) read one atomic instead of taking the
    /// lock and a reference to the callback each (both written on a line every completing
    /// thread shares).
    static LAST_CALLBACK: Cell<Option<(u64, Option<Callback>)>> = const { Cell::new(None) };
}

impl Default for Notify {
    fn default() -> Notify {
        Notify {
            callback: RwLock::new(None),
            setting: AtomicU64::new(next_setting()),
            event: OnceLock::new(),
        }
    }
}

impl Notify {
    pub fn set_callback(&self, cb: Option<Callback>) {
        let mut slot = self.callback.write().unwrap_or_else(|e| e.into_inner());
        *slot = cb;
        // Under the lock, after the callback: a thread that reads this setting and then the
        // callback (under the lock) gets this callback or a later one, never an earlier one.
        self.setting.store(next_setting(), Ordering::Release);
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
        let setting = self.setting.load(Ordering::Acquire);
        // Taken out of the thread's slot while it is called (a callback may complete other
        // jobs on this thread: those then read the callback afresh).
        let last = LAST_CALLBACK.try_with(Cell::take).ok().flatten();
        let cb = match last {
            Some((s, cb)) if s == setting => cb,
            _ => self
                .callback
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        };
        if let Some(cb) = &cb {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cb(id)));
        }
        let _ = LAST_CALLBACK.try_with(|c| c.set(Some((setting, cb))));
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
/// The jobs' leaves from the process's jobs in flight are held the same way
/// (`InFlight::holding`) and given back first.
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
    crate::backend::jobs_in_flight().holding(f)
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
    fn the_callback_called_is_the_one_set_last() {
        use std::sync::Mutex;
        let calls = Arc::new(Mutex::new(Vec::new()));
        let cb = |tag: usize| {
            let calls = calls.clone();
            Some(Arc::new(move |id: usize| calls.lock().unwrap().push((tag, id))) as Callback)
        };
        let (n, other) = (Notify::default(), Notify::default());
        n.before_complete(1);
        n.set_callback(cb(10));
        n.before_complete(2);
        n.before_complete(3);
        n.set_callback(cb(20));
        n.before_complete(4);
        // Another context in between (this thread's copy is then its callback, none).
        other.before_complete(5);
        n.before_complete(6);
        // Set again from another thread, after this one read it.
        std::thread::scope(|s| s.spawn(|| n.set_callback(cb(30))).join().unwrap());
        n.before_complete(7);
        n.set_callback(None);
        n.before_complete(8);
        let want: [(usize, usize); 5] = [(10, 2), (10, 3), (20, 4), (20, 6), (30, 7)];
        assert_eq!(*calls.lock().unwrap(), want);
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
