//! Serving mode: one context and one key, requests made one at a time through the
//! exported C functions, as a server would.
//!
//! * blocking: T threads, each making single calls with a key handle (`pqg_mldsa_sign_key`, ...).
//! * async: one driver keeping N single-item submits (`pqg_mldsa_sign_async`, ...) outstanding,
//!   told of completions by the context's callback; or D driver threads (a server with several
//!   event-loop threads), each keeping N / D outstanding and polling its own jobs
//!   (`pqg_job_poll`), all on the one context and key.
//! * batch: one batch of B signatures with a key handle (`pqg_mldsa_sign_key_submit`) against
//!   the same batch with the encoded key in every item (`pqg_mldsa_sign_submit`): each item
//!   its own copy ("batch-keys": nothing shared), or all items pointing at one key slice
//!   ("batch-one-key": shared on the GPU like a handle, without the dispatcher).
//!
//! Reported: ops/s, latency p50 / p99 / max. Every status is checked; signatures and shared
//! secrets are checked against the CPU reference on a sample (the last result of every thread
//! or slot), and every batch signature is verified.

use pqgpu::ffi::*;
use pqgpu::mldsa::{self, Message};
use pqgpu::{ctru, mlkem, Alg};
use std::collections::HashMap;
use std::ffi::c_void;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// What to measure.
pub struct ServeArgs {
    /// `PQG_BACKEND_*` of the context.
    pub backend: pqg_backend,
    pub algs: Vec<pqg_alg>,
    pub threads: Vec<usize>,
    pub outstanding: Vec<usize>,
    /// Asynchronous driver threads (1: the callback-driven driver).
    pub drivers: Vec<usize>,
    /// Time per figure.
    pub duration: Duration,
    /// Batch size of the handle-vs-keys comparison (0: skip).
    pub batch: usize,
    /// `PQG_OPT_CPU_CROSSOVER` for the context (`None`: the default).
    pub crossover: Option<i64>,
    /// Serve from an engine that finishes every item at once (see [`NullEngine`]) instead of
    /// `backend`: the serving layer's own ceiling, an internal figure.
    pub null_engine: bool,
    /// Request buffers registered with the context (`--host-memory registered`).
    pub registered: bool,
    /// Context option sets to compare, each measured on a fresh context (empty: the
    /// library's defaults). See [`parse_config`].
    pub configs: Vec<String>,
    /// Operations to measure (empty: all of each family's): sign, verify, keygen, encaps,
    /// decaps. keygen is blocking only (there is no single-item async keygen).
    pub ops: Vec<String>,
    /// Algorithms to measure by name, e.g. `ML-DSA-44` (empty: every one of `algs`).
    pub alg_names: Vec<String>,
}

impl ServeArgs {
    /// The default grid: ML-DSA-44/65/87, CTRU-Prime-761 and ML-KEM-768, T = 1..1024,
    /// N = 1K..64K.
    pub fn full(backend: pqg_backend) -> ServeArgs {
        ServeArgs {
            backend,
            algs: vec![
                PQG_ML_DSA_44,
                PQG_ML_DSA_65,
                PQG_ML_DSA_87,
                PQG_CTRU_PRIME_761,
                PQG_ML_KEM_768,
            ],
            threads: vec![1, 16, 256, 1024],
            outstanding: vec![1024, 4096, 16384, 65536],
            drivers: vec![1],
            duration: Duration::from_millis(1000),
            batch: 65536,
            crossover: None,
            null_engine: false,
            registered: false,
            configs: Vec::new(),
            ops: Vec::new(),
            alg_names: Vec::new(),
        }
    }
}

/// One measured figure.
#[derive(Debug, Clone)]
pub struct ServeRow {
    /// The option set (`parse_config` form; "default" for the library's).
    pub config: String,
    pub mode: &'static str,
    pub alg: &'static str,
    pub op: &'static str,
    /// Threads (blocking), outstanding items (async) or batch size (batch).
    pub concurrency: usize,
    pub ops_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Op {
    Sign,
    Verify,
    Encaps,
    Decaps,
    Keygen,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Sign => "sign",
            Op::Verify => "verify",
            Op::Encaps => "encaps",
            Op::Decaps => "decaps",
            Op::Keygen => "keygen",
        }
    }
}

/// The options of `--serve-config`: `name=value` pairs joined by '+', e.g.
/// `wait=500+batch=16384+crossover=8+inflight=4+quiet=50` (wait and quiet in µs).
pub fn parse_config(spec: &str) -> Result<Vec<(pqg_status, i64)>, String> {
    spec.split('+')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("option `{pair}`: expected name=value"))?;
            let opt = match name {
                "wait" => PQG_OPT_MAX_WAIT_US,
                "batch" => PQG_OPT_MAX_BATCH,
                "crossover" => PQG_OPT_CPU_CROSSOVER,
                "inflight" => PQG_OPT_MAX_IN_FLIGHT,
                "quiet" => PQG_OPT_QUIET_US,
                _ => return Err(format!("unknown option `{name}`")),
            };
            let v = value
                .parse()
                .map_err(|_| format!("option `{pair}`: bad value"))?;
            Ok((opt, v))
        })
        .collect()
}

