//! The serving layer's own cost per asynchronous item, without an engine: a backend that
//! reports itself as a GPU and finishes every item at once (signatures left zero), behind a
//! real context, driven through the C ABI the way `pqgpu-bench --serve` drives the GPU (one driver
//! thread keeping N single-item `pqg_mldsa_sign_async` submits outstanding, completions through the context callback). What it prints is the most the
//! C ABI's asynchronous path can deliver whatever the engine: an internal figure for tuning
//! the submit and completion path (run it under `perf record`), not a product figure.
//!
//!     cargo run --release --example serve_overhead -- [outstanding] [seconds]

use pqgpu::backend::{Backend, BackendKind, DecapsItem, EncapsItem, SignItem, VerifyItem};
use pqgpu::ffi::*;
use pqgpu::{ctru, mldsa, Status};
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Finishes every item at once; batch sizes are counted.
struct Instant0;

impl Backend for Instant0 {
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
        st.fill(Ok(()));
    }
    fn mldsa_sign(
        &self,
        _: mldsa::ParamSet,
        _: &[SignItem<'_>],
        _: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        st.fill(Ok(()));
    }
    fn mldsa_verify(&self, _: mldsa::ParamSet, _: &[VerifyItem<'_>], st: &mut [Status]) {
        st.fill(Ok(()));
    }
    fn kem_keygen(
        &self,
        _: ctru::ParamSet,
        _: Option<&[u8]>,
        _: &mut [u8],
        _: &mut [u8],
        st: &mut [Status],
    ) {
        st.fill(Ok(()));
    }
    fn kem_encaps(
        &self,
        _: ctru::ParamSet,
        _: &[EncapsItem<'_>],
        _: &mut [&mut [u8]],
        _: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        st.fill(Ok(()));
    }
    fn kem_decaps(
        &self,
        _: ctru::ParamSet,
        _: &[DecapsItem<'_>],
        _: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        st.fill(Ok(()));
    }
}

/// Completed jobs, and whether the driver sleeps (woken only then, as the benchmark does).
#[derive(Default)]
struct Done {
    jobs: Mutex<(Vec<usize>, bool)>,
    cv: Condvar,
}

extern "C" fn on_done(user: *mut c_void, job: *mut pqg_job) {
    // SAFETY: `user` is the `Done` registered below, alive until every job is collected.
    let d = unsafe { &*(user as *const Done) };
    let sleeping = {
        let mut g = d.jobs.lock().unwrap();
        g.0.push(job as usize);
        g.1
    };
    if sleeping {
        d.cv.notify_one();
    }
}

/// CPU time of the driver thread (ns), stored when it ends.
static DRIVER_NS: AtomicU64 = AtomicU64::new(0);

fn cpu_ns(clock: libc::clockid_t) -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes one timespec we own.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

struct P<T>(*mut T);
unsafe impl<T> Send for P<T> {}
unsafe impl<T> Sync for P<T> {}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = *args.first().unwrap_or(&4096);
    let drivers = 1;
    let secs = *args.get(1).unwrap_or(&3) as u64;
    let alg = PQG_ML_DSA_44;
    let p = mldsa::ParamSet::MlDsa44;
    let (mut pk, mut sk) = (vec![0u8; p.public_key_len()], vec![0u8; p.secret_key_len()]);
    let mut cpu = null_mut();
    // SAFETY: plain C calls on live buffers.
    let key = unsafe {
        assert_eq!(
            pqg_context_new(pqg_backend_values::PQG_BACKEND_CPU as pqg_backend, &mut cpu),
            PQG_OK
        );
        let st = pqg_mldsa_keygen(
            cpu,
            alg,
            null(),
            pk.as_mut_ptr(),
            pk.len(),
            sk.as_mut_ptr(),
            sk.len(),
        );
        assert_eq!(st, PQG_OK);
        let mut key = null_mut();
        assert_eq!(
            pqg_key_new(alg, PQG_KEY_SECRET, sk.as_ptr(), sk.len(), &mut key),
            PQG_OK
        );
        pqg_context_free(cpu);
        P(key)
    };
    let ctx = P(context_from_backend(Arc::new(Instant0)));
    let done = Box::new(Done::default());
    // SAFETY: `done` outlives every job.
    unsafe {
        pqg_context_set_callback(ctx.0, Some(on_done), &*done as *const Done as *mut c_void);
    }
    let msg = [7u8; 32];
    let start = Instant::now();
    let cpu0 = cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID);
    let total: usize = std::thread::scope(|s| {
        let hs: Vec<_> = (0..drivers)
            .map(|_| {
                let (ctx, key, done, msg) = (&ctx, &key, &done, &msg);
                s.spawn(move || {
                    let sig_len = p.signature_len();
                    let mut sigs = vec![0u8; n * sig_len];
                    let mut st = vec![0 as pqg_status; n];
                    let mut slot = std::collections::HashMap::with_capacity(2 * n);
                    let issue = |i: usize, sigs: &mut [u8], st: &mut [pqg_status]| -> usize {
                        let mut job = null_mut();
                        // SAFETY: slot i's buffers stay put until its job is collected.
                        let r = unsafe {
                            pqg_mldsa_sign_async(
                                ctx.0,
                                key.0,
                                msg.as_ptr(),
                                32,
                                null(),
                                0,
                                null(),
                                sigs[i * sig_len..].as_mut_ptr(),
                                sig_len,
                                &mut st[i],
                                &mut job,
                            )
                        };
                        assert_eq!(r, PQG_OK);
                        job as usize
                    };
                    for i in 0..n {
                        let j = issue(i, &mut sigs, &mut st);
                        slot.insert(j, i);
                    }
                    let (mut count, mut outstanding) = (0usize, n);
                    let end = Instant::now() + Duration::from_secs(secs);
                    while outstanding > 0 {
                        let ready = {
                            let mut g = done.jobs.lock().unwrap();
                            while g.0.is_empty() {
                                g.1 = true;
                                g = done.cv.wait(g).unwrap();
                                g.1 = false;
                            }
                            std::mem::take(&mut g.0)
                        };
                        let more = Instant::now() < end;
                        for j in ready {
                            // SAFETY: a job handed to the callback.
                            unsafe {
                                assert_eq!(pqg_job_wait(j as *mut pqg_job, -1), PQG_OK);
                                pqg_job_free(j as *mut pqg_job);
                            }
                            let i = slot.remove(&j).unwrap();
                            assert_eq!(st[i], PQG_OK);
                            count += 1;
                            if more {
                                let j = issue(i, &mut sigs, &mut st);
                                slot.insert(j, i);
                            } else {
                                outstanding -= 1;
                            }
                        }
                    }
                    DRIVER_NS.store(cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID), Relaxed);
                    count
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let el = start.elapsed().as_secs_f64();
    let (cpu, driver) = (
        cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID) - cpu0,
        DRIVER_NS.load(Relaxed),
    );
    println!(
        "{n} outstanding: {:.0} items/s; CPU per item {:.0} ns in all, {:.0} ns in the driver thread",
        total as f64 / el,
        cpu as f64 / total as f64,
        driver as f64 / total as f64
    );
    // SAFETY: no job is outstanding.
    unsafe {
        pqg_context_set_callback(ctx.0, None, null_mut());
        pqg_context_free(ctx.0);
        pqg_key_free(key.0);
    }
}
