//! The provider's only door into pqgpu. Every sign, verify, keygen, encaps and decaps goes
//! through here.
//!
//! Signing, verification and the KEM run through pqgpu's serving dispatcher (`pqgpu::serve`,
//! one per process, on the backend chosen at load time) with pqgpu key handles for ML-DSA
//! (expanded once per key object):
//! - outside OpenSSL async jobs the calling thread makes a blocking call; on a GPU the
//!   dispatcher coalesces concurrent callers (threads of a server) into batches, and below its
//!   CPU crossover runs them on the CPU; on the CPU backend it runs in the caller's thread;
//! - inside async jobs, each sign, verify, encaps and decaps request is one item submitted to
//!   the dispatcher while its job pauses (`async_job::dispatch`): the dispatcher's own
//!   coalescing (maximum wait, batches in flight) makes the batches of all jobs' requests.
//!   The job queues a sign or verify item itself, on OpenSSL's buffers in place; what
//!   queuing must not do on the job's stack (make a key handle, start the dispatcher's
//!   threads) a helper thread does first. Encaps and decaps items are queued by the job when
//!   that only queues, else by a helper thread. Keygen runs alone on a helper thread there,
//!   and always on the CPU (one key; and loading a key expands its seed, which must never
//!   reach for the GPU).
//! - with a trace file, the dispatcher's observer traces every run (so tests see batches).

use crate::async_job::{self, Done};
use crate::guard::guard;
use once_cell::sync::OnceCell;
use pqgpu::backend::{Backend, BackendKind};
use pqgpu::ctru;
use pqgpu::mldsa::{Message, ParamSet};
use pqgpu::mlkem;
use pqgpu::process::PerProcess;
use pqgpu::serve::{Class, Completion, KeyArg, KeyKind, Op, Opt, Serve};
use pqgpu::slhdsa;

/// A pqgpu key handle (decoded, checked and expanded once).
pub use pqgpu::serve::Key as Handle;
use pqgpu::{Alg, Error, Status};
use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use zeroize::Zeroizing;

/// An encoded secret key shared by the key objects that hold it (zeroed when the last goes).
pub type SecretKey = Arc<Zeroizing<Vec<u8>>>;

/// A pqgpu key handle made on first use (decoding, checking and expanding a key needs more
/// stack than an OpenSSL async job has, so it happens where the work runs), then shared by
/// every clone. The outcome, a refusal included, is made once.
#[derive(Clone)]
pub struct LazyHandle(Arc<LazyInner>);

struct LazyInner {
    alg: Alg,
    kind: KeyKind,
    bytes: Zeroizing<Vec<u8>>,
    handle: OnceCell<Result<Handle, Error>>,
}

impl LazyHandle {
    pub fn new(alg: Alg, kind: KeyKind, bytes: &[u8]) -> LazyHandle {
        LazyHandle(Arc::new(LazyInner {
            alg,
            kind,
            bytes: Zeroizing::new(bytes.to_vec()),
            handle: OnceCell::new(),
        }))
    }

    /// Whether the handle (or the refusal) has been made: then `get` is cheap.
    fn is_ready(&self) -> bool {
        self.0.handle.get().is_some()
    }

    /// The handle (a counted reference), made if need be where it may be made: inside an
    /// OpenSSL async job on a helper thread while the job pauses (decoding, checking and
    /// expanding a key needs more stack than the job has).
    pub fn handle(&self) -> Result<Handle, Error> {
        if !self.is_ready() && async_job::in_job() {
            let h = self.clone();
            run(move || h.get().map(|_| ()))?;
        }
        self.get().cloned()
    }

    fn get(&self) -> Result<&Handle, Error> {
        let i = &*self.0;
        i.handle
            .get_or_init(|| Handle::new(i.alg, i.kind, &i.bytes))
            .as_ref()
            .map_err(|e| *e)
    }
}

/// What the provider's configuration section chose.
struct Config {
    backend: BackendKind,
    trace: Option<std::fs::File>,
    /// Serving options (`cpu_crossover`, `max_wait_us`, ...) for the dispatcher.
    serve: Vec<(Opt, i64)>,
}

