//! ML-DSA (FIPS 204) entry points: one-shot keygen / sign / verify (pure, HashML-DSA and
//! external mu) and their batch forms.
//!
//! Check order, the same everywhere: NULL context, algorithm, NULL pointers, buffer lengths,
//! then the message's own shape (context over 255 bytes, digest or mu length).

use super::batch::{disjoint, pending, Accepted};
use super::context::{context, pqg_context};
use super::guard::{boundary, context_string, input, optional, required, signature, span_of, Out};
use super::job::{self, clear_out, hand_out, pqg_job};
use super::keygen;
use super::{mldsa_params, pqg_alg, pqg_status};
use crate::backend::{SignItem, VerifyItem};
use crate::mldsa::{Message, PreHash};
use crate::serve::KeyArg;
use crate::{api, Alg, Error};

/// A HashML-DSA pre-hash function (`PQG_HASH_*`).
///
/// In Rust this is a plain `i32`, so an out-of-range value from C is
/// `PQG_ERR_INVALID_ARGUMENT`; the header shows the enum `pqg_hash_values` under this name.
pub type pqg_hash = i32;

/// The pre-hash functions of HashML-DSA (FIPS 204 section 5.4).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum pqg_hash_values {
    /// SHA2-224 (28-byte digest).
    PQG_HASH_SHA2_224 = 1,
    /// SHA2-256 (32-byte digest).
    PQG_HASH_SHA2_256,
    /// SHA2-384 (48-byte digest).
    PQG_HASH_SHA2_384,
    /// SHA2-512 (64-byte digest).
    PQG_HASH_SHA2_512,
    /// SHA2-512/224 (28-byte digest).
    PQG_HASH_SHA2_512_224,
    /// SHA2-512/256 (32-byte digest).
    PQG_HASH_SHA2_512_256,
    /// SHA3-224 (28-byte digest).
    PQG_HASH_SHA3_224,
    /// SHA3-256 (32-byte digest).
    PQG_HASH_SHA3_256,
    /// SHA3-384 (48-byte digest).
    PQG_HASH_SHA3_384,
    /// SHA3-512 (64-byte digest).
    PQG_HASH_SHA3_512,
    /// SHAKE-128 with a 32-byte output.
    PQG_HASH_SHAKE_128,
    /// SHAKE-256 with a 64-byte output.
    PQG_HASH_SHAKE_256,
}

const _: () = {
    assert!(pqg_hash_values::PQG_HASH_SHA2_224 as i32 == PreHash::Sha2_224 as i32);
    assert!(pqg_hash_values::PQG_HASH_SHA3_512 as i32 == PreHash::Sha3_512 as i32);
    assert!(pqg_hash_values::PQG_HASH_SHAKE_256 as i32 == PreHash::Shake256 as i32);
};

/// One signing request of `pqg_mldsa_sign_submit`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pqg_sign_request {
    /// The secret key, `pqg_secret_key_len(alg)` bytes.
    pub sk: *const u8,
    /// The message; may be NULL when `msg_len` is 0.
    pub msg: *const u8,
    pub msg_len: usize,
    /// The FIPS 204 context string, 0..255 bytes; may be NULL when `context_len` is 0.
    pub context: *const u8,
    pub context_len: usize,
    /// 32 bytes of signing randomness, or NULL for hedged signing (fresh randomness).
    pub rnd: *const u8,
    /// Receives the signature, `pqg_signature_len(alg)` bytes.
    pub sig: *mut u8,
}

/// One verification request of `pqg_mldsa_verify_submit`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pqg_verify_request {
    /// The public key, `pqg_public_key_len(alg)` bytes.
    pub pk: *const u8,
    /// The message; may be NULL when `msg_len` is 0.
    pub msg: *const u8,
    pub msg_len: usize,
    /// The FIPS 204 context string, 0..255 bytes; may be NULL when `context_len` is 0.
    pub context: *const u8,
    pub context_len: usize,
    /// The signature; a length other than `pqg_signature_len(alg)` fails verification.
    pub sig: *const u8,
    pub sig_len: usize,
}

// ---------------------------------------------------------------------------------------
// One at a time
// ---------------------------------------------------------------------------------------