/// A C pointer that may cross threads (the library's handles are thread-safe).
struct P<T>(*mut T);
impl<T> Clone for P<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for P<T> {}
unsafe impl<T> Send for P<T> {}
unsafe impl<T> Sync for P<T> {}

/// The key material of one algorithm: encoded keys, handles, and a valid input for
/// verify (a signature) and decaps (a ciphertext with its shared secret).
struct Keys {
    alg: Alg,
    pk: Vec<u8>,
    sk: Vec<u8>,
    pk_h: P<pqg_key>,
    sk_h: P<pqg_key>,
    sig: Vec<u8>,
    ct: Vec<u8>,
    ss: Vec<u8>,
}

const MSG: &[u8; 32] = b"pqgpu serving benchmark message.";

fn check(st: pqg_status, what: &str) -> Result<(), String> {
    if st == PQG_OK {
        Ok(())
    } else {
        // SAFETY: pqg_status_str returns a static string.
        let s = unsafe { std::ffi::CStr::from_ptr(pqg_status_str(st)) };
        Err(format!("{what}: {}", s.to_string_lossy()))
    }
}

fn keys(ctx: *mut pqg_context, code: pqg_alg) -> Result<Keys, String> {
    let alg = Alg::from_code(code).map_err(|e| e.to_string())?;
    let mut pk = vec![0u8; alg.public_key_len()];
    let mut sk = vec![0u8; alg.secret_key_len()];
    let (mut sig, mut ct, mut ss) = (vec![], vec![], vec![]);
    // SAFETY: buffers of the documented lengths.
    unsafe {
        match alg {
            Alg::MlDsa(p) => {
                check(
                    pqg_mldsa_keygen(
                        ctx,
                        code,
                        null(),
                        pk.as_mut_ptr(),
                        pk.len(),
                        sk.as_mut_ptr(),
                        sk.len(),
                    ),
                    "keygen",
                )?;
                sig = vec![0u8; p.signature_len()];
                mldsa::sign(
                    p,
                    &sk,
                    &Message::Pure { ctx: &[], msg: MSG },
                    None,
                    &mut sig,
                )
                .map_err(|e| e.to_string())?;
            }
            Alg::Ctru(p) => {
                check(
                    pqg_kem_keygen(
                        ctx,
                        code,
                        null(),
                        pk.as_mut_ptr(),
                        pk.len(),
                        sk.as_mut_ptr(),
                        sk.len(),
                    ),
                    "keygen",
                )?;
                ct = vec![0u8; p.ciphertext_len()];
                ss = vec![0u8; p.shared_secret_len()];
                ctru::encaps(p, &pk, &mut ct, &mut ss).map_err(|e| e.to_string())?;
            }
            Alg::SlhDsa(_) => {
                return Err(format!("{} has no key handles to serve yet", alg.name()));
            }
            Alg::MlKem(p) => {
                check(
                    pqg_kem_keygen(
                        ctx,
                        code,
                        null(),
                        pk.as_mut_ptr(),
                        pk.len(),
                        sk.as_mut_ptr(),
                        sk.len(),
                    ),
                    "keygen",
                )?;
                ct = vec![0u8; p.ciphertext_len()];
                ss = vec![0u8; p.shared_secret_len()];
                mlkem::encaps(p, &pk, &mut ct, &mut ss).map_err(|e| e.to_string())?;
            }
        }
        let (mut pk_h, mut sk_h) = (null_mut(), null_mut());
        check(
            pqg_key_new(code, PQG_KEY_PUBLIC, pk.as_ptr(), pk.len(), &mut pk_h),
            "pqg_key_new",
        )?;
        check(
            pqg_key_new(code, PQG_KEY_SECRET, sk.as_ptr(), sk.len(), &mut sk_h),
            "pqg_key_new",
        )?;
        Ok(Keys {
            alg,
            pk,
            sk,
            pk_h: P(pk_h),
            sk_h: P(sk_h),
            sig,
            ct,
            ss,
        })
    }
}

/// Output buffers of one request.
struct Bufs {
    out: Buf,
    ss: Buf,
    sk: Buf,
}

/// One output buffer: its own allocation, or a piece of a run's registered [`Pool`].
enum Buf {
    Own(Vec<u8>),
    Pooled(*mut u8, usize),
}

// SAFETY: a pooled buffer is a disjoint piece of its pool's arena, used by one thread at a
// time (the one holding its `Bufs`); the pool outlives every `Bufs` carved from it.
unsafe impl Send for Buf {}

impl std::ops::Deref for Buf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Buf::Own(v) => v,
            // SAFETY: see `Send`: a live, disjoint piece of the arena.
            Buf::Pooled(p, n) => unsafe { std::slice::from_raw_parts(*p, *n) },
        }
    }
}

impl std::ops::DerefMut for Buf {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Buf::Own(v) => v,
            // SAFETY: as for `Deref`; `&mut self` makes this the only view.
            Buf::Pooled(p, n) => unsafe { std::slice::from_raw_parts_mut(*p, *n) },
        }
    }
}