static CONFIG: Mutex<Option<Config>> = Mutex::new(None);
/// This process's backend and serving dispatcher (a forked child makes its own).
static BACKEND: Mutex<PerProcess<Option<Engine>>> = Mutex::new(PerProcess::new(None));

/// A backend and its serving dispatcher.
type Engine = (Arc<dyn Backend>, Arc<Serve>);

/// The serving options the configuration section may set, by key.
pub const SERVE_KEYS: [(&std::ffi::CStr, Opt); 5] = [
    (c"max_wait_us", Opt::MaxWaitUs),
    (c"max_batch", Opt::MaxBatch),
    (c"cpu_crossover", Opt::CpuCrossover),
    (c"max_in_flight", Opt::MaxInFlight),
    (c"quiet_us", Opt::QuietUs),
];

/// Sets the backend (`auto`, `cpu`, `gpu`), an optional trace file (one line per operation,
/// for tests that must prove pqgpu did the work) and serving options (key, decimal value).
/// Unknown backend names and bad option values are an error.
pub fn configure(
    backend: Option<&str>,
    trace: Option<&str>,
    serve_opts: &[(Opt, String)],
) -> Result<(), Error> {
    let serve = serve_opts
        .iter()
        .map(|(o, v)| {
            let v: i64 = v.trim().parse().map_err(|_| Error::InvalidArgument)?;
            // Checked now, against the dispatcher's own ranges, so a bad value fails the load.
            pqgpu::serve::Config::default().set(*o, v)?;
            Ok((*o, v))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let backend = match backend.unwrap_or("auto") {
        "auto" => BackendKind::Auto,
        "cpu" => BackendKind::Cpu,
        "gpu" => BackendKind::Gpu,
        _ => return Err(Error::InvalidArgument),
    };
    let trace = match trace {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|_| Error::InvalidArgument)?,
        ),
        None => None,
    };
    *CONFIG.lock().unwrap_or_else(|e| e.into_inner()) = Some(Config {
        backend,
        trace,
        serve,
    });
    Ok(())
}

/// This process's backend and serving dispatcher (made on first use).
fn engine() -> Result<Engine, Error> {
    let mut g = BACKEND.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(Some((b, s))) = g.get() {
        return Ok((b.clone(), s.clone()));
    }
    let (kind, opts, traced) = CONFIG
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map_or((BackendKind::Auto, Vec::new(), false), |c| {
            (c.backend, c.serve.clone(), c.trace.is_some())
        });
    let b = match pqgpu::select::select(kind) {
        Ok(b) => b,
        Err(e) => {
            trace_engine(&format!("refused {e:?}"));
            return Err(e);
        }
    };
    if kind == BackendKind::Auto && b.kind() == BackendKind::Cpu {
        trace_engine(&format!("{:?}", b.kind()));
    }
    let s = Arc::new(Serve::new(b.clone()));
    for (o, v) in opts {
        s.config.set(o, v)?;
    }
    if traced {
        let kind = b.kind();
        s.set_observer(Arc::new(move |class, n, inline| {
            trace_run(class, n, inline, kind)
        }));
    }
    g.set(Some((b.clone(), s.clone())));
    Ok((b, s))
}

/// What this process's operations run on: `none` before the first one (nothing chosen, the
/// GPU untouched), then `cpu` or `gpu`. Never makes the engine.
pub fn running_on() -> &'static std::ffi::CStr {
    let Ok(g) = BACKEND.try_lock() else {
        return c"none";
    };
    match g.get() {
        Some(Some((b, _))) if b.kind() == BackendKind::Gpu => c"gpu",
        Some(Some(_)) => c"cpu",
        _ => c"none",
    }
}

