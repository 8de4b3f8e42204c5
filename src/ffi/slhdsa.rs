//! SLH-DSA (FIPS 205) entry points: one-shot keygen / sign / verify (pure and HashSLH-DSA)
//! and their batch forms. The request structs are ML-DSA's (`pqg_sign_request`,
//! `pqg_verify_request`), with `rnd` of n bytes.
//!
//! Check order, as for ML-DSA: NULL context, algorithm, NULL pointers, buffer lengths, then
//! the message's own shape (context over 255 bytes, digest length).

use super::batch::{disjoint, pending, Accepted};
use super::context::{context, pqg_context};
use super::guard::{boundary, context_string, input, required, signature, span_of, Out};
use super::job::{self, clear_out, hand_out, pqg_job};
use super::mldsa::{pqg_hash, pqg_sign_request, pqg_verify_request};
use super::{keygen, pqg_alg, pqg_status};
use crate::backend::{SlhSignItem, SlhVerifyItem};
use crate::slhdsa::{Message, ParamSet, PreHash};
use crate::{api, Alg, Error};

/// The SLH-DSA parameter set of `alg`; any other or unknown value is `InvalidArgument`.
fn slhdsa_params(alg: pqg_alg) -> Result<ParamSet, Error> {
    match Alg::from_code(alg)? {
        Alg::SlhDsa(p) => Ok(p),
        _ => Err(Error::InvalidArgument),
    }
}

/// `rnd`: NULL (hedged) or n readable bytes.
///
/// # Safety
/// `rnd` is NULL or `n` readable bytes for `'a`.
pub(crate) unsafe fn opt_rand<'a>(rnd: *const u8, n: usize) -> Option<&'a [u8]> {
    // SAFETY: non-NULL: n readable bytes (caller's promise).
    (!rnd.is_null()).then(|| unsafe { std::slice::from_raw_parts(rnd, n) })
}

/// Generates an SLH-DSA key pair (FIPS 205 slh_keygen, or slh_keygen_internal from a seed).
///
/// @param alg   `PQG_SLH_DSA_SHA2_128S` … `PQG_SLH_DSA_SHAKE_256F`.
/// @param[in]  seed  3n bytes, SK.seed || SK.prf || PK.seed, or NULL for fresh randomness.
/// @param[out] pk    `pqg_public_key_len(alg)` bytes (2n), written on success only.
/// @param[out] sk    `pqg_secret_key_len(alg)` bytes (4n), written on success; zeroed on any
///                   failure except a rejected `sk_len`.
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (unknown or
///         non-SLH-DSA alg); `PQG_ERR_BAD_LENGTH`; `PQG_ERR_RNG`; `PQG_ERR_PANIC`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_keygen(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    seed: *const u8,
    pk: *mut u8,
    pk_len: usize,
    sk: *mut u8,
    sk_len: usize,
) -> pqg_status {
    // SAFETY: the pointers carry the promises of this function's documentation.
    unsafe {
        keygen::one(
            ctx,
            seed,
            pk,
            pk_len,
            sk,
            sk_len,
            slhdsa_params(alg).map(Alg::SlhDsa),
        )
    }
}

/// Signs; shared by the pure and pre-hash forms.
///
/// # Safety
/// Every pointer is NULL or valid for its length for the duration of the call.
#[allow(clippy::too_many_arguments)]
unsafe fn sign_one<'a>(
    ctx: *const pqg_context,
    alg: pqg_alg,
    sk: *const u8,
    sk_len: usize,
    message: impl FnOnce() -> Result<Message<'a>, Error>,
    rnd: *const u8,
    sig: *mut u8,
    sig_len: usize,
) -> Result<(), Error> {
    // SAFETY: ctx is NULL or live (caller's promise).
    let ctx = unsafe { context(ctx) }?;
    let p = slhdsa_params(alg)?;
    // SAFETY: sk is NULL or sk_len readable bytes (caller's promise).
    let sk = unsafe { required(sk, sk_len) }?;
    let sig = Out::new(sig, sig_len)?;
    let msg = message()?;
    if sk.len() != p.secret_key_len() {
        return Err(Error::BadLength);
    }
    let sig = sig.expect_len(p.signature_len())?;
    msg.validate()?;
    let spans = [span_of(sk.as_ptr(), sk.len()), span_of(rnd, p.n())]
        .into_iter()
        .chain(message_spans(&msg));
    for input in spans {
        disjoint(vec![vec![sig.span(), input]])?;
    }
    // SAFETY: rnd is NULL or n readable bytes (caller's promise).
    let rnd = unsafe { opt_rand(rnd, p.n()) };
    // SAFETY: sig is writable for its checked length during this call and overlaps no input.
    let sig = unsafe { sig.slice() };
    api::slhdsa_sign_one(&*ctx.backend, p, sk, msg, rnd, sig)
}

