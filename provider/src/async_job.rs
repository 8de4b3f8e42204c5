//! OpenSSL's asynchronous jobs, reached without linking libcrypto: the ASYNC_* functions are
//! looked up with dlsym when the provider loads (a static `openssl` built with
//! -Wl,--export-dynamic exports them; so does a shared libcrypto). Absent: everything is
//! synchronous.
//!
//! Inside a job (`openssl speed -async_jobs`, `s_server -async`, SSL_MODE_ASYNC) the caller
//! runs on a 32 KiB stack: the work goes elsewhere (pqgpu's dispatcher, or a helper thread),
//! the job pauses, and whoever finishes the work wakes it through the wait context's callback
//! when the application set one, else through a file descriptor. Results finished while the
//! dispatcher reports a batch are woken together when the batch has been reported.
//!
//! A descriptor serves a group of wait contexts one application thread met in a row (an
//! eventfd; at most `MAX_GROUPS` per thread; a wait context keeps its group): applications
//! `select()` on the descriptors of all their jobs, and one per job ran past FD_SETSIZE at
//! about 1,000 jobs, while one per thread made every batch resume all the thread's jobs. It
//! is readable while some results woken through it are not yet taken back by their jobs. A
//! job the application resumes early (its group's descriptor was readable for another job)
//! pauses again; one resumed after its own wake-up waits the moment until its result is
//! published (`wake_and_publish`).

use once_cell::sync::OnceCell;
use pqgpu::process::PerProcess;
use pqgpu::serve::Completion;
use pqgpu::Error;
use pqgpu::Status;
use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};

type GetCurrentJob = unsafe extern "C" fn() -> *mut c_void;
type GetWaitCtx = unsafe extern "C" fn(job: *mut c_void) -> *mut c_void;
type PauseJob = unsafe extern "C" fn() -> c_int;
type Cleanup =
    unsafe extern "C" fn(ctx: *mut c_void, key: *const c_void, fd: c_int, data: *mut c_void);
type SetWaitFd = unsafe extern "C" fn(
    ctx: *mut c_void,
    key: *const c_void,
    fd: c_int,
    data: *mut c_void,
    cleanup: Option<Cleanup>,
) -> c_int;
type GetFd = unsafe extern "C" fn(
    ctx: *mut c_void,
    key: *const c_void,
    fd: *mut c_int,
    data: *mut *mut c_void,
) -> c_int;
type ClearFd = unsafe extern "C" fn(ctx: *mut c_void, key: *const c_void) -> c_int;
type Callback = unsafe extern "C" fn(arg: *mut c_void) -> c_int;
type GetCallback = unsafe extern "C" fn(
    ctx: *mut c_void,
    cb: *mut Option<Callback>,
    arg: *mut *mut c_void,
) -> c_int;

struct AsyncFns {
    current_job: GetCurrentJob,
    wait_ctx: GetWaitCtx,
    pause: PauseJob,
    set_wait_fd: SetWaitFd,
    get_fd: GetFd,
    clear_fd: ClearFd,
    get_callback: Option<GetCallback>,
}

static FNS: OnceCell<Option<AsyncFns>> = OnceCell::new();

/// The address that names this provider's fd in a wait context.
static FD_KEY: u8 = 0;