/// Whether this run's request buffers come from a registered pool (`--host-memory
/// registered`: a server that registered its buffer pool with `pqg_host_register`).
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// The request buffers of one timed run: `n` [`Bufs`], each its own allocations, or, when
/// [`REGISTERED`], pieces of one arena registered with the context (the GPU then reads and
/// writes them directly, without the library's staging copies). Keep it alive until every
/// `Bufs` taken from it is dropped.
struct Pool {
    arena: Vec<u8>,
    ctx: P<pqg_context>,
}

impl Pool {
    fn new(ctx: P<pqg_context>, k: &Keys, n: usize) -> Result<(Pool, Vec<Bufs>), String> {
        // (An empty run registers nothing: the library refuses an empty buffer.)
        if n == 0 || !REGISTERED.load(Ordering::Relaxed) {
            let bufs = (0..n).map(|_| Bufs::new(k)).collect();
            return Ok((
                Pool {
                    arena: Vec::new(),
                    ctx,
                },
                bufs,
            ));
        }
        let lens = Bufs::lens(k);
        let each: usize = lens.iter().sum();
        let mut arena = vec![0x5au8; n * each];
        // SAFETY: live context; the arena stays allocated (and unmoved) until `drop`
        // unregisters it.
        check(
            unsafe { pqg_host_register(ctx.0, arena.as_ptr(), arena.len()) },
            "pqg_host_register",
        )?;
        let base = arena.as_mut_ptr();
        let piece = |at: usize, len: usize| Buf::Pooled(base.wrapping_add(at), len);
        let bufs = (0..n)
            .map(|i| {
                let at = i * each;
                Bufs {
                    out: piece(at, lens[0]),
                    ss: piece(at + lens[0], lens[1]),
                    sk: piece(at + lens[0] + lens[1], lens[2]),
                }
            })
            .collect();
        Ok((Pool { arena, ctx }, bufs))
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if !self.arena.is_empty() {
            // SAFETY: registered in `new` on this live context; no call using it is running.
            unsafe { pqg_host_unregister(self.ctx.0, self.arena.as_ptr()) };
        }
    }
}

impl Bufs {
    /// The lengths of a request's output buffers: out (signature, ciphertext or public key),
    /// shared secret, secret key.
    fn lens(k: &Keys) -> [usize; 3] {
        let a = k.alg;
        [
            a.signature_len()
                .max(a.ciphertext_len())
                .max(a.public_key_len()),
            32,
            a.secret_key_len(),
        ]
    }

    /// Output buffers, already written once (a nonzero fill: a zeroed allocation would leave
    /// its page faults to the timed run).
    fn new(k: &Keys) -> Bufs {
        let [out, ss, sk] = Bufs::lens(k);
        Bufs {
            out: Buf::Own(vec![0x5a; out]),
            ss: Buf::Own(vec![0x5a; ss]),
            sk: Buf::Own(vec![0x5a; sk]),
        }
    }

    /// Checks the last result of a thread or slot against the CPU reference.
    fn verify(&self, k: &Keys, op: Op) -> Result<(), String> {
        if NULL_ENGINE.load(Ordering::Relaxed) {
            // The null engine writes no output; statuses are still checked.
            return Ok(());
        }
        let ok = match (op, k.alg) {
            (Op::Sign, Alg::MlDsa(p)) => mldsa::verify(
                p,
                &k.pk,
                &Message::Pure { ctx: &[], msg: MSG },
                &self.out[..p.signature_len()],
            )
            .is_ok(),
            (Op::Encaps, Alg::Ctru(p)) => {
                let mut ss = [0u8; 32];
                ctru::decaps(p, &k.sk, &self.out[..p.ciphertext_len()], &mut ss).is_ok()
                    && ss[..] == self.ss[..]
            }
            (Op::Encaps, Alg::MlKem(p)) => {
                let mut ss = [0u8; 32];
                mlkem::decaps(p, &k.sk, &self.out[..p.ciphertext_len()], &mut ss).is_ok()
                    && ss[..] == self.ss[..]
            }
            (Op::Decaps, _) => self.ss[..] == k.ss[..],
            // A fresh pair: sign and verify with it (ML-DSA), or both sides share a secret.
            (Op::Keygen, Alg::MlDsa(p)) => {
                let (pk, m) = (
                    &self.out[..p.public_key_len()],
                    Message::Pure { ctx: &[], msg: MSG },
                );
                let mut sig = vec![0u8; p.signature_len()];
                mldsa::sign(p, &self.sk, &m, None, &mut sig).is_ok()
                    && mldsa::verify(p, pk, &m, &sig).is_ok()
            }
            (Op::Keygen, Alg::Ctru(p)) => {
                let (mut ct, mut a, mut b) = (vec![0u8; p.ciphertext_len()], [0u8; 32], [1u8; 32]);
                ctru::encaps(p, &self.out[..p.public_key_len()], &mut ct, &mut a).is_ok()
                    && ctru::decaps(p, &self.sk, &ct, &mut b).is_ok()
                    && a == b
            }
            (Op::Keygen, Alg::MlKem(p)) => {
                let (mut ct, mut a, mut b) = (vec![0u8; p.ciphertext_len()], [0u8; 32], [1u8; 32]);
                mlkem::encaps(p, &self.out[..p.encaps_key_len()], &mut ct, &mut a).is_ok()
                    && mlkem::decaps(p, &self.sk, &ct, &mut b).is_ok()
                    && a == b
            }
            _ => true,
        };
        ok.then_some(()).ok_or_else(|| {
            format!(
                "{} {} result does not match the CPU reference",
                k.alg.name(),
                op.name()
            )
        })
    }
}

