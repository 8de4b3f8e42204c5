//! The provider's only door into pqgpu. Every sign, verify and keygen goes through here, so the
//! serving layer (a dispatcher that coalesces concurrent callers into batches, pqgpu key
//! handles) can replace the bodies without touching the OpenSSL side.
//!
//! Today: each call is a batch of one on the backend chosen at load time (CPU or GPU), run
//! synchronously on the caller's thread; inside an OpenSSL async job it runs on a helper thread
//! while the job is paused (`async_job::run`), which is where a coalescing dispatcher plugs in.

use crate::guard::guard;
use pqgpu::backend::{self, Backend, BackendKind, SignItem, VerifyItem};
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
fn trace(op: &str, p: ParamSet, b: &dyn Backend) {
    let mut g = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = g.as_mut().and_then(|c| c.trace.as_mut()) {
        let helper = crate::pool::is_helper_thread();
        let place = if helper { "helper" } else { "caller" };
        // One write per line: lines from several processes sharing the file stay whole.
        let _ = f.write_all(format!("{op} {} {:?} {place}\n", p.name(), b.kind()).as_bytes());
    }
}

/// Runs `work` where it may run (see `async_job::run`); a panic in it is `Error::Panic`.
fn run<R: Send + 'static>(
    work: impl FnOnce() -> Result<R, Error> + Send + 'static,
) -> Result<R, Error> {
    crate::async_job::run(move || guard(Err(Error::Panic), work))
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
        trace("keygen", p, &*b);
        Ok((pk, Arc::new(sk)))
    })
}

/// Signs; `rnd` all-zero is deterministic signing. Returns the signature.
pub fn sign(
    p: ParamSet,
    sk: SecretKey,
    msg: OwnedMessage,
    rnd: Zeroizing<[u8; 32]>,
) -> Result<Vec<u8>, Error> {
    run(move || {
        let b = backend()?;
        let mut sig = vec![0u8; p.signature_len()];
        let item = SignItem {
            sk: &sk,
            msg: msg.view(),
            rnd: Some(&rnd),
        };
        let mut st: [Status; 1] = [Ok(())];
        b.mldsa_sign(p, &[item], &mut [&mut sig[..]], &mut st);
        st[0]?;
        trace("sign", p, &*b);
        Ok(sig)
    })
}

/// Verifies: `Ok(())` valid, `Err(VerifyFailed)` not.
pub fn verify(p: ParamSet, pk: Arc<Vec<u8>>, msg: OwnedMessage, sig: Vec<u8>) -> Result<(), Error> {
    run(move || {
        let b = backend()?;
        let item = VerifyItem {
            pk: &pk,
            msg: msg.view(),
            sig: &sig,
        };
        let mut st: [Status; 1] = [Ok(())];
        b.mldsa_verify(p, &[item], &mut st);
        trace("verify", p, &*b);
        st[0]
    })
}
