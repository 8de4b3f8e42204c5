//! What the C ABI's batch path costs on its own: `pqg_*_submit` + `pqg_job_wait` +
//! `pqg_job_free` on batches whose engine does nothing (it reports every item done at once and
//! writes no output), so every microsecond printed is the library's host path outside the
//! backend (checks, hand-off to the job runner, the `api` layer, statuses, completion and the
//! waiter's wake-up). Subtract it from a C-ABI batch time to see what the engine got.
//!
//! `cargo run --release --example abi_overhead [-- N [REPS [ENGINE_US]]]` (N: batch size,
//! default 65,536; REPS: timed batches per operation, default 40; ENGINE_US: how long the
//! engine takes per batch, sleeping, default 0). With ENGINE_US at a GPU batch's time (2,500
//! for a CTRU-Prime-761 encapsulation batch on the H200) the library's threads and the
//! waiter sleep through the batch as they do in front of a GPU, so their wake-ups are
//! counted; the figure printed is always submit + wait less the time spent in the engine.
//! Run it on the host whose figures you compare with (core count and idle states matter:
//! large batches are checked on all cores). Outputs are not checked (nothing is computed):
//! an internal measurement, not a product figure.

use pqgpu::backend::{Backend, BackendKind, DecapsItem, EncapsItem, SignItem, VerifyItem};
use pqgpu::ffi::*;
use pqgpu::{ctru, mldsa, Alg, Status};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An engine that takes `busy` per batch (asleep), writes nothing and reports every item done.
struct NullEngine {
    busy: Duration,
    /// Nanoseconds spent in the last batch call.
    spent: AtomicU64,
}

