//! `pqg_key`: key handles, and the blocking single calls that take one.
//!
//! A handle is created once from an encoded key, checked and expanded (ML-DSA: A-hat and the
//! NTT-domain secrets; SLH-DSA: PK.seed's hash midstates, a secret key's PK.root checked;
//! CTRU-Prime: the decoded polynomials), and then used by any number of
//! calls on any context and thread. Calls that queue items keep their own reference, so a
//! handle freed while they run stays alive until they finish; the secret parts are zeroed
//! when the last reference goes.

use super::context::{context, pqg_context};
use super::guard::{boundary, boundary_or, input, optional, required, zero_secret};
use super::slhdsa::opt_rand;
use super::{pqg_alg, pqg_status};
use crate::mldsa::Message;
use crate::serve::{Key, KeyArg, KeyKind};
use crate::slhdsa::Message as SlhMessage;
use crate::{Alg, Error};

/// An expanded public or secret key (opaque). Create with `pqg_key_new`, release with
/// `pqg_key_free`. Immutable and safe to share between threads and contexts.
pub struct pqg_key {
    pub(crate) key: Key,
}

/// Which half of a key pair a handle holds (`PQG_KEY_PUBLIC`, `PQG_KEY_SECRET`).
pub type pqg_key_kind = i32;

/// A public key (ML-DSA / SLH-DSA verification, KEM encapsulation: CTRU-Prime pk, ML-KEM ek).
pub const PQG_KEY_PUBLIC: pqg_key_kind = 1;
/// A secret key (ML-DSA / SLH-DSA signing, KEM decapsulation: CTRU-Prime sk, ML-KEM dk).
pub const PQG_KEY_SECRET: pqg_key_kind = 2;

/// The handle behind a C pointer: NULL is `NullPointer`.
///
/// # Safety
/// A non-NULL `key` must come from `pqg_key_new` and not have been freed.
pub(crate) unsafe fn key_ref<'a>(key: *const pqg_key) -> Result<&'a Key, Error> {
    // SAFETY: a live handle is a valid Box allocation, read-only until pqg_key_free.
    Ok(&unsafe { key.as_ref() }.ok_or(Error::NullPointer)?.key)
}

/// The algorithm families a handle call is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    MlDsa,
    SlhDsa,
    Kem,
}

impl Family {
    fn of(alg: Alg) -> Family {
        match alg {
            Alg::MlDsa(_) => Family::MlDsa,
            Alg::SlhDsa(_) => Family::SlhDsa,
            Alg::Ctru(_) | Alg::MlKem(_) => Family::Kem,
        }
    }
}

/// The handle's key, checked to be `kind` of an algorithm of `family`.
pub(crate) fn key_for(key: &Key, kind: KeyKind, family: Family) -> Result<(), Error> {
    if key.kind() != kind || Family::of(key.alg()) != family {
        return Err(Error::InvalidArgument);
    }
    Ok(())
}

/// The parameter set of an SLH-DSA handle of `kind`; any other is `InvalidArgument`.
pub(crate) fn slhdsa_key(key: &Key, kind: KeyKind) -> Result<crate::slhdsa::ParamSet, Error> {
    match key.alg() {
        Alg::SlhDsa(p) if key.kind() == kind => Ok(p),
        _ => Err(Error::InvalidArgument),
    }
}

/// A required output buffer of exactly `want` bytes.
///
/// # Safety
/// A non-NULL `ptr` must be `len` writable bytes for `'a`.
pub(crate) unsafe fn output<'a>(
    ptr: *mut u8,
    len: usize,
    want: usize,
) -> Result<&'a mut [u8], Error> {
    if ptr.is_null() {
        return Err(Error::NullPointer);
    }
    if len != want {
        return Err(Error::BadLength);
    }
    // SAFETY: non-NULL, `want` is an algorithm's (small) length; writability is the caller's.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// Creates a key handle: checks the encoded key once and expands it.
