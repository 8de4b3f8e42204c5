//! KEM entry points (CTRU-Prime and ML-KEM): one-shot keygen / encaps / decaps and their batch
//! forms.
//!
//! Same conventions as the ML-DSA functions; the secret outputs are `sk` and the shared
//! secret `ss`, zeroed on failure.

use super::batch::{disjoint, pending, Accepted};
use super::context::{context, pqg_context};
use super::guard::{boundary, optional, requests, required, span_of, zero_secret, Out};
use super::job::{self, clear_out, hand_out, pqg_job};
use super::keygen;
use super::{kem_params, pqg_alg, pqg_status, PQG_OK};
use crate::backend::{DecapsItem, EncapsItem};
use crate::serve::KeyArg;
use crate::{api, Alg, Error};

/// One encapsulation request of `pqg_kem_encaps_submit`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pqg_encaps_request {
    /// The public key, `pqg_public_key_len(alg)` bytes. Many requests may point to the same
    /// key; it is read in place, never copied per item.
    pub pk: *const u8,
    /// 32 bytes of coins for deterministic encapsulation, or NULL for fresh randomness.
    pub coins: *const u8,
    /// Receives the ciphertext, `pqg_ciphertext_len(alg)` bytes.
    pub ct: *mut u8,
    /// Receives the shared secret, `pqg_shared_secret_len(alg)` bytes (zeroed if the item fails).
    pub ss: *mut u8,
}

/// One decapsulation request of `pqg_kem_decaps_submit`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct pqg_decaps_request {
    /// The secret key, `pqg_secret_key_len(alg)` bytes.
    pub sk: *const u8,
    /// The ciphertext, `pqg_ciphertext_len(alg)` bytes.
    pub ct: *const u8,
    /// Receives the shared secret, `pqg_shared_secret_len(alg)` bytes (zeroed if the item fails).
    pub ss: *mut u8,
}

/// Generates a KEM key pair (CTRU-Prime, or ML-KEM's ek and dk).
///
/// @param ctx   a context (any thread).
/// @param alg   `PQG_CTRU_PRIME_653`, `_761`, `_1277`, or `PQG_ML_KEM_512`, `_768`, `_1024`.
/// @param[in]  seed  64 bytes (d || z; ML-KEM: KeyGen_internal(d, z)) for deterministic
///                   generation, or NULL for fresh randomness.
/// @param[out] pk    `pqg_public_key_len(alg)` bytes, written on success only.
/// @param[out] sk    `pqg_secret_key_len(alg)` bytes, written on success; zeroed on any
///                   failure except a rejected `sk_len` (then nothing is written to it).
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (unknown or non-KEM
///         alg); `PQG_ERR_BAD_LENGTH`; `PQG_ERR_RNG`; `PQG_ERR_DEVICE`; `PQG_ERR_PANIC`.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_keygen(
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
            kem_params(alg).map(Alg::from),
        )
    }
}

/// Encapsulates a fresh shared secret to a KEM public key (ML-KEM: the encapsulation key ek).
///
/// @param[in]  pk     the public key, `pqg_public_key_len(alg)` bytes.
/// @param[in]  coins  32 bytes for deterministic encapsulation (ML-KEM: m of
///                    Encaps_internal(ek, m)), or NULL for fresh randomness.
/// @param[out] ct     `pqg_ciphertext_len(alg)` bytes, written on success only.
/// @param[out] ss     `pqg_shared_secret_len(alg)` bytes, written on success; zeroed on any
///                    failure except a rejected `ss_len` (then nothing is written to it).
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (unknown or non-KEM
///         alg); `PQG_ERR_BAD_LENGTH`; `PQG_ERR_BAD_KEY` (pk does not decode; ML-KEM: ek fails
///         the FIPS 203 modulus check); `PQG_ERR_RNG`;
///         `PQG_ERR_DEVICE`; `PQG_ERR_PANIC`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_encaps(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    pk: *const u8,
    pk_len: usize,
    coins: *const u8,
    ct: *mut u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
) -> pqg_status {
    let coins_ptr = coins;
    let status = boundary(|| {
        // SAFETY: ctx is NULL or live; pk is NULL or pk_len readable bytes; coins is NULL or 32
        // readable bytes (caller's promise).
        let (ctx, pk, coins) =
            unsafe { (context(ctx)?, required(pk, pk_len)?, optional::<32>(coins)) };
        let p = kem_params(alg)?;
        let ct = Out::new(ct, ct_len)?;
        let ss = Out::new(ss, ss_len)?;
        if pk.len() != p.public_key_len() {
            return Err(Error::BadLength);
        }
        let ct = ct.expect_len(p.ciphertext_len())?;
        let ss = ss.expect_len(p.shared_secret_len())?;
        let inputs = [span_of(pk.as_ptr(), pk.len()), span_of(coins_ptr, 32)];
        disjoint(vec![vec![ct.span(), ss.span()]])?;
        for out in [ct.span(), ss.span()] {
            inputs
                .iter()
                .try_for_each(|&i| disjoint(vec![vec![out, i]]))?;
        }
        // SAFETY: ct and ss are writable for their checked lengths during this call and
        // overlap neither each other nor an input (checked above).
        let (ct, ss) = unsafe { (ct.slice(), ss.slice()) };
        // Concurrent single calls on a GPU context are coalesced into batches (`serve`).
        ctx.serve.encaps(KeyArg::Bytes(p.alg(), pk), coins, ct, ss)
    });
    if status != PQG_OK && Some(ss_len) == shared_secret_len(alg) {
        // SAFETY: ss is NULL or ss_len writable bytes (caller's promise).
        unsafe { zero_secret(ss, ss_len) };
    }
    status
}

