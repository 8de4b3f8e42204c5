//! Completion notification for event loops: a per-context callback and an eventfd.

use crate::Error;
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

    fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own descriptor. A full counter
        // (EAGAIN) already means readable, so the result is not needed.
        let _ = unsafe { libc::write(self.0, (&one as *const u64).cast(), 8) };
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

    /// Makes the eventfd readable (after the job completed).
    pub fn after_complete(&self) {
        if let Some(e) = self.event.get() {
            e.signal();
        }
    }
}
