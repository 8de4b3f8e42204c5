//! `pqg_job`: a batch running on its own thread, with poll / wait / free.
//!
//! A submit call validates, builds the work as a closure and starts a thread for it; the
//! backend's batch call is blocking, so the thread simply runs it. The statuses are written
//! into the caller's array once, when the work ends, and only then is the job marked done.

use super::guard::{boundary, boundary_or};
use super::{pqg_status, PQG_ERR_PANIC, PQG_ERR_TIMEOUT, PQG_OK, PQG_PENDING};
use crate::serve::notify::Notify;
use crate::{Error, Status};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// An asynchronous batch started by a `*_submit` call.
///
/// Poll it with `pqg_job_poll`, wait for it with `pqg_job_wait` (from any thread, also from
/// several at once) and release it with `pqg_job_free`, exactly once. Every buffer named in
/// the submitted requests must stay valid and untouched until the job has completed.
pub struct pqg_job {
    state: Arc<JobState>,
    worker: Mutex<Option<JoinHandle<()>>>,
    /// The process that started the job: a child after `fork()` inherits the handle but not
    /// the worker thread, so there an unfinished job fails instead of waiting for ever.
    pid: u32,
}

impl pqg_job {
    /// Whether the job was started by another process (this one is a child that forked
    /// while it ran) and had not finished then: it never will here.
    fn orphaned(&self) -> bool {
        self.pid != crate::process::id() && !self.state.done()
    }
}

#[derive(Default)]
struct JobState {
    flags: Mutex<Flags>,
    finished: Condvar,
    /// `flags.done`, readable without the lock: polling, waiting on and freeing a completed
    /// job (the usual order for asynchronous single items) then take no lock, whose cache
    /// line the finishing thread has just written.
    complete: AtomicBool,
}

#[derive(Default)]
struct Flags {
    done: bool,
    /// Threads in `wait`. Finishing wakes only when there are any: a single-item job is
    /// usually collected after it completed (the callback or eventfd said so), and an
    /// unconditional wake is a system call per item.
    waiting: usize,
}

impl JobState {
    /// The flags; a poisoned lock still holds valid ones (nothing panics while holding it).
    fn lock(&self) -> MutexGuard<'_, Flags> {
        self.flags.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn done(&self) -> bool {
        // Acquire: pairs with the Release in `finish`, so the job's outputs are visible.
        self.complete.load(Ordering::Acquire)
    }

    fn finish(&self) {
        let waiting = {
            let mut f = self.lock();
            f.done = true;
            self.complete.store(true, Ordering::Release);
            f.waiting
        };
        if waiting > 0 {
            self.finished.notify_all();
        }
    }

    /// Waits until done or until `timeout` passes (`None`: no limit); true when done.
    fn wait(&self, timeout: Option<Duration>) -> bool {
        if self.done() {
            return true;
        }
        let mut f = self.lock();
        if f.done {
            return true;
        }
        f.waiting += 1;
        let (mut f, done) = self.wait_locked(f, timeout);
        f.waiting -= 1;
        done
    }

    fn wait_locked<'a>(
        &'a self,
        mut f: MutexGuard<'a, Flags>,
        timeout: Option<Duration>,
    ) -> (MutexGuard<'a, Flags>, bool) {
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        while !f.done {
            f = match deadline {
                None => self.finished.wait(f).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return (f, false);
                    }
                    let (g, _) = self
                        .finished
                        .wait_timeout(f, left)
                        .unwrap_or_else(|e| e.into_inner());
                    g
                }
            };
        }
        (f, true)
    }
}

/// Where a job writes its statuses: the caller's array of `n` entries.
struct StatusSink {
    ptr: *mut pqg_status,
    n: usize,
}

// SAFETY: the caller promised the array stays valid until the job completes; only the job's
// worker writes it, once.
unsafe impl Send for StatusSink {}

