//! OpenSSL's asynchronous jobs, reached without linking libcrypto: the ASYNC_* functions are
//! looked up with dlsym when the provider loads (a static `openssl` built with
//! -Wl,--export-dynamic exports them; so does a shared libcrypto). Absent: everything is
//! synchronous.
//!
//! Inside a job (`openssl speed -async_jobs`, `s_server -async`, SSL_MODE_ASYNC) the caller
//! runs on a 32 KiB stack: the work goes to a helper thread, the job pauses, and the helper
//! wakes it through the wait context's file descriptor (or its callback, when one is set).

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
        // SAFETY: each symbol is the OpenSSL function of that name, whose C type is the one
        // declared above (OpenSSL's async.h, stable since 1.1.0 / 3.0 for the callback).
        unsafe {
            Some(AsyncFns {
                current_job: std::mem::transmute::<*mut c_void, GetCurrentJob>(f[0]),
                wait_ctx: std::mem::transmute::<*mut c_void, GetWaitCtx>(f[1]),
                pause: std::mem::transmute::<*mut c_void, PauseJob>(f[2]),
                set_wait_fd: std::mem::transmute::<*mut c_void, SetWaitFd>(f[3]),
                get_fd: std::mem::transmute::<*mut c_void, GetFd>(f[4]),
                get_callback: (!cb.is_null())
                    .then(|| std::mem::transmute::<*mut c_void, GetCallback>(cb)),
            })
        }
    })
    .is_some()
}

/// Closes our eventfd when OpenSSL frees the wait context.
unsafe extern "C" fn close_fd(
    _ctx: *mut c_void,
    _key: *const c_void,
    fd: c_int,
    _data: *mut c_void,
) {
    // SAFETY: the fd is the eventfd this module created for this wait context.
    unsafe { libc::close(fd) };
}

/// How a finished helper wakes the paused job.
#[derive(Clone, Copy)]
enum Waker {
    Fd(c_int),
    Callback(Callback, usize),
}

/// One result handed from whoever completes the work to the waiting caller.
struct Slot<T> {
    value: Mutex<Option<Result<T, Error>>>,
    done: Condvar,
}

/// The completion of one operation submitted from inside an async job. `complete` wakes the
/// job; dropping it uncompleted (a panic on the way) completes it with `Error::Panic`, so a
/// paused job is always woken.
pub struct Done<T> {
    slot: Arc<Slot<T>>,
    waker: Option<Waker>,
    fired: bool,
}

impl<T> Done<T> {
    pub fn complete(mut self, r: Result<T, Error>) {
        self.fire(r);
    }

    fn fire(&mut self, r: Result<T, Error>) {
        if std::mem::replace(&mut self.fired, true) {
            return;
        }
        // Wake the job first, then publish: the caller continues only after the publish, so
        // the fd (owned by the wait context) is still open when it is written.
        match self.waker {
            // SAFETY: the fd is the wait context's eventfd; writing 8 bytes increments it.
            Some(Waker::Fd(fd)) => unsafe {
                let one: u64 = 1;
                libc::write(fd, (&one as *const u64).cast(), 8);
            },
            // SAFETY: the application's callback, with the argument it registered.
            Some(Waker::Callback(cb, arg)) => unsafe {
                cb(arg as *mut c_void);
            },
            None => {}
        }
        *self.slot.value.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        self.slot.done.notify_all();
    }
}

impl<T> Drop for Done<T> {
    fn drop(&mut self) {
        self.fire(Err(Error::Panic));
    }
}

/// Runs an operation on `input`. Outside an OpenSSL async job: `inline(input)` here. Inside
/// one: `submit(input, done)` hands it to a helper thread or a batch, which calls
/// `done.complete(..)`; the job pauses meanwhile (never working on its 32 KiB stack). When the
/// job cannot be woken (no wait context), the caller blocks until `done` completes.
pub fn dispatch<W, T>(
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
    if let Some(w) = waker {
        drain(w);
    }
    let slot = Arc::new(Slot {
        value: Mutex::new(None),
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
        // SAFETY: we are inside a job (checked above); pausing returns here when resumed.
        unsafe { (fns.pause)() };
    }
    let mut v = slot.value.lock().unwrap_or_else(|e| e.into_inner());
    // Normally the work has finished when the job is resumed. If the application resumed it
    // early, or pausing is blocked (ASYNC_block_pause), wait here: the result is close.
    while v.is_none() {
        v = slot.done.wait(v).unwrap_or_else(|e| e.into_inner());
    }
    let r = v.take().expect("checked above");
    drop(v);
    if let Some(w) = waker {
        drain(w);
    }
    r
}

/// Clears the eventfd's counter so the next operation's wake-up is its own.
fn drain(w: Waker) {
    if let Waker::Fd(fd) = w {
        let mut buf = 0u64;
        // SAFETY: a non-blocking read of 8 bytes from our eventfd into a local.
        unsafe { libc::read(fd, (&mut buf as *mut u64).cast(), 8) };
    }
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
    let mut fd: c_int = -1;
    let mut data: *mut c_void = std::ptr::null_mut();
    // SAFETY: ctx is valid; out-pointers are locals.
    if unsafe { (fns.get_fd)(ctx, key, &mut fd, &mut data) } == 1 && fd >= 0 {
        return Some(Waker::Fd(fd));
    }
    // SAFETY: eventfd has no memory preconditions.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: ctx is valid; the key is a static address; close_fd matches the cleanup type.
    if unsafe { (fns.set_wait_fd)(ctx, key, fd, std::ptr::null_mut(), Some(close_fd)) } != 1 {
        // SAFETY: our fd, not handed to anyone.
        unsafe { libc::close(fd) };
        return None;
    }
    Some(Waker::Fd(fd))
}
