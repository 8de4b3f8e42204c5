//! Running a batch of items: on the CPU (in place, expanded keys, all cores), or through a
//! backend's batch calls, one call per class, with the items a failing backend could not do
//! retried on the CPU.
//!
//! Backends write straight into the callers' buffers: each item's output slices are handed
//! to the batch call as they are (no library buffer per item, no copy afterwards). Only key
//! generation goes through one batch-sized buffer, because the backends' key generators
//! take contiguous arrays.

use super::item::{Class, Item, Sig};
use crate::backend::Backend;
use crate::{api, Alg, Error, Status};
use rayon::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use zeroize::Zeroizing;

/// Runs one item on the CPU in the calling thread and reports it.
pub fn run_one(item: &mut Item) {
    let st = catch_unwind(AssertUnwindSafe(|| item.op.run_cpu())).unwrap_or(Err(Error::Panic));
    item.finish(st);
}

/// Runs the items on the CPU: inline for one, on all cores otherwise. A batch's items report
/// together when all have run (as a backend batch's do), so their wake-ups are given at once
/// (`report`) rather than one by one while the rest still run.
pub fn run_cpu(items: &mut [&mut Item]) {
    if items.len() <= 1 {
        items.iter_mut().for_each(|i| run_one(i));
        return;
    }
    let st: Vec<Status> = items
        .par_iter_mut()
        .map(|i| catch_unwind(AssertUnwindSafe(|| i.op.run_cpu())).unwrap_or(Err(Error::Panic)))
        .collect();
    let mut ended: Vec<(&mut Item, Status)> = items.iter_mut().map(|i| &mut **i).zip(st).collect();
    report(&mut ended);
}

/// Whether a failure is the engine's rather than the item's (worth a retry on the CPU).
fn engine_failure(st: Status) -> bool {
    matches!(st, Err(Error::Device | Error::Panic | Error::NoDevice))
}

/// Ends every item with `error` (a GPU context inherited across `fork()`: see
/// [`crate::gpu::cuda_inherited_reason`]).
pub fn refuse(items: &mut [&mut Item], error: Error) {
    items.iter_mut().for_each(|it| it.finish(Err(error)));
}

/// Runs the items through `backend`, one batch call per class (in order of first
/// appearance); with `retry_on_cpu`, items the backend failed with an engine error (or never
/// finished: a panic) have their outputs cleared and run again on the CPU.
pub fn run_backend(backend: &dyn Backend, items: Vec<&mut Item>, retry_on_cpu: bool) {
    let mut classes: Vec<(Class, Vec<&mut Item>)> = Vec::new();
    for it in items {
        let c = it.op.class();
        match classes.iter_mut().find(|(k, _)| *k == c) {
            Some((_, v)) => v.push(it),
            None => classes.push((c, vec![it])),
        }
    }
    let mut retry = Vec::new();
    for (class, mut items) in classes {
        let statuses = run_class(backend, class, &mut items);
        let mut ended = Vec::with_capacity(items.len());
        for (it, st) in items.into_iter().zip(statuses) {
            match st {
                st if retry_on_cpu && engine_failure(st) => {
                    it.op.clear_outputs();
                    retry.push(it);
                }
                st => ended.push((it, st)),
            }
        }
        report(&mut ended);
    }
    run_cpu(&mut retry);
}

/// Batches from twice this size report their items on all cores, in blocks of this size;
/// smaller ones (every serving batch of up to 16,383 items) on the dispatcher thread: waking
/// the pool for a few blocks cost the busy host more than the reports. Measured on the H200
/// (serving, 65,536 outstanding, four batches in flight, with `SERIAL_BULK` in `rng.rs`;
/// 2,048 -> 8,192, two rounds alternated): CTRU-Prime-761 encaps 12.76 / 11.95 -> 13.55 /
/// 13.41 M/s, ML-DSA-44 verify 8.58 / 7.91 -> 8.99 / 8.45 M/s, decaps and signing unchanged.
const REPORT_BLOCK: usize = 8192;

/// Reports ended items. Reporting is per item (a status, the job's count, for a job's last
/// item its callback, waking and eventfd): at GPU batch sizes that is milliseconds of one
/// thread, so large batches share it out over the cores; each block's eventfd signals are
/// written once (`notify::coalesced`).
fn report(ended: &mut [(&mut Item, Status)]) {
    let block = |b: &mut [(&mut Item, Status)]| {
        super::notify::coalesced(|| b.iter_mut().for_each(|(it, st)| it.finish(*st)))
    };
    if ended.len() < 2 * REPORT_BLOCK {
        return block(ended);
    }
    crate::backend::in_pool(|| ended.par_chunks_mut(REPORT_BLOCK).for_each(block));
}