///
/// @param alg   any `PQG_ML_DSA_*`, `PQG_SLH_DSA_*`, `PQG_CTRU_PRIME_*` or `PQG_ML_KEM_*`.
/// @param kind  `PQG_KEY_PUBLIC` or `PQG_KEY_SECRET`.
/// @param[in]  key      the encoded key, `pqg_public_key_len(alg)` or `pqg_secret_key_len(alg)`
///                      bytes; copied, so it may be freed once this returns.
/// @param[out] out      receives the handle (free it with `pqg_key_free`); NULL on failure.
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER` (key or out); `PQG_ERR_INVALID_ARGUMENT` (unknown
///         alg or kind); `PQG_ERR_BAD_LENGTH`; `PQG_ERR_BAD_KEY` (ML-DSA secret key with s1/s2
///         out of range, CTRU-Prime key not canonically encoded, ML-KEM ek failing the FIPS 203
///         modulus check or dk the hash check, SLH-DSA secret key whose PK.root is not the
///         root its SK.seed and PK.seed give); `PQG_ERR_PANIC`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_key_new(
    alg: pqg_alg,
    kind: pqg_key_kind,
    key: *const u8,
    key_len: usize,
    out: *mut *mut pqg_key,
) -> pqg_status {
    boundary(|| {
        if out.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: out is non-NULL and writable (caller's promise).
        unsafe { out.write(std::ptr::null_mut()) };
        let alg = Alg::from_code(alg)?;
        let kind = match kind {
            PQG_KEY_PUBLIC => KeyKind::Public,
            PQG_KEY_SECRET => KeyKind::Secret,
            _ => return Err(Error::InvalidArgument),
        };
        // SAFETY: key is NULL or key_len readable bytes (caller's promise).
        let bytes = unsafe { required(key, key_len) }?;
        let handle = Box::new(pqg_key {
            key: Key::new(alg, kind, bytes)?,
        });
        // SAFETY: as above.
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Releases a key handle. NULL is a no-op. Work already queued with the handle keeps its own
/// reference and completes normally; the key material is zeroed when the last user is done.
/// Call once per handle, after the calls that take it have returned.
#[no_mangle]
pub unsafe extern "C" fn pqg_key_free(key: *mut pqg_key) {
    if key.is_null() {
        return;
    }
    // SAFETY: a non-NULL key came from pqg_key_new (Box::into_raw) and is freed once.
    let key = unsafe { Box::from_raw(key) };
    boundary_or((), move || drop(key));
}

/// The algorithm of a key handle, or 0 for NULL. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_key_alg(key: *const pqg_key) -> pqg_alg {
    // SAFETY: key is NULL or live (caller's promise).
    boundary_or(0, || unsafe { key_ref(key) }.map_or(0, |k| k.alg().code()))
}

/// Signs a message (ML-DSA.Sign, pure form) with a secret-key handle.
///
/// Concurrent calls on a GPU context are merged into batches (see `pqg_context_set_option`);
/// on a CPU context the call runs in the calling thread.
///
/// @param key  a `PQG_KEY_SECRET` handle of an ML-DSA algorithm.
/// Other parameters, outputs and statuses as `pqg_mldsa_sign`; a public or KEM handle is
/// `PQG_ERR_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_sign_key(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    rnd: *const u8,
    sig: *mut u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        // SAFETY: every pointer is NULL or valid for its length (caller's promise).
        unsafe {
            let (c, k) = (self::context(ctx)?, key_ref(key)?);
            key_for(k, KeyKind::Secret, Family::MlDsa)?;
            let (msg, cs) = (input(msg, msg_len)?, input(context, context_len)?);
            let sig = output(sig, sig_len, k.alg().signature_len())?;
            let m = Message::Pure { ctx: cs, msg };
            c.serve
                .sign(KeyArg::Handle(k), &m, optional::<32>(rnd), sig)
        }
    })
}

/// Verifies an ML-DSA signature (pure form) with a public-key handle.
///
/// @param key  a `PQG_KEY_PUBLIC` handle of an ML-DSA algorithm.
/// Other parameters and statuses as `pqg_mldsa_verify`.
#[no_mangle]
pub unsafe extern "C" fn pqg_mldsa_verify_key(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    sig: *const u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        // SAFETY: every pointer is NULL or valid for its length (caller's promise).
        unsafe {
            let (c, k) = (self::context(ctx)?, key_ref(key)?);
            key_for(k, KeyKind::Public, Family::MlDsa)?;
            let (msg, cs) = (input(msg, msg_len)?, input(context, context_len)?);
            let sig = required(sig, sig_len)?;
            let m = Message::Pure { ctx: cs, msg };
            c.serve.verify(KeyArg::Handle(k), &m, sig)
        }
    })
}

/// Signs a message (FIPS 205 slh_sign, pure form) with an SLH-DSA secret-key handle.
///
/// Concurrent calls on a GPU context are merged into batches (see `pqg_context_set_option`);
/// on a CPU context the call runs in the calling thread.
///
/// @param key  a `PQG_KEY_SECRET` handle of an SLH-DSA algorithm.
/// @param[in] rnd  n bytes of opt_rand; NULL = hedged; PK.seed = the deterministic variant.
/// Other parameters, outputs and statuses as `pqg_slhdsa_sign`; a public handle or one of
/// another family is `PQG_ERR_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_sign_key(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    rnd: *const u8,
    sig: *mut u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        // SAFETY: every pointer is NULL or valid for its length (caller's promise).
        unsafe {
            let (c, k) = (self::context(ctx)?, key_ref(key)?);
            let p = slhdsa_key(k, KeyKind::Secret)?;
            let (msg, cs) = (input(msg, msg_len)?, input(context, context_len)?);
            let sig = output(sig, sig_len, p.signature_len())?;
            let rnd = opt_rand(rnd, p.n());
            let m = SlhMessage::Pure { ctx: cs, msg };
            c.serve.slh_sign(KeyArg::Handle(k), &m, rnd, sig)
        }
    })
}