fn lookup(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name has no preconditions.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// Looks the functions up once (at provider load). Returns whether asynchronous mode is usable.
pub fn init() -> bool {
    FNS.get_or_init(|| {
        let f = [
            lookup(c"ASYNC_get_current_job"),
            lookup(c"ASYNC_get_wait_ctx"),
            lookup(c"ASYNC_pause_job"),
            lookup(c"ASYNC_WAIT_CTX_set_wait_fd"),
            lookup(c"ASYNC_WAIT_CTX_get_fd"),
            lookup(c"ASYNC_WAIT_CTX_clear_fd"),
        ];
        if f.iter().any(|p| p.is_null()) {
            return None;
        }
        let cb = lookup(c"ASYNC_WAIT_CTX_get_callback");
        // SAFETY: each symbol is the OpenSSL function of that name, whose C type is the one
        // declared above (OpenSSL's async.h, stable since 1.1.0 / 3.0 for the callback).
        unsafe {
            Some(AsyncFns {
                current_job: std::mem::transmute::<*mut c_void, GetCurrentJob>(f[0]),
                wait_ctx: std::mem::transmute::<*mut c_void, GetWaitCtx>(f[1]),
                pause: std::mem::transmute::<*mut c_void, PauseJob>(f[2]),
                set_wait_fd: std::mem::transmute::<*mut c_void, SetWaitFd>(f[3]),
                get_fd: std::mem::transmute::<*mut c_void, GetFd>(f[4]),
                clear_fd: std::mem::transmute::<*mut c_void, ClearFd>(f[5]),
                get_callback: (!cb.is_null())
                    .then(|| std::mem::transmute::<*mut c_void, GetCallback>(cb)),
            })
        }
    })
    .is_some()
}

/// How a finished helper wakes the paused job.
#[derive(Clone, Copy)]
enum Waker {
    Fd(&'static Group),
    Callback(Callback, usize),
}

/// One result handed from whoever completes the work to the waiting caller: the result, and
/// whether it is published (the job may take it), with the job's wake-up. A result is staged
/// first and published after its wake-up has been given (see `fire`). Made only inside an
/// `Arc` (`Slot::new`), which `me` names, so a completion told through `&self` can hold it
/// until its batch has been reported.
struct Slot<T> {
    value: Mutex<(Option<Result<T, Error>>, bool)>,
    done: Condvar,
    waker: Option<Waker>,
    fired: AtomicBool,
    /// The wake-up has been given (set just before it): the result is published next.
    woken: AtomicBool,
    me: Weak<Slot<T>>,
}

/// Publishing a staged result, whatever its type.
trait Publish: Send + Sync {
    /// Marks the wake-up as given (just before giving it).
    fn woken(&self);
    fn publish(&self);
}

impl<T: Send> Publish for Slot<T> {
    fn woken(&self) {
        self.woken.store(true, Ordering::Release);
    }

    fn publish(&self) {
        self.value.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.done.notify_all();
    }
}

impl<T: Send + 'static> Slot<T> {
    fn new(waker: Option<Waker>) -> Arc<Slot<T>> {
        Arc::new_cyclic(|me| Slot {
            value: Mutex::new((None, false)),
            done: Condvar::new(),
            waker,
            fired: AtomicBool::new(false),
            woken: AtomicBool::new(false),
            me: me.clone(),
        })
    }

    /// Stages the result (the first one given; later ones are ignored), then wakes and
    /// publishes: at once, or, when this runs while pqgpu's dispatcher reports a batch,
    /// together with the batch's other results when it has been reported (`flush_batch`):
    /// the application then resumes its jobs once for the batch, not once per result
    /// (`openssl speed` resumes every paused job each time).
    fn fire(&self, r: Result<T, Error>) {
        if self.fired.swap(true, Ordering::AcqRel) {
            return;
        }
        self.value.lock().unwrap_or_else(|e| e.into_inner()).0 = Some(r);
        // Whoever fires holds the slot (a `Done`, or the dispatcher's completion): it is alive.
        let Some(slot) = self.me.upgrade() else {
            return;
        };
        let slot: Arc<dyn Publish> = slot;
        let mut entry = Some((self.waker, slot));
        let _ = HELD.try_with(|h| {
            let mut h = h.borrow_mut();
            // An empty list registers the flush for this batch; outside one, nothing is held.
            if !h.is_empty() || pqgpu::serve::notify::at_batch_end(flush_batch) {
                h.extend(entry.take());
            }
        });
        if let Some(entry) = entry {
            wake_and_publish(&[entry]);
        }
    }
}

/// The dispatcher's completion of one item queued from inside a job (`dispatch_queued`).
impl Completion for Slot<()> {
    fn complete(&self, _index: usize, status: Status) {
        self.fire(status);
    }
}

/// The completion of one operation submitted from inside an async job. `complete` wakes the
/// job; dropping it uncompleted (a panic on the way) completes it with `Error::Panic`, so a
/// paused job is always woken.
pub struct Done<T: Send + 'static> {
    slot: Arc<Slot<T>>,
}

impl<T: Send + 'static> Done<T> {
    pub fn complete(self, r: Result<T, Error>) {
        self.slot.fire(r);
    }
}

impl<T: Send + 'static> Drop for Done<T> {
    fn drop(&mut self) {
        self.slot.fire(Err(Error::Panic));
    }
}

/// What to wake and publish for one finished operation.
type Held = (Option<Waker>, Arc<dyn Publish>);

