//! Running a batch of items: on the CPU (in place, expanded keys, all cores), or through a
//! backend's batch calls, one call per class, with the items a failing backend could not do
//! retried on the CPU.

use super::item::{Class, Item};
use crate::backend::Backend;
use crate::{Error, Status};
use rayon::prelude::*;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use zeroize::Zeroizing;

/// Runs one item on the CPU in the calling thread and reports it.
pub fn run_one(item: Item) {
    let st = catch_unwind(AssertUnwindSafe(|| item.op.run_cpu())).unwrap_or(Err(Error::Panic));
    item.finish(st);
}

/// Runs the items on the CPU: inline for one, on all cores otherwise.
pub fn run_cpu(items: Vec<Item>) {
    if items.len() <= 1 {
        items.into_iter().for_each(run_one);
    } else {
        items.into_par_iter().with_min_len(2).for_each(run_one);
    }
}

/// Whether a failure is the engine's rather than the item's (worth a retry on the CPU).
fn engine_failure(st: Status) -> bool {
    matches!(st, Err(Error::Device | Error::Panic | Error::NoDevice))
}

/// Runs the items through `backend`, one batch call per class; with `retry`, items the
/// backend failed with an engine error (or never finished: a panic) are run again on the CPU.
pub fn run_backend(backend: &dyn Backend, items: Vec<Item>, retry_on_cpu: bool) {
    // Classes in order of first appearance.
    let mut index: HashMap<Class, usize> = HashMap::new();
    let mut classes: Vec<(Class, Vec<Item>)> = Vec::new();
    for it in items {
        let c = it.op.class();
        let k = *index.entry(c).or_insert_with(|| {
            classes.push((c, Vec::new()));
            classes.len() - 1
        });
        classes[k].1.push(it);
    }
    let mut retry = Vec::new();
    for (class, items) in classes {
        let statuses = run_class(backend, class, &items);
        for (it, (st, outs)) in items.into_iter().zip(statuses) {
            match st {
                Ok(()) => {
                    // SAFETY: the item is running; its outputs are valid until it finishes.
                    unsafe { it.op.write_outputs(&outs.0, &outs.1) };
                    it.finish(Ok(()));
                }
                st if retry_on_cpu && engine_failure(st) => retry.push(it),
                st => it.finish(st),
            }
        }
    }
    run_cpu(retry);
}

/// One item's outputs from a backend: the signature or ciphertext, and the shared secret.
type Outs = (Vec<u8>, Zeroizing<Vec<u8>>);

/// Runs one class through the backend into library buffers; statuses start as `Panic` so
/// that after a caught panic the unfinished items retry.
fn run_class(b: &dyn Backend, class: Class, items: &[Item]) -> Vec<(Status, Outs)> {
    let n = items.len();
    let mut st = vec![Err(Error::Panic); n];
    let (len1, len2) = match class {
        Class::Sign(p) => (p.signature_len(), 0),
        Class::Verify(_) => (0, 0),
        Class::Encaps(p) => (p.ciphertext_len(), p.shared_secret_len()),
        Class::Decaps(p) => (0, p.shared_secret_len()),
    };
    let mut first = vec![0u8; n * len1];
    let mut second = Zeroizing::new(vec![0u8; n * len2]);
    {
        let mut o1: Vec<&mut [u8]> = first.chunks_mut(len1.max(1)).collect();
        let mut o2: Vec<&mut [u8]> = second.chunks_mut(len2.max(1)).collect();
        o1.resize_with(n, Default::default);
        o2.resize_with(n, Default::default);
        // SAFETY (the `*_item` views): the items are running, their buffers valid; the
        // views are dropped at the end of this block.
        let call = AssertUnwindSafe(|| unsafe {
            match class {
                Class::Sign(p) => {
                    let v: Vec<_> = items.iter().filter_map(|i| i.op.sign_item()).collect();
                    b.mldsa_sign(p, &v, &mut o1, &mut st)
                }
                Class::Verify(p) => {
                    let v: Vec<_> = items.iter().filter_map(|i| i.op.verify_item()).collect();
                    b.mldsa_verify(p, &v, &mut st)
                }
                Class::Encaps(p) => {
                    let v: Vec<_> = items.iter().filter_map(|i| i.op.encaps_item()).collect();
                    b.kem_encaps(p, &v, &mut o1, &mut o2, &mut st)
                }
                Class::Decaps(p) => {
                    let v: Vec<_> = items.iter().filter_map(|i| i.op.decaps_item()).collect();
                    b.kem_decaps(p, &v, &mut o2, &mut st)
                }
            }
        });
        if let Err(payload) = catch_unwind(call) {
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
        }
    }
    (0..n)
        .map(|i| {
            let a = first.get(i * len1..(i + 1) * len1).unwrap_or(&[]).to_vec();
            let s = Zeroizing::new(second.get(i * len2..(i + 1) * len2).unwrap_or(&[]).to_vec());
            (st[i], (a, s))
        })
        .collect()
}
