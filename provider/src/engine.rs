//! The provider's only door into pqgpu. Every sign, verify, keygen, encaps and decaps goes
//! through here.
//!
//! Signing, verification and the KEM run through pqgpu's serving dispatcher (`pqgpu::serve`,
//! one per process, on the backend chosen at load time) with pqgpu key handles for ML-DSA
//! (expanded once per key object):
//! - outside OpenSSL async jobs the calling thread makes a blocking call; on a GPU the
//!   dispatcher coalesces concurrent callers (threads of a server) into batches, and below its
//!   CPU crossover runs them on the CPU; on the CPU backend it runs in the caller's thread;
//! - inside async jobs, sign, verify, encaps and decaps requests are queued and coalesced
//!   (`batch`) while their jobs pause (`async_job::dispatch`); each coalesced batch is one
//!   submission to the dispatcher, which on a GPU may merge concurrent submissions further.
//!   Keygen runs alone on a helper thread there. Submissions are traced, so tests see them.

use crate::async_job::{self, Done};
use crate::batch::Queue;
use crate::guard::guard;
use once_cell::sync::OnceCell;
use pqgpu::backend::{Backend, BackendKind};
use pqgpu::ctru;
use pqgpu::mldsa::{Message, ParamSet};
use pqgpu::serve::{Completion, Key as Handle, KeyArg, KeyKind, Op, Opt, Serve};
use pqgpu::{Alg, Error, Status};
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
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

    fn get(&self) -> Result<Handle, Error> {
        let i = &*self.0;
        i.handle
            .get_or_init(|| Handle::new(i.alg, i.kind, &i.bytes))
            .clone()
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
/// The backend and serving dispatcher for this process id (a forked child makes its own).
static BACKEND: Mutex<Option<ProcessEngine>> = Mutex::new(None);

/// A process id, its backend and its serving dispatcher.
type ProcessEngine = (u32, Arc<dyn Backend>, Arc<Serve>);

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
fn engine() -> Result<(Arc<dyn Backend>, Arc<Serve>), Error> {
    let pid = std::process::id();
    let mut g = BACKEND.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((p, b, s)) = g.as_ref() {
        if *p == pid {
            return Ok((b.clone(), s.clone()));
        }
    }
    let (kind, opts) = CONFIG
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map_or((BackendKind::Auto, Vec::new()), |c| {
            (c.backend, c.serve.clone())
        });
    let b = pqgpu::select::select(kind)?;
    let s = Arc::new(Serve::new(b.clone()));
    for (o, v) in opts {
        s.config.set(o, v)?;
    }
    *g = Some((pid, b.clone(), s.clone()));
    Ok((b, s))
}

fn backend() -> Result<Arc<dyn Backend>, Error> {
    engine().map(|(b, _)| b)
}

/// Appends "op set backend where" to the trace file, when one is configured; `where` is
/// `helper` when the work ran on a helper thread (inside an OpenSSL async job), else `caller`.
fn trace(op: &str, name: &str, b: &dyn Backend) {
    let mut g = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = g.as_mut().and_then(|c| c.trace.as_mut()) {
        let helper = crate::pool::is_helper_thread();
        let place = if helper { "helper" } else { "caller" };
        // One write per line: lines from several processes sharing the file stay whole.
        let _ = f.write_all(format!("{op} {name} {:?} {place}\n", b.kind()).as_bytes());
    }
}

/// Traces each operation of a batch, and the batch itself ("batch sign ML-DSA-44 Cpu n=K").
fn trace_batch(op: &str, name: &str, b: &dyn Backend, n: usize) {
    let mut g = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = g.as_mut().and_then(|c| c.trace.as_mut()) {
        let place = if crate::pool::is_helper_thread() {
            "helper"
        } else {
            "caller"
        };
        let mut text = String::new();
        for _ in 0..n {
            text.push_str(&format!("{op} {name} {:?} {place}\n", b.kind()));
        }
        text.push_str(&format!("batch {op} {name} {:?} n={n}\n", b.kind()));
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

/// A message in the form OpenSSL passes it, owned so the work may move to a helper thread.
pub struct OwnedMessage {
    pub kind: MessageKind,
    pub ctx: Vec<u8>,
    pub data: Vec<u8>,
}

/// How `data` is to be read (OpenSSL's `mu` and `message-encoding` parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// ML-DSA.Sign: M' = 0 || |ctx| || ctx || data.
    Pure,
    /// data is M' itself (message-encoding 0, "raw").
    Raw,
    /// data is the 64-byte mu.
    Mu,
}

impl OwnedMessage {
    fn view(&self) -> Message<'_> {
        match self.kind {
            MessageKind::Pure => Message::Pure {
                ctx: &self.ctx,
                msg: &self.data,
            },
            MessageKind::Raw => Message::Internal(&self.data),
            MessageKind::Mu => Message::Mu(&self.data),
        }
    }
}

/// ML-DSA.KeyGen_internal from the seed: (pk, sk).
pub fn keygen(p: ParamSet, seed: Zeroizing<[u8; 32]>) -> Result<(Vec<u8>, SecretKey), Error> {
    run(move || {
        let b = backend()?;
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = Zeroizing::new(vec![0u8; p.secret_key_len()]);
        let mut st: [Status; 1] = [Ok(())];
        b.mldsa_keygen(p, Some(&seed[..]), &mut pk, &mut sk, &mut st);
        st[0]?;
        trace("keygen", p.name(), &*b);
        Ok((pk, Arc::new(sk)))
    })
}

/// One signing request.
pub struct SignReq {
    pub set: ParamSet,
    pub sk: LazyHandle,
    pub msg: OwnedMessage,
    pub rnd: Zeroizing<[u8; 32]>,
}

/// One verification request.
pub struct VerifyReq {
    pub set: ParamSet,
    pub pk: LazyHandle,
    pub msg: OwnedMessage,
    pub sig: Vec<u8>,
}

type SignQueue = Queue<(SignReq, Done<Vec<u8>>)>;
type VerifyQueue = Queue<(VerifyReq, Done<()>)>;
static SIGN: [SignQueue; 3] = [Queue::new(), Queue::new(), Queue::new()];
static VERIFY: [VerifyQueue; 3] = [Queue::new(), Queue::new(), Queue::new()];

fn index(p: ParamSet) -> usize {
    match p {
        ParamSet::MlDsa44 | ParamSet::Dilithium2 => 0,
        ParamSet::MlDsa65 | ParamSet::Dilithium3 => 1,
        ParamSet::MlDsa87 | ParamSet::Dilithium5 => 2,
    }
}

/// Signs (`rnd` all-zero: deterministic) and returns the signature. Inside async jobs,
/// concurrent requests of one parameter set are signed as one batch.
pub fn sign(req: SignReq) -> Result<Vec<u8>, Error> {
    let q = &SIGN[index(req.set)];
    async_job::dispatch(req, sign_one, |r, done| q.push((r, done), sign_queued))
}

/// Verifies: `Ok(())` valid, `Err(VerifyFailed)` not. Batched like `sign`.
pub fn verify(req: VerifyReq) -> Result<(), Error> {
    let q = &VERIFY[index(req.set)];
    async_job::dispatch(req, verify_one, |r, done| q.push((r, done), verify_queued))
}

/// A blocking call: the dispatcher coalesces it with other threads' calls (on a GPU).
fn sign_one(r: SignReq) -> Result<Vec<u8>, Error> {
    let (b, s) = engine()?;
    let mut sig = vec![0u8; r.set.signature_len()];
    let st = s.sign(
        KeyArg::Handle(&r.sk.get()?),
        &r.msg.view(),
        Some(&r.rnd),
        &mut sig,
    );
    trace_batch("sign", r.set.name(), &*b, 1);
    st.map(|()| sig)
}

fn verify_one(r: VerifyReq) -> Result<(), Error> {
    let (b, s) = engine()?;
    let st = s.verify(KeyArg::Handle(&r.pk.get()?), &r.msg.view(), &r.sig);
    trace_batch("verify", r.set.name(), &*b, 1);
    st
}

fn sign_queued(batch: Vec<(SignReq, Done<Vec<u8>>)>) {
    let (reqs, dones): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
    for (r, d) in sign_batch(reqs).into_iter().zip(dones) {
        d.complete(r);
    }
}

fn verify_queued(batch: Vec<(VerifyReq, Done<()>)>) {
    let (reqs, dones): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
    for (r, d) in verify_batch(reqs).into_iter().zip(dones) {
        d.complete(r);
    }
}

/// Waits for every item of one submission to the dispatcher.
struct BatchWait {
    state: Mutex<(Vec<Status>, usize)>,
    done: Condvar,
}

impl BatchWait {
    fn new(n: usize) -> Arc<BatchWait> {
        Arc::new(BatchWait {
            state: Mutex::new((vec![Err(Error::Panic); n], n)),
            done: Condvar::new(),
        })
    }

    fn wait(&self) -> Vec<Status> {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while g.1 > 0 {
            g = self.done.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        std::mem::take(&mut g.0)
    }
}

impl Completion for BatchWait {
    fn complete(&self, index: usize, status: Status) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = g.0.get_mut(index) {
            *s = status;
            g.1 -= 1;
            if g.1 == 0 {
                self.done.notify_all();
            }
        }
    }
}

/// Submits ops built by `make` (item i; an `Err` ends that item at once) as one submission and
/// waits for all of them: one status per item.
fn submit_and_wait(
    s: &Serve,
    n: usize,
    mut make: impl FnMut(usize) -> Result<Op, Error>,
) -> Vec<Status> {
    let w = BatchWait::new(n);
    let mut ops = Vec::with_capacity(n);
    for i in 0..n {
        match make(i) {
            Ok(op) => ops.push((i, op)),
            Err(e) => w.complete(i, Err(e)),
        }
    }
    // SAFETY: every op's buffers belong to the caller's frame, which `wait` keeps alive (and
    // untouched) until the dispatcher has reported every item.
    unsafe { s.submit(ops, w.clone()) };
    w.wait()
}

/// One dispatcher submission for requests of one parameter set; one result per request.
fn sign_batch(reqs: Vec<SignReq>) -> Vec<Result<Vec<u8>, Error>> {
    let n = reqs.len();
    let p = reqs[0].set;
    let (b, s) = match engine() {
        Ok(e) => e,
        Err(e) => return vec![Err(e); n],
    };
    let mut sigs = vec![vec![0u8; p.signature_len()]; n];
    let ptrs: Vec<*mut [u8]> = sigs.iter_mut().map(|v| &mut v[..] as *mut [u8]).collect();
    let st = submit_and_wait(&s, n, |i| {
        let r = &reqs[i];
        // SAFETY: sigs[i] and the request's buffers outlive the submission (see
        // `submit_and_wait`); each op writes only its own row.
        let (row, key) = (ptrs[i], r.sk.get()?);
        unsafe { Op::sign(KeyArg::Handle(&key), &r.msg.view(), Some(&r.rnd), &mut *row) }
    });
    trace_batch("sign", p.name(), &*b, n);
    st.into_iter()
        .zip(sigs)
        .map(|(s, sig)| s.map(|()| sig))
        .collect()
}

fn verify_batch(reqs: Vec<VerifyReq>) -> Vec<Result<(), Error>> {
    let n = reqs.len();
    let p = reqs[0].set;
    let (b, s) = match engine() {
        Ok(e) => e,
        Err(e) => return vec![Err(e); n],
    };
    let st = submit_and_wait(&s, n, |i| {
        let r = &reqs[i];
        // SAFETY: the request's buffers outlive the submission (see `submit_and_wait`).
        let key = r.pk.get()?;
        unsafe { Op::verify(KeyArg::Handle(&key), &r.msg.view(), &r.sig) }
    });
    trace_batch("verify", p.name(), &*b, n);
    st
}

// ---- CTRU-Prime (a private-OID KEM) ---------------------------------------------------------

/// CTRU-Prime KeyGen; `seed` = d || z (64 bytes) for a reproducible key, else fresh: (pk, sk).
pub fn kem_keygen(
    p: ctru::ParamSet,
    seed: Option<Zeroizing<[u8; 64]>>,
) -> Result<(Vec<u8>, SecretKey), Error> {
    run(move || {
        let b = backend()?;
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = Zeroizing::new(vec![0u8; p.secret_key_len()]);
        let mut st: [Status; 1] = [Ok(())];
        b.kem_keygen(p, seed.as_ref().map(|s| &s[..]), &mut pk, &mut sk, &mut st);
        st[0]?;
        trace("keygen", p.name(), &*b);
        Ok((pk, Arc::new(sk)))
    })
}

/// One encapsulation request: the public key and optional coins (the 32-byte e).
pub struct EncapsReq {
    pub set: ctru::ParamSet,
    pub pk: Arc<Vec<u8>>,
    pub coins: Option<Zeroizing<[u8; 32]>>,
}

/// One decapsulation request.
pub struct DecapsReq {
    pub set: ctru::ParamSet,
    pub sk: SecretKey,
    pub ct: Vec<u8>,
}

/// (ciphertext, shared secret).
type Encapsulated = (Vec<u8>, Zeroizing<Vec<u8>>);
type EncapsQueue = Queue<(EncapsReq, Done<Encapsulated>)>;
type DecapsQueue = Queue<(DecapsReq, Done<Zeroizing<Vec<u8>>>)>;
static ENCAPS: [EncapsQueue; 3] = [Queue::new(), Queue::new(), Queue::new()];
static DECAPS: [DecapsQueue; 3] = [Queue::new(), Queue::new(), Queue::new()];

fn kem_index(p: ctru::ParamSet) -> usize {
    match p {
        ctru::ParamSet::Ctru653 => 0,
        ctru::ParamSet::Ctru761 => 1,
        ctru::ParamSet::Ctru1277 => 2,
    }
}

/// CTRU-Prime Encaps: (ciphertext, shared secret). Inside async jobs, concurrent requests of
/// one parameter set are one submission (as for `sign`).
pub fn kem_encaps(
    p: ctru::ParamSet,
    pk: Arc<Vec<u8>>,
    coins: Option<Zeroizing<[u8; 32]>>,
) -> Result<Encapsulated, Error> {
    let q = &ENCAPS[kem_index(p)];
    let req = EncapsReq { set: p, pk, coins };
    async_job::dispatch(
        req,
        |r| encaps_batch(vec![r]).pop().expect("one result per request"),
        |r, done| q.push((r, done), encaps_queued),
    )
}

/// CTRU-Prime Decaps: the shared secret (the implicit-rejection key for a wrong ciphertext).
pub fn kem_decaps(
    p: ctru::ParamSet,
    sk: SecretKey,
    ct: Vec<u8>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let q = &DECAPS[kem_index(p)];
    let req = DecapsReq { set: p, sk, ct };
    async_job::dispatch(
        req,
        |r| decaps_batch(vec![r]).pop().expect("one result per request"),
        |r, done| q.push((r, done), decaps_queued),
    )
}

fn encaps_queued(batch: Vec<(EncapsReq, Done<Encapsulated>)>) {
    let (reqs, dones): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
    for (r, d) in encaps_batch(reqs).into_iter().zip(dones) {
        d.complete(r);
    }
}

fn decaps_queued(batch: Vec<(DecapsReq, Done<Zeroizing<Vec<u8>>>)>) {
    let (reqs, dones): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
    for (r, d) in decaps_batch(reqs).into_iter().zip(dones) {
        d.complete(r);
    }
}

/// One dispatcher submission (a blocking call for one request) of one parameter set.
fn encaps_batch(reqs: Vec<EncapsReq>) -> Vec<Result<Encapsulated, Error>> {
    let n = reqs.len();
    let p = reqs[0].set;
    let (b, s) = match engine() {
        Ok(e) => e,
        Err(e) => return vec![Err(e); n],
    };
    let mut cts = vec![vec![0u8; p.ciphertext_len()]; n];
    let mut sss: Vec<Zeroizing<Vec<u8>>> = (0..n)
        .map(|_| Zeroizing::new(vec![0u8; p.shared_secret_len()]))
        .collect();
    let st = if n == 1 {
        let r = &reqs[0];
        let key = KeyArg::Bytes(Alg::Ctru(p), &r.pk);
        vec![s.encaps(key, r.coins.as_deref(), &mut cts[0], &mut sss[0])]
    } else {
        let ct_rows: Vec<*mut [u8]> = cts.iter_mut().map(|v| &mut v[..] as *mut [u8]).collect();
        let ss_rows: Vec<*mut [u8]> = sss.iter_mut().map(|v| &mut v[..] as *mut [u8]).collect();
        submit_and_wait(&s, n, |i| {
            let r = &reqs[i];
            let (ct, ss) = (ct_rows[i], ss_rows[i]);
            // SAFETY: the rows and the request's buffers outlive the submission (see
            // `submit_and_wait`); each op writes only its own rows.
            unsafe {
                Op::encaps(
                    KeyArg::Bytes(Alg::Ctru(p), &r.pk),
                    r.coins.as_deref(),
                    &mut *ct,
                    &mut *ss,
                )
            }
        })
    };
    trace_batch("encaps", p.name(), &*b, n);
    st.into_iter()
        .zip(cts.into_iter().zip(sss))
        .map(|(st, out)| st.map(|()| out))
        .collect()
}

fn decaps_batch(reqs: Vec<DecapsReq>) -> Vec<Result<Zeroizing<Vec<u8>>, Error>> {
    let n = reqs.len();
    let p = reqs[0].set;
    let (b, s) = match engine() {
        Ok(e) => e,
        Err(e) => return vec![Err(e); n],
    };
    let mut sss: Vec<Zeroizing<Vec<u8>>> = (0..n)
        .map(|_| Zeroizing::new(vec![0u8; p.shared_secret_len()]))
        .collect();
    let st = if n == 1 {
        let r = &reqs[0];
        vec![s.decaps(KeyArg::Bytes(Alg::Ctru(p), &r.sk), &r.ct, &mut sss[0])]
    } else {
        let rows: Vec<*mut [u8]> = sss.iter_mut().map(|v| &mut v[..] as *mut [u8]).collect();
        submit_and_wait(&s, n, |i| {
            let r = &reqs[i];
            let ss = rows[i];
            // SAFETY: as in `encaps_batch`.
            unsafe { Op::decaps(KeyArg::Bytes(Alg::Ctru(p), &r.sk), &r.ct, &mut *ss) }
        })
    };
    trace_batch("decaps", p.name(), &*b, n);
    st.into_iter()
        .zip(sss)
        .map(|(st, ss)| st.map(|()| ss))
        .collect()
}