/// Generates an ML-DSA key pair (FIPS 204 ML-DSA.KeyGen, or KeyGen_internal from a seed).
///
/// @param ctx   a context (any thread).
/// @param alg   `PQG_ML_DSA_44`, `PQG_ML_DSA_65`, `PQG_ML_DSA_87`, or Dilithium round 3
///              (`PQG_DILITHIUM2`, `PQG_DILITHIUM3`, `PQG_DILITHIUM5`).
/// @param[in]  seed  32 bytes (xi) for deterministic generation, or NULL for fresh randomness.
/// @param[out] pk    `pqg_public_key_len(alg)` bytes, written on success only.
/// @param[out] sk    `pqg_secret_key_len(alg)` bytes, written on success; zeroed on any
///                   failure except a rejected `sk_len` (then nothing is written to it).
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (unknown or non-ML-DSA
///         alg); `PQG_ERR_BAD_LENGTH`; `PQG_ERR_RNG`; `PQG_ERR_DEVICE`; `PQG_ERR_PANIC`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_keygen(
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
            mldsa_params(alg).map(crate::Alg::MlDsa),
        )
    }
}

/// Signs with the secret key; shared by the pure, pre-hash and external-mu forms.
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
    let p = mldsa_params(alg)?;
    // SAFETY: sk is NULL or sk_len readable bytes (caller's promise).
    let sk = unsafe { required(sk, sk_len) }?;
    let sig = Out::new(sig, sig_len)?;
    let msg = message()?;
    if sk.len() != p.secret_key_len() {
        return Err(Error::BadLength);
    }
    let sig = sig.expect_len(p.signature_len())?;
    msg.validate()?;
    let mut inputs = vec![sig.span(), span_of(sk.as_ptr(), sk.len()), span_of(rnd, 32)];
    inputs.extend(message_spans(&msg));
    disjoint_from_first(inputs)?;
    // SAFETY: rnd is NULL or 32 readable bytes (caller's promise).
    let rnd = unsafe { optional::<32>(rnd) };
    // SAFETY: sig is writable for its checked length during this call and overlaps no input.
    let sig = unsafe { sig.slice() };
    // Concurrent single calls on a GPU context are coalesced into batches (`serve`).
    ctx.serve
        .sign(KeyArg::Bytes(Alg::MlDsa(p), sk), &msg, rnd, sig)
}

/// The address ranges of a message's caller buffers.
fn message_spans(msg: &Message<'_>) -> [(usize, usize); 2] {
    let span = |b: &[u8]| span_of(b.as_ptr(), b.len());
    match *msg {
        Message::Pure { ctx, msg } => [span(ctx), span(msg)],
        Message::PreHashed { ctx, digest, .. } => [span(ctx), span(digest)],
        Message::Internal(m) | Message::Mu(m) => [span(m), (0, 0)],
    }
}

/// `InvalidArgument` when the first range (an output) overlaps any other (the inputs, which
/// may overlap each other).
fn disjoint_from_first(spans: Vec<(usize, usize)>) -> Result<(), Error> {
    let out = spans[0];
    spans[1..]
        .iter()
        .try_for_each(|&input| disjoint(vec![vec![out, input]]))
}

/// Verifies a signature; shared by the pure, pre-hash and external-mu forms.
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
    let p = mldsa_params(alg)?;
    // SAFETY: pk is NULL or pk_len readable bytes (caller's promise).
    let pk = unsafe { required(pk, pk_len) }?;
    let msg = message()?;
    if pk.len() != p.public_key_len() {
        return Err(Error::BadLength);
    }
    msg.validate()?;
    // SAFETY: sig is NULL or sig_len readable bytes (caller's promise).
    let sig = unsafe { signature(sig, sig_len, p.signature_len()) }?;
    ctx.serve
        .verify(KeyArg::Bytes(Alg::MlDsa(p), pk), &msg, sig)
}