/// Traces how this process's engine was made when the GPU was not used: "engine Cpu
/// gpu_unusable=<why>" (AUTO on the CPU) or "engine refused NoDevice gpu_unusable=<why>".
fn trace_engine(what: &str) {
    let why = pqgpu::gpu::unavailable_reason().unwrap_or_else(|| "none given".into());
    let line = format!("engine {what} gpu_unusable={}\n", why.replace('\n', " "));
    let mut g = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = g.as_mut().and_then(|c| c.trace.as_mut()) {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Passes `r` on; when the GPU was unusable (`backend = gpu`), first puts why on the calling
/// thread's OpenSSL error queue (`ERR_raise_data` through the core).
fn reported<T>(r: Result<T, Error>) -> Result<T, Error> {
    if let Err(Error::NoDevice) = r {
        let why = pqgpu::gpu::unavailable_reason().unwrap_or_else(|| "no usable GPU".into());
        crate::core::raise(
            crate::core::REASON_GPU_UNUSABLE,
            &format!("backend = gpu: {why}"),
            c"provider/src/engine.rs",
            line!(),
            c"pqgpu",
        );
    }
    r
}

thread_local! {
    /// This process's dispatcher, kept by each thread that asks (no lock per request).
    static SERVE: std::cell::RefCell<PerProcess<Option<Arc<Serve>>>> =
        const { std::cell::RefCell::new(PerProcess::new(None)) };
}

/// This process's dispatcher.
fn serve() -> Result<Arc<Serve>, Error> {
    with_serve(|s| s.clone())
}

/// Calls `f` with this process's dispatcher as this thread keeps it (no reference count
/// taken per request).
fn with_serve<R>(f: impl FnOnce(&Arc<Serve>) -> R) -> Result<R, Error> {
    let mut f = Some(f);
    let kept = SERVE.try_with(|c| match c.borrow().get() {
        Some(Some(s)) => f.take().map(|f| f(s)),
        _ => None,
    });
    if let Ok(Some(r)) = kept {
        return Ok(r);
    }
    let s = engine()?.1;
    let _ = SERVE.try_with(|c| c.borrow_mut().set(Some(s.clone())));
    Ok((f.take().expect("not yet called"))(&s))
}

/// Appends "op set backend where" to the trace file, when one is configured; `where` is
/// `helper` when the work ran on a helper thread (inside an OpenSSL async job), else `caller`.
fn trace(op: &str, name: &str, b: &dyn Backend) {
    trace_on(op, name, b.kind())
}

/// As `trace`, for work that ran on the given kind of backend.
fn trace_on(op: &str, name: &str, kind: BackendKind) {
    let mut g = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = g.as_mut().and_then(|c| c.trace.as_mut()) {
        let helper = crate::pool::is_helper_thread();
        let place = if helper { "helper" } else { "caller" };
        // One write per line: lines from several processes sharing the file stay whole.
        let _ = f.write_all(format!("{op} {name} {kind:?} {place}\n").as_bytes());
    }
}

/// The dispatcher's observer when tracing: each run of `n` items of one class is traced as
/// one line per item ("sign ML-DSA-44 Cpu helper": `caller` when it ran in place in the
/// calling thread, `helper` on the dispatcher's threads) and one for the run itself ("batch
/// sign ML-DSA-44 Cpu n=K"; a blocking call run in place is a run of one).
fn trace_run(class: Class, n: usize, inline: bool, kind: BackendKind) {
    let (op, name) = match class {
        Class::Sign(p) => ("sign", p.name()),
        Class::Verify(p) => ("verify", p.name()),
        Class::Encaps(p) => ("encaps", p.name()),
        Class::Decaps(p) => ("decaps", p.name()),
        Class::Keygen(alg, _) => ("keygen", alg.name()),
    };
    let place = if inline { "caller" } else { "helper" };
    let mut text = String::new();
    for _ in 0..n {
        text.push_str(&format!("{op} {name} {kind:?} {place}\n"));
    }
    text.push_str(&format!("batch {op} {name} {kind:?} n={n}\n"));
    let mut g = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = g.as_mut().and_then(|c| c.trace.as_mut()) {
        // One write: lines from several processes sharing the file stay whole.
        let _ = f.write_all(text.as_bytes());
    }
}

/// Runs `work` here, or inside an async job on a helper thread; a panic is `Error::Panic`.
fn run<R: Send + 'static>(
    work: impl FnOnce() -> Result<R, Error> + Send + 'static,
) -> Result<R, Error> {
    async_job::dispatch(
        work,
        |w| guard(Err(Error::Panic), w),
        |w, done| crate::pool::spawn(Box::new(move || done.complete(guard(Err(Error::Panic), w)))),
    )
}

/// ML-DSA.KeyGen_internal from the seed: (pk, sk). On the CPU, as every single key
/// generation here: one key is CPU work (the GPU pays only in batches), and importing or
/// checking a key expands its seed, so loading keys never reaches for the GPU (a pre-fork
/// server's master that loads them leaves the GPU to its workers).
pub fn keygen(p: ParamSet, seed: Zeroizing<[u8; 32]>) -> Result<(Vec<u8>, SecretKey), Error> {
    run(move || {
        let b = pqgpu::backend::cpu_backend();
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = Zeroizing::new(vec![0u8; p.secret_key_len()]);
        let mut st: [Status; 1] = [Ok(())];
        b.mldsa_keygen(p, Some(&seed[..]), &mut pk, &mut sk, &mut st);
        st[0]?;
        trace("keygen", p.name(), &*b);
        Ok((pk, Arc::new(sk)))
    })
}

/// Signs `msg` into `sig` (exactly the signature's length; `rnd` all-zero: deterministic).
/// The message, the context string and `sig` are the caller's (OpenSSL's) buffers, used in
/// place: inside an async job the item is queued from the job itself and reads and writes
/// them while the job is paused, which `async_job::dispatch_queued` returns from only once
/// the item has reported. Outside jobs: a blocking call.
pub fn sign(sk: &Handle, msg: &Message<'_>, rnd: &[u8; 32], sig: &mut [u8]) -> Status {
    signed(
        sig,
        |s, sig| s.sign(KeyArg::Handle(sk), msg, Some(rnd), sig),
        // SAFETY: the buffers outlive the item (see above); the handle is lent, and `sk` (the
        // caller's) outlives the queuing.
        |sig| unsafe { Op::sign(KeyArg::Lent(sk), msg, Some(rnd), sig) },
    )
}

/// Verifies `sig` on `msg`: `Ok(())` valid, `Err(VerifyFailed)` not. As `sign`.
pub fn verify(pk: &Handle, msg: &Message<'_>, sig: &[u8]) -> Status {
    checked(
        |s| s.verify(KeyArg::Handle(pk), msg, sig),
        // SAFETY: as in `sign`.
        || unsafe { Op::verify(KeyArg::Lent(pk), msg, sig) },
    )
}

/// One signing request: `blocking` outside async jobs, else the item `op` makes, queued from
/// the job (see `sign`).
fn signed(
    sig: &mut [u8],
    blocking: impl FnOnce(&Serve, &mut [u8]) -> Status,
    op: impl FnOnce(&mut [u8]) -> Result<Op, Error>,
) -> Status {
    reported(async_job::dispatch_queued(
        sig,
        |sig| with_serve(|s| blocking(s, sig))?,
        |sig, done| {
            if let Err(e) = warm() {
                return done.complete(0, Err(e));
            }
            queue(done, || op(sig))
        },
    ))
}

/// One verification request, as `signed`.
fn checked(
    blocking: impl FnOnce(&Serve) -> Status,
    op: impl FnOnce() -> Result<Op, Error>,
) -> Status {
    reported(async_job::dispatch_queued(
        (),
        |()| with_serve(|s| blocking(s))?,
        |(), done| {
            if let Err(e) = warm() {
                return done.complete(0, Err(e));
            }
            queue(done, op)
        },
    ))
}

/// Inside an async job, before its first item is queued there: starts this process's
/// dispatcher and its threads (not on the job's 32 KiB stack) on a helper thread while the job
/// pauses. Then queuing only queues. A no-op once done.
fn warm() -> Status {
    let pid = pqgpu::process::id();
    if WARM.load(Ordering::Acquire) == pid {
        return Ok(());
    }
    run(move || {
        if serve()?.start() {
            WARM.store(pid, Ordering::Release);
        }
        Ok(())
    })
}

/// Queues the op `make` builds, checked once here, with `done` as its completion (or tells
/// `done` why not).
fn queue(done: Arc<dyn Completion>, make: impl FnOnce() -> Result<Op, Error>) {
    let queued = with_serve(|s| match make().and_then(|op| op.check().map(|()| op)) {
        // SAFETY: the caller's promise (the op's buffers outlive its completion; a lent
        // handle outlives this call).
        Ok(op) => {
            unsafe { s.submit_one(op, done.clone()) };
            Ok(())
        }
        Err(e) => Err(e),
    });
    if let Err(e) = queued.and_then(|r| r) {
        done.complete(0, Err(e));
    }
}

/// Runs `submit` (which hands one request to the dispatcher) here, on the job's stack, when
/// that only queues it: the request's key handle exists (`ready`) and this process's
/// dispatcher is up, threads included (`WARM`). Otherwise on a helper thread, which makes
/// what is missing first.
fn submit_async(ready: bool, submit: impl FnOnce() + Send + 'static) {
    if ready && WARM.load(Ordering::Acquire) == pqgpu::process::id() {
        submit()
    } else {
        crate::pool::spawn(Box::new(move || {
            if serve().is_ok_and(|s| s.start()) {
                WARM.store(pqgpu::process::id(), Ordering::Release);
            }
            submit();
        }))
    }
}

/// The process whose backend and dispatcher threads a helper thread has started.
static WARM: AtomicU32 = AtomicU32::new(0);

/// One asynchronous request in the dispatcher: owns the request the op reads and the output
/// buffers it writes, until the item reports; then hands the result (which may carry the
/// request back) to the paused job.
struct Submitted<Req, Out, T: Send + 'static> {
    parts: Mutex<Option<(Req, Out, Done<T>)>>,
    finish: fn(Req, Out, Status) -> Result<T, Error>,
}

