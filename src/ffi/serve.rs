//! Asynchronous calls with key handles (single items and batches), completed by the
//! context's dispatcher rather than by a thread per job; completion notification (callback,
//! eventfd); and the serving options of a context.

use super::batch::{pending, Accepted};
use super::context::{context, pqg_context};
use super::guard::{
    boundary, context_string, input, optional, requests, required, signature, zero_secret, Out,
};
use super::job::{self, clear_out, hand_out, pqg_job};
use super::key::{key_for, key_ref, pqg_key, Family};
use super::slhdsa::opt_rand;
use super::{pqg_status, PQG_OK};
use crate::backend::{BackendKind, SignItem, VerifyItem};
use crate::mldsa::Message;
use crate::serve::{Completion, Key, KeyArg, KeyKind, Op, Opt};
use crate::slhdsa::Message as SlhMessage;
use crate::{api, Alg, Error};
use std::ffi::c_void;
use std::sync::Arc;

/// The longest time, in microseconds, the first item of a forming batch waits for more
/// items (default 500; 0..1000000).
pub const PQG_OPT_MAX_WAIT_US: i32 = 1;
/// The most items in one batch (default 65536; 1..1048576).
pub const PQG_OPT_MAX_BATCH: i32 = 2;
/// On a GPU context, batches of fewer items run on the CPU, and blocking calls run in the
/// calling thread while fewer items are outstanding (default: the number of cores, at most
/// 64; 0..1048576).
pub const PQG_OPT_CPU_CROSSOVER: i32 = 3;
/// Batches a context runs at once (default 4, or 2 on a GPU that other processes share through
/// NVIDIA's MPS; 1..64); read when the context first queues work.
pub const PQG_OPT_MAX_IN_FLIGHT: i32 = 4;
/// A pause in arrivals of this many microseconds flushes a forming batch at once ("nothing
/// else is arriving"; default 50; 0..1000000, capped at a quarter of the maximum wait).
pub const PQG_OPT_QUIET_US: i32 = 5;

/// A completion callback: `user` as given to `pqg_context_set_callback`, and the job whose
/// outputs and statuses have just been written.
pub type pqg_callback = Option<unsafe extern "C" fn(user: *mut c_void, job: *mut pqg_job)>;

/// Sets a serving option of a context (`PQG_OPT_*`). Options take effect for work queued
/// afterwards; set them before sharing the context between threads.
///
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (unknown option or
///         value out of its range). Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_context_set_option(
    ctx: *mut pqg_context,
    option: i32,
    value: i64,
) -> pqg_status {
    boundary(|| {
        // SAFETY: ctx is NULL or live (caller's promise).
        let c = unsafe { context(ctx) }?;
        c.serve.config.set(Opt::from_code(option)?, value)
    })
}

/// Reads a serving option of a context into `*value`.
///
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER` (ctx or value); `PQG_ERR_INVALID_ARGUMENT`
///         (unknown option). Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_context_get_option(
    ctx: *const pqg_context,
    option: i32,
    value: *mut i64,
) -> pqg_status {
    boundary(|| {
        // SAFETY: ctx is NULL or live (caller's promise).
        let c = unsafe { context(ctx) }?;
        if value.is_null() {
            return Err(Error::NullPointer);
        }
        let v = c.serve.config.get(Opt::from_code(option)?);
        // SAFETY: non-NULL and writable (caller's promise).
        unsafe { value.write(v as i64) };
        Ok(())
    })
}

/// A C callback and its user pointer, called from dispatcher threads.
#[derive(Clone, Copy)]
struct CCallback {
    f: unsafe extern "C" fn(*mut c_void, *mut pqg_job),
    user: *mut c_void,
}

// SAFETY: the caller of pqg_context_set_callback promises the callback may be called from
// any thread with this user pointer.
unsafe impl Send for CCallback {}
unsafe impl Sync for CCallback {}

/// Sets (or, with NULL `cb`, removes) the completion callback of a context's asynchronous
/// key-handle jobs (`pqg_*_key_submit`, `pqg_*_async`).
///
/// The callback is called once per job, when the job's outputs and statuses are written, just
/// before the job completes (`pqg_job_poll` turns `PQG_OK`, and waits return, right after the
/// callback returns); `job` is the pointer the submit call stored. It runs on a library thread
/// (a dispatcher thread; for a large batch, several of the library's worker threads at once,
/// so it must be thread-safe), or, when the job's items are all finished before the submit
/// call returns (every item rejected, n = 0, or very fast work), inside the submit call on the
/// caller's thread: so do not hold a lock in the caller that the callback takes. Inside the
/// callback read the results, hand the job to another thread, or write to a pipe; do NOT wait
/// on or free the job there (it would deadlock), and do not block for long (a library thread
/// is held). A job submitted before the callback was set may or may not get a call.
///
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER` (ctx). Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_context_set_callback(
    ctx: *mut pqg_context,
    cb: pqg_callback,
    user: *mut c_void,
) -> pqg_status {
    boundary(|| {
        // SAFETY: ctx is NULL or live (caller's promise).
        let c = unsafe { context(ctx) }?;
        let cb = cb.map(|f| {
            let cc = CCallback { f, user };
            Arc::new(move |id: usize| {
                let cc = cc;
                // SAFETY: `id` is the address of a live job (it completes, and so can be
                // freed, only after this returns); the callback's contract is the caller's.
                unsafe { (cc.f)(cc.user, id as *mut pqg_job) }
            }) as crate::serve::notify::Callback
        });
        c.serve.notify.set_callback(cb);
        Ok(())
    })
}