/// The address ranges of a message's caller buffers.
fn message_spans(msg: &Message<'_>) -> [(usize, usize); 2] {
    let span = |b: &[u8]| span_of(b.as_ptr(), b.len());
    match *msg {
        Message::Pure { ctx, msg } => [span(ctx), span(msg)],
        Message::PreHashed { ctx, digest, .. } => [span(ctx), span(digest)],
        Message::Internal(m) => [span(m), (0, 0)],
    }
}

/// Verifies; shared by the pure and pre-hash forms.
///
/// # Safety
/// Every pointer is NULL or valid for its length for the duration of the call.
unsafe fn verify_one<'a>(
    ctx: *const pqg_context,
    alg: pqg_alg,
    pk: *const u8,
    pk_len: usize,
    message: impl FnOnce() -> Result<Message<'a>, Error>,
    sig: *const u8,
    sig_len: usize,
) -> Result<(), Error> {
    // SAFETY: ctx is NULL or live (caller's promise).
    let ctx = unsafe { context(ctx) }?;
    let p = slhdsa_params(alg)?;
    // SAFETY: pk is NULL or pk_len readable bytes (caller's promise).
    let pk = unsafe { required(pk, pk_len) }?;
    let msg = message()?;
    if pk.len() != p.public_key_len() {
        return Err(Error::BadLength);
    }
    msg.validate()?;
    // SAFETY: sig is NULL or sig_len readable bytes (caller's promise).
    let sig = unsafe { signature(sig, sig_len, p.signature_len()) }?;
    api::slhdsa_verify_one(&*ctx.backend, p, pk, msg, sig)
}

/// Signs a message with SLH-DSA (FIPS 205 slh_sign, pure form).
///
/// @param[in]  sk       the secret key, `pqg_secret_key_len(alg)` bytes.
/// @param[in]  msg      the message (NULL allowed when `msg_len` is 0).
/// @param[in]  context  the context string, 0..255 bytes (NULL allowed when 0).
/// @param[in]  rnd      n bytes of opt_rand; NULL = hedged (fresh randomness); PK.seed (the
///                      secret key's bytes 2n..3n) = the deterministic variant.
/// @param[out] sig      `pqg_signature_len(alg)` bytes, written on success only.
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (unknown alg, context
///         over 255 bytes); `PQG_ERR_BAD_LENGTH` (sk or sig); `PQG_ERR_RNG`; `PQG_ERR_PANIC`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_sign(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    sk: *const u8,
    sk_len: usize,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    rnd: *const u8,
    sig: *mut u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        let message = || {
            // SAFETY: msg and context are NULL or readable for their lengths (caller's promise).
            let (msg, ctx) =
                unsafe { (input(msg, msg_len)?, context_string(context, context_len)?) };
            Ok(Message::Pure { ctx, msg })
        };
        // SAFETY: the pointer arguments are forwarded under the caller's promise.
        unsafe { sign_one(ctx, alg, sk, sk_len, message, rnd, sig, sig_len) }
    })
}