/// The shared-secret length of a KEM `alg` (`None` for anything else): only a secret output
/// of the right length is zeroed after a failure.
fn shared_secret_len(alg: pqg_alg) -> Option<usize> {
    kem_params(alg).ok().map(|p| p.shared_secret_len())
}

/// Decapsulates a KEM ciphertext (ML-KEM: with the decapsulation key dk).
///
/// A well-formed but wrong ciphertext is not an error: it gives `PQG_OK` and the
/// implicit-rejection key, which differs from the sender's key.
///
/// @param[in]  sk  the secret key, `pqg_secret_key_len(alg)` bytes.
/// @param[in]  ct  the ciphertext, `pqg_ciphertext_len(alg)` bytes.
/// @param[out] ss  `pqg_shared_secret_len(alg)` bytes, written on success; zeroed on any
///                 failure except a rejected `ss_len` (then nothing is written to it).
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (unknown or non-KEM
///         alg); `PQG_ERR_BAD_LENGTH`; `PQG_ERR_BAD_KEY` (malformed sk; ML-KEM: dk fails the
///         FIPS 203 hash check); `PQG_ERR_DEVICE`;
///         `PQG_ERR_PANIC`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_decaps(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    sk: *const u8,
    sk_len: usize,
    ct: *const u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
) -> pqg_status {
    let status = boundary(|| {
        // SAFETY: ctx is NULL or live; sk and ct are NULL or readable for their lengths.
        let (ctx, sk, ct) =
            unsafe { (context(ctx)?, required(sk, sk_len)?, required(ct, ct_len)?) };
        let p = kem_params(alg)?;
        let ss = Out::new(ss, ss_len)?;
        if sk.len() != p.secret_key_len() || ct.len() != p.ciphertext_len() {
            return Err(Error::BadLength);
        }
        let ss = ss.expect_len(p.shared_secret_len())?;
        for input in [
            span_of(sk.as_ptr(), sk.len()),
            span_of(ct.as_ptr(), ct.len()),
        ] {
            disjoint(vec![vec![ss.span(), input]])?;
        }
        // SAFETY: ss is writable for its checked length during this call and overlaps no input.
        ctx.serve
            .decaps(KeyArg::Bytes(p.alg(), sk), ct, unsafe { ss.slice() })
    });
    if status != PQG_OK && Some(ss_len) == shared_secret_len(alg) {
        // SAFETY: ss is NULL or ss_len writable bytes (caller's promise).
        unsafe { zero_secret(ss, ss_len) };
    }
    status
}

/// Starts generating `n` KEM key pairs (CTRU-Prime or ML-KEM).
///
/// @param[in]  seeds  `n * 64` bytes (d || z per item), or NULL for fresh randomness.
/// @param[out] pks    `n * pqg_public_key_len(alg)` bytes; item i at offset i * pk_len.
/// @param[out] sks    `n * pqg_secret_key_len(alg)` bytes; an item that fails is zeroed.
/// Other parameters and statuses as `pqg_mldsa_keygen_submit`.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_keygen_submit(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    n: usize,
    seeds: *const u8,
    pks: *mut u8,
    sks: *mut u8,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    let alg = kem_params(alg).map(Alg::from);
    // SAFETY: the pointers carry the promises of this function's documentation.
    unsafe { keygen::submit(ctx, n, seeds, pks, sks, statuses, job, alg) }
}

/// Zeroes the shared-secret outputs of a rejected encaps/decaps submit, where they can be
/// found (known algorithm, non-NULL request array).
///
/// # Safety
/// Each request's `ss` is NULL or `pqg_shared_secret_len(alg)` writable bytes.
unsafe fn zero_rejected<R>(alg: pqg_alg, reqs: *const R, n: usize, ss: impl Fn(&R) -> *mut u8) {
    // SAFETY: reqs is NULL or n readable requests (caller's promise).
    if let (Some(len), Ok(reqs)) = (shared_secret_len(alg), unsafe { requests(reqs, n) }) {
        for r in reqs {
            // SAFETY: as documented above.
            unsafe { zero_secret(ss(r), len) };
        }
    }
}