/// One blocking single call.
///
/// # Safety
/// `ctx` and the handles are live.
unsafe fn call(ctx: *mut pqg_context, k: &Keys, op: Op, b: &mut Bufs) -> pqg_status {
    // SAFETY: buffers of the documented lengths.
    unsafe {
        match op {
            Op::Sign => pqg_mldsa_sign_key(
                ctx,
                k.sk_h.0,
                MSG.as_ptr(),
                32,
                null(),
                0,
                null(),
                b.out.as_mut_ptr(),
                k.alg.signature_len(),
            ),
            Op::Verify => pqg_mldsa_verify_key(
                ctx,
                k.pk_h.0,
                MSG.as_ptr(),
                32,
                null(),
                0,
                k.sig.as_ptr(),
                k.sig.len(),
            ),
            Op::Encaps => pqg_kem_encaps_key(
                ctx,
                k.pk_h.0,
                null(),
                b.out.as_mut_ptr(),
                k.alg.ciphertext_len(),
                b.ss.as_mut_ptr(),
                32,
            ),
            Op::Decaps => pqg_kem_decaps_key(
                ctx,
                k.sk_h.0,
                k.ct.as_ptr(),
                k.ct.len(),
                b.ss.as_mut_ptr(),
                32,
            ),
            Op::Keygen => {
                let (pk_len, sk_len) = (k.alg.public_key_len(), k.alg.secret_key_len());
                let (pk, sk) = (b.out.as_mut_ptr(), b.sk.as_mut_ptr());
                match k.alg {
                    Alg::MlDsa(_) => {
                        pqg_mldsa_keygen(ctx, k.alg.code(), null(), pk, pk_len, sk, sk_len)
                    }
                    Alg::Ctru(_) | Alg::MlKem(_) => {
                        pqg_kem_keygen(ctx, k.alg.code(), null(), pk, pk_len, sk, sk_len)
                    }
                    Alg::SlhDsa(_) => {
                        pqg_slhdsa_keygen(ctx, k.alg.code(), null(), pk, pk_len, sk, sk_len)
                    }
                }
            }
        }
    }
}

/// One asynchronous single item.
///
/// # Safety
/// As [`call`]; `b` and `status` stay put until the job completes.
unsafe fn submit(
    ctx: *mut pqg_context,
    k: &Keys,
    op: Op,
    b: &mut Bufs,
    status: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    // SAFETY: buffers of the documented lengths, kept until completion by the caller.
    unsafe {
        match op {
            Op::Sign => pqg_mldsa_sign_async(
                ctx,
                k.sk_h.0,
                MSG.as_ptr(),
                32,
                null(),
                0,
                null(),
                b.out.as_mut_ptr(),
                k.alg.signature_len(),
                status,
                job,
            ),
            Op::Verify => pqg_mldsa_verify_async(
                ctx,
                k.pk_h.0,
                MSG.as_ptr(),
                32,
                null(),
                0,
                k.sig.as_ptr(),
                k.sig.len(),
                status,
                job,
            ),
            Op::Encaps => pqg_kem_encaps_async(
                ctx,
                k.pk_h.0,
                null(),
                b.out.as_mut_ptr(),
                k.alg.ciphertext_len(),
                b.ss.as_mut_ptr(),
                32,
                status,
                job,
            ),
            Op::Decaps => pqg_kem_decaps_async(
                ctx,
                k.sk_h.0,
                k.ct.as_ptr(),
                k.ct.len(),
                b.ss.as_mut_ptr(),
                32,
                status,
                job,
            ),
            Op::Keygen => PQG_ERR_INVALID_ARGUMENT,
        }
    }
}

/// p50 / p99 / max in microseconds of latencies in nanoseconds.
fn percentiles(mut ns: Vec<u64>) -> (f64, f64, f64) {
    if ns.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    ns.sort_unstable();
    let at = |q: f64| ns[((ns.len() - 1) as f64 * q).round() as usize] as f64 / 1e3;
    (at(0.5), at(0.99), *ns.last().unwrap() as f64 / 1e3)
}