/// Signs a message with ML-DSA (FIPS 204 ML-DSA.Sign, pure form).
///
/// @param ctx          a context (any thread).
/// @param alg          an ML-DSA or Dilithium round 3 identifier (`PQG_DILITHIUM*`: a
///                     non-empty context string is `PQG_ERR_INVALID_ARGUMENT`).
/// @param[in]  sk       the secret key, `pqg_secret_key_len(alg)` bytes.
/// @param[in]  msg      the message (NULL allowed when `msg_len` is 0).
/// @param[in]  context  the FIPS 204 context string, 0..255 bytes (NULL allowed when 0).
/// @param[in]  rnd      32 bytes of randomness; NULL = hedged (fresh randomness);
///                      32 zero bytes = the deterministic variant.
/// @param[out] sig      `pqg_signature_len(alg)` bytes, written on success only.
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (unknown alg, context
///         over 255 bytes); `PQG_ERR_BAD_LENGTH` (sk or sig); `PQG_ERR_BAD_KEY` (malformed sk);
///         `PQG_ERR_RNG`; `PQG_ERR_DEVICE`; `PQG_ERR_PANIC`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_sign(
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

/// Verifies an ML-DSA signature (FIPS 204 ML-DSA.Verify, pure form).
///
/// @param[in] pk       the public key, `pqg_public_key_len(alg)` bytes.
/// @param[in] msg      the message (NULL allowed when `msg_len` is 0).
/// @param[in] context  the context string used when signing, 0..255 bytes.
/// @param[in] sig      the signature; any length other than `pqg_signature_len(alg)` is
///                     `PQG_ERR_VERIFY_FAILED`.
/// @return `PQG_OK` (valid); `PQG_ERR_VERIFY_FAILED` (invalid or malformed signature);
///         `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (unknown alg, context over 255
///         bytes); `PQG_ERR_BAD_LENGTH` (pk); `PQG_ERR_DEVICE`; `PQG_ERR_PANIC`.
///         Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_verify(
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

/// Signs a pre-hashed message (FIPS 204 HashML-DSA.Sign).
///
/// @param ph           the hash function the caller used (`PQG_HASH_*`).
/// @param[in] digest   PH(M), exactly the hash's output length (SHAKE-128: 32 bytes,
///                     SHAKE-256: 64 bytes), else `PQG_ERR_BAD_LENGTH`.
/// Other parameters, outputs and statuses as `pqg_mldsa_sign`; `PQG_ERR_INVALID_ARGUMENT` for
/// the Dilithium round 3 identifiers (round 3 has no external-mu or pre-hash form). an unknown `ph` is
/// `PQG_ERR_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn pqg_hash_mldsa_sign(
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

/// Verifies a HashML-DSA signature (FIPS 204 HashML-DSA.Verify) on the digest PH(M).
///
/// Parameters and statuses as `pqg_hash_mldsa_sign` / `pqg_mldsa_verify`.
#[no_mangle]
pub unsafe extern "C" fn pqg_hash_mldsa_verify(
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

/// Signs an externally computed message representative mu (FIPS 204 external-mu signing).
///
/// @param[in] mu  the 64-byte mu = H(tr || M', 64); another length is `PQG_ERR_BAD_LENGTH`.
/// Other parameters, outputs and statuses as `pqg_mldsa_sign`; `PQG_ERR_INVALID_ARGUMENT` for
/// the Dilithium round 3 identifiers (round 3 has no external-mu or pre-hash form).
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_sign_mu(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    sk: *const u8,
    sk_len: usize,
    mu: *const u8,
    mu_len: usize,
    rnd: *const u8,
    sig: *mut u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        // SAFETY: mu is NULL or mu_len readable bytes (caller's promise).
        let message = || Ok(Message::Mu(unsafe { required(mu, mu_len) }?));
        // SAFETY: the pointer arguments are forwarded under the caller's promise.
        unsafe { sign_one(ctx, alg, sk, sk_len, message, rnd, sig, sig_len) }
    })
}

/// Verifies a signature on an externally computed 64-byte mu.
///
/// Parameters and statuses as `pqg_mldsa_sign_mu` / `pqg_mldsa_verify`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_verify_mu(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    pk: *const u8,
    pk_len: usize,
    mu: *const u8,
    mu_len: usize,
    sig: *const u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        // SAFETY: mu is NULL or mu_len readable bytes (caller's promise).
        let message = || Ok(Message::Mu(unsafe { required(mu, mu_len) }?));
        // SAFETY: the pointer arguments are forwarded under the caller's promise.
        unsafe { verify_one(ctx, alg, pk, pk_len, message, sig, sig_len) }
    })
}

// ---------------------------------------------------------------------------------------
// Batches
// ---------------------------------------------------------------------------------------