impl<Req: Send, Out: Send, T: Send + 'static> Completion for Submitted<Req, Out, T> {
    fn complete(&self, _: usize, status: Status) {
        let taken = self.parts.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((req, out, done)) = taken {
            done.complete((self.finish)(req, out, status));
        }
    }
}

/// Submits one request to this process's dispatcher: `make` builds its op from the request
/// and the output, both kept in place by the submission until the item reports; `finish`
/// turns them and the status into the job's result.
fn submit_one<Req, Out, T>(
    req: Req,
    out: Out,
    done: Done<T>,
    finish: fn(Req, Out, Status) -> Result<T, Error>,
    make: impl FnOnce(&Req, &mut Out) -> Result<Op, Error>,
) where
    Req: Send + 'static,
    Out: Send + 'static,
    T: Send + 'static,
{
    let s = match serve() {
        Ok(s) => s,
        Err(e) => return done.complete(Err(e)),
    };
    let sub = Arc::new(Submitted {
        parts: Mutex::new(Some((req, out, done))),
        finish,
    });
    let op = {
        let mut g = sub.parts.lock().unwrap_or_else(|e| e.into_inner());
        let (req, out, _) = g.as_mut().expect("not yet completed");
        make(req, out)
    };
    // Checked once here; `submit_one` queues it without a list or a second check.
    match op.and_then(|op| op.check().map(|()| op)) {
        // SAFETY: the op's buffers are the request's and the output's, owned by `sub` (at a
        // fixed place in its allocation), which the dispatcher keeps until the item has
        // reported (and which nobody else touches before then: `complete` takes them only
        // then).
        Ok(op) => unsafe { s.submit_one(op, sub) },
        Err(e) => sub.complete(0, Err(e)),
    }
}

