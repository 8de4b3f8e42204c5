//! The provider's only door into pqgpu. Every sign, verify and keygen goes through here, so the
//! serving layer (a dispatcher that coalesces concurrent callers into batches, pqgpu key
//! handles) can replace the bodies without touching the OpenSSL side.
//!
//! Today: outside OpenSSL async jobs each call is a batch of one on the backend chosen at load
//! time (CPU or GPU), run synchronously on the caller's thread. Inside async jobs, sign and
//! verify requests are queued and coalesced into batches (`batch`) while their jobs pause
//! (`async_job::dispatch`); keygen runs alone on a helper thread. A serving dispatcher that
//! also coalesces blocking callers replaces `batch` here.

use crate::async_job::{self, Done};
use crate::batch::Queue;
use crate::guard::guard;
use pqgpu::backend::{self, Backend, BackendKind, DecapsItem, EncapsItem, SignItem, VerifyItem};
use pqgpu::ctru;
use pqgpu::mldsa::{Message, ParamSet};
use pqgpu::{Error, Status};
use std::io::Write;
use std::sync::{Arc, Mutex};
use zeroize::Zeroizing;

/// An encoded secret key shared by the key objects that hold it (zeroed when the last goes).
pub type SecretKey = Arc<Zeroizing<Vec<u8>>>;

/// What the provider's configuration section chose.
struct Config {
    backend: BackendKind,
    trace: Option<std::fs::File>,
}

static CONFIG: Mutex<Option<Config>> = Mutex::new(None);
/// The backend for this process id (a forked child selects its own).
static BACKEND: Mutex<Option<(u32, Arc<dyn Backend>)>> = Mutex::new(None);

/// Sets the backend (`auto`, `cpu`, `gpu`) and an optional trace file (one line per operation,
/// for tests that must prove pqgpu did the work). Unknown backend names are an error.
pub fn configure(backend: Option<&str>, trace: Option<&str>) -> Result<(), Error> {
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
    *CONFIG.lock().unwrap_or_else(|e| e.into_inner()) = Some(Config { backend, trace });
    Ok(())
}

fn backend() -> Result<Arc<dyn Backend>, Error> {
    let pid = std::process::id();
    let mut g = BACKEND.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((p, b)) = g.as_ref() {
        if *p == pid {
            return Ok(b.clone());
        }
    }
    let kind = CONFIG
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map_or(BackendKind::Auto, |c| c.backend);
    let b = backend::select(kind)?;
    *g = Some((pid, b.clone()));
    Ok(b)
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
fn trace_batch(op: &str, p: ParamSet, b: &dyn Backend, n: usize) {
    let mut g = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = g.as_mut().and_then(|c| c.trace.as_mut()) {
        let place = if crate::pool::is_helper_thread() {
            "helper"
        } else {
            "caller"
        };
        let mut text = String::new();
        for _ in 0..n {
            text.push_str(&format!("{op} {} {:?} {place}\n", p.name(), b.kind()));
        }
        text.push_str(&format!("batch {op} {} {:?} n={n}\n", p.name(), b.kind()));
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
    pub sk: SecretKey,
    pub msg: OwnedMessage,
    pub rnd: Zeroizing<[u8; 32]>,
}

/// One verification request.
pub struct VerifyReq {
    pub set: ParamSet,
    pub pk: Arc<Vec<u8>>,
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
    async_job::dispatch(
        req,
        |r| {
            let mut out = sign_batch(vec![r]);
            out.pop().expect("one result per request")
        },
        |r, done| q.push((r, done), sign_queued),
    )
}

/// Verifies: `Ok(())` valid, `Err(VerifyFailed)` not. Batched like `sign`.
pub fn verify(req: VerifyReq) -> Result<(), Error> {
    let q = &VERIFY[index(req.set)];
    async_job::dispatch(
        req,
        |r| {
            let mut out = verify_batch(vec![r]);
            out.pop().expect("one result per request")
        },
        |r, done| q.push((r, done), verify_queued),
    )
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

/// One backend call for requests of one parameter set; one result per request.
fn sign_batch(reqs: Vec<SignReq>) -> Vec<Result<Vec<u8>, Error>> {
    let n = reqs.len();
    let p = reqs[0].set;
    let b = match backend() {
        Ok(b) => b,
        Err(e) => return vec![Err(e); n],
    };
    let mut sigs = vec![vec![0u8; p.signature_len()]; n];
    let mut st: Vec<Status> = vec![Ok(()); n];
    let items: Vec<SignItem<'_>> = reqs
        .iter()
        .map(|r| SignItem {
            sk: &r.sk,
            msg: r.msg.view(),
            rnd: Some(&r.rnd),
        })
        .collect();
    {
        let mut outs: Vec<&mut [u8]> = sigs.iter_mut().map(|s| &mut s[..]).collect();
        b.mldsa_sign(p, &items, &mut outs, &mut st);
    }
    trace_batch("sign", p, &*b, n);
    st.into_iter()
        .zip(sigs)
        .map(|(s, sig)| s.map(|()| sig))
        .collect()
}

fn verify_batch(reqs: Vec<VerifyReq>) -> Vec<Result<(), Error>> {
    let n = reqs.len();
    let p = reqs[0].set;
    let b = match backend() {
        Ok(b) => b,
        Err(e) => return vec![Err(e); n],
    };
    let items: Vec<VerifyItem<'_>> = reqs
        .iter()
        .map(|r| VerifyItem {
            pk: &r.pk,
            msg: r.msg.view(),
            sig: &r.sig,
        })
        .collect();
    let mut st: Vec<Status> = vec![Ok(()); n];
    b.mldsa_verify(p, &items, &mut st);
    trace_batch("verify", p, &*b, n);
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

/// CTRU-Prime Encaps to `pk`; `coins` (the 32-byte e) for a reproducible result, else fresh:
/// (ciphertext, shared secret).
pub fn kem_encaps(
    p: ctru::ParamSet,
    pk: Arc<Vec<u8>>,
    coins: Option<Zeroizing<[u8; 32]>>,
) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
    run(move || {
        let b = backend()?;
        let mut ct = vec![0u8; p.ciphertext_len()];
        let mut ss = Zeroizing::new(vec![0u8; p.shared_secret_len()]);
        let mut st: [Status; 1] = [Ok(())];
        let items = [EncapsItem {
            pk: &pk,
            coins: coins.as_deref(),
        }];
        b.kem_encaps(p, &items, &mut [&mut ct[..]], &mut [&mut ss[..]], &mut st);
        st[0]?;
        trace("encaps", p.name(), &*b);
        Ok((ct, ss))
    })
}

/// CTRU-Prime Decaps: the shared secret (the implicit-rejection key for a wrong ciphertext).
pub fn kem_decaps(
    p: ctru::ParamSet,
    sk: SecretKey,
    ct: Vec<u8>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    run(move || {
        let b = backend()?;
        let mut ss = Zeroizing::new(vec![0u8; p.shared_secret_len()]);
        let mut st: [Status; 1] = [Ok(())];
        let items = [DecapsItem { sk: &sk, ct: &ct }];
        b.kem_decaps(p, &items, &mut [&mut ss[..]], &mut st);
        st[0]?;
        trace("decaps", p.name(), &*b);
        Ok(ss)
    })
}
