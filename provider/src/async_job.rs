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
//! One descriptor serves all the jobs of an application thread (an eventfd in semaphore mode,
//! shared by their wait contexts): applications `select()` on the descriptors of all their
//! jobs, and one per job ran past FD_SETSIZE at about 1,000 jobs. Its count is the number of
//! finished operations whose jobs have not yet taken their result: a finished operation adds
//! one, and its job takes one back when it resumes with its result. A job the application
//! resumes early (the shared descriptor was readable for another job) pauses again.

use once_cell::sync::OnceCell;
use pqgpu::Error;
use std::ffi::{c_int, c_void, CStr};
use std::sync::{Arc, Condvar, Mutex};

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
    clear_fd: Option<ClearFd>,
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
        ];
        if f.iter().any(|p| p.is_null()) {
            return None;
        }
        let cb = lookup(c"ASYNC_WAIT_CTX_get_callback");
        let clear = lookup(c"ASYNC_WAIT_CTX_clear_fd");
        // SAFETY: each symbol is the OpenSSL function of that name, whose C type is the one
        // declared above (OpenSSL's async.h, stable since 1.1.0 / 3.0 for the callback).
        unsafe {
            Some(AsyncFns {
                current_job: std::mem::transmute::<*mut c_void, GetCurrentJob>(f[0]),
                wait_ctx: std::mem::transmute::<*mut c_void, GetWaitCtx>(f[1]),
                pause: std::mem::transmute::<*mut c_void, PauseJob>(f[2]),
                set_wait_fd: std::mem::transmute::<*mut c_void, SetWaitFd>(f[3]),
                get_fd: std::mem::transmute::<*mut c_void, GetFd>(f[4]),
                clear_fd: (!clear.is_null())
                    .then(|| std::mem::transmute::<*mut c_void, ClearFd>(clear)),
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
    Fd(c_int),
    Callback(Callback, usize),
}

/// One result handed from whoever completes the work to the waiting caller: the result, and
/// whether it is published (the job may take it). A result is staged first and published
/// after its wake-up has been given (see `Done::fire`).
struct Slot<T> {
    value: Mutex<(Option<Result<T, Error>>, bool)>,
    done: Condvar,
}

/// Publishing a staged result, whatever its type.
trait Publish: Send + Sync {
    fn publish(&self);
}

impl<T: Send> Publish for Slot<T> {
    fn publish(&self) {
        self.value.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.done.notify_all();
    }
}

/// The completion of one operation submitted from inside an async job. `complete` wakes the
/// job; dropping it uncompleted (a panic on the way) completes it with `Error::Panic`, so a
/// paused job is always woken.
pub struct Done<T: Send + 'static> {
    slot: Arc<Slot<T>>,
    waker: Option<Waker>,
    fired: bool,
}

impl<T: Send + 'static> Done<T> {
    pub fn complete(mut self, r: Result<T, Error>) {
        self.fire(r);
    }

    /// Stages the result, then wakes and publishes: at once, or, when this runs while pqgpu's
    /// dispatcher reports a batch, together with the batch's other results when it has been
    /// reported (`flush_batch`): the application then resumes its jobs once for the batch,
    /// not once per result (`openssl speed` resumes every paused job each time).
    fn fire(&mut self, r: Result<T, Error>) {
        if std::mem::replace(&mut self.fired, true) {
            return;
        }
        self.slot.value.lock().unwrap_or_else(|e| e.into_inner()).0 = Some(r);
        let slot: Arc<dyn Publish> = self.slot.clone();
        let mut entry = Some((self.waker, slot));
        let _ = HELD.try_with(|h| {
            let mut h = h.borrow_mut();
            // An empty list registers the flush for this batch; outside one, nothing is held.
            if !h.is_empty() || pqgpu::serve::notify::at_batch_end(flush_batch) {
                h.extend(entry.take());
            }
        });
        if let Some((waker, slot)) = entry {
            wake(&[waker]);
            slot.publish();
        }
    }
}

impl<T: Send + 'static> Drop for Done<T> {
    fn drop(&mut self) {
        self.fire(Err(Error::Panic));
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
    let wakers: Vec<Option<Waker>> = held.iter().map(|(w, _)| *w).collect();
    wake(&wakers);
    for (_, slot) in held {
        slot.publish();
    }
}