fn blocking(
    ctx: P<pqg_context>,
    k: &Keys,
    op: Op,
    threads: usize,
    dur: Duration,
) -> Result<ServeRow, String> {
    let stop = AtomicBool::new(false);
    let (_pool, bufs) = Pool::new(ctx, k, threads)?;
    let start = Instant::now();
    let results: Vec<Result<Vec<u64>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = bufs
            .into_iter()
            .map(|mut b| {
                let stop = &stop;
                std::thread::Builder::new()
                    .stack_size(1 << 20)
                    .spawn_scoped(s, move || {
                        let ctx = ctx;
                        let mut lat = Vec::new();
                        while !stop.load(Ordering::Relaxed) {
                            let t = Instant::now();
                            // SAFETY: live context and handles.
                            check(unsafe { call(ctx.0, k, op, &mut b) }, op.name())?;
                            lat.push(t.elapsed().as_nanos() as u64);
                        }
                        b.verify(k, op)?;
                        Ok(lat)
                    })
                    .expect("thread")
            })
            .collect();
        std::thread::sleep(dur);
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into())))
            .collect()
    });
    // Until the last thread's last call returned (calls in flight at the stop are counted).
    let elapsed = start.elapsed().as_secs_f64();
    let mut all = Vec::new();
    for r in results {
        all.extend(r?);
    }
    let n = all.len();
    let (p50, p99, max) = percentiles(all);
    Ok(row(
        "blocking",
        k,
        op,
        threads,
        n as f64 / elapsed,
        (p50, p99, max),
    ))
}

fn row(
    mode: &'static str,
    k: &Keys,
    op: Op,
    c: usize,
    ops: f64,
    (p50, p99, max): (f64, f64, f64),
) -> ServeRow {
    ServeRow {
        config: String::new(),
        mode,
        alg: k.alg.name(),
        op: op.name(),
        concurrency: c,
        ops_per_s: ops,
        p50_us: p50,
        p99_us: p99,
        max_us: max,
    }
}

/// The job-to-slot map's hash: job addresses are distinct heap pointers, so one multiply
/// spreads them (a C server would keep its own table; SipHash here cost the driver ~5 %).
#[derive(Default)]
struct AddrHash(u64);

impl Hasher for AddrHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, x: usize) {
        self.0 = (x as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(26);
    }
}

/// Completed jobs, handed from the callback to the driver. The callback wakes the driver only
/// when it sleeps, and only the first callback after it fell asleep does (a wake per job would
/// be a system call per item, as an event loop avoids).
#[derive(Default)]
struct Done {
    jobs: Mutex<(Vec<usize>, bool)>,
    cv: Condvar,
}

extern "C" fn on_done(user: *mut c_void, job: *mut pqg_job) {
    // SAFETY: `user` is the `Done` the driver registered and keeps alive.
    let d = unsafe { &*(user as *const Done) };
    let sleeping = {
        let mut g = d.jobs.lock().unwrap_or_else(|e| e.into_inner());
        g.0.push(job as usize);
        std::mem::replace(&mut g.1, false)
    };
    if sleeping {
        d.cv.notify_one();
    }
}