impl NullEngine {
    fn run(&self, st: &mut [Status]) {
        let t = Instant::now();
        if !self.busy.is_zero() {
            std::thread::sleep(self.busy);
        }
        st.fill(Ok(()));
        self.spent
            .store(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

impl Backend for NullEngine {
    fn kind(&self) -> BackendKind {
        BackendKind::Gpu
    }
    fn mldsa_keygen(
        &self,
        _: mldsa::ParamSet,
        _: Option<&[u8]>,
        _: &mut [u8],
        _: &mut [u8],
        st: &mut [Status],
    ) {
        self.run(st);
    }
    fn mldsa_sign(
        &self,
        _: mldsa::ParamSet,
        _: &[SignItem<'_>],
        _: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        self.run(st);
    }
    fn mldsa_verify(&self, _: mldsa::ParamSet, _: &[VerifyItem<'_>], st: &mut [Status]) {
        self.run(st);
    }
    fn kem_keygen(
        &self,
        _: ctru::ParamSet,
        _: Option<&[u8]>,
        _: &mut [u8],
        _: &mut [u8],
        st: &mut [Status],
    ) {
        self.run(st);
    }
    fn kem_encaps(
        &self,
        _: ctru::ParamSet,
        _: &[EncapsItem<'_>],
        _: &mut [&mut [u8]],
        _: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        self.run(st);
    }
    fn kem_decaps(
        &self,
        _: ctru::ParamSet,
        _: &[DecapsItem<'_>],
        _: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        self.run(st);
    }
}

/// Submit time and submit-to-woken-waiter time of one batch, less the engine's time.
type Split = (Duration, Duration);

/// Times one submit call, then the wait for its job; the engine's own time is taken off.
fn timed(engine: &NullEngine, submit: impl FnOnce(*mut *mut pqg_job) -> pqg_status) -> Split {
    let mut job = null_mut();
    let t = Instant::now();
    assert_eq!(submit(&mut job), PQG_OK, "submit");
    let submitted = t.elapsed();
    // SAFETY: job came from a successful submit; waited on and freed once.
    assert_eq!(unsafe { pqg_job_wait(job, -1) }, PQG_OK, "wait");
    let total = t.elapsed();
    // SAFETY: as above.
    unsafe { pqg_job_free(job) };
    let spent = Duration::from_nanos(engine.spent.load(Ordering::Relaxed));
    (submitted, total.saturating_sub(spent))
}

/// Prints the median and the fastest of `reps` batches (after two untimed ones).
fn report(name: &str, n: usize, reps: usize, mut batch: impl FnMut() -> Split) {
    batch();
    batch();
    let mut runs: Vec<Split> = (0..reps).map(|_| batch()).collect();
    runs.sort_by_key(|r| r.1);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let (med, min) = (runs[runs.len() / 2], runs[0]);
    println!(
        "{name:<16} n={n:<7} outside the engine: median {:8.1} us (submit {:7.1})   min {:8.1} us (submit {:7.1})",
        us(med.1),
        us(med.0),
        us(min.1),
        us(min.0)
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(65_536, |a| a.parse().expect("N"));
    let reps: usize = args.next().map_or(40, |a| a.parse().expect("REPS"));
    let busy: u64 = args.next().map_or(0, |a| a.parse().expect("ENGINE_US"));
    let engine = Arc::new(NullEngine {
        busy: Duration::from_micros(busy),
        spent: AtomicU64::new(0),
    });
    let ctx = context_from_backend(engine.clone());
    let e = &*engine;
    let kem = ctru::ParamSet::Ctru761;
    let dsa = mldsa::ParamSet::MlDsa44;
    let (kem_alg, dsa_alg) = (Alg::Ctru(kem).code(), Alg::MlDsa(dsa).code());
    let mut st = vec![PQG_PENDING; n];
    let st_ptr = st.as_mut_ptr();

    // CTRU-Prime-761 encapsulation to one key, and decapsulation, into arrays.
    let pk = vec![0u8; kem.public_key_len()];
    let sk = vec![0u8; kem.secret_key_len()];
    let mut cts = vec![0u8; n * kem.ciphertext_len()];
    let mut sss = vec![0u8; n * kem.shared_secret_len()];
    let (ctl, ssl) = (kem.ciphertext_len(), kem.shared_secret_len());
    let enc: Vec<pqg_encaps_request> = (0..n)
        .map(|i| pqg_encaps_request {
            pk: pk.as_ptr(),
            coins: null(),
            ct: cts[i * ctl..].as_mut_ptr(),
            ss: sss[i * ssl..].as_mut_ptr(),
        })
        .collect();
    // SAFETY (every submit below): each request and array points into live buffers that
    // outlive the job (waited for and freed inside `timed`).
    report("ctru761 encaps", n, reps, || {
        timed(e, |job| unsafe {
            pqg_kem_encaps_submit(ctx, kem_alg, enc.as_ptr(), n, st_ptr, job)
        })
    });
    let dec: Vec<pqg_decaps_request> = (0..n)
        .map(|i| pqg_decaps_request {
            sk: sk.as_ptr(),
            ct: cts[i * ctl..].as_ptr(),
            ss: sss[i * ssl..].as_mut_ptr(),
        })
        .collect();
    report("ctru761 decaps", n, reps, || {
        timed(e, |job| unsafe {
            pqg_kem_decaps_submit(ctx, kem_alg, dec.as_ptr(), n, st_ptr, job)
        })
    });

    // ML-DSA-44 signing and verification of 32-byte messages, one key per item.
    let (pkl, skl, sgl) = (
        dsa.public_key_len(),
        dsa.secret_key_len(),
        dsa.signature_len(),
    );
    let mut pks = vec![0u8; n * pkl];
    let mut sks = vec![0u8; n * skl];
    let msgs = vec![0u8; n * 32];
    let mut sigs = vec![0u8; n * sgl];
    let sign: Vec<pqg_sign_request> = (0..n)
        .map(|i| pqg_sign_request {
            sk: sks[i * skl..].as_ptr(),
            msg: msgs[i * 32..].as_ptr(),
            msg_len: 32,
            context: null(),
            context_len: 0,
            rnd: null(),
            sig: sigs[i * sgl..].as_mut_ptr(),
        })
        .collect();
    report("mldsa44 sign", n, reps, || {
        timed(e, |job| unsafe {
            pqg_mldsa_sign_submit(ctx, dsa_alg, sign.as_ptr(), n, st_ptr, job)
        })
    });
    let verify: Vec<pqg_verify_request> = (0..n)
        .map(|i| pqg_verify_request {
            pk: pks[i * pkl..].as_ptr(),
            msg: msgs[i * 32..].as_ptr(),
            msg_len: 32,
            context: null(),
            context_len: 0,
            sig: sigs[i * sgl..].as_ptr(),
            sig_len: sgl,
        })
        .collect();
    report("mldsa44 verify", n, reps, || {
        timed(e, |job| unsafe {
            pqg_mldsa_verify_submit(ctx, dsa_alg, verify.as_ptr(), n, st_ptr, job)
        })
    });
    let (pks_ptr, sks_ptr) = (pks.as_mut_ptr(), sks.as_mut_ptr());
    report("mldsa44 keygen", n, reps, || {
        timed(e, |job| unsafe {
            pqg_mldsa_keygen_submit(ctx, dsa_alg, n, null(), pks_ptr, sks_ptr, st_ptr, job)
        })
    });
    assert!(st.iter().all(|&s| s == PQG_OK));
    // SAFETY: created above; every job is freed.
    unsafe { pqg_context_free(ctx) };
}