// ---- CTRU-Prime (a private-OID KEM) ---------------------------------------------------------

/// CTRU-Prime KeyGen; `seed` = d || z (64 bytes) for a reproducible key, else fresh: (pk, sk).
/// On the CPU, as `keygen`.
pub fn kem_keygen(
    p: ctru::ParamSet,
    seed: Option<Zeroizing<[u8; 64]>>,
) -> Result<(Vec<u8>, SecretKey), Error> {
    run(move || {
        let b = pqgpu::backend::cpu_backend();
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = Zeroizing::new(vec![0u8; p.secret_key_len()]);
        let mut st: [Status; 1] = [Ok(())];
        b.kem_keygen(p, seed.as_ref().map(|s| &s[..]), &mut pk, &mut sk, &mut st);
        st[0]?;
        trace("keygen", p.name(), &*b);
        Ok((pk, Arc::new(sk)))
    })
}

/// One encapsulation request: the KEM (CTRU-Prime or ML-KEM), the public key and optional
/// coins (CTRU-Prime's e, ML-KEM's m; 32 bytes).
pub struct EncapsReq {
    pub alg: Alg,
    pub pk: Arc<Vec<u8>>,
    pub coins: Option<Zeroizing<[u8; 32]>>,
}

/// One decapsulation request.
pub struct DecapsReq {
    pub alg: Alg,
    pub sk: SecretKey,
    pub ct: Vec<u8>,
}