/// Verifies an SLH-DSA signature (FIPS 205 slh_verify, pure form).
///
/// @param[in] pk   the public key, `pqg_public_key_len(alg)` bytes.
/// @param[in] sig  the signature; any length other than `pqg_signature_len(alg)` is
///                 `PQG_ERR_VERIFY_FAILED`.
/// @return `PQG_OK` (valid); `PQG_ERR_VERIFY_FAILED`; `PQG_ERR_NULL_POINTER`;
///         `PQG_ERR_INVALID_ARGUMENT` (unknown alg, context over 255 bytes);
///         `PQG_ERR_BAD_LENGTH` (pk); `PQG_ERR_PANIC`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_verify(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    pk: *const u8,
    pk_len: usize,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    sig: *const u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        let message = || {
            // SAFETY: msg and context are NULL or readable for their lengths (caller's promise).
            let (msg, ctx) =
                unsafe { (input(msg, msg_len)?, context_string(context, context_len)?) };
            Ok(Message::Pure { ctx, msg })
        };
        // SAFETY: the pointer arguments are forwarded under the caller's promise.
        unsafe { verify_one(ctx, alg, pk, pk_len, message, sig, sig_len) }
    })
}

/// Signs a pre-hashed message (FIPS 205 hash_slh_sign).
///
/// @param ph          the hash function the caller used (`PQG_HASH_*`); unknown is
///                    `PQG_ERR_INVALID_ARGUMENT`.
/// @param[in] digest  PH(M), exactly the hash's output length (SHAKE-128: 32 bytes,
///                    SHAKE-256: 64 bytes), else `PQG_ERR_BAD_LENGTH`.
/// Other parameters, outputs and statuses as `pqg_slhdsa_sign`.
#[no_mangle]
pub unsafe extern "C" fn pqg_hash_slhdsa_sign(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    ph: pqg_hash,
    sk: *const u8,
    sk_len: usize,
    digest: *const u8,
    digest_len: usize,
    context: *const u8,
    context_len: usize,
    rnd: *const u8,
    sig: *mut u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        let message = || {
            // SAFETY: digest and context are NULL or readable for their lengths.
            let (digest, ctx) = unsafe {
                (
                    required(digest, digest_len)?,
                    context_string(context, context_len)?,
                )
            };
            let ph = PreHash::from_code(ph)?;
            Ok(Message::PreHashed { ctx, ph, digest })
        };
        // SAFETY: the pointer arguments are forwarded under the caller's promise.
        unsafe { sign_one(ctx, alg, sk, sk_len, message, rnd, sig, sig_len) }
    })
}

/// Verifies a HashSLH-DSA signature (FIPS 205 hash_slh_verify) on the digest PH(M).
///
/// Parameters and statuses as `pqg_hash_slhdsa_sign` / `pqg_slhdsa_verify`.
#[no_mangle]
pub unsafe extern "C" fn pqg_hash_slhdsa_verify(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    ph: pqg_hash,
    pk: *const u8,
    pk_len: usize,
    digest: *const u8,
    digest_len: usize,
    context: *const u8,
    context_len: usize,
    sig: *const u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        let message = || {
            // SAFETY: digest and context are NULL or readable for their lengths.
            let (digest, ctx) = unsafe {
                (
                    required(digest, digest_len)?,
                    context_string(context, context_len)?,
                )
            };
            let ph = PreHash::from_code(ph)?;
            Ok(Message::PreHashed { ctx, ph, digest })
        };
        // SAFETY: the pointer arguments are forwarded under the caller's promise.
        unsafe { verify_one(ctx, alg, pk, pk_len, message, sig, sig_len) }
    })
}

/// Starts generating `n` SLH-DSA key pairs.
///
/// @param[in]  seeds  `n * 3n` bytes (one SK.seed || SK.prf || PK.seed per item), or NULL.
/// Other parameters and statuses as `pqg_mldsa_keygen_submit`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_keygen_submit(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    n: usize,
    seeds: *const u8,
    pks: *mut u8,
    sks: *mut u8,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    // SAFETY: the pointers carry the promises of this function's documentation.
    unsafe {
        keygen::submit(
            ctx,
            n,
            seeds,
            pks,
            sks,
            statuses,
            job,
            slhdsa_params(alg).map(Alg::SlhDsa),
        )
    }
}

/// Checks one signing request; a bad one gets its own status and does not run.
///
/// # Safety
/// The request's pointers are NULL or valid for their lengths until the job completes.
unsafe fn sign_item(
    p: ParamSet,
    r: &pqg_sign_request,
) -> Result<(SlhSignItem<'static>, Out), Error> {
    // SAFETY: the caller keeps the request's buffers valid until the job has completed, and
    // the job drops these references before it reports completion.
    let (sk, msg, ctx, rnd) = unsafe {
        (
            required(r.sk, p.secret_key_len())?,
            input(r.msg, r.msg_len)?,
            context_string(r.context, r.context_len)?,
            opt_rand(r.rnd, p.n()),
        )
    };
    let sig = Out::new(r.sig, p.signature_len())?;
    Ok((
        SlhSignItem {
            sk,
            msg: Message::Pure { ctx, msg },
            rnd,
        },
        sig,
    ))
}