/// Starts generating `n` ML-DSA key pairs.
///
/// @param n          number of key pairs; 0 is a valid empty job.
/// @param[in]  seeds  `n * 32` bytes (one xi per item), or NULL for fresh randomness.
/// @param[out] pks    `n * pqg_public_key_len(alg)` bytes; item i at offset i * pk_len.
/// @param[out] sks    `n * pqg_secret_key_len(alg)` bytes; an item that fails is zeroed.
/// @param[out] statuses  `n` entries, written when the job completes.
/// @param[out] job    receives the job (free it with `pqg_job_free`); NULL on failure.
/// @return `PQG_OK` when the job was started (item results are in `statuses`);
///         `PQG_ERR_NULL_POINTER` (ctx or job, or pks/sks/statuses with n > 0);
///         `PQG_ERR_INVALID_ARGUMENT` (unknown alg, n too large); `PQG_ERR_PANIC`. A rejected
///         call starts nothing and zeroes `sks` where its size is known.
/// All buffers must stay valid and untouched until the job has completed.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_keygen_submit(
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
            mldsa_params(alg).map(crate::Alg::MlDsa),
        )
    }
}

/// Checks one signing request; a bad one gets its own status and does not run.
///
/// # Safety
/// The request's pointers are NULL or valid for their lengths until the job completes.
unsafe fn sign_item(
    p: crate::mldsa::ParamSet,
    r: &pqg_sign_request,
) -> Result<(SignItem<'static>, Out), Error> {
    // SAFETY: the caller keeps the request's buffers valid until the job has completed, and
    // the job drops these references before it reports completion.
    let (sk, msg, ctx, rnd) = unsafe {
        (
            required(r.sk, p.secret_key_len())?,
            input(r.msg, r.msg_len)?,
            context_string(r.context, r.context_len)?,
            optional::<32>(r.rnd),
        )
    };
    let sig = Out::new(r.sig, p.signature_len())?;
    Ok((
        SignItem {
            sk,
            msg: Message::Pure { ctx, msg },
            rnd,
        },
        sig,
    ))
}

/// Starts signing `n` messages (ML-DSA.Sign, pure form), each with its own key, context and
/// randomness. Signatures are written straight into each request's `sig` buffer.
///
/// @param[in]  reqs      `n` requests; the array itself may be freed once this returns, the
///                       buffers it points to must stay valid until the job completes.
///                       Output buffers must not overlap each other or any input.
/// @param[out] statuses  `n` entries, written when the job completes: per item the status
///                       `pqg_mldsa_sign` would return (a bad item does not stop the rest).
/// @param[out] job       receives the job (free it with `pqg_job_free`); NULL on failure.
/// @return `PQG_OK` when the job was started; `PQG_ERR_NULL_POINTER` (ctx or job, reqs or
///         statuses with n > 0); `PQG_ERR_INVALID_ARGUMENT` (unknown alg, overlapping
///         signature buffers); `PQG_ERR_PANIC`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_sign_submit(
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
        let p = mldsa_params(alg)?;
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
            let _ = api::mldsa_sign(&*backend, p, &accepted.items, sigs, &mut ran);
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
    p: crate::mldsa::ParamSet,
    r: &pqg_verify_request,
) -> Result<(VerifyItem<'static>, ()), Error> {
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
        VerifyItem {
            pk,
            msg: Message::Pure { ctx, msg },
            sig,
        },
        (),
    ))
}

/// Starts verifying `n` signatures (ML-DSA.Verify, pure form).
///
/// @param[in]  reqs      `n` requests (see `pqg_mldsa_sign_submit` for lifetimes).
/// @param[out] statuses  `n` entries, written when the job completes: `PQG_OK` for a valid
///                       signature, `PQG_ERR_VERIFY_FAILED` for an invalid or wrong-length one,
///                       or the item's own error (NULL pointer, context over 255 bytes, ...).
/// @param[out] job       receives the job; NULL on failure.
/// @return as `pqg_mldsa_sign_submit`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_verify_submit(
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
        let p = mldsa_params(alg)?;
        if n > 0 && statuses.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: each request's buffers are valid until completion (contract).
        let accepted = Accepted::check(reqs, |r| unsafe { verify_item(p, r) }).without_outputs();
        let backend = ctx.backend.clone();
        let work: job::Work = Box::new(move || {
            let mut ran = pending(accepted.items.len());
            // A whole-call error is already in every status.
            let _ = api::mldsa_verify(&*backend, p, &accepted.items, &mut ran);
            accepted.merge(ran)
        });
        // SAFETY: job was checked non-NULL above.
        unsafe { hand_out(job::start(n, statuses, work, None), job) };
        Ok(())
    })
}