/// (ciphertext, shared secret).
pub type Encapsulated = (Vec<u8>, Zeroizing<Vec<u8>>);

/// Encaps with a KEM's public key: (ciphertext, shared secret). Inside async jobs each request
/// goes to the dispatcher on its own (as for `sign`).
pub fn kem_encaps(
    alg: Alg,
    pk: Arc<Vec<u8>>,
    coins: Option<Zeroizing<[u8; 32]>>,
) -> Result<Encapsulated, Error> {
    let req = EncapsReq { alg, pk, coins };
    reported(async_job::dispatch(req, encaps_one, |r, done| {
        submit_async(true, move || encaps_async(r, done))
    }))
}

/// Decaps: the shared secret (the implicit-rejection key for a wrong ciphertext).
pub fn kem_decaps(alg: Alg, sk: SecretKey, ct: Vec<u8>) -> Result<Zeroizing<Vec<u8>>, Error> {
    let req = DecapsReq { alg, sk, ct };
    reported(async_job::dispatch(req, decaps_one, |r, done| {
        submit_async(true, move || decaps_async(r, done))
    }))
}

fn encaps_one(r: EncapsReq) -> Result<Encapsulated, Error> {
    let mut ct = vec![0u8; r.alg.ciphertext_len()];
    let mut ss = Zeroizing::new(vec![0u8; r.alg.shared_secret_len()]);
    let key = KeyArg::Bytes(r.alg, &r.pk);
    serve()?.encaps(key, r.coins.as_deref(), &mut ct, &mut ss)?;
    Ok((ct, ss))
}

fn decaps_one(r: DecapsReq) -> Result<Zeroizing<Vec<u8>>, Error> {
    let mut ss = Zeroizing::new(vec![0u8; r.alg.shared_secret_len()]);
    serve()?.decaps(KeyArg::Bytes(r.alg, &r.sk), &r.ct, &mut ss)?;
    Ok(ss)
}

fn encaps_async(r: EncapsReq, done: Done<Encapsulated>) {
    let out = (
        vec![0u8; r.alg.ciphertext_len()],
        Zeroizing::new(vec![0u8; r.alg.shared_secret_len()]),
    );
    submit_one(
        r,
        out,
        done,
        |_, out, st| st.map(|()| out),
        |r, (ct, ss)| {
            let key = KeyArg::Bytes(r.alg, &r.pk);
            // SAFETY: as in `sign_async`.
            unsafe { Op::encaps(key, r.coins.as_deref(), ct, ss) }
        },
    )
}

fn decaps_async(r: DecapsReq, done: Done<Zeroizing<Vec<u8>>>) {
    let ss = Zeroizing::new(vec![0u8; r.alg.shared_secret_len()]);
    submit_one(
        r,
        ss,
        done,
        |_, ss, st| st.map(|()| ss),
        |r, ss| {
            // SAFETY: as in `sign_async`.
            unsafe { Op::decaps(KeyArg::Bytes(r.alg, &r.sk), &r.ct, ss) }
        },
    )
}