impl StatusSink {
    /// Writes one status per item; items the work did not report on get `PQG_ERR_PANIC`.
    fn write(self, statuses: Option<Vec<Status>>) {
        let statuses = statuses.unwrap_or_default();
        self.write_codes(&statuses);
        super::recycle::give(statuses);
    }

    fn write_codes(&self, statuses: &[Status]) {
        for i in 0..self.n {
            let code = match statuses.get(i) {
                Some(Ok(())) => PQG_OK,
                Some(Err(e)) => e.code(),
                None => PQG_ERR_PANIC,
            };
            // SAFETY: i < n and the array holds n writable entries (checked non-NULL at submit).
            unsafe { self.ptr.add(i).write(code) };
        }
    }
}

/// The work of a job: runs the batch, copies successful outputs into the caller's buffers and
/// returns one status per request.
pub(crate) type Work = Box<dyn FnOnce() -> Vec<Status> + Send>;

/// Starts `work` on its own thread and returns the job handle. `statuses` must be non-NULL
/// when `n > 0`, and is written when the work ends (also if it panics). With `notify` (a
/// key-handle job, whose completions the context reports) the context's callback runs once
/// the statuses are written and its eventfd is signalled once the job is complete.
pub(crate) fn start(
    n: usize,
    statuses: *mut pqg_status,
    work: Work,
    notify: Option<Arc<Notify>>,
) -> Box<pqg_job> {
    let state = Arc::new(JobState::default());
    let job = Box::new(pqg_job {
        state: state.clone(),
        worker: Mutex::new(None),
        pid: crate::process::id(),
    });
    // The callback names the job by its handle's address, which the box keeps.
    let id = &*job as *const pqg_job as usize;
    let sink = StatusSink { ptr: statuses, n };
    // Entered here, on the submitting thread, and left once the job is done: an unregister
    // called after this submit returns waits for it (`pqg_host_unregister`).
    let ticket = crate::backend::jobs_in_flight().enter();
    // The work sits in a slot so that, if no thread can be started, it can still be run here.
    let slot = Arc::new(Mutex::new(Some((work, sink, ticket))));
    let run = move || {
        let taken = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((work, sink, ticket)) = taken {
            let statuses = catch_unwind(AssertUnwindSafe(work)).ok();
            let _ = catch_unwind(AssertUnwindSafe(|| sink.write(statuses)));
            if let Some(n) = &notify {
                n.before_complete(id);
            }
            state.finish();
            drop(ticket);
            if let Some(n) = &notify {
                n.after_complete();
            }
        } else {
            state.finish();
        }
    };
    let spawned = match thread::Builder::new()
        .name("pqgpu-job".into())
        .spawn(run.clone())
    {
        Ok(handle) => Some(handle),
        Err(_) => {
            // Out of threads: do the work now; the caller gets a job that is already done.
            run();
            None
        }
    };
    *job.worker.lock().unwrap_or_else(|e| e.into_inner()) = spawned;
    job
}

/// A job completed from elsewhere (the serving dispatcher, `ffi::serve`): the handle, and
/// the token whose drop marks it complete.
pub(crate) fn external() -> (Box<pqg_job>, JobDone) {
    let state = Arc::new(JobState::default());
    let job = Box::new(pqg_job {
        state: state.clone(),
        worker: Mutex::new(None),
        pid: crate::process::id(),
    });
    // Counted like any job, so that pqg_host_unregister waits for it.
    let ticket = crate::backend::jobs_in_flight().enter();
    (job, JobDone(state, Some(ticket)))
}

/// Completes its job when dropped (so a lost token cannot leave waiters hanging).
pub(crate) struct JobDone(Arc<JobState>, Option<crate::backend::registry::Ticket>);

impl Drop for JobDone {
    fn drop(&mut self) {
        // The job's outputs are written: it no longer holds any registered buffer.
        drop(self.1.take());
        self.0.finish();
    }
}