fn asynchronous(
    ctx: P<pqg_context>,
    k: &Keys,
    op: Op,
    n: usize,
    dur: Duration,
) -> Result<ServeRow, String> {
    let done = Box::new(Done::default());
    // SAFETY: `done` outlives every job (all are collected below before it is dropped).
    check(
        unsafe {
            pqg_context_set_callback(ctx.0, Some(on_done), &*done as *const Done as *mut c_void)
        },
        "callback",
    )?;
    let (_pool, mut bufs) = Pool::new(ctx, k, n)?;
    let mut statuses = vec![0 as pqg_status; n];
    let mut started = vec![Instant::now(); n];
    let mut slot_of: HashMap<usize, usize, BuildHasherDefault<AddrHash>> =
        HashMap::with_capacity_and_hasher(2 * n, Default::default());
    let mut lat = Vec::new();
    let start = Instant::now();
    let issue = |i: usize,
                 bufs: &mut [Bufs],
                 statuses: &mut [pqg_status],
                 slot_of: &mut HashMap<usize, usize, BuildHasherDefault<AddrHash>>|
     -> Result<(), String> {
        let mut job = null_mut();
        // SAFETY: slot i's buffers stay put until its job is collected.
        check(
            unsafe { submit(ctx.0, k, op, &mut bufs[i], &mut statuses[i], &mut job) },
            "submit",
        )?;
        slot_of.insert(job as usize, i);
        Ok(())
    };
    for (i, t) in started.iter_mut().enumerate() {
        *t = Instant::now();
        issue(i, &mut bufs, &mut statuses, &mut slot_of)?;
    }
    let mut outstanding = n;
    let mut last = None;
    while outstanding > 0 {
        let ready: Vec<usize> = {
            let mut g = done.jobs.lock().unwrap();
            while g.0.is_empty() {
                g.1 = true;
                g = done.cv.wait_timeout(g, Duration::from_secs(30)).unwrap().0;
                // Cleared by the waking callback; here too after a timeout.
                g.1 = false;
                if g.0.is_empty() {
                    return Err("no completion within 30 s".into());
                }
            }
            std::mem::take(&mut g.0)
        };
        let now = Instant::now();
        let more = now.duration_since(start) < dur;
        for j in ready {
            let job = j as *mut pqg_job;
            // SAFETY: a job handed to the callback; it completes right after the callback.
            unsafe {
                check(pqg_job_wait(job, -1), "wait")?;
                pqg_job_free(job);
            }
            let i = slot_of.remove(&j).ok_or("unknown job")?;
            check(statuses[i], op.name())?;
            lat.push(now.duration_since(started[i]).as_nanos() as u64);
            last = Some(i);
            if more {
                started[i] = Instant::now();
                issue(i, &mut bufs, &mut statuses, &mut slot_of)?;
            } else {
                outstanding -= 1;
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    // SAFETY: no job is outstanding.
    check(
        unsafe { pqg_context_set_callback(ctx.0, None, null_mut()) },
        "callback",
    )?;
    if let Some(i) = last {
        bufs[i].verify(k, op)?;
    }
    let count = lat.len();
    Ok(row(
        "async",
        k,
        op,
        n,
        count as f64 / elapsed,
        percentiles(lat),
    ))
}

/// Bench-side bookkeeping for `d` drivers of `n` outstanding items: which mode name a row
/// gets ("async-4": four driver threads).
fn polled_mode(d: usize) -> &'static str {
    Box::leak(format!("async-{d}").into_boxed_str())
}

/// What one driver thread brings back: its latencies (ns) and its last result's buffers.
type Driven = (Vec<u64>, Option<Bufs>);

/// `d` driver threads, each keeping its share of `n` single items outstanding on the one
/// context and sweeping its own jobs with `pqg_job_poll` (a sweep that finds none complete
/// sleeps 20 us): how a server with several event-loop threads drives the library.
fn polled(
    ctx: P<pqg_context>,
    k: &Keys,
    op: Op,
    n: usize,
    d: usize,
    dur: Duration,
) -> Result<ServeRow, String> {
    let per = n.div_ceil(d);
    // Every driver's buffers exist before the clock starts (allocating them inside the timed
    // run put the benchmark's own page faults and heap growth into the figure).
    let (_pool, all) = Pool::new(ctx, k, d * per)?;
    let mut all = all.into_iter();
    let sets: Vec<Vec<Bufs>> = (0..d).map(|_| all.by_ref().take(per).collect()).collect();
    let start = Instant::now();
    let results: Vec<Result<Driven, String>> = std::thread::scope(|s| {
        let hs: Vec<_> = sets
            .into_iter()
            .map(|mut bufs| {
                let ctx = &ctx;
                s.spawn(move || -> Result<Driven, String> {
                    let mut statuses = vec![0 as pqg_status; per];
                    let mut started = vec![Instant::now(); per];
                    let mut jobs = vec![null_mut::<pqg_job>(); per];
                    let mut lat = Vec::new();
                    let mut last = None;
                    for i in 0..per {
                        started[i] = Instant::now();
                        // SAFETY: slot i's buffers stay put until its job is collected.
                        check(
                            unsafe {
                                submit(ctx.0, k, op, &mut bufs[i], &mut statuses[i], &mut jobs[i])
                            },
                            "submit",
                        )?;
                    }
                    let mut outstanding = per;
                    while outstanding > 0 {
                        let mut found = 0;
                        let more = start.elapsed() < dur;
                        // One clock read per sweep, taken at its first completion: the
                        // completions and resubmissions of a sweep share it (latency to
                        // within a sweep, tens of microseconds; two clock reads per item
                        // were 9 % of the host's samples at 10 M items/s).
                        let mut now = None;
                        for i in 0..per {
                            if jobs[i].is_null() {
                                continue;
                            }
                            // SAFETY: a live job of this thread.
                            if unsafe { pqg_job_poll(jobs[i]) } != PQG_OK {
                                continue;
                            }
                            let now = *now.get_or_insert_with(Instant::now);
                            // SAFETY: completed; freed once.
                            unsafe { pqg_job_free(jobs[i]) };
                            jobs[i] = null_mut();
                            check(statuses[i], op.name())?;
                            lat.push(now.duration_since(started[i]).as_nanos() as u64);
                            last = Some(i);
                            found += 1;
                            if more {
                                started[i] = now;
                                // SAFETY: as above.
                                check(
                                    unsafe {
                                        submit(
                                            ctx.0,
                                            k,
                                            op,
                                            &mut bufs[i],
                                            &mut statuses[i],
                                            &mut jobs[i],
                                        )
                                    },
                                    "submit",
                                )?;
                            } else {
                                outstanding -= 1;
                            }
                        }
                        if found == 0 {
                            if start.elapsed() > dur + Duration::from_secs(30) {
                                return Err("no completion within 30 s".into());
                            }
                            std::thread::sleep(Duration::from_micros(20));
                        }
                    }
                    Ok((lat, last.map(|i| bufs.swap_remove(i))))
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or(Err("driver panicked".into())))
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let mut lat = Vec::new();
    for r in results {
        let (l, last) = r?;
        lat.extend(l);
        if let Some(b) = last {
            b.verify(k, op)?;
        }
    }
    let count = lat.len();
    Ok(row(
        polled_mode(d),
        k,
        op,
        n,
        count as f64 / elapsed,
        percentiles(lat),
    ))
}

/// Whether this run serves from [`NullEngine`] (outputs are then not checked).
static NULL_ENGINE: AtomicBool = AtomicBool::new(false);

/// An engine that reports itself as a GPU and finishes every item at once, writing nothing:
/// behind a real context it measures what the submit, dispatch and completion path alone can
/// carry (`--serve-null-engine`; outputs are not checked then). Not a product figure.
struct NullEngine;

impl pqgpu::backend::Backend for NullEngine {
    fn kind(&self) -> pqgpu::backend::BackendKind {
        pqgpu::backend::BackendKind::Gpu
    }
    fn mldsa_keygen(
        &self,
        _: mldsa::ParamSet,
        _: Option<&[u8]>,
        _: &mut [u8],
        _: &mut [u8],
        st: &mut [pqgpu::Status],
    ) {
        st.fill(Ok(()));
    }
    fn mldsa_sign(
        &self,
        _: mldsa::ParamSet,
        _: &[pqgpu::backend::SignItem<'_>],
        _: &mut [&mut [u8]],
        st: &mut [pqgpu::Status],
    ) {
        st.fill(Ok(()));
    }
    fn mldsa_verify(
        &self,
        _: mldsa::ParamSet,
        _: &[pqgpu::backend::VerifyItem<'_>],
        st: &mut [pqgpu::Status],
    ) {
        st.fill(Ok(()));
    }
    fn kem_keygen(
        &self,
        _: ctru::ParamSet,
        _: Option<&[u8]>,
        _: &mut [u8],
        _: &mut [u8],
        st: &mut [pqgpu::Status],
    ) {
        st.fill(Ok(()));
    }
    fn kem_encaps(
        &self,
        _: ctru::ParamSet,
        _: &[pqgpu::backend::EncapsItem<'_>],
        _: &mut [&mut [u8]],
        _: &mut [&mut [u8]],
        st: &mut [pqgpu::Status],
    ) {
        st.fill(Ok(()));
    }
    fn kem_decaps(
        &self,
        _: ctru::ParamSet,
        _: &[pqgpu::backend::DecapsItem<'_>],
        _: &mut [&mut [u8]],
        st: &mut [pqgpu::Status],
    ) {
        st.fill(Ok(()));
    }
}

/// How a batch names its key.
#[derive(Clone, Copy, PartialEq)]
enum BatchKey {
    /// The key handle (`pqg_mldsa_sign_key_submit`).
    Handle,
    /// The encoded key in every request, each request its own copy: nothing is shared.
    Copies,
    /// The encoded key in every request, all pointing at one slice (shared on the GPU).
    OneSlice,
}

/// One batch of `n` signatures with the key named as `how` says.
fn batch_sign(ctx: P<pqg_context>, k: &Keys, n: usize, how: BatchKey) -> Result<ServeRow, String> {
    let Alg::MlDsa(p) = k.alg else { unreachable!() };
    let len = p.signature_len();
    let copies = if how == BatchKey::Copies {
        k.sk.repeat(n)
    } else {
        Vec::new()
    };
    let mut sigs = vec![0u8; n * len];
    let mut st = vec![0 as pqg_status; n];
    let mut job = null_mut();
    let t = Instant::now();
    // SAFETY: every request's buffers live until the wait below.
    unsafe {
        if how == BatchKey::Handle {
            let reqs: Vec<pqg_key_sign_request> = (0..n)
                .map(|i| pqg_key_sign_request {
                    msg: MSG.as_ptr(),
                    msg_len: 32,
                    context: null(),
                    context_len: 0,
                    rnd: null(),
                    sig: sigs[i * len..].as_mut_ptr(),
                })
                .collect();
            check(
                pqg_mldsa_sign_key_submit(
                    ctx.0,
                    k.sk_h.0,
                    reqs.as_ptr(),
                    n,
                    st.as_mut_ptr(),
                    &mut job,
                ),
                "submit",
            )?;
        } else {
            let reqs: Vec<pqg_sign_request> = (0..n)
                .map(|i| pqg_sign_request {
                    sk: match how {
                        BatchKey::Copies => copies[i * k.sk.len()..].as_ptr(),
                        _ => k.sk.as_ptr(),
                    },
                    msg: MSG.as_ptr(),
                    msg_len: 32,
                    context: null(),
                    context_len: 0,
                    rnd: null(),
                    sig: sigs[i * len..].as_mut_ptr(),
                })
                .collect();
            check(
                pqg_mldsa_sign_submit(
                    ctx.0,
                    k.alg.code(),
                    reqs.as_ptr(),
                    n,
                    st.as_mut_ptr(),
                    &mut job,
                ),
                "submit",
            )?;
        }
        check(pqg_job_wait(job, -1), "wait")?;
        pqg_job_free(job);
    }
    let secs = t.elapsed().as_secs_f64();
    for (i, s) in st.iter().enumerate() {
        check(*s, "batch item")?;
        mldsa::verify(
            p,
            &k.pk,
            &Message::Pure { ctx: &[], msg: MSG },
            &sigs[i * len..][..len],
        )
        .map_err(|_| format!("batch signature {i} does not verify"))?;
    }
    let mode = match how {
        BatchKey::Handle => "batch-handle",
        BatchKey::Copies => "batch-keys",
        BatchKey::OneSlice => "batch-one-key",
    };
    Ok(row(
        mode,
        k,
        Op::Sign,
        n,
        n as f64 / secs,
        (secs * 1e6, secs * 1e6, secs * 1e6),
    ))
}

/// Runs the serving grid on one fresh context per option set and returns its figures
/// (printing each as it comes).
pub fn run(a: &ServeArgs) -> Result<Vec<ServeRow>, String> {
    let configs = if a.configs.is_empty() {
        vec![String::new()]
    } else {
        a.configs.clone()
    };
    let mut rows = Vec::new();
    for spec in &configs {
        let opts = parse_config(spec)?;
        let label = if spec.is_empty() { "default" } else { spec };
        rows.extend(run_config(a, &opts, label)?);
    }
    Ok(rows)
}

fn wanted(a: &ServeArgs, op: Op) -> bool {
    a.ops.is_empty() || a.ops.iter().any(|o| o == op.name())
}

fn run_config(a: &ServeArgs, opts: &[(i32, i64)], label: &str) -> Result<Vec<ServeRow>, String> {
    let mut ctx = null_mut();
    // Keys come from a context with an engine (the null engine makes none).
    let mut key_ctx = null_mut();
    NULL_ENGINE.store(a.null_engine, Ordering::Relaxed);
    REGISTERED.store(a.registered, Ordering::Relaxed);
    if a.null_engine {
        ctx = context_from_backend(std::sync::Arc::new(NullEngine));
        // SAFETY: out-pointer to a local.
        check(
            unsafe {
                pqg_context_new(
                    pqg_backend_values::PQG_BACKEND_CPU as pqg_backend,
                    &mut key_ctx,
                )
            },
            "pqg_context_new",
        )?;
    } else {
        // SAFETY: out-pointer to a local.
        check(
            unsafe { pqg_context_new(a.backend, &mut ctx) },
            "pqg_context_new",
        )?;
    }
    let ctx = P(ctx);
    let mut set = a
        .crossover
        .map(|c| (PQG_OPT_CPU_CROSSOVER, c))
        .into_iter()
        .collect::<Vec<_>>();
    set.extend_from_slice(opts);
    for (opt, v) in set {
        // SAFETY: live context.
        check(
            unsafe { pqg_context_set_option(ctx.0, opt, v) },
            "pqg_context_set_option",
        )?;
    }
    let mut rows = Vec::new();
    let mut emit = |mut r: ServeRow| {
        r.config = if a.registered {
            format!("{label}, registered")
        } else {
            label.to_string()
        };
        say!(
            "{:<12} {:<16} {:<6} {:>6}  {:>12.0} ops/s  p50 {:>9.1} us  p99 {:>9.1} us  max {:>9.1} us  [{}]",
            r.mode, r.alg, r.op, r.concurrency, r.ops_per_s, r.p50_us, r.p99_us, r.max_us, r.config
        );
        rows.push(r);
    };
    for &code in &a.algs {
        let name = Alg::from_code(code).map_err(|e| e.to_string())?.name();
        if !a.alg_names.is_empty() && !a.alg_names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            continue;
        }
        let k = keys(if key_ctx.is_null() { ctx.0 } else { key_ctx }, code)?;
        let ops: &[Op] = if matches!(k.alg, Alg::MlDsa(_)) {
            &[Op::Sign, Op::Verify, Op::Keygen]
        } else {
            &[Op::Encaps, Op::Decaps, Op::Keygen]
        };
        // keygen is measured only when asked for by name.
        for &op in ops
            .iter()
            .filter(|&&op| wanted(a, op) && (op != Op::Keygen || !a.ops.is_empty()))
        {
            // Each row runs untimed for a fifth of its time first (at most 0.2 s), so that
            // its figures are the steady state, not the engine's first allocations at a new
            // batch size.
            let warm = (a.duration / 5).min(Duration::from_millis(200));
            for &t in &a.threads {
                blocking(ctx, &k, op, t, warm)?;
                emit(blocking(ctx, &k, op, t, a.duration)?);
            }
            if op == Op::Keygen {
                continue;
            }
            for &n in &a.outstanding {
                for &d in &a.drivers {
                    let run = |dur| match d {
                        0 | 1 => asynchronous(ctx, &k, op, n, dur),
                        d => polled(ctx, &k, op, n, d, dur),
                    };
                    run(warm)?;
                    emit(run(a.duration)?);
                }
            }
        }
        if a.batch > 0 && matches!(k.alg, Alg::MlDsa(_)) && wanted(a, Op::Sign) {
            use BatchKey::*;
            for how in [Copies, Handle, OneSlice, Copies, Handle, OneSlice] {
                emit(batch_sign(ctx, &k, a.batch, how)?);
            }
        }
        // SAFETY: no call using the handles is running.
        unsafe {
            pqg_key_free(k.pk_h.0);
            pqg_key_free(k.sk_h.0);
        }
    }
    // SAFETY: no call on the contexts is running (freeing NULL is a no-op).
    unsafe {
        pqg_context_free(ctx.0);
        pqg_context_free(key_ctx);
    }
    Ok(rows)
}