thread_local! {
    /// Results finished during the batch this thread is reporting, not yet woken.
    static HELD: std::cell::RefCell<Vec<Held>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The end of a batch: wakes and publishes every result held during it.
fn flush_batch() {
    let held = HELD.with(|h| std::mem::take(&mut *h.borrow_mut()));
    wake_and_publish(&held);
}

/// Gives the wake-ups of finished operations whose results are staged, then publishes the
/// results: a group's eventfd gets one write for all its operations, a callback is called for
/// each.
///
/// Wake first, then publish: a job takes its count back only after it has seen its result, so
/// a group's count never drops below the results not yet taken; and a callback never names a
/// job that could already have finished (its application may have freed what the callback's
/// argument points to). A job resumed in between finds its wake-up given (`woken`) and waits
/// the moment until its result is published instead of pausing again: nothing would wake it a
/// second time (a callback is called once), and with a descriptor it would be resumed over and
/// over while the descriptor stays readable.
fn wake_and_publish(held: &[Held]) {
    let mut counts: Vec<(&Group, u64)> = Vec::new();
    for (w, slot) in held {
        slot.woken();
        match w {
            Some(Waker::Fd(g)) => match counts.iter_mut().find(|(f, _)| std::ptr::eq(*f, *g)) {
                Some((_, n)) => *n += 1,
                None => counts.push((g, 1)),
            },
            // SAFETY: the application's callback, with the argument it registered.
            Some(Waker::Callback(cb, arg)) => unsafe {
                cb(*arg as *mut c_void);
            },
            None => {}
        }
    }
    for (g, n) in counts {
        g.signal(n);
    }
    for (_, slot) in held {
        slot.publish();
    }
}

/// Runs an operation on `input`. Outside an OpenSSL async job: `inline(input)` here. Inside
/// one: `submit(input, done)` hands it to a helper thread or a batch, which calls
/// `done.complete(..)`; the job pauses meanwhile (never working on its 32 KiB stack). When the
/// job cannot be woken (no wait context), the caller blocks until `done` completes.
pub fn dispatch<W, T: Send + 'static>(
    input: W,
    inline: impl FnOnce(W) -> Result<T, Error>,
    submit: impl FnOnce(W, Done<T>),
) -> Result<T, Error> {
    let Some((fns, waker)) = current() else {
        return inline(input);
    };
    let slot = Slot::new(waker);
    submit(input, Done { slot: slot.clone() });
    wait(fns, &slot)
}

/// As [`dispatch`] for one item queued with pqgpu's dispatcher: `submit(input, done)` queues
/// it with `done` as its completion (or tells `done` its error), and the dispatcher's report
/// wakes the job. One allocation per request (the completion), and the item may borrow the
/// caller's buffers: this returns only once `done` has been told.
pub fn dispatch_queued<W>(
    input: W,
    inline: impl FnOnce(W) -> Status,
    submit: impl FnOnce(W, Arc<dyn Completion>),
) -> Status {
    let Some((fns, waker)) = current() else {
        return inline(input);
    };
    let slot = Slot::<()>::new(waker);
    submit(input, slot.clone());
    wait(fns, &slot)
}

/// Whether the caller runs inside an OpenSSL async job.
pub fn in_job() -> bool {
    FNS.get()
        .and_then(|f| f.as_ref())
        // SAFETY: ASYNC_get_current_job has no preconditions.
        .is_some_and(|f| !unsafe { (f.current_job)() }.is_null())
}

/// The async functions and the current job's wake-up, inside a job; `None` outside one.
fn current() -> Option<(&'static AsyncFns, Option<Waker>)> {
    let fns = FNS.get()?.as_ref()?;
    // SAFETY: ASYNC_get_current_job has no preconditions.
    let job = unsafe { (fns.current_job)() };
    if job.is_null() {
        return None;
    }
    // SAFETY: `job` is the current job; its wait context lives as long as the job.
    Some((fns, waker(fns, unsafe { (fns.wait_ctx)(job) })))
}