/// Gives the context's event file descriptor (a Linux eventfd, non-blocking, close-on-exec),
/// created at the first call: each completion of an asynchronous key-handle job adds to its
/// counter, so it polls readable (epoll, poll, select) once jobs have completed. Read 8 bytes
/// from it to reset it, then `pqg_job_poll` the outstanding jobs. The descriptor belongs to
/// the context (do not close it); it is closed when the context is freed and its jobs have
/// completed.
///
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER` (ctx or fd); `PQG_ERR_DEVICE` (the system refused
///         an eventfd). Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_context_event_fd(ctx: *mut pqg_context, fd: *mut i32) -> pqg_status {
    boundary(|| {
        // SAFETY: ctx is NULL or live (caller's promise).
        let c = unsafe { context(ctx) }?;
        if fd.is_null() {
            return Err(Error::NullPointer);
        }
        let f = c.serve.notify.event_fd()?;
        // SAFETY: non-NULL and writable (caller's promise).
        unsafe { fd.write(f) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Jobs completed by the dispatcher
// ---------------------------------------------------------------------------------------

/// Gives up the submitter's count of a dispatched job when dropped (also when unwinding),
/// so that the job completes once its queued items have.
struct Submitting<'a>(&'a pqg_job);

impl Drop for Submitting<'_> {
    fn drop(&mut self) {
        job::release(self.0);
    }
}

/// Starts a job of `n` items on the context's dispatcher: `build(i)` makes item i's op (an
/// error is that item's status, after `on_reject(i)` zeroes its secret outputs).
///
/// # Safety
/// `statuses` is `n` writable entries (non-NULL when n > 0), `out` is writable, and every
/// buffer the ops name stays valid until the job completes.
unsafe fn start(
    c: &pqg_context,
    n: usize,
    statuses: *mut pqg_status,
    out: *mut *mut pqg_job,
    mut build: impl FnMut(usize) -> Result<Op, Error>,
    mut on_reject: impl FnMut(usize),
) -> Result<(), Error> {
    if n > 0 && statuses.is_null() {
        return Err(Error::NullPointer);
    }
    // One count more than the items, given up once every item is handed over, so that the
    // job cannot complete while items are still being built.
    // SAFETY: the context's dispatcher keeps its notify state while it runs the items.
    let job = unsafe { job::dispatched(n + 1, statuses, &c.serve.notify) };
    let sink: Arc<dyn Completion> = job.clone();
    let _submitting = Submitting(&job);
    let mut ops = Vec::with_capacity(n);
    for i in 0..n {
        match build(i) {
            Ok(op) => ops.push((i, op)),
            Err(e) => {
                on_reject(i);
                sink.complete(i, Err(e));
            }
        }
    }
    // Handed out only now, so that a submit that fails on the way gives no job. The job
    // cannot complete (nor its callback run) before this: the submitter's count is still held.
    // SAFETY: out is writable (caller's promise); the job is live until pqg_job_free.
    unsafe { hand_out(job.clone(), out) };
    // SAFETY: the ops' buffers are valid until the job completes (caller's promise).
    unsafe { c.serve.submit(ops, sink) };
    Ok(())
}

/// Starts a job of one item, `op`, which has passed [`Op::check`]: the asynchronous single
/// item's path, with nothing allocated but the job (the op goes into its queue shard as it is).
///
/// # Safety
/// `status` is writable, `out` is writable, and the op's buffers stay valid until the job
/// completes.
#[inline]
unsafe fn start_one(
    c: &pqg_context,
    status: *mut pqg_status,
    out: *mut *mut pqg_job,
    op: Op,
) -> Result<(), Error> {
    // SAFETY: as in `start`.
    let job = unsafe { job::dispatched(1, status, &c.serve.notify) };
    // SAFETY: out is writable (caller's promise); the job is live until pqg_job_free.
    unsafe { hand_out(job.clone(), out) };
    // SAFETY: the op's buffers are valid until the job completes (caller's promise); it has
    // passed its checks (this function's contract).
    unsafe { c.serve.submit_one(op, job) };
    Ok(())
}

/// One signing request of `pqg_mldsa_sign_key_submit` and `pqg_slhdsa_sign_key_submit` (the
/// key is the call's handle).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pqg_key_sign_request {
    /// The message; may be NULL when `msg_len` is 0.
    pub msg: *const u8,
    pub msg_len: usize,
    /// The FIPS 204 context string, 0..255 bytes; may be NULL when `context_len` is 0.
    pub context: *const u8,
    pub context_len: usize,
    /// Signing randomness (ML-DSA: 32 bytes; SLH-DSA: n bytes of opt_rand), or NULL for
    /// hedged signing (fresh randomness).
    pub rnd: *const u8,
    /// Receives the signature, `pqg_signature_len(alg)` bytes.
    pub sig: *mut u8,
}

/// One verification request of `pqg_mldsa_verify_key_submit` and `pqg_slhdsa_verify_key_submit`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pqg_key_verify_request {
    /// The message; may be NULL when `msg_len` is 0.
    pub msg: *const u8,
    pub msg_len: usize,
    /// The FIPS 204 context string, 0..255 bytes; may be NULL when `context_len` is 0.
    pub context: *const u8,
    pub context_len: usize,
    /// The signature; a length other than `pqg_signature_len(alg)` fails to verify.
    pub sig: *const u8,
    pub sig_len: usize,
}

/// One encapsulation request of `pqg_kem_encaps_key_submit`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pqg_key_encaps_request {
    /// 32 bytes of coins for deterministic encapsulation, or NULL for fresh randomness.
    pub coins: *const u8,
    /// Receives the ciphertext, `pqg_ciphertext_len(alg)` bytes.
    pub ct: *mut u8,
    /// Receives the shared secret, `pqg_shared_secret_len(alg)` bytes (zeroed if the item fails).
    pub ss: *mut u8,
}

/// One decapsulation request of `pqg_kem_decaps_key_submit`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pqg_key_decaps_request {
    /// The ciphertext, `pqg_ciphertext_len(alg)` bytes.
    pub ct: *const u8,
    /// Receives the shared secret, `pqg_shared_secret_len(alg)` bytes (zeroed if the item fails).
    pub ss: *mut u8,
}

/// Whether a key-handle submit of `n` items runs as a batch of its own instead of joining the
/// dispatcher's queue: on a GPU context, when it is at least half the maximum batch. Such a
/// submit is a GPU batch already; the queue would add only its per-item bookkeeping (on the
/// H200, 65,536 ML-DSA-44 signatures took 30-35 ms through it against 29 ms as a batch with
/// every request's own key), while as a batch the handle's key is sent and expanded once.
fn runs_as_batch(c: &pqg_context, n: usize) -> bool {
    let half = (c.serve.config.get(Opt::MaxBatch) as usize / 2).max(1);
    c.backend.kind() == BackendKind::Gpu && n >= half
}

/// The handle's encoded key for the lifetime of a batch job.
///
/// # Safety
/// The caller keeps a clone of `k` alive until the job has stopped using the slice.
unsafe fn key_bytes(k: &Key) -> &'static [u8] {
    // SAFETY: the bytes live in the handle's shared allocation, which the clone keeps.
    unsafe { &*(k.bytes() as *const [u8]) }
}

/// Signs a large handle submit as one batch; `None` when its signature buffers are not
/// pairwise apart (the queue then takes it, as it takes any submit).
///
/// # Safety
/// As [`start`].
unsafe fn sign_batch(
    c: &pqg_context,
    k: &Key,
    reqs: &[pqg_key_sign_request],
    statuses: *mut pqg_status,
    out: *mut *mut pqg_job,
) -> Option<()> {
    let Alg::MlDsa(p) = k.alg() else { return None };
    let key = k.clone();
    // SAFETY: `key` moves into the job below and is dropped after the batch.
    let sk = unsafe { key_bytes(&key) };
    let len = p.signature_len();
    // SAFETY: each request's buffers are valid until the job completes (contract).
    let accepted = Accepted::check(reqs, |r| unsafe {
        let (msg, ctx) = (
            input(r.msg, r.msg_len)?,
            context_string(r.context, r.context_len)?,
        );
        let item = SignItem {
            sk,
            msg: Message::Pure { ctx, msg },
            rnd: optional::<32>(r.rnd),
        };
        Ok((item, Out::new(r.sig, len)?))
    });
    // SAFETY: every accepted sig buffer is writable for the signature length until the job
    // completes (contract); the job uses the rows only until it merges its statuses.
    let mut accepted = unsafe { accepted.outputs_apart() }.ok()?;
    let backend = c.backend.clone();
    let work: job::Work = Box::new(move || {
        let mut ran = pending(accepted.items.len());
        let sigs = &mut accepted.rows[0];
        let _ = api::mldsa_sign(&*backend, p, &accepted.items, sigs, &mut ran);
        let st = accepted.merge(ran);
        drop(key);
        st
    });
    let notify = Some(c.serve.notify.clone());
    // SAFETY: out was checked non-NULL (`front`).
    unsafe { hand_out(job::start(reqs.len(), statuses, work, notify), out) };
    Some(())
}

/// Verifies a large handle submit as one batch.
///
/// # Safety
/// As [`start`].
unsafe fn verify_batch(
    c: &pqg_context,
    k: &Key,
    reqs: &[pqg_key_verify_request],
    statuses: *mut pqg_status,
    out: *mut *mut pqg_job,
) -> Option<()> {
    let Alg::MlDsa(p) = k.alg() else { return None };
    let key = k.clone();
    // SAFETY: `key` moves into the job below and is dropped after the batch.
    let pk = unsafe { key_bytes(&key) };
    // SAFETY: each request's buffers are valid until the job completes (contract).
    let accepted = Accepted::check(reqs, |r| unsafe {
        let (msg, ctx) = (
            input(r.msg, r.msg_len)?,
            context_string(r.context, r.context_len)?,
        );
        let sig = signature(r.sig, r.sig_len, p.signature_len())?;
        let item = VerifyItem {
            pk,
            msg: Message::Pure { ctx, msg },
            sig,
        };
        Ok((item, ()))
    })
    .without_outputs();
    let backend = c.backend.clone();
    let work: job::Work = Box::new(move || {
        let mut ran = pending(accepted.items.len());
        let _ = api::mldsa_verify(&*backend, p, &accepted.items, &mut ran);
        let st = accepted.merge(ran);
        drop(key);
        st
    });
    let notify = Some(c.serve.notify.clone());
    // SAFETY: out was checked non-NULL (`front`).
    unsafe { hand_out(job::start(reqs.len(), statuses, work, notify), out) };
    Some(())
}

/// # Safety
/// The request's buffers are valid (for their lengths) until the job completes; the key
/// handle until the op is queued (the ops are lent it: the queue then holds it for them).
unsafe fn sign_op(k: &crate::serve::Key, r: &pqg_key_sign_request) -> Result<Op, Error> {
    let len = k.alg().signature_len();
    // SAFETY: forwarded.
    unsafe {
        let (msg, ctx) = (input(r.msg, r.msg_len)?, input(r.context, r.context_len)?);
        let sig = super::key::output(r.sig, len, len)?;
        match k.alg() {
            Alg::SlhDsa(p) => Op::slh_sign(
                KeyArg::Lent(k),
                &SlhMessage::Pure { ctx, msg },
                opt_rand(r.rnd, p.n()),
                sig,
            ),
            _ => Op::sign(
                KeyArg::Lent(k),
                &Message::Pure { ctx, msg },
                optional::<32>(r.rnd),
                sig,
            ),
        }
    }
}

/// # Safety
/// As [`sign_op`].
unsafe fn verify_op(k: &crate::serve::Key, r: &pqg_key_verify_request) -> Result<Op, Error> {
    // SAFETY: forwarded.
    unsafe {
        let (msg, ctx) = (input(r.msg, r.msg_len)?, input(r.context, r.context_len)?);
        let sig = required(r.sig, r.sig_len)?;
        match k.alg() {
            Alg::SlhDsa(_) => Op::slh_verify(KeyArg::Lent(k), &SlhMessage::Pure { ctx, msg }, sig),
            _ => Op::verify(KeyArg::Lent(k), &Message::Pure { ctx, msg }, sig),
        }
    }
}

/// # Safety
/// As [`sign_op`].
unsafe fn encaps_op(k: &crate::serve::Key, r: &pqg_key_encaps_request) -> Result<Op, Error> {
    let a = k.alg();
    // SAFETY: forwarded.
    unsafe {
        if r.ss.is_null() {
            return Err(Error::NullPointer);
        }
        let ct = super::key::output(r.ct, a.ciphertext_len(), a.ciphertext_len())?;
        let ss = super::key::output(r.ss, a.shared_secret_len(), a.shared_secret_len())?;
        Op::encaps(KeyArg::Lent(k), optional::<32>(r.coins), ct, ss)
    }
}

/// # Safety
/// As [`sign_op`].
unsafe fn decaps_op(k: &crate::serve::Key, r: &pqg_key_decaps_request) -> Result<Op, Error> {
    let a = k.alg();
    // SAFETY: forwarded.
    unsafe {
        let ct = required(r.ct, a.ciphertext_len())?;
        let ss = super::key::output(r.ss, a.shared_secret_len(), a.shared_secret_len())?;
        Op::decaps(KeyArg::Lent(k), ct, ss)
    }
}

/// The common front of the key-handle submits: clears `job`, resolves ctx, key (checked to
/// be `kind` of the right family) and the request array.
///
/// # Safety
/// The pointers carry the promises of the submit functions' documentation.
unsafe fn front<'a, T>(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    reqs: *const T,
    n: usize,
    job: *mut *mut pqg_job,
    kind: KeyKind,
    family: Family,
) -> Result<(&'a pqg_context, &'a crate::serve::Key, &'a [T]), Error> {
    // SAFETY: forwarded.
    unsafe {
        clear_out(job)?;
        let (c, k) = (context(ctx)?, key_ref(key)?);
        key_for(k, kind, family)?;
        Ok((c, k, requests(reqs, n)?))
    }
}

/// Starts signing `n` messages with one secret-key handle (ML-DSA.Sign, pure form). The items
/// join the context's dispatcher queue and are batched with other work on the context; on a
/// GPU context a submit of at least half the maximum batch (`PQG_OPT_MAX_BATCH`) runs as a
/// batch of its own, with the key sent to the GPU and expanded once.
///
/// @param key       a `PQG_KEY_SECRET` ML-DSA handle (it may be freed once this returns).
/// @param[in]  reqs      `n` requests; the array may be freed once this returns, the buffers
///                       it points to must stay valid until the job completes.
/// @param[out] statuses  `n` entries, written as items complete: per item the status
///                       `pqg_mldsa_sign_key` would return.
/// @param[out] job       receives the job (free it with `pqg_job_free`); NULL on failure.
/// @return `PQG_OK` when the job was started; `PQG_ERR_NULL_POINTER` (ctx, key or job, reqs or
///         statuses with n > 0); `PQG_ERR_INVALID_ARGUMENT` (not an ML-DSA secret-key handle,
///         n too large); `PQG_ERR_PANIC`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_sign_key_submit(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    reqs: *const pqg_key_sign_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    // SAFETY: the pointers carry this function's documented promises.
    boundary(|| unsafe { sign_key_submit(ctx, key, reqs, n, statuses, job, Family::MlDsa) })
}

/// The key-handle signing submits of every signature family.
///
/// # Safety
/// The pointers carry the promises of the submit functions' documentation.
unsafe fn sign_key_submit(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    reqs: *const pqg_key_sign_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
    family: Family,
) -> Result<(), Error> {
    // SAFETY: forwarded.
    unsafe {
        let (c, k, reqs) = front(ctx, key, reqs, n, job, KeyKind::Secret, family)?;
        if n > 0 && statuses.is_null() {
            return Err(Error::NullPointer);
        }
        if runs_as_batch(c, n) && sign_batch(c, k, reqs, statuses, job).is_some() {
            return Ok(());
        }
        start(c, n, statuses, job, |i| sign_op(k, &reqs[i]), |_| {})
    }
}

/// The key-handle verifying submits of every signature family.
///
/// # Safety
/// As [`sign_key_submit`].
unsafe fn verify_key_submit(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    reqs: *const pqg_key_verify_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
    family: Family,
) -> Result<(), Error> {
    // SAFETY: forwarded.
    unsafe {
        let (c, k, reqs) = front(ctx, key, reqs, n, job, KeyKind::Public, family)?;
        if n > 0 && statuses.is_null() {
            return Err(Error::NullPointer);
        }
        if runs_as_batch(c, n) && verify_batch(c, k, reqs, statuses, job).is_some() {
            return Ok(());
        }
        start(c, n, statuses, job, |i| verify_op(k, &reqs[i]), |_| {})
    }
}

/// Starts signing `n` messages with one SLH-DSA secret-key handle (slh_sign, pure form), each
/// request's `rnd` being n bytes of opt_rand or NULL (hedged). The items join the context's
/// dispatcher queue and are batched with other work on the context.
///
/// @param key  a `PQG_KEY_SECRET` SLH-DSA handle (it may be freed once this returns).
/// @param[out] statuses  `n` entries, written as items complete: per item the status
///                       `pqg_slhdsa_sign_key` would return.
/// Other parameters, lifetimes and statuses as `pqg_mldsa_sign_key_submit`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_sign_key_submit(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    reqs: *const pqg_key_sign_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    // SAFETY: the pointers carry this function's documented promises.
    boundary(|| unsafe { sign_key_submit(ctx, key, reqs, n, statuses, job, Family::SlhDsa) })
}

/// Starts verifying `n` signatures with one SLH-DSA public-key handle (slh_verify, pure form).
///
/// @param key  a `PQG_KEY_PUBLIC` SLH-DSA handle.
/// Other parameters and statuses as `pqg_mldsa_verify_key_submit`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_verify_key_submit(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    reqs: *const pqg_key_verify_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    // SAFETY: the pointers carry this function's documented promises.
    boundary(|| unsafe { verify_key_submit(ctx, key, reqs, n, statuses, job, Family::SlhDsa) })
}

/// Starts verifying `n` signatures with one public-key handle (ML-DSA.Verify, pure form).
///
/// @param key  a `PQG_KEY_PUBLIC` ML-DSA handle.
/// @param[out] statuses  `n` entries: `PQG_OK` (valid), `PQG_ERR_VERIFY_FAILED`, or the item's
///                       own error.
/// Other parameters and statuses as `pqg_mldsa_sign_key_submit`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_verify_key_submit(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    reqs: *const pqg_key_verify_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    // SAFETY: the pointers carry this function's documented promises.
    boundary(|| unsafe { verify_key_submit(ctx, key, reqs, n, statuses, job, Family::MlDsa) })
}

/// Starts `n` encapsulations to one KEM public-key handle.
///
/// @param key  a `PQG_KEY_PUBLIC` KEM handle.
/// Other parameters and statuses as `pqg_mldsa_sign_key_submit`; a failed item's `ss` is zeroed.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_encaps_key_submit(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    reqs: *const pqg_key_encaps_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    boundary(|| {
        // SAFETY: the pointers carry this function's documented promises.
        unsafe {
            let (c, k, reqs) = front(ctx, key, reqs, n, job, KeyKind::Public, Family::Kem)?;
            let len = k.alg().shared_secret_len();
            start(
                c,
                n,
                statuses,
                job,
                |i| encaps_op(k, &reqs[i]),
                |i| zero_secret(reqs[i].ss, len),
            )
        }
    })
}

/// Starts `n` decapsulations with one KEM secret-key handle.
///
/// @param key  a `PQG_KEY_SECRET` CTRU-Prime handle.
/// Other parameters and statuses as `pqg_mldsa_sign_key_submit`; a failed item's `ss` is zeroed.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_decaps_key_submit(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    reqs: *const pqg_key_decaps_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    boundary(|| {
        // SAFETY: the pointers carry this function's documented promises.
        unsafe {
            let (c, k, reqs) = front(ctx, key, reqs, n, job, KeyKind::Secret, Family::Kem)?;
            let len = k.alg().shared_secret_len();
            start(
                c,
                n,
                statuses,
                job,
                |i| decaps_op(k, &reqs[i]),
                |i| zero_secret(reqs[i].ss, len),
            )
        }
    })
}

/// Starts signing one message with a secret-key handle: the asynchronous form of
/// `pqg_mldsa_sign_key`, cheap enough to keep thousands outstanding (no thread per job; the
/// context's dispatcher batches them and completes the job).
///
/// @param[out] sig     `pqg_signature_len(alg)` bytes (`sig_len`), written before completion.
/// @param[out] status  receives the item's status when the job completes.
/// @param[out] job     receives the job (free it with `pqg_job_free`); NULL on failure.
/// Other parameters as `pqg_mldsa_sign_key`; all buffers must stay valid until the job
/// completes.
/// @return `PQG_OK` when the job was started (the result is in `*status`); otherwise the call's
///         error (as `pqg_mldsa_sign_key`), and no job.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_sign_async(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    rnd: *const u8,
    sig: *mut u8,
    sig_len: usize,
    status: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    let r = pqg_key_sign_request {
        msg,
        msg_len,
        context,
        context_len,
        rnd,
        sig,
    };
    // SAFETY: the pointers carry this function's documented promises.
    boundary(|| unsafe { sign_async(ctx, key, &r, sig_len, status, job, Family::MlDsa) })
}

/// The single-item asynchronous signing of every signature family.
///
/// # Safety
/// The pointers carry the promises of the async functions' documentation.
unsafe fn sign_async(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    r: &pqg_key_sign_request,
    sig_len: usize,
    status: *mut pqg_status,
    job: *mut *mut pqg_job,
    family: Family,
) -> Result<(), Error> {
    // SAFETY: forwarded.
    unsafe {
        let (c, k, _) = front::<u8>(ctx, key, std::ptr::null(), 0, job, KeyKind::Secret, family)?;
        if status.is_null() || r.sig.is_null() {
            return Err(Error::NullPointer);
        }
        if sig_len != k.alg().signature_len() {
            return Err(Error::BadLength);
        }
        let op = sign_op(k, r)?;
        op.check()?;
        start_one(c, status, job, op)
    }
}

/// The single-item asynchronous verification of every signature family.
///
/// # Safety
/// As [`sign_async`].
unsafe fn verify_async(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    r: &pqg_key_verify_request,
    status: *mut pqg_status,
    job: *mut *mut pqg_job,
    family: Family,
) -> Result<(), Error> {
    // SAFETY: forwarded.
    unsafe {
        let (c, k, _) = front::<u8>(ctx, key, std::ptr::null(), 0, job, KeyKind::Public, family)?;
        if status.is_null() {
            return Err(Error::NullPointer);
        }
        let op = verify_op(k, r)?;
        op.check()?;
        start_one(c, status, job, op)
    }
}

/// Starts verifying one signature with a public-key handle (async form of
/// `pqg_mldsa_verify_key`); the verdict (`PQG_OK` or `PQG_ERR_VERIFY_FAILED`) goes to `*status`.
/// Parameters, lifetimes and return values as `pqg_mldsa_sign_async`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_verify_async(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    sig: *const u8,
    sig_len: usize,
    status: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    let r = pqg_key_verify_request {
        msg,
        msg_len,
        context,
        context_len,
        sig,
        sig_len,
    };
    // SAFETY: the pointers carry this function's documented promises.
    boundary(|| unsafe { verify_async(ctx, key, &r, status, job, Family::MlDsa) })
}

/// Starts signing one message with an SLH-DSA secret-key handle: the asynchronous form of
/// `pqg_slhdsa_sign_key` (`rnd`: n bytes of opt_rand, or NULL for hedged).
/// Parameters, lifetimes and return values as `pqg_mldsa_sign_async`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_sign_async(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    rnd: *const u8,
    sig: *mut u8,
    sig_len: usize,
    status: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    let r = pqg_key_sign_request {
        msg,
        msg_len,
        context,
        context_len,
        rnd,
        sig,
    };
    // SAFETY: the pointers carry this function's documented promises.
    boundary(|| unsafe { sign_async(ctx, key, &r, sig_len, status, job, Family::SlhDsa) })
}

/// Starts verifying one signature with an SLH-DSA public-key handle (async form of
/// `pqg_slhdsa_verify_key`); the verdict goes to `*status`.
/// Parameters, lifetimes and return values as `pqg_mldsa_sign_async`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_verify_async(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    sig: *const u8,
    sig_len: usize,
    status: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    let r = pqg_key_verify_request {
        msg,
        msg_len,
        context,
        context_len,
        sig,
        sig_len,
    };
    // SAFETY: the pointers carry this function's documented promises.
    boundary(|| unsafe { verify_async(ctx, key, &r, status, job, Family::SlhDsa) })
}

/// Starts one encapsulation to a public-key handle (async form of `pqg_kem_encaps_key`).
/// Parameters, lifetimes and return values as `pqg_mldsa_sign_async`; `ss` is zeroed if the
/// call or the item fails.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_encaps_async(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    coins: *const u8,
    ct: *mut u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
    status: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    let st = boundary(|| {
        // SAFETY: the pointers carry this function's documented promises.
        unsafe {
            let r = pqg_key_encaps_request { coins, ct, ss };
            let (c, k, _) = front::<u8>(
                ctx,
                key,
                std::ptr::null(),
                0,
                job,
                KeyKind::Public,
                Family::Kem,
            )?;
            if status.is_null() {
                return Err(Error::NullPointer);
            }
            let a = k.alg();
            if ct.is_null() || ss.is_null() {
                return Err(Error::NullPointer);
            }
            if ct_len != a.ciphertext_len() || ss_len != a.shared_secret_len() {
                return Err(Error::BadLength);
            }
            let op = encaps_op(k, &r)?;
            op.check()?;
            start_one(c, status, job, op)
        }
    });
    if st != PQG_OK {
        // SAFETY: ss is NULL or ss_len writable bytes (caller's promise).
        unsafe { zero_secret(ss, ss_len) };
    }
    st
}

/// Starts one decapsulation with a secret-key handle (async form of `pqg_kem_decaps_key`).
/// Parameters, lifetimes and return values as `pqg_mldsa_sign_async`; `ss` is zeroed if the
/// call or the item fails.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_decaps_async(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    ct: *const u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
    status: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    let st = boundary(|| {
        // SAFETY: the pointers carry this function's documented promises.
        unsafe {
            let r = pqg_key_decaps_request { ct, ss };
            let (c, k, _) = front::<u8>(
                ctx,
                key,
                std::ptr::null(),
                0,
                job,
                KeyKind::Secret,
                Family::Kem,
            )?;
            if status.is_null() {
                return Err(Error::NullPointer);
            }
            let a = k.alg();
            if ct.is_null() || ss.is_null() {
                return Err(Error::NullPointer);
            }
            if ct_len != a.ciphertext_len() || ss_len != a.shared_secret_len() {
                return Err(Error::BadLength);
            }
            let op = decaps_op(k, &r)?;
            op.check()?;
            start_one(c, status, job, op)
        }
    });
    if st != PQG_OK {
        // SAFETY: ss is NULL or ss_len writable bytes (caller's promise).
        unsafe { zero_secret(ss, ss_len) };
    }
    st
}
