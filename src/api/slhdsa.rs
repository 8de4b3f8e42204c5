//! SLH-DSA batches and single calls (any FIPS 205 interface: see [`Message`]).

use super::run::{contained, interrupted, keygen, reject, single, zero_outs, KeyShape};
use crate::backend::{Backend, SlhSignItem, SlhVerifyItem};
use crate::slhdsa::{Message, ParamSet};
use crate::{Error, Status};

/// slh_keygen for `statuses.len()` items into the caller's contiguous arrays (row i of `pks`
/// and `sks`). `seeds`: one 3n-byte SK.seed || SK.prf || PK.seed per item, or `None` for fresh
/// randomness. Shape errors and zeroing as [`super::mldsa_keygen`].
pub fn slhdsa_keygen(
    b: &dyn Backend,
    p: ParamSet,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
    statuses: &mut [Status],
) -> Result<(), Error> {
    let shape = KeyShape {
        seed: p.seed_len(),
        pk: p.public_key_len(),
        sk: p.secret_key_len(),
    };
    keygen(shape, seeds, pks, sks, statuses, |pk, sk, st| {
        b.slhdsa_keygen(p, seeds, pk, sk, st)
    })
}

/// Signs every item; `sigs[i]` receives item i's signature (`p.signature_len()` bytes).
/// Item errors as [`crate::slhdsa::sign`]; `Err(BadLength)` when the three slices differ in length.
pub fn slhdsa_sign(
    b: &dyn Backend,
    p: ParamSet,
    items: &[SlhSignItem<'_>],
    sigs: &mut [&mut [u8]],
    statuses: &mut [Status],
) -> Result<(), Error> {
    if items.len() != statuses.len() || sigs.len() != statuses.len() {
        return reject(statuses, Error::BadLength);
    }
    contained(statuses, |st| b.slhdsa_sign(p, items, sigs, st));
    zero_outs(sigs, statuses, interrupted);
    Ok(())
}

/// Verifies every item: `Ok` valid, `Err(VerifyFailed)` invalid or malformed.
pub fn slhdsa_verify(
    b: &dyn Backend,
    p: ParamSet,
    items: &[SlhVerifyItem<'_>],
    statuses: &mut [Status],
) -> Result<(), Error> {
    if items.len() != statuses.len() {
        return reject(statuses, Error::BadLength);
    }
    contained(statuses, |st| b.slhdsa_verify(p, items, st));
    Ok(())
}

/// One key pair into `pk` and `sk` (exact lengths, else `BadLength`); `seed`: 3n bytes or `None`.
pub fn slhdsa_keygen_one(
    b: &dyn Backend,
    p: ParamSet,
    seed: Option<&[u8]>,
    pk: &mut [u8],
    sk: &mut [u8],
) -> Status {
    let mut st = [Err(Error::Panic)];
    let r = slhdsa_keygen(b, p, seed, pk, sk, &mut st);
    single(r, st)
}

/// One signature into `sig` (exactly `p.signature_len()` bytes); `rnd`: opt_rand (n bytes) or
/// `None` for hedged signing.
pub fn slhdsa_sign_one(
    b: &dyn Backend,
    p: ParamSet,
    sk: &[u8],
    msg: Message<'_>,
    rnd: Option<&[u8]>,
    sig: &mut [u8],
) -> Status {
    let mut st = [Err(Error::Panic)];
    let r = slhdsa_sign(b, p, &[SlhSignItem { sk, msg, rnd }], &mut [sig], &mut st);
    single(r, st)
}

/// One verification.
pub fn slhdsa_verify_one(
    b: &dyn Backend,
    p: ParamSet,
    pk: &[u8],
    msg: Message<'_>,
    sig: &[u8],
) -> Status {
    let mut st = [Err(Error::Panic)];
    let r = slhdsa_verify(b, p, &[SlhVerifyItem { pk, msg, sig }], &mut st);
    single(r, st)
}
