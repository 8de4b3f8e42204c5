//! `pqg_job`: asynchronous work with poll / wait / free.
//!
//! Two kinds of job share the handle. A batch job ([`start`]): the submit call validates,
//! builds the work as a closure and hands it to a runner thread (`super::runner`, kept from
//! batch to batch); the backend's batch call is blocking, so the runner simply runs it; the
//! statuses are written into the caller's array once, when the work ends, and only then is
//! the job marked done. A dispatched job
//! ([`dispatched`]): its items go through the context's serving dispatcher and report to the
//! job one by one; the last report completes it. The latter is the asynchronous single item,
//! so it is one allocation and a few atomic operations.

use super::guard::{boundary, boundary_or};
use super::runner;
use super::{pqg_status, PQG_ERR_PANIC, PQG_ERR_TIMEOUT, PQG_OK, PQG_PENDING};
use crate::backend::registry::Lease;
use crate::serve::notify::{Notify, NotifyRef};
use crate::serve::Completion;
use crate::{Error, Status};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// An asynchronous batch started by a `*_submit` call.
///
/// Poll it with `pqg_job_poll`, wait for it with `pqg_job_wait` (from any thread, also from
/// several at once) and release it with `pqg_job_free`, exactly once. Every buffer named in
/// the submitted requests must stay valid and untouched until the job has completed.
//
// (Not in the header:) the C handle is this struct's address in an `Arc` (`Arc::into_raw`):
// the handle owns one reference, whoever finishes the job (a runner, a queued item)
// another, so a job is one allocation however it runs, and is freed by whichever of the two
// lets go last.
pub struct pqg_job {
    state: JobState,
    /// The process that started the job: a child after `fork()` inherits the handle but not
    /// the runner thread, so there an unfinished job fails instead of waiting for ever.
    pid: u32,
    kind: Kind,
}

/// How a job runs to completion.
enum Kind {
    /// On a runner ([`start`]). Done once the runner has nothing of the job left (its
    /// notification sent, its references dropped): `pqg_job_free` waits for that, as it
    /// joined the job's own thread before runners were kept.
    Run {
        released: JobState,
        /// The work of a job without completion notification, until a thread claims it:
        /// the runner it was handed to, or a thread that waits for the job without a time
        /// limit before that runner has woken up (see [`pqg_job::claim`]).
        unclaimed: Mutex<Option<runner::Task>>,
    },
    /// Through the serving dispatcher ([`dispatched`]): its items' bookkeeping.
    Dispatched(Items),
}

impl pqg_job {
    /// Whether the job was started by another process (this one is a child that forked
    /// while it ran) and had not finished then: it never will here.
    fn orphaned(&self) -> bool {
        self.pid != crate::process::id() && !self.state.done()
    }

    /// The job's identity for the completion callback: its C handle.
    fn id(&self) -> usize {
        self as *const pqg_job as usize
    }

    /// Runs the job's work on this thread if no thread has claimed it yet. A caller that
    /// submits a batch and waits for it at once (what `pqg_job_wait(job, -1)` usually is)
    /// then runs it itself: the runner's wake-up and, at the end, its own are saved (a few
    /// tens of microseconds each on an idle many-core host). Only jobs without completion
    /// notification leave their work here: a context's callback never runs on a waiting
    /// caller's thread, which may hold a lock that the callback takes.
    fn claim(&self) {
        if let Kind::Run { unclaimed, .. } = &self.kind {
            let task = unclaimed.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(task) = task {
                task();
            }
        }
    }
}

/// Whether a job is done, and who waits for it, in one word: done is one atomic operation
/// (a single item's job is finished by a dispatcher thread and then polled from another, so
/// every operation on it is a cache line fetched from the other core).
struct JobState {
    /// [`DONE`], plus [`WAITER`] per thread in `wait`.
    word: AtomicUsize,
    /// Taken by waiters, and by `finish` only when there are any (no lost wake-up).
    lock: Mutex<()>,
    finished: Condvar,
}

const DONE: usize = 1;
const WAITER: usize = 2;