/// Starts signing `n` messages (slh_sign, pure form), each with its own key, context and
/// opt_rand (n bytes, or NULL for hedged). Signatures are written into each request's `sig`.
///
/// Parameters, lifetimes and statuses as `pqg_mldsa_sign_submit`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_sign_submit(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    reqs: *const pqg_sign_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    boundary(|| {
        // SAFETY: job is NULL or writable (caller's promise).
        unsafe { clear_out(job) }?;
        // SAFETY: ctx is NULL or live; reqs is NULL or n readable requests (caller's promise).
        let (ctx, reqs) = unsafe { (context(ctx)?, super::guard::requests(reqs, n)?) };
        let p = slhdsa_params(alg)?;
        if n > 0 && statuses.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: each request's buffers are valid until completion (contract).
        let accepted = Accepted::check(reqs, |r| unsafe { sign_item(p, r) });
        // SAFETY: every accepted sig buffer is writable for the signature length until the job
        // completes (contract); the job uses the rows only until it merges its statuses.
        let mut accepted = unsafe { accepted.outputs_apart() }?;
        let backend = ctx.backend.clone();
        let work: job::Work = Box::new(move || {
            let mut ran = pending(accepted.items.len());
            let sigs = &mut accepted.rows[0];
            // A whole-call error is already in every status.
            let _ = api::slhdsa_sign(&*backend, p, &accepted.items, sigs, &mut ran);
            accepted.merge(ran)
        });
        // SAFETY: job was checked non-NULL above.
        unsafe { hand_out(job::start(n, statuses, work, None), job) };
        Ok(())
    })
}

/// Checks one verification request; a bad one gets its own status and does not run.
///
/// # Safety
/// The request's pointers are NULL or valid for their lengths until the job completes.
unsafe fn verify_item(
    p: ParamSet,
    r: &pqg_verify_request,
) -> Result<(SlhVerifyItem<'static>, ()), Error> {
    // SAFETY: the caller keeps the request's buffers valid until the job has completed, and
    // the job drops these references before it reports completion.
    let (pk, msg, ctx) = unsafe {
        (
            required(r.pk, p.public_key_len())?,
            input(r.msg, r.msg_len)?,
            context_string(r.context, r.context_len)?,
        )
    };
    // SAFETY: as above.
    let sig = unsafe { signature(r.sig, r.sig_len, p.signature_len()) }?;
    Ok((
        SlhVerifyItem {
            pk,
            msg: Message::Pure { ctx, msg },
            sig,
        },
        (),
    ))
}

/// Starts verifying `n` SLH-DSA signatures (slh_verify, pure form).
///
/// Parameters, lifetimes and statuses as `pqg_mldsa_verify_submit`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_verify_submit(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    reqs: *const pqg_verify_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    boundary(|| {
        // SAFETY: job is NULL or writable (caller's promise).
        unsafe { clear_out(job) }?;
        // SAFETY: ctx is NULL or live; reqs is NULL or n readable requests (caller's promise).
        let (ctx, reqs) = unsafe { (context(ctx)?, super::guard::requests(reqs, n)?) };
        let p = slhdsa_params(alg)?;
        if n > 0 && statuses.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: each request's buffers are valid until completion (contract).
        let accepted = Accepted::check(reqs, |r| unsafe { verify_item(p, r) }).without_outputs();
        let backend = ctx.backend.clone();
        let work: job::Work = Box::new(move || {
            let mut ran = pending(accepted.items.len());
            // A whole-call error is already in every status.
            let _ = api::slhdsa_verify(&*backend, p, &accepted.items, &mut ran);
            accepted.merge(ran)
        });
        // SAFETY: job was checked non-NULL above.
        unsafe { hand_out(job::start(n, statuses, work, None), job) };
        Ok(())
    })
}
