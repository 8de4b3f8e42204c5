//! ML-DSA batches and single calls (any FIPS 204 interface: see [`Message`]).

use super::run::{contained, interrupted, keygen, reject, single, zero_outs, KeyShape};
use crate::backend::{Backend, SignItem, VerifyItem};
use crate::mldsa::{Message, ParamSet};
use crate::{Error, Status};

/// ML-DSA.KeyGen for `statuses.len()` items into the caller's contiguous arrays: item i's keys
/// are row i of `pks` (`p.public_key_len()` bytes) and `sks`. `seeds`: one 32-byte xi per item,
/// or `None` for fresh randomness (drawn in bulk by the backend). A failed item's secret key is zeroed
/// (and its public key too when a backend panic cut it short).
/// `Err(BadLength)` (nothing written) when an array does not hold exactly n rows; `Err(Rng)`
/// when fresh randomness is unavailable (every status then says so too).
pub fn mldsa_keygen(
    b: &dyn Backend,
    p: ParamSet,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
    statuses: &mut [Status],
) -> Result<(), Error> {
    let shape = KeyShape {
        seed: 32,
        pk: p.public_key_len(),
        sk: p.secret_key_len(),
    };
    keygen(shape, seeds, pks, sks, statuses, |pk, sk, st| {
        b.mldsa_keygen(p, seeds, pk, sk, st)
    })
}

/// Signs every item; `sigs[i]` receives item i's signature (`p.signature_len()` bytes).
/// Hedged items (`rnd: None`) get their randomness from the backend's bulk draws. Item errors as
/// [`crate::mldsa::sign`]; `Err(BadLength)` when the three slices differ in length.
pub fn mldsa_sign(
    b: &dyn Backend,
    p: ParamSet,
    items: &[SignItem<'_>],
    sigs: &mut [&mut [u8]],
    statuses: &mut [Status],
) -> Result<(), Error> {
    if items.len() != statuses.len() || sigs.len() != statuses.len() {
        return reject(statuses, Error::BadLength);
    }
    contained(statuses, |st| b.mldsa_sign(p, items, sigs, st));
    zero_outs(sigs, statuses, interrupted);
    Ok(())
}

/// Verifies every item: `Ok` valid, `Err(VerifyFailed)` invalid or malformed.
pub fn mldsa_verify(
    b: &dyn Backend,
    p: ParamSet,
    items: &[VerifyItem<'_>],
    statuses: &mut [Status],
) -> Result<(), Error> {
    if items.len() != statuses.len() {
        return reject(statuses, Error::BadLength);
    }
    contained(statuses, |st| b.mldsa_verify(p, items, st));
    Ok(())
}

/// One key pair into `pk` and `sk` (exact lengths, else `BadLength`); `seed`: xi or `None`.
pub fn mldsa_keygen_one(
    b: &dyn Backend,
    p: ParamSet,
    seed: Option<&[u8; 32]>,
    pk: &mut [u8],
    sk: &mut [u8],
) -> Status {
    let mut st = [Err(Error::Panic)];
    let r = mldsa_keygen(b, p, seed.map(|s| &s[..]), pk, sk, &mut st);
    single(r, st)
}

/// One signature into `sig` (exactly `p.signature_len()` bytes).
pub fn mldsa_sign_one(
    b: &dyn Backend,
    p: ParamSet,
    sk: &[u8],
    msg: Message<'_>,
    rnd: Option<&[u8; 32]>,
    sig: &mut [u8],
) -> Status {
    let mut st = [Err(Error::Panic)];
    let r = mldsa_sign(b, p, &[SignItem { sk, msg, rnd }], &mut [sig], &mut st);
    single(r, st)
}

/// One verification.
pub fn mldsa_verify_one(
    b: &dyn Backend,
    p: ParamSet,
    pk: &[u8],
    msg: Message<'_>,
    sig: &[u8],
) -> Status {
    let mut st = [Err(Error::Panic)];
    let r = mldsa_verify(b, p, &[VerifyItem { pk, msg, sig }], &mut st);
    single(r, st)
}