// ---- ML-KEM ---------------------------------------------------------------------------------
//
// Encapsulation and decapsulation go through the dispatcher (`kem_encaps`, `kem_decaps` with
// `Alg::MlKem`). Key generation and FIPS 203's key checks run here on pqgpu's CPU code
// (loading a key never reaches for the GPU), in the calling thread, or inside an async job on
// a helper thread (its key and matrix state want more stack than a job has).

/// ML-KEM.KeyGen_internal(d, z) from `seed` = d || z, or KeyGen with fresh randomness: (ek, dk).
pub fn mlkem_keygen(
    p: mlkem::ParamSet,
    seed: Option<Zeroizing<[u8; 64]>>,
) -> Result<(Vec<u8>, SecretKey), Error> {
    run(move || {
        let mut ek = vec![0u8; p.encaps_key_len()];
        let mut dk = Zeroizing::new(vec![0u8; p.decaps_key_len()]);
        match &seed {
            Some(s) => mlkem::keygen_seeded(p, s, &mut ek, &mut dk)?,
            None => mlkem::keygen(p, &mut ek, &mut dk)?,
        }
        trace_on("keygen", p.name(), BackendKind::Cpu);
        Ok((ek, Arc::new(dk)))
    })
}

/// FIPS 203's input checks (section 7.2 for ek, 7.3 for dk), off any async job's small stack.
pub fn mlkem_check(
    p: mlkem::ParamSet,
    ek: Option<Arc<Vec<u8>>>,
    dk: Option<SecretKey>,
) -> Result<(), Error> {
    run(move || {
        if let Some(ek) = &ek {
            mlkem::check_encaps_key(p, ek)?;
        }
        if let Some(dk) = &dk {
            mlkem::check_decaps_key(p, dk)?;
        }
        Ok(())
    })
}

// ---- SLH-DSA --------------------------------------------------------------------------------
//
// Signing and verification go through the dispatcher with key handles (`slh_sign`,
// `slh_verify`), as ML-DSA's. Key generation and the pairwise check run on pqgpu's CPU code (as
// every single key here), inside an async job on a helper thread.

/// slh_keygen_internal from `seed` = SK.seed || SK.prf || PK.seed (3n bytes), or slh_keygen
/// with fresh seeds: (pk, sk).
pub fn slh_keygen(
    p: slhdsa::ParamSet,
    seed: Option<Zeroizing<Vec<u8>>>,
) -> Result<(Vec<u8>, SecretKey), Error> {
    run(move || {
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = Zeroizing::new(vec![0u8; p.secret_key_len()]);
        match &seed {
            Some(s) => slhdsa::keygen_internal(p, s, &mut pk, &mut sk)?,
            None => slhdsa::keygen(p, &mut pk, &mut sk)?,
        }
        trace_on("keygen", p.name(), BackendKind::Cpu);
        Ok((pk, Arc::new(sk)))
    })
}

/// SLH-DSA signing with a key handle (`rnd`: opt_rand, n bytes; PK.seed for the deterministic
/// variant; `None` for fresh randomness). As `sign`.
pub fn slh_sign(
    sk: &Handle,
    msg: &slhdsa::Message<'_>,
    rnd: Option<&[u8]>,
    sig: &mut [u8],
) -> Status {
    signed(
        sig,
        |s, sig| s.slh_sign(KeyArg::Handle(sk), msg, rnd, sig),
        // SAFETY: as in `sign`.
        |sig| unsafe { Op::slh_sign(KeyArg::Lent(sk), msg, rnd, sig) },
    )
}

/// SLH-DSA verification with a key handle. As `verify`.
pub fn slh_verify(pk: &Handle, msg: &slhdsa::Message<'_>, sig: &[u8]) -> Status {
    checked(
        |s| s.slh_verify(KeyArg::Handle(pk), msg, sig),
        // SAFETY: as in `sign`.
        || unsafe { Op::slh_verify(KeyArg::Lent(pk), msg, sig) },
    )
}
