//! The backend calls behind every entry point, one-shot or batch (safe Rust, no C types).
//!
//! Each runs one blocking backend batch into library-owned buffers (secret ones zeroized on
//! drop) and returns them with the per-item statuses; the caller copies successful items out.
//! A backend panic is caught here: items it never finished report `PQG_ERR_PANIC`.

use crate::backend::{Backend, DecapsItem, EncapsItem, SignItem, VerifyItem};
use crate::{ctru, mldsa, Error, Status};
use std::panic::{catch_unwind, AssertUnwindSafe};
use zeroize::Zeroizing;

/// Runs a backend call over `n` items. Statuses start as `Panic` and the backend overwrites
/// each one it finishes, so after a caught panic the unfinished items carry `Panic`.
fn run(n: usize, call: impl FnOnce(&mut [Status])) -> Vec<Status> {
    let mut statuses = vec![Err(Error::Panic); n];
    // AssertUnwindSafe: on a panic we only read `statuses`, whose entries are plain values.
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| call(&mut statuses))) {
        let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    }
    statuses
}

/// `n` key pairs, contiguous: item i's keys are chunk i of `pks` / `sks`.
pub(crate) struct KeyPairs {
    pub statuses: Vec<Status>,
    pub pks: Vec<u8>,
    pub sks: Zeroizing<Vec<u8>>,
}

pub(crate) fn mldsa_keygen(
    b: &dyn Backend,
    p: mldsa::ParamSet,
    seeds: Option<&[u8]>,
    n: usize,
) -> KeyPairs {
    let mut pks = vec![0u8; n * p.public_key_len()];
    let mut sks = Zeroizing::new(vec![0u8; n * p.secret_key_len()]);
    let statuses = run(n, |st| b.mldsa_keygen(p, seeds, &mut pks, &mut sks, st));
    KeyPairs { statuses, pks, sks }
}

pub(crate) fn kem_keygen(
    b: &dyn Backend,
    p: ctru::ParamSet,
    seeds: Option<&[u8]>,
    n: usize,
) -> KeyPairs {
    let mut pks = vec![0u8; n * p.public_key_len()];
    let mut sks = Zeroizing::new(vec![0u8; n * p.secret_key_len()]);
    let statuses = run(n, |st| b.kem_keygen(p, seeds, &mut pks, &mut sks, st));
    KeyPairs { statuses, pks, sks }
}

/// Signs every item; item i's signature is chunk i of the returned buffer.
pub(crate) fn mldsa_sign(
    b: &dyn Backend,
    p: mldsa::ParamSet,
    items: &[SignItem<'_>],
) -> (Vec<Status>, Vec<u8>) {
    let len = p.signature_len();
    let mut sigs = vec![0u8; items.len() * len];
    let statuses = {
        let mut outs: Vec<&mut [u8]> = sigs.chunks_exact_mut(len).collect();
        run(items.len(), |st| b.mldsa_sign(p, items, &mut outs, st))
    };
    (statuses, sigs)
}

pub(crate) fn mldsa_verify(
    b: &dyn Backend,
    p: mldsa::ParamSet,
    items: &[VerifyItem<'_>],
) -> Vec<Status> {
    run(items.len(), |st| b.mldsa_verify(p, items, st))
}

/// Encapsulates every item; chunk i of the ciphertexts and shared secrets belong to item i.
pub(crate) fn kem_encaps(
    b: &dyn Backend,
    p: ctru::ParamSet,
    items: &[EncapsItem<'_>],
) -> (Vec<Status>, Vec<u8>, Zeroizing<Vec<u8>>) {
    let (ct_len, ss_len) = (p.ciphertext_len(), p.shared_secret_len());
    let mut cts = vec![0u8; items.len() * ct_len];
    let mut sss = Zeroizing::new(vec![0u8; items.len() * ss_len]);
    let statuses = {
        let mut ct_outs: Vec<&mut [u8]> = cts.chunks_exact_mut(ct_len).collect();
        let mut ss_outs: Vec<&mut [u8]> = sss.chunks_exact_mut(ss_len).collect();
        run(items.len(), |st| {
            b.kem_encaps(p, items, &mut ct_outs, &mut ss_outs, st)
        })
    };
    (statuses, cts, sss)
}

/// Decapsulates every item; chunk i of the shared secrets belongs to item i.
pub(crate) fn kem_decaps(
    b: &dyn Backend,
    p: ctru::ParamSet,
    items: &[DecapsItem<'_>],
) -> (Vec<Status>, Zeroizing<Vec<u8>>) {
    let ss_len = p.shared_secret_len();
    let mut sss = Zeroizing::new(vec![0u8; items.len() * ss_len]);
    let statuses = {
        let mut outs: Vec<&mut [u8]> = sss.chunks_exact_mut(ss_len).collect();
        run(items.len(), |st| b.kem_decaps(p, items, &mut outs, st))
    };
    (statuses, sss)
}

/// The items of a batch that passed validation, and where each came from. Rejected items
/// keep their own error; the rest start as `Panic` until the backend's status is merged in.
pub(crate) struct Accepted<T> {
    pub items: Vec<T>,
    pub index: Vec<usize>,
    pub statuses: Vec<Status>,
}

impl<T> Accepted<T> {
    pub(crate) fn from_results(results: impl IntoIterator<Item = Result<T, Error>>) -> Self {
        let mut acc = Accepted {
            items: Vec::new(),
            index: Vec::new(),
            statuses: Vec::new(),
        };
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Ok(item) => {
                    acc.items.push(item);
                    acc.index.push(i);
                    acc.statuses.push(Err(Error::Panic));
                }
                Err(e) => acc.statuses.push(Err(e)),
            }
        }
        acc
    }

    /// Merges the backend's statuses (one per accepted item) back into request order and
    /// calls `on_item(request index, accepted index, status)` for every accepted item.
    pub(crate) fn merge(
        mut self,
        ran: &[Status],
        mut on_item: impl FnMut(usize, usize, Status),
    ) -> Vec<Status> {
        for (k, (&i, &st)) in self.index.iter().zip(ran).enumerate() {
            self.statuses[i] = st;
            on_item(i, k, st);
        }
        self.statuses
    }
}