/// Pauses the current job until `slot`'s wake-up has been given (not at all if it already
/// has), then takes its result, waiting the moment between the wake-up and the publication.
fn wait<T: Send + 'static>(fns: &AsyncFns, slot: &Slot<T>) -> Result<T, Error> {
    if slot.waker.is_some() {
        for _ in 0..MAX_EARLY_RESUMES {
            if slot.woken.load(Ordering::Acquire) {
                break;
            }
            // SAFETY: we are inside a job (`current`); pausing returns here when resumed.
            // Resumed early (the application resumes every job whose descriptor is readable,
            // and a group's descriptor is shared), the loop pauses again.
            unsafe { (fns.pause)() };
        }
    }
    let mut v = slot.value.lock().unwrap_or_else(|e| e.into_inner());
    // Normally the result is published when the job is resumed; if it was resumed between
    // the wake-up and the publication, or if pausing is blocked (ASYNC_block_pause: pause
    // returns at once), wait here: the result is close.
    while !v.1 {
        v = slot.done.wait(v).unwrap_or_else(|e| e.into_inner());
    }
    let r = v.0.take().expect("staged before published");
    drop(v);
    if let Some(Waker::Fd(g)) = slot.waker {
        g.take();
    }
    r
}

/// Early resumes a job sits out by pausing again before it blocks its thread instead (a
/// bound, so a job whose pauses are blocked, and so return at once, does not spin).
const MAX_EARLY_RESUMES: usize = 10_000;

/// Wait contexts one thread meets in a row that share a descriptor. A wait context keeps its
/// group (no change to it per request). The jobs of consecutive requests share dispatcher
/// batches, and, as a batch's jobs all resume and submit again together, go on doing so: a
/// batch's completion makes readable only its own jobs' descriptors, and an application that
/// resumes every job whose descriptor is readable (`openssl speed`) resumes those, not all its
/// jobs (a thousand early resumes per batch, each a switch into a job that pauses again).
const GROUP_CONTEXTS: usize = 32;

/// Descriptors per application thread at most (far below FD_SETSIZE); past that, groups are
/// shared again from the first (correct, with more early resumes).
const MAX_GROUPS: usize = 128;

/// One wake-up descriptor. The eventfd (not in semaphore mode) is readable exactly while some
/// results woken through it are not yet taken back by their jobs: a wake-up adds to the count
/// and writes; the job that takes back the last such result reads it empty (one read per group
/// and round of the application, not one per request). Both under the lock, so a write never
/// falls between the last take and its read. Never freed (wait contexts name it, by address).
struct Group {
    fd: c_int,
    pid: u32,
    /// Results woken (written to the descriptor) and not yet taken back. On a cache line of
    /// its own: the dispatcher's threads write it at every wake-up, and every request reads
    /// `fd` and `pid` (`waker`).
    ready: Padded<Mutex<u64>>,
}

#[repr(align(128))]
struct Padded<T>(T);

impl Group {
    fn new(pid: u32) -> Option<&'static Group> {
        // SAFETY: eventfd has no memory preconditions.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        (fd >= 0).then(|| {
            &*Box::leak(Box::new(Group {
                fd,
                pid,
                ready: Padded(Mutex::new(0)),
            }))
        })
    }

    fn ready(&self) -> std::sync::MutexGuard<'_, u64> {
        self.ready.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes `n` finished requests (before their results are published).
    fn signal(&self, n: u64) {
        let mut r = self.ready();
        *r += n;
        // SAFETY: one of this module's eventfds (never closed); 8 bytes from a local.
        unsafe { libc::write(self.fd, (&n as *const u64).cast(), 8) };
    }

    /// A job takes its published result back (its wake-up was counted before publishing).
    fn take(&self) {
        let mut r = self.ready();
        *r = r.saturating_sub(1);
        if *r == 0 {
            let mut buf = 0u64;
            loop {
                // SAFETY: a non-blocking read of 8 bytes from our eventfd into a local.
                let n = unsafe { libc::read(self.fd, (&mut buf as *mut u64).cast(), 8) };
                if n == 8
                    || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    break;
                }
            }
        }
    }
}

/// Groups released by exited threads, reused by new ones. A forked child makes its own.
static SPARE_GROUPS: Mutex<Vec<&'static Group>> = Mutex::new(Vec::new());

/// A thread's groups: the one new wait contexts join (`current`, `used` of them so far).
struct Groups {
    all: Vec<&'static Group>,
    current: usize,
    used: usize,
}

impl Drop for Groups {
    fn drop(&mut self) {
        let pid = pqgpu::process::id();
        let mut spare = SPARE_GROUPS.lock().unwrap_or_else(|e| e.into_inner());
        spare.extend(self.all.drain(..).filter(|g| g.pid == pid));
    }
}

thread_local! {
    static GROUPS: std::cell::RefCell<PerProcess<Groups>> = const {
        std::cell::RefCell::new(PerProcess::new(Groups { all: Vec::new(), current: 0, used: 0 }))
    };
}