impl JobState {
    fn new() -> JobState {
        JobState {
            word: AtomicUsize::new(0),
            lock: Mutex::new(()),
            finished: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        // A poisoned lock guards nothing here (the state is in `word`).
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn done(&self) -> bool {
        // Acquire: pairs with the release in `finish`, so the job's outputs are visible.
        self.word.load(Ordering::Acquire) & DONE != 0
    }

    fn finish(&self) {
        // Release: the outputs and statuses written before this are seen by `done`.
        let before = self.word.fetch_or(DONE, Ordering::AcqRel);
        // A single-item job is usually collected after it completed (polled, or the callback
        // or eventfd said so): waking only when a thread waits saves a system call per item.
        if before >= WAITER {
            // A waiter counted itself under the lock and sleeps in `finished` until woken:
            // taking the lock here means it is asleep (or has not yet checked `word`).
            drop(self.lock());
            self.finished.notify_all();
        }
    }

    /// Waits until done or until `timeout` passes (`None`: no limit); true when done.
    fn wait(&self, timeout: Option<Duration>) -> bool {
        if self.done() {
            return true;
        }
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut g = self.lock();
        let mut done = self.word.fetch_add(WAITER, Ordering::AcqRel) & DONE != 0;
        while !done {
            g = match deadline {
                None => self.finished.wait(g).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    let (g, _) = self
                        .finished
                        .wait_timeout(g, left)
                        .unwrap_or_else(|e| e.into_inner());
                    g
                }
            };
            done = self.done();
        }
        self.word.fetch_sub(WAITER, Ordering::AcqRel);
        drop(g);
        done
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

/// A status as the C code that reports it.
fn code(status: &Status) -> pqg_status {
    match status {
        Ok(()) => PQG_OK,
        Err(e) => e.code(),
    }
}

impl StatusSink {
    /// Writes one status per item; items the work did not report on get `PQG_ERR_PANIC`.
    fn write(self, statuses: Option<Vec<Status>>) {
        let statuses = statuses.unwrap_or_default();
        self.write_codes(&statuses);
        super::recycle::give(statuses);
    }

    fn write_codes(&self, statuses: &[Status]) {
        // One pass without bounds checks (it vectorises), then `Panic` for any item the work
        // did not report on.
        let reported = statuses.len().min(self.n);
        for (i, st) in statuses[..reported].iter().enumerate() {
            // SAFETY: i < n and the array holds n writable entries (checked non-NULL at submit).
            unsafe { self.ptr.add(i).write(code(st)) };
        }
        for i in reported..self.n {
            // SAFETY: as above.
            unsafe { self.ptr.add(i).write(PQG_ERR_PANIC) };
        }
    }
}

/// The work of a job: runs the batch, copies successful outputs into the caller's buffers and
/// returns one status per request.
pub(crate) type Work = Box<dyn FnOnce() -> Vec<Status> + Send>;

/// Starts `work` on a runner thread and returns the job handle. `statuses` must be non-NULL
/// when `n > 0`, and is written when the work ends (also if it panics). With `notify` (a
/// key-handle job, whose completions the context reports) the context's callback runs once
/// the statuses are written and its eventfd is signalled once the job is complete.
pub(crate) fn start(
    n: usize,
    statuses: *mut pqg_status,
    work: Work,
    notify: Option<Arc<Notify>>,
) -> Arc<pqg_job> {
    let job = Arc::new(pqg_job {
        state: JobState::new(),
        pid: crate::process::id(),
        kind: Kind::Run {
            released: JobState::new(),
            unclaimed: Mutex::new(None),
        },
    });
    let claimable = notify.is_none();
    let sink = StatusSink { ptr: statuses, n };
    // Entered here, on the submitting thread, and left once the job is done: an unregister
    // called after this submit returns waits for it (`pqg_host_unregister`).
    let ticket = crate::backend::jobs_in_flight().enter();
    let me = job.clone();
    let task: runner::Task = Box::new(move || {
        let statuses = catch_unwind(AssertUnwindSafe(work)).ok();
        let _ = catch_unwind(AssertUnwindSafe(|| sink.write(statuses)));
        if let Some(n) = &notify {
            n.before_complete(me.id());
        }
        me.state.finish();
        drop(ticket);
        if let Some(n) = notify {
            n.after_complete();
        }
        if let Kind::Run { released, .. } = &me.kind {
            released.finish();
        }
    });
    let task = match (claimable, &job.kind) {
        (true, Kind::Run { unclaimed, .. }) => {
            // The job holds its work until claimed (a cycle through `me` that ends when the
            // work runs); the runner gets the claim.
            *unclaimed.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
            let me = job.clone();
            Box::new(move || me.claim())
        }
        _ => task,
    };
    if let Err(task) = runner::run(task) {
        // Out of threads: do the work now; the caller gets a job that is already done.
        task();
    }
    job
}

/// The caller's status array of a dispatched job.
#[derive(Clone, Copy)]
struct Statuses(*mut pqg_status);

// SAFETY: the caller keeps the array valid until the job completes; each entry is written
// once, by the thread finishing that item.
unsafe impl Send for Statuses {}
unsafe impl Sync for Statuses {}

/// A dispatched job's side of its items: it writes their statuses; the last completes it.
struct Items {
    remaining: AtomicUsize,
    statuses: Statuses,
    /// Used up to the job's completion only (see [`dispatched`]).
    notify: NotifyRef,
    /// Its place among the jobs `pqg_host_unregister` waits for.
    lease: Lease,
}

/// A job completed by the serving dispatcher (`ffi::serve`), as the completion of its items:
/// each item reports to it (`Completion::complete`); when `count` reports have come (the
/// items, plus any [`release`] the submitter holds back while it is still queuing items) the
/// job completes. `statuses` holds an entry for every item index reported.
///
/// # Safety
/// `notify` outlives the job's completion: every count is given up by the submitter (which
/// holds the context, so its `notify`) or by an item the context's dispatcher reports (which
/// keeps its own reference to `notify` for as long as it runs items).
pub(crate) unsafe fn dispatched(
    count: usize,
    statuses: *mut pqg_status,
    notify: &Arc<Notify>,
) -> Arc<pqg_job> {
    Arc::new(pqg_job {
        state: JobState::new(),
        pid: crate::process::id(),
        kind: Kind::Dispatched(Items {
            remaining: AtomicUsize::new(count),
            statuses: Statuses(statuses),
            // SAFETY: the caller's promise: used only until the job's last count.
            notify: unsafe { NotifyRef::new(notify) },
            // Counted like any job, so that pqg_host_unregister waits for it.
            lease: crate::backend::jobs_in_flight().lease(),
        }),
    })
}

/// Gives up one of a dispatched job's counts that is not an item's (see [`dispatched`]).
pub(crate) fn release(job: &pqg_job) {
    if let Kind::Dispatched(items) = &job.kind {
        job.count_down(items);
    }
}

impl pqg_job {
    fn count_down(&self, items: &Items) {
        if items.remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        items.notify.before_complete(self.id());
        // The job's outputs are written: it no longer holds any registered buffer.
        crate::backend::jobs_in_flight().leave(items.lease);
        self.state.finish();
        items.notify.after_complete();
    }
}

impl Drop for pqg_job {
    /// A dispatched job freed before its last report (only a submit that panicked while
    /// building its items: a handed-out job is freed after it completes) leaves the
    /// jobs-in-flight count all the same, so that no `pqg_host_unregister` waits for it.
    fn drop(&mut self) {
        if let Kind::Dispatched(items) = &mut self.kind {
            if *items.remaining.get_mut() > 0 && self.pid == crate::process::id() {
                crate::backend::jobs_in_flight().leave(items.lease);
            }
        }
    }
}

impl Completion for pqg_job {
    fn complete(&self, index: usize, status: Status) {
        let Kind::Dispatched(items) = &self.kind else {
            return;
        };
        // SAFETY: the submitter gave an entry for every index it reports (`dispatched`).
        unsafe { items.statuses.0.add(index).write(code(&status)) };
        self.count_down(items);
    }
}

/// Stores a started job in `*out`.
///
/// # Safety
/// `out` must be non-NULL and writable.
pub(crate) unsafe fn hand_out(job: Arc<pqg_job>, out: *mut *mut pqg_job) {
    // SAFETY: forwarded from the caller. The handle keeps the job's reference until
    // pqg_job_free.
    unsafe { out.write(Arc::into_raw(job).cast_mut()) };
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
    // SAFETY: a live job is an Arc allocation the handle keeps, shared until pqg_job_free.
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
/// A wait without limit on a batch job that no library thread has started yet (the usual
/// case right after the submit call) runs the job on the calling thread: the same results,
/// two thread wake-ups fewer. (Never for a job of a key handle: the context's callback does
/// not run on a waiting thread.)
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
        if timeout.is_none() {
            job.claim();
        }
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
    // SAFETY: a non-NULL job came from a submit call (`hand_out`) and is freed once.
    let job = unsafe { Arc::from_raw(job.cast_const()) };
    boundary_or((), move || {
        if job.pid != crate::process::id() {
            // Inherited across fork(): the runner does not exist here, so no wait; what the
            // job holds is left alone (its owner, the parent, frees it).
            std::mem::forget(job);
            return;
        }
        job.claim();
        job.state.wait(None);
        if let Kind::Run { released, .. } = &job.kind {
            released.wait(None);
        }
    });
}

const _: () = assert!(PQG_ERR_TIMEOUT == Error::Timeout.code());

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::null_mut;
    use std::thread;

    /// Starts a batch job whose work is `work`, as a submit call does, and hands it out.
    fn submit(n: usize, statuses: &mut [pqg_status], work: Work) -> *mut pqg_job {
        let notify = Some(Arc::default());
        let mut out = null_mut();
        // SAFETY: `out` is a live local.
        unsafe { hand_out(start(n, statuses.as_mut_ptr(), work, notify), &mut out) };
        out
    }

    #[test]
    fn batch_jobs_one_after_another_each_end_with_their_statuses() {
        for i in 0..60 {
            let mut statuses = [PQG_PENDING; 3];
            let fail = Error::VerifyFailed;
            let out = submit(
                3,
                &mut statuses,
                Box::new(move || match i % 3 {
                    0 => vec![Ok(()), Err(fail), Ok(())],
                    1 => vec![Err(fail)],
                    _ => panic!("contained (batch {i})"),
                }),
            );
            // SAFETY (C calls): `out` is live until pqg_job_free.
            assert_eq!(unsafe { pqg_job_wait(out, -1) }, PQG_OK);
            unsafe { pqg_job_free(out) };
            let want = match i % 3 {
                0 => [PQG_OK, fail.code(), PQG_OK],
                1 => [fail.code(), PQG_ERR_PANIC, PQG_ERR_PANIC],
                _ => [PQG_ERR_PANIC; 3],
            };
            assert_eq!(statuses, want, "batch {i}");
        }
    }

    #[test]
    fn batch_jobs_in_flight_at_once_run_at_once() {
        // Each batch's work waits until all have started: run one after another, they never
        // end (the waits below fail with a timeout).
        const JOBS: usize = 6;
        let started = Arc::new(std::sync::Barrier::new(JOBS));
        let mut statuses = [[PQG_PENDING; 1]; JOBS];
        let jobs: Vec<_> = statuses
            .iter_mut()
            .map(|st| {
                let started = started.clone();
                submit(
                    1,
                    st,
                    Box::new(move || {
                        started.wait();
                        vec![Ok(())]
                    }),
                )
            })
            .collect();
        for &job in &jobs {
            // SAFETY (C calls): each job is live until its pqg_job_free.
            assert_eq!(unsafe { pqg_job_wait(job, 20_000) }, PQG_OK);
            unsafe { pqg_job_free(job) };
        }
        assert!(statuses.iter().all(|s| s == &[PQG_OK]));
    }

    /// Starts a batch job whose work reports the thread it ran on; `notify` as a key
    /// handle's job has it.
    fn job_reporting_its_thread(
        notify: Option<Arc<Notify>>,
        status: &mut pqg_status,
    ) -> (*mut pqg_job, std::sync::mpsc::Receiver<thread::ThreadId>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let work: Work = Box::new(move || {
            tx.send(thread::current().id()).unwrap();
            vec![Ok(())]
        });
        let mut out = null_mut();
        // SAFETY: `out` is a live local; `status` outlives the job (freed by the caller).
        unsafe { hand_out(start(1, status, work, notify), &mut out) };
        (out, rx)
    }

    #[test]
    fn an_unlimited_wait_may_run_the_work_a_timed_one_never() {
        let me = thread::current().id();
        let mut ran_here = 0;
        for i in 0..200 {
            let mut status = PQG_PENDING;
            let (job, rx) = job_reporting_its_thread(None, &mut status);
            let timeout = if i % 2 == 0 { -1 } else { 20_000 };
            // SAFETY (C calls): `job` is live until pqg_job_free.
            assert_eq!(unsafe { pqg_job_wait(job, timeout) }, PQG_OK);
            unsafe { pqg_job_free(job) };
            assert_eq!(status, PQG_OK);
            let ran_on = rx.recv().unwrap();
            if ran_on == me {
                assert_eq!(timeout, -1, "a timed wait ran the work (batch {i})");
                ran_here += 1;
            }
        }
        // Which thread claims an unlimited wait's work is a race; both outcomes are right.
        println!("{ran_here} of 100 unlimited waits ran the work themselves");
    }

    #[test]
    fn a_key_handle_job_never_runs_on_its_waiter() {
        let me = thread::current().id();
        for _ in 0..50 {
            let mut status = PQG_PENDING;
            let (job, rx) = job_reporting_its_thread(Some(Arc::default()), &mut status);
            // SAFETY (C calls): `job` is live until pqg_job_free.
            assert_eq!(unsafe { pqg_job_wait(job, -1) }, PQG_OK);
            unsafe { pqg_job_free(job) };
            assert_eq!(status, PQG_OK);
            assert_ne!(rx.recv().unwrap(), me);
        }
    }

    #[test]
    fn a_freed_batch_job_holds_nothing_of_its_context() {
        // After pqg_job_free the runner holds no reference to the context's notify state (it
        // would close the eventfd late, or run a freed context's callback).
        for _ in 0..100 {
            let notify: Arc<Notify> = Arc::default();
            let mut status = PQG_PENDING;
            let mut out = null_mut();
            let work: Work = Box::new(|| vec![Ok(())]);
            // SAFETY: `out` is a live local.
            unsafe { hand_out(start(1, &mut status, work, Some(notify.clone())), &mut out) };
            // SAFETY: `out` is live until here.
            unsafe { pqg_job_free(out) };
            assert_eq!(status, PQG_OK);
            assert_eq!(Arc::strong_count(&notify), 1);
        }
    }

    #[test]
    fn a_dispatched_job_completes_at_its_last_count_and_wakes_every_waiter() {
        let mut statuses = [PQG_PENDING; 2];
        let notify = Arc::default();
        // SAFETY: `notify` outlives the job.
        let job = unsafe { dispatched(3, statuses.as_mut_ptr(), &notify) };
        let mut out = null_mut();
        // SAFETY: `out` is a live local.
        unsafe { hand_out(job.clone(), &mut out) };
        let handle = out as usize;
        // SAFETY (the C calls below): `handle` is live until the pqg_job_free at the end.
        assert_eq!(unsafe { pqg_job_poll(out) }, PQG_PENDING);
        assert_eq!(unsafe { pqg_job_wait(out, 5) }, PQG_ERR_TIMEOUT);
        let waiters: Vec<_> = (0..3)
            .map(|_| thread::spawn(move || unsafe { pqg_job_wait(handle as *mut pqg_job, -1) }))
            .collect();
        thread::sleep(Duration::from_millis(20));
        job.complete(1, Err(Error::VerifyFailed));
        job.complete(0, Ok(()));
        // One count is still held back (as a submit does while it queues items).
        assert_eq!(unsafe { pqg_job_poll(out) }, PQG_PENDING);
        release(&job);
        for w in waiters {
            assert_eq!(w.join().unwrap(), PQG_OK);
        }
        assert_eq!(unsafe { pqg_job_poll(out) }, PQG_OK);
        assert_eq!(statuses, [PQG_OK, Error::VerifyFailed.code()]);
        // The handle and the items' reference go in either order.
        unsafe { pqg_job_free(out) };
        drop(job);
    }

    #[test]
    fn a_dispatched_job_dropped_unfinished_is_no_longer_in_flight() {
        let mut statuses = [PQG_PENDING; 2];
        let notify = Arc::default();
        // SAFETY: `notify` outlives the job.
        let job = unsafe { dispatched(3, statuses.as_mut_ptr(), &notify) };
        job.complete(0, Ok(()));
        // As a submit that panics while building its items: the job goes, unfinished.
        drop(job);
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = thread::spawn(move || {
            crate::backend::jobs_in_flight().wait_for_earlier();
            tx.send(()).unwrap();
        });
        rx.recv_timeout(Duration::from_secs(10))
            .expect("an unregister would wait for the dropped job");
        waiter.join().unwrap();
        assert_eq!(statuses, [PQG_OK, PQG_PENDING]);
    }

    #[test]
    fn a_timed_wait_on_a_job_finished_meanwhile_sees_it_done() {
        let mut status = PQG_PENDING;
        let notify = Arc::default();
        // SAFETY: `notify` outlives the job.
        let job = unsafe { dispatched(1, &mut status, &notify) };
        let finisher = {
            let job = job.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(10));
                job.complete(0, Ok(()));
            })
        };
        assert!(job.state.wait(Some(Duration::from_secs(10))));
        finisher.join().unwrap();
        assert!(job.state.wait(Some(Duration::ZERO)));
        assert_eq!(status, PQG_OK);
    }
}