/// Verifies an SLH-DSA signature (pure form) with a public-key handle.
///
/// @param key  a `PQG_KEY_PUBLIC` handle of an SLH-DSA algorithm.
/// Other parameters and statuses as `pqg_slhdsa_verify`.
#[no_mangle]
pub unsafe extern "C" fn pqg_slhdsa_verify_key(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    msg: *const u8,
    msg_len: usize,
    context: *const u8,
    context_len: usize,
    sig: *const u8,
    sig_len: usize,
) -> pqg_status {
    boundary(|| {
        // SAFETY: every pointer is NULL or valid for its length (caller's promise).
        unsafe {
            let (c, k) = (self::context(ctx)?, key_ref(key)?);
            slhdsa_key(k, KeyKind::Public)?;
            let (msg, cs) = (input(msg, msg_len)?, input(context, context_len)?);
            let sig = required(sig, sig_len)?;
            let m = SlhMessage::Pure { ctx: cs, msg };
            c.serve.slh_verify(KeyArg::Handle(k), &m, sig)
        }
    })
}

/// Encapsulates to a KEM (CTRU-Prime or ML-KEM) public-key handle.
///
/// @param key  a `PQG_KEY_PUBLIC` handle of a KEM algorithm.
/// @param[in]  coins  32 bytes for deterministic encapsulation, or NULL for fresh randomness.
/// @param[out] ct     `pqg_ciphertext_len(alg)` bytes, written on success only.
/// @param[out] ss     `pqg_shared_secret_len(alg)` bytes, written on success; zeroed on failure.
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (not a KEM
///         public-key handle); `PQG_ERR_BAD_LENGTH`; `PQG_ERR_RNG`; `PQG_ERR_DEVICE`;
///         `PQG_ERR_PANIC`. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_encaps_key(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    coins: *const u8,
    ct: *mut u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
) -> pqg_status {
    let st = boundary(|| {
        // SAFETY: every pointer is NULL or valid for its length (caller's promise).
        unsafe {
            let (c, k) = (self::context(ctx)?, key_ref(key)?);
            key_for(k, KeyKind::Public, Family::Kem)?;
            let a = k.alg();
            if ss.is_null() {
                return Err(Error::NullPointer);
            }
            let ct = output(ct, ct_len, a.ciphertext_len())?;
            let ss = output(ss, ss_len, a.shared_secret_len())?;
            c.serve
                .encaps(KeyArg::Handle(k), optional::<32>(coins), ct, ss)
        }
    });
    if st != super::PQG_OK {
        // SAFETY: ss is NULL or ss_len writable bytes (caller's promise).
        unsafe { zero_secret(ss, ss_len) };
    }
    st
}

/// Decapsulates with a KEM (CTRU-Prime or ML-KEM) secret-key handle (implicit rejection as `pqg_kem_decaps`).
///
/// @param key  a `PQG_KEY_SECRET` handle of a KEM algorithm.
/// @param[in]  ct  `pqg_ciphertext_len(alg)` bytes.
/// @param[out] ss  `pqg_shared_secret_len(alg)` bytes, written on success; zeroed on failure.
/// @return `PQG_OK`; `PQG_ERR_NULL_POINTER`; `PQG_ERR_INVALID_ARGUMENT` (not a KEM
///         secret-key handle); `PQG_ERR_BAD_LENGTH`; `PQG_ERR_DEVICE`; `PQG_ERR_PANIC`.
///         Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn pqg_kem_decaps_key(
    ctx: *mut pqg_context,
    key: *const pqg_key,
    ct: *const u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
) -> pqg_status {
    let st = boundary(|| {
        // SAFETY: every pointer is NULL or valid for its length (caller's promise).
        unsafe {
            let (c, k) = (self::context(ctx)?, key_ref(key)?);
            key_for(k, KeyKind::Secret, Family::Kem)?;
            let a = k.alg();
            let ct = required(ct, ct_len)?;
            let ss = output(ss, ss_len, a.shared_secret_len())?;
            if ct.len() != a.ciphertext_len() {
                return Err(Error::BadLength);
            }
            c.serve.decaps(KeyArg::Handle(k), ct, ss)
        }
    });
    if st != super::PQG_OK {
        // SAFETY: ss is NULL or ss_len writable bytes (caller's promise).
        unsafe { zero_secret(ss, ss_len) };
    }
    st
}