/// Gives the wake-ups of finished operations whose results are staged, not yet published: an
/// eventfd gets one write for all its operations, a callback is called for each.
///
/// Count first, then publish: a job takes its count back only after it has seen its result,
/// so the count never drops below the results not yet taken (and a job that resumes in between
/// finds no result and pauses again).
fn wake(wakers: &[Option<Waker>]) {
    let mut counts: Vec<(c_int, u64)> = Vec::new();
    for w in wakers {
        match *w {
            Some(Waker::Fd(fd)) => match counts.iter_mut().find(|(f, _)| *f == fd) {
                Some((_, n)) => *n += 1,
                None => counts.push((fd, 1)),
            },
            // SAFETY: the application's callback, with the argument it registered.
            Some(Waker::Callback(cb, arg)) => unsafe {
                cb(arg as *mut c_void);
            },
            None => {}
        }
    }
    for (fd, n) in counts {
        // SAFETY: the fd is one of this module's eventfds (never closed); writing 8 bytes
        // adds `n` to its count.
        unsafe { libc::write(fd, (&n as *const u64).cast(), 8) };
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
    let Some(Some(fns)) = FNS.get() else {
        return inline(input);
    };
    // SAFETY: ASYNC_get_current_job has no preconditions.
    let job = unsafe { (fns.current_job)() };
    if job.is_null() {
        return inline(input);
    }
    // SAFETY: `job` is the current job; its wait context lives as long as the job.
    let waker = waker(fns, unsafe { (fns.wait_ctx)(job) });
    let slot = Arc::new(Slot {
        value: Mutex::new((None, false)),
        done: Condvar::new(),
    });
    submit(
        input,
        Done {
            slot: slot.clone(),
            waker,
            fired: false,
        },
    );
    if waker.is_some() {
        for _ in 0..MAX_EARLY_RESUMES {
            // SAFETY: we are inside a job (checked above); pausing returns here when resumed.
            unsafe { (fns.pause)() };
            if slot.value.lock().unwrap_or_else(|e| e.into_inner()).1 {
                break;
            }
            // Resumed early: with a shared descriptor the application resumes every job
            // whose descriptor is readable. Pause again and let it run the others.
        }
    }
    let mut v = slot.value.lock().unwrap_or_else(|e| e.into_inner());
    // Normally the work has finished when the job is resumed. If pausing is blocked
    // (ASYNC_block_pause: pause returns at once), wait here: the result is close.
    while !v.1 {
        v = slot.done.wait(v).unwrap_or_else(|e| e.into_inner());
    }
    let r = v.0.take().expect("staged before published");
    drop(v);
    if let Some(Waker::Fd(fd)) = waker {
        take_count(fd);
    }
    r
}

/// Early resumes a job sits out by pausing again before it blocks its thread instead (a
/// bound, so a job whose pauses are blocked, and so return at once, does not spin).
const MAX_EARLY_RESUMES: usize = 10_000;

/// Takes back the count this job's finished operation added (semaphore mode: exactly one).
/// The count was added before the result was published, so it is there.
fn take_count(fd: c_int) {
    let mut buf = 0u64;
    loop {
        // SAFETY: a non-blocking read of 8 bytes from our eventfd into a local.
        let n = unsafe { libc::read(fd, (&mut buf as *mut u64).cast(), 8) };
        if n == 8 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Eventfds released by exited threads, reused by new ones (never closed: wait contexts may
/// still name them). Tagged with the process id: a forked child makes its own.
static SPARE_FDS: Mutex<Vec<(u32, c_int)>> = Mutex::new(Vec::new());

/// The calling thread's eventfd, returned to `SPARE_FDS` when the thread exits.
struct ThreadFd(std::cell::Cell<Option<(u32, c_int)>>);

impl Drop for ThreadFd {
    fn drop(&mut self) {
        if let Some(e) = self.0.get() {
            SPARE_FDS.lock().unwrap_or_else(|e| e.into_inner()).push(e);
        }
    }
}

thread_local! {
    static THREAD_FD: ThreadFd = const { ThreadFd(std::cell::Cell::new(None)) };
}

/// This thread's shared eventfd in this process (made on first use).
fn thread_fd() -> Option<c_int> {
    let pid = pqgpu::process::id();
    THREAD_FD
        .try_with(|t| {
            if let Some((p, fd)) = t.0.get() {
                if p == pid {
                    return Some(fd);
                }
            }
            let spare = {
                let mut s = SPARE_FDS.lock().unwrap_or_else(|e| e.into_inner());
                s.retain(|&(p, _)| p == pid);
                s.pop()
            };
            let fd = match spare {
                Some((_, fd)) => fd,
                None => {
                    // SAFETY: eventfd has no memory preconditions.
                    let fd = unsafe {
                        libc::eventfd(
                            0,
                            libc::EFD_SEMAPHORE | libc::EFD_NONBLOCK | libc::EFD_CLOEXEC,
                        )
                    };
                    if fd < 0 {
                        return None;
                    }
                    fd
                }
            };
            t.0.set(Some((pid, fd)));
            Some(fd)
        })
        .ok()
        .flatten()
}

/// The wait context's callback if the application set one, else our eventfd (created and
/// attached on first use, closed by OpenSSL when the wait context is freed).
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
    let pid = pqgpu::process::id() as usize;
    let mut fd: c_int = -1;
    let mut data: *mut c_void = std::ptr::null_mut();
    // SAFETY: ctx is valid; out-pointers are locals.
    if unsafe { (fns.get_fd)(ctx, key, &mut fd, &mut data) } == 1 && fd >= 0 {
        if data as usize == pid {
            return Some(Waker::Fd(fd));
        }
        // Set before a fork: the parent's descriptor, whose count the parent shares.
        match fns.clear_fd {
            // SAFETY: ctx is valid; our key names an entry that has no cleanup.
            Some(clear) => unsafe {
                clear(ctx, key);
            },
            None => return Some(Waker::Fd(fd)),
        }
    }
    let fd = thread_fd()?;
    // SAFETY: ctx is valid; the key is a static address. No cleanup: the descriptor is shared
    // by every wait context this thread's jobs use and outlives them. The data is our pid.
    if unsafe { (fns.set_wait_fd)(ctx, key, fd, pid as *mut c_void, None) } != 1 {
        return None;
    }
    Some(Waker::Fd(fd))
}
