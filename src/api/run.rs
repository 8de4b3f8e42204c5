//! What every batch call does around its backend call.

use crate::{Error, Status};
use std::panic::{catch_unwind, AssertUnwindSafe};
use zeroize::Zeroize;

/// Runs a backend batch call. Statuses start as `Panic` and the backend overwrites each one it
/// finishes, so after a caught panic the unfinished items carry `Panic`.
pub(super) fn contained(statuses: &mut [Status], call: impl FnOnce(&mut [Status])) {
    statuses.fill(Err(Error::Panic));
    // AssertUnwindSafe: after a panic only `statuses` (plain values) is read.
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| call(statuses))) {
        // Dropping the payload runs foreign code (its Drop); keep that inside a guard too.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    }
}

/// Whether every item succeeded, in one pass that the compiler vectorises: the usual batch
/// then skips the passes that look for failed items' outputs to zero.
fn all_ok(statuses: &[Status]) -> bool {
    statuses
        .chunks(64)
        .all(|c| c.iter().fold(true, |ok, st| ok & st.is_ok()))
}

/// Zeroes row i of `rows` (rows of `len` bytes) for every item i whose status `hit` selects.
pub(super) fn zero_rows(
    rows: &mut [u8],
    len: usize,
    statuses: &[Status],
    hit: fn(&Status) -> bool,
) {
    if all_ok(statuses) {
        return;
    }
    for (row, st) in rows.chunks_exact_mut(len).zip(statuses) {
        if hit(st) {
            row.zeroize();
        }
    }
}

/// Zeroes `outs[i]` for every item i whose status `hit` selects.
pub(super) fn zero_outs(outs: &mut [&mut [u8]], statuses: &[Status], hit: fn(&Status) -> bool) {
    if all_ok(statuses) {
        return;
    }
    for (out, st) in outs.iter_mut().zip(statuses) {
        if hit(st) {
            out.zeroize();
        }
    }
}

/// Failed: a secret output of this item must not keep anything.
pub(super) fn failed(st: &Status) -> bool {
    st.is_err()
}

/// Cut short by a backend panic: the backend may have been writing this item's public
/// outputs in place when it died, so they are cleared rather than left half-written. (Every
/// other failure leaves public outputs untouched: the backends write only successful items.)
pub(super) fn interrupted(st: &Status) -> bool {
    *st == Err(Error::Panic)
}

/// Sets every status to `e` and hands `e` back: a call rejected as a whole.
pub(super) fn reject(statuses: &mut [Status], e: Error) -> Result<(), Error> {
    statuses.fill(Err(e));
    Err(e)
}

/// The status of a single-item call.
pub(super) fn single(r: Result<(), Error>, st: [Status; 1]) -> Status {
    r.and(st[0])
}

/// Row lengths of one key-generation item: seed, public key, secret key.
pub(super) struct KeyShape {
    pub seed: usize,
    pub pk: usize,
    pub sk: usize,
}

/// The body shared by both families' key generation: the arrays must hold exactly one row per
/// status (else `BadLength`, nothing written); the backend call `generate` runs contained; a
/// failed item's secret key is zeroed (its public key too when a panic cut it short).
pub(super) fn keygen(
    shape: KeyShape,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
    statuses: &mut [Status],
    generate: impl FnOnce(&mut [u8], &mut [u8], &mut [Status]),
) -> Result<(), Error> {
    let n = statuses.len();
    if pks.len() != n * shape.pk
        || sks.len() != n * shape.sk
        || seeds.is_some_and(|s| s.len() != n * shape.seed)
    {
        return reject(statuses, Error::BadLength);
    }
    contained(statuses, |st| generate(pks, sks, st));
    zero_rows(sks, shape.sk, statuses, failed);
    zero_rows(pks, shape.pk, statuses, interrupted);
    Ok(())
}