/// Runs one class through the backend (by way of the `api` layer: shape checks, a contained
/// panic leaves `Panic` on the unfinished items and clears their outputs). Outputs land in
/// the items' own buffers.
fn run_class(b: &dyn Backend, class: Class, items: &mut [&mut Item]) -> Vec<Status> {
    let n = items.len();
    let mut st = vec![Err(Error::Panic); n];
    // SAFETY (the views below): the items are running, their buffers valid and written only
    // from this thread; each item's outputs get one view, dropped before the items report.
    let r = unsafe {
        let firsts = || -> Vec<&mut [u8]> { items.iter().map(|i| i.op.first_out()).collect() };
        let secrets = || -> Vec<&mut [u8]> { items.iter().map(|i| i.op.secret_out()).collect() };
        match class {
            Class::Sign(Sig::MlDsa(p)) => {
                let v: Vec<_> = items.iter().filter_map(|i| i.op.sign_item()).collect();
                api::mldsa_sign(b, p, &v, &mut firsts(), &mut st)
            }
            Class::Sign(Sig::SlhDsa(p)) => {
                let v: Vec<_> = items.iter().filter_map(|i| i.op.slh_sign_item()).collect();
                api::slhdsa_sign(b, p, &v, &mut firsts(), &mut st)
            }
            Class::Verify(Sig::MlDsa(p)) => {
                let v: Vec<_> = items.iter().filter_map(|i| i.op.verify_item()).collect();
                api::mldsa_verify(b, p, &v, &mut st)
            }
            Class::Verify(Sig::SlhDsa(p)) => {
                let v: Vec<_> = items
                    .iter()
                    .filter_map(|i| i.op.slh_verify_item())
                    .collect();
                api::slhdsa_verify(b, p, &v, &mut st)
            }
            Class::Encaps(p) => {
                let v: Vec<_> = items.iter().filter_map(|i| i.op.encaps_item()).collect();
                api::kem_encaps(b, p, &v, &mut firsts(), &mut secrets(), &mut st)
            }
            Class::Decaps(p) => {
                let v: Vec<_> = items.iter().filter_map(|i| i.op.decaps_item()).collect();
                api::kem_decaps(b, p, &v, &mut secrets(), &mut st)
            }
            Class::Keygen(alg, seeded) => keygen(b, alg, seeded, items, &mut st),
        }
    };
    if let Err(e) = r {
        // A shape the layer refused (cannot happen: one view per item): every item says so.
        st.fill(Err(e));
    }
    st
}

/// Key generation for items of one algorithm into one batch buffer (the backends' key
/// generators take contiguous arrays), then each successful item's row into its own buffers.
///
/// # Safety
/// As in [`run_class`].
unsafe fn keygen(
    b: &dyn Backend,
    alg: Alg,
    seeded: bool,
    items: &[&mut Item],
    st: &mut [Status],
) -> Result<(), Error> {
    let n = items.len();
    let (pk_len, sk_len) = (alg.public_key_len(), alg.secret_key_len());
    let mut pks = vec![0u8; n * pk_len];
    let mut sks = Zeroizing::new(vec![0u8; n * sk_len]);
    let seeds: Option<Zeroizing<Vec<u8>>> = seeded.then(|| {
        Zeroizing::new(
            items
                .iter()
                .flat_map(|i| i.op.seed().unwrap_or(&[]).iter().copied())
                .collect(),
        )
    });
    let seeds = seeds.as_ref().map(|s| &s[..]);
    match alg {
        Alg::MlDsa(p) => api::mldsa_keygen(b, p, seeds, &mut pks, &mut sks, st)?,
        Alg::Ctru(p) => api::kem_keygen(b, p, seeds, &mut pks, &mut sks, st)?,
        Alg::SlhDsa(p) => api::slhdsa_keygen(b, p, seeds, &mut pks, &mut sks, st)?,
        Alg::MlKem(p) => api::kem_keygen(b, p, seeds, &mut pks, &mut sks, st)?,
    }
    for (i, it) in items.iter().enumerate() {
        match st[i] {
            // SAFETY: forwarded (the item is running).
            Ok(()) => unsafe {
                it.op
                    .first_out()
                    .copy_from_slice(&pks[i * pk_len..][..pk_len]);
                it.op
                    .secret_out()
                    .copy_from_slice(&sks[i * sk_len..][..sk_len]);
            },
            // As for every other class: a panic clears the public output too.
            Err(Error::Panic) => it.op.clear_outputs(),
            Err(_) => {}
        }
    }
    Ok(())
}