/// The group a wait context new to this thread joins.
fn new_member() -> Option<&'static Group> {
    let pid = pqgpu::process::id();
    GROUPS
        .try_with(|g| {
            let mut g = g.borrow_mut();
            // In a forked child the parent's descriptors are the parent's.
            let g = g.get_mut(|g| g.all.clear());
            if g.all.is_empty() || g.used >= GROUP_CONTEXTS {
                g.used = 0;
                if g.all.len() < MAX_GROUPS {
                    let spare = {
                        let mut s = SPARE_GROUPS.lock().unwrap_or_else(|e| e.into_inner());
                        s.retain(|x| x.pid == pid);
                        s.pop()
                    };
                    let group = match spare {
                        Some(x) => x,
                        None => Group::new(pid)?,
                    };
                    g.all.push(group);
                    g.current = g.all.len() - 1;
                } else {
                    g.current = (g.current + 1) % g.all.len();
                }
            }
            g.used += 1;
            Some(g.all[g.current])
        })
        .ok()
        .flatten()
}

/// The wait context's callback if the application set one, else its group: the one it names
/// (our key's entry, whose data is the group's address), or, for a wait context new to this
/// process, the group it joins now.
fn waker(fns: &AsyncFns, ctx: *mut c_void) -> Option<Waker> {
    if ctx.is_null() {
        return None;
    }
    if let Some(get_cb) = fns.get_callback {
        let mut cb: Option<Callback> = None;
        let mut arg: *mut c_void = std::ptr::null_mut();
        // SAFETY: ctx is the current job's wait context; out-pointers are locals.
        if unsafe { get_cb(ctx, &mut cb, &mut arg) } == 1 {
            if let Some(cb) = cb {
                return Some(Waker::Callback(cb, arg as usize));
            }
        }
    }
    let key = (&FD_KEY as *const u8).cast::<c_void>();
    let mut fd: c_int = -1;
    let mut data: *mut c_void = std::ptr::null_mut();
    // SAFETY: ctx is valid; out-pointers are locals.
    if unsafe { (fns.get_fd)(ctx, key, &mut fd, &mut data) } == 1 {
        // SAFETY: only this module sets entries under our key, always with a group's address
        // as the data; groups are never freed (a forked child has its parent's copy).
        let group = unsafe { &*(data as *const Group) };
        if group.fd == fd && group.pid == pqgpu::process::id() {
            return Some(Waker::Fd(group));
        }
        // Set before a fork: the parent's descriptor, whose count the parent shares.
        // SAFETY: ctx is valid; our key names an entry that has no cleanup.
        unsafe { (fns.clear_fd)(ctx, key) };
    }
    let group = new_member()?;
    // SAFETY: ctx is valid; the key is a static address. No cleanup: the descriptor is shared
    // by the wait contexts of this thread's jobs and outlives them.
    let set = unsafe {
        (fns.set_wait_fd)(
            ctx,
            key,
            group.fd,
            group as *const Group as *mut c_void,
            None,
        )
    };
    (set == 1).then_some(Waker::Fd(group))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the descriptor is readable now.
    fn readable(fd: c_int) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd on the stack, no wait.
        unsafe { libc::poll(&mut p, 1, 0) == 1 && p.revents & libc::POLLIN != 0 }
    }

    #[test]
    fn a_group_is_readable_until_its_last_woken_result_is_taken() {
        let g = Group::new(pqgpu::process::id()).unwrap();
        assert!(!readable(g.fd));
        g.signal(2);
        assert!(readable(g.fd));
        g.take();
        assert!(readable(g.fd), "one woken result is still to be taken");
        g.signal(1);
        g.take();
        assert!(readable(g.fd));
        g.take();
        assert!(!readable(g.fd), "all taken: read empty");
        g.signal(1);
        assert!(readable(g.fd), "and readable again");
        g.take();
        assert!(!readable(g.fd));
    }

    #[test]
    fn wait_contexts_join_groups_of_32_in_order() {
        let first: Vec<_> = (0..GROUP_CONTEXTS).map(|_| new_member().unwrap()).collect();
        let next = new_member().unwrap();
        assert!(first.iter().all(|g| std::ptr::eq(*g, first[0])));
        assert!(!std::ptr::eq(next, first[0]));
        assert_ne!(next.fd, first[0].fd);
    }
}
