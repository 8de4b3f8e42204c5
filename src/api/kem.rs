//! KEM batches and single calls (CTRU-Prime and ML-KEM: `p` is either family's parameter
//! set, or a [`Kem`]).

use super::run::{contained, failed, interrupted, keygen, reject, single, zero_outs, KeyShape};
use crate::backend::{Backend, DecapsItem, EncapsItem};
use crate::{Error, Kem, Status};

/// KeyGen for `statuses.len()` items into the caller's contiguous arrays (row i of `pks`
/// and `sks`). `seeds`: one 64-byte d || z per item, or `None` (drawn in bulk by the backend). A failed item's
/// secret key is zeroed. `Err(BadLength)` (nothing written) for arrays of the wrong size.
pub fn kem_keygen(
    b: &dyn Backend,
    p: impl Into<Kem>,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
    statuses: &mut [Status],
) -> Result<(), Error> {
    let p = p.into();
    let shape = KeyShape {
        seed: 64,
        pk: p.public_key_len(),
        sk: p.secret_key_len(),
    };
    keygen(shape, seeds, pks, sks, statuses, |pk, sk, st| match p {
        Kem::Ctru(p) => b.kem_keygen(p, seeds, pk, sk, st),
        Kem::MlKem(p) => b.mlkem_keygen(p, seeds, pk, sk, st),
    })
}

/// Encapsulates to every item's public key (many items may share one key slice);
/// `cts[i]` and `sss[i]` receive item i's ciphertext and shared secret, a failed item's
/// shared secret is zeroed. Items without coins get theirs from the backend's bulk draws.
pub fn kem_encaps(
    b: &dyn Backend,
    p: impl Into<Kem>,
    items: &[EncapsItem<'_>],
    cts: &mut [&mut [u8]],
    sss: &mut [&mut [u8]],
    statuses: &mut [Status],
) -> Result<(), Error> {
    let n = statuses.len();
    if items.len() != n || cts.len() != n || sss.len() != n {
        return reject(statuses, Error::BadLength);
    }
    contained(statuses, |st| match p.into() {
        Kem::Ctru(p) => b.kem_encaps(p, items, cts, sss, st),
        Kem::MlKem(p) => b.mlkem_encaps(p, items, cts, sss, st),
    });
    zero_outs(sss, statuses, failed);
    zero_outs(cts, statuses, interrupted);
    Ok(())
}

/// Decapsulates every item; `sss[i]` receives item i's shared secret (zeroed if it fails).
pub fn kem_decaps(
    b: &dyn Backend,
    p: impl Into<Kem>,
    items: &[DecapsItem<'_>],
    sss: &mut [&mut [u8]],
    statuses: &mut [Status],
) -> Result<(), Error> {
    if items.len() != statuses.len() || sss.len() != statuses.len() {
        return reject(statuses, Error::BadLength);
    }
    contained(statuses, |st| match p.into() {
        Kem::Ctru(p) => b.kem_decaps(p, items, sss, st),
        Kem::MlKem(p) => b.mlkem_decaps(p, items, sss, st),
    });
    zero_outs(sss, statuses, failed);
    Ok(())
}

/// One key pair; `seed`: d || z or `None`.
pub fn kem_keygen_one(
    b: &dyn Backend,
    p: impl Into<Kem>,
    seed: Option<&[u8; 64]>,
    pk: &mut [u8],
    sk: &mut [u8],
) -> Status {
    let mut st = [Err(Error::Panic)];
    let r = kem_keygen(b, p, seed.map(|s| &s[..]), pk, sk, &mut st);
    single(r, st)
}

/// One encapsulation into `ct` and `ss`; `coins` (CTRU-Prime e, ML-KEM m): 32 bytes or `None`.
pub fn kem_encaps_one(
    b: &dyn Backend,
    p: impl Into<Kem>,
    pk: &[u8],
    coins: Option<&[u8; 32]>,
    ct: &mut [u8],
    ss: &mut [u8],
) -> Status {
    let mut st = [Err(Error::Panic)];
    let r = kem_encaps(
        b,
        p,
        &[EncapsItem { pk, coins }],
        &mut [ct],
        &mut [ss],
        &mut st,
    );
    single(r, st)
}

/// One decapsulation into `ss`.
pub fn kem_decaps_one(
    b: &dyn Backend,
    p: impl Into<Kem>,
    sk: &[u8],
    ct: &[u8],
    ss: &mut [u8],
) -> Status {
    let mut st = [Err(Error::Panic)];
    let r = kem_decaps(b, p, &[DecapsItem { sk, ct }], &mut [ss], &mut st);
    single(r, st)
}