/// Starts `n` encapsulations. Requests may share one public key pointer (the server case):
/// the key is read in place, not copied per item.
///
/// @param[in]  reqs      `n` requests; the array may be freed once this returns, the buffers
///                       it points to must stay valid until the job completes.
/// @param[out] statuses  `n` entries, written when the job completes: per item the status
///                       `pqg_kem_encaps` would return (NULL pointers in an item are that
///                       item's `PQG_ERR_NULL_POINTER`).
/// @param[out] job       receives the job (free it with `pqg_job_free`); NULL on failure.
/// @return `PQG_OK` when the job was started; `PQG_ERR_NULL_POINTER` (ctx or job, reqs or
///         statuses with n > 0); `PQG_ERR_INVALID_ARGUMENT` (unknown or non-KEM alg);
///         `PQG_ERR_PANIC`.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_encaps_submit(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    reqs: *const pqg_encaps_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    let status = boundary(|| {
        // SAFETY: job is NULL or writable; ctx is NULL or live; reqs is NULL or n readable
        // requests (caller's promise).
        let (ctx, reqs) = unsafe {
            clear_out(job)?;
            (context(ctx)?, requests(reqs, n)?)
        };
        let p = kem_params(alg)?;
        if n > 0 && statuses.is_null() {
            return Err(Error::NullPointer);
        }
        let accepted = Accepted::check(reqs, |r| {
            let item = || {
                // SAFETY: the request's buffers are valid until completion (contract) and the
                // job drops these references before it reports completion.
                let (pk, coins) =
                    unsafe { (required(r.pk, p.public_key_len())?, optional(r.coins)) };
                let ct = Out::new(r.ct, p.ciphertext_len())?;
                let ss = Out::new(r.ss, p.shared_secret_len())?;
                Ok((EncapsItem { pk, coins }, (ct, ss)))
            };
            // SAFETY: a rejected item's ss is NULL or writable (caller's promise).
            item().inspect_err(|_| unsafe { zero_secret(r.ss, p.shared_secret_len()) })
        });
        // SAFETY: every accepted ct/ss buffer is writable for its length until the job
        // completes (contract); the job uses the rows only until it merges its statuses.
        let mut accepted = unsafe { accepted.outputs_apart() }?;
        let backend = ctx.backend.clone();
        let work: job::Work = Box::new(move || {
            let mut ran = pending(accepted.items.len());
            let [cts, sss] = &mut accepted.rows;
            // A whole-call error is already in every status (and the secrets are zeroed).
            let _ = api::kem_encaps(&*backend, p, &accepted.items, cts, sss, &mut ran);
            accepted.merge(ran)
        });
        // SAFETY: job was checked non-NULL above.
        unsafe { hand_out(job::start(n, statuses, work, None), job) };
        Ok(())
    });
    if status != PQG_OK {
        // SAFETY: the requests' ss buffers are NULL or writable (caller's promise).
        unsafe { zero_rejected(alg, reqs, n, |r| r.ss) };
    }
    status
}

/// Starts `n` decapsulations.
///
/// @param[in]  reqs      `n` requests (lifetimes as `pqg_kem_encaps_submit`).
/// @param[out] statuses  `n` entries, written when the job completes: per item the status
///                       `pqg_kem_decaps` would return.
/// @param[out] job       receives the job; NULL on failure.
/// @return as `pqg_kem_encaps_submit`.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_decaps_submit(
    ctx: *mut pqg_context,
    alg: pqg_alg,
    reqs: *const pqg_decaps_request,
    n: usize,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
) -> pqg_status {
    let status = boundary(|| {
        // SAFETY: job is NULL or writable; ctx is NULL or live; reqs is NULL or n readable
        // requests (caller's promise).
        let (ctx, reqs) = unsafe {
            clear_out(job)?;
            (context(ctx)?, requests(reqs, n)?)
        };
        let p = kem_params(alg)?;
        if n > 0 && statuses.is_null() {
            return Err(Error::NullPointer);
        }
        let ss_len = p.shared_secret_len();
        let accepted = Accepted::check(reqs, |r| {
            let item = || {
                // SAFETY: the request's buffers are valid until completion (contract) and the
                // job drops these references before it reports completion.
                let (sk, ct) = unsafe {
                    (
                        required(r.sk, p.secret_key_len())?,
                        required(r.ct, p.ciphertext_len())?,
                    )
                };
                Ok((DecapsItem { sk, ct }, Out::new(r.ss, ss_len)?))
            };
            // SAFETY: a rejected item's ss is NULL or writable (caller's promise).
            item().inspect_err(|_| unsafe { zero_secret(r.ss, ss_len) })
        });
        // SAFETY: every accepted ss buffer is writable for its length until the job
        // completes (contract); the job uses the rows only until it merges its statuses.
        let mut accepted = unsafe { accepted.outputs_apart() }?;
        let backend = ctx.backend.clone();
        let work: job::Work = Box::new(move || {
            let mut ran = pending(accepted.items.len());
            let sss = &mut accepted.rows[0];
            // A whole-call error is already in every status (and the secrets are zeroed).
            let _ = api::kem_decaps(&*backend, p, &accepted.items, sss, &mut ran);
            accepted.merge(ran)
        });
        // SAFETY: job was checked non-NULL above.
        unsafe { hand_out(job::start(n, statuses, work, None), job) };
        Ok(())
    });
    if status != PQG_OK {
        // SAFETY: the requests' ss buffers are NULL or writable (caller's promise).
        unsafe { zero_rejected(alg, reqs, n, |r| r.ss) };
    }
    status
}