/// Stores a started job in `*out`.
///
/// # Safety
/// `out` must be non-NULL and writable.
pub(crate) unsafe fn hand_out(job: Box<pqg_job>, out: *mut *mut pqg_job) {
    // SAFETY: forwarded from the caller.
    unsafe { out.write(Box::into_raw(job)) };
}

/// Checks the `job` out-pointer of a submit call and clears it: NULL is `NullPointer`.
///
/// # Safety
/// A non-NULL `out` must be writable.
pub(crate) unsafe fn clear_out(out: *mut *mut pqg_job) -> Result<(), Error> {
    if out.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: non-NULL and writable (caller's promise).
    unsafe { out.write(std::ptr::null_mut()) };
    Ok(())
}

/// # Safety
/// A non-NULL `job` must be a live job from a submit call.
unsafe fn job_ref<'a>(job: *const pqg_job) -> Result<&'a pqg_job, Error> {
    // SAFETY: a live job is a valid Box allocation, shared read-only until pqg_job_free.
    unsafe { job.as_ref() }.ok_or(Error::NullPointer)
}

/// Checks whether a job has completed, without blocking.
///
/// @return `PQG_OK` when the job has completed (its statuses and outputs are written and
///         its buffers are released to the caller); `PQG_PENDING` while it runs;
///         `PQG_ERR_NULL_POINTER` (job is NULL); `PQG_ERR_INVALID_ARGUMENT` (in a child
///         process after `fork()`, a job of the parent's that had not completed: it never
///         will in the child). Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_job_poll(job: *const pqg_job) -> pqg_status {
    let mut done = false;
    let status = boundary(|| {
        // SAFETY: job is NULL or live (caller's promise).
        let job = unsafe { job_ref(job) }?;
        if job.orphaned() {
            return Err(Error::InvalidArgument);
        }
        done = job.state.done();
        Ok(())
    });
    match status {
        PQG_OK if !done => PQG_PENDING,
        s => s,
    }
}

/// Waits until a job has completed or `timeout_ms` milliseconds have passed.
///
/// @param timeout_ms  a negative value waits without limit; 0 only checks.
/// @return `PQG_OK` when the job has completed (as `pqg_job_poll`); `PQG_ERR_TIMEOUT` when
///         the time ran out first (the job keeps running); `PQG_ERR_NULL_POINTER`;
///         `PQG_ERR_INVALID_ARGUMENT` (a parent's unfinished job, in a child after `fork()`).
///         Thread-safe: several threads may wait on one job.
#[no_mangle]
pub unsafe extern "C" fn pqg_job_wait(job: *mut pqg_job, timeout_ms: i64) -> pqg_status {
    boundary(|| {
        // SAFETY: job is NULL or live (caller's promise).
        let job = unsafe { job_ref(job) }?;
        if job.orphaned() {
            return Err(Error::InvalidArgument);
        }
        let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        if job.state.wait(timeout) {
            Ok(())
        } else {
            Err(Error::Timeout)
        }
    })
}

/// Releases a job, first waiting for it to complete if it is still running (after this the
/// library no longer touches any buffer of the job). NULL is a no-op. Call it exactly once
/// per job, when no other thread is using the job.
#[no_mangle]
pub unsafe extern "C" fn pqg_job_free(job: *mut pqg_job) {
    if job.is_null() {
        return;
    }
    // SAFETY: a non-NULL job came from a submit call (Box::into_raw) and is freed once.
    let job = unsafe { Box::from_raw(job) };
    boundary_or((), move || {
        if job.pid != crate::process::id() {
            // Inherited across fork(): the worker thread does not exist here, so neither wait
            // nor join; what the job holds is left alone (its owner, the parent, frees it).
            std::mem::forget(job);
            return;
        }
        job.state.wait(None);
        let worker = job.worker.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(handle) = worker {
            let _ = handle.join();
        }
    });
}

const _: () = assert!(PQG_ERR_TIMEOUT == Error::Timeout.code());
