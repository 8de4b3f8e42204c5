//! Concurrency and lifetime stress through the C ABI: many threads share one context and mix
//! single calls, batches (ML-DSA-44 sign and verify, CTRU-Prime-761 decapsulation),
//! registration, polling, waiting, freeing, contexts freed under load and a fork; every result
//! is checked against one-at-a-time calls made beforehand on a CPU context.
//!
//! Short by default (CI): `PQGPU_STRESS_SECS` (default 3) sets the length,
//! `PQGPU_STRESS_BACKEND=cpu|gpu|auto` (default cpu) the shared context's backend (the
//! expected results always come from the CPU). The GPU machine runs the long GPU form
//! (scripts/device/stress.sh). The test prints how many
//! operations of each kind ran and how many results were checked.

use pqgpu::ffi::*;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ALG: pqg_alg = PQG_ML_DSA_44;
const KEM: pqg_alg = PQG_CTRU_PRIME_761;
const KEYS: usize = 16;
const KEM_KEYS: usize = 4;
const THREADS: usize = 8;
/// The kinds of operation a worker mixes (`worker`'s match arms), for the printed counts.
const KINDS: [&str; 9] = [
    "sign",
    "verify",
    "keygen",
    "sign batch",
    "registered batch",
    "context freed under its batch",
    "3 jobs freed out of order",
    "verify batch",
    "decaps batch",
];

struct Ctx(*mut pqg_context);
// SAFETY: a pqg_context is documented thread-safe.
unsafe impl Send for Ctx {}
unsafe impl Sync for Ctx {}

impl Ctx {
    fn new(backend: pqg_backend) -> Ctx {
        let mut c = null_mut();
        let st = unsafe { pqg_context_new(backend, &mut c) };
        assert_eq!(st, PQG_OK, "no context on backend {backend} (status {st})");
        Ctx(c)
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        unsafe { pqg_context_free(self.0) }
    }
}

/// What one-at-a-time calls on a CPU context gave.
struct Expected {
    pks: Vec<Vec<u8>>,
    sks: Vec<Vec<u8>>,
    msgs: Vec<Vec<u8>>,
    rnds: Vec<[u8; 32]>,
    /// sigs[i]: key i on msgs[i] with rnds[i].
    sigs: Vec<Vec<u8>>,
    /// CTRU-Prime-761: secret keys, per key a genuine and a tampered ciphertext, and the
    /// shared secret a one-at-a-time decapsulation gives for each (implicit rejection for the
    /// tampered one).
    kem_sks: Vec<Vec<u8>>,
    kem_cts: Vec<[Vec<u8>; 2]>,
    kem_sss: Vec<[Vec<u8>; 2]>,
}

fn seed(i: usize) -> [u8; 32] {
    [i as u8 ^ 0x5a; 32]
}

fn keygen(ctx: &Ctx, i: usize) -> (pqg_status, Vec<u8>, Vec<u8>) {
    let mut pk = vec![0u8; pqg_public_key_len(ALG)];
    let mut sk = vec![0u8; pqg_secret_key_len(ALG)];
    let st = unsafe {
        pqg_mldsa_keygen(
            ctx.0,
            ALG,
            seed(i).as_ptr(),
            pk.as_mut_ptr(),
            pk.len(),
            sk.as_mut_ptr(),
            sk.len(),
        )
    };
    (st, pk, sk)
}

fn sign_one(ctx: &Ctx, sk: &[u8], msg: &[u8], rnd: &[u8; 32]) -> (pqg_status, Vec<u8>) {
    let mut sig = vec![0u8; pqg_signature_len(ALG)];
    let st = unsafe {
        pqg_mldsa_sign(
            ctx.0,
            ALG,
            sk.as_ptr(),
            sk.len(),
            msg.as_ptr(),
            msg.len(),
            b"stress".as_ptr(),
            6,
            rnd.as_ptr(),
            sig.as_mut_ptr(),
            sig.len(),
        )
    };
    (st, sig)
}

fn verify_one(ctx: &Ctx, pk: &[u8], msg: &[u8], sig: &[u8]) -> pqg_status {
    unsafe {
        pqg_mldsa_verify(
            ctx.0,
            ALG,
            pk.as_ptr(),
            pk.len(),
            msg.as_ptr(),
            msg.len(),
            b"stress".as_ptr(),
            6,
            sig.as_ptr(),
            sig.len(),
        )
    }
}

fn expected() -> Expected {
    let ctx = Ctx::new(pqg_backend_values::PQG_BACKEND_CPU as pqg_backend);
    let (mut pks, mut sks, mut msgs, mut rnds, mut sigs) = (vec![], vec![], vec![], vec![], vec![]);
    for i in 0..KEYS {
        let (st, pk, sk) = keygen(&ctx, i);
        assert_eq!(st, PQG_OK);
        let msg = vec![i as u8; 1 + 37 * i];
        let rnd = [(i * 3) as u8; 32];
        let (st, sig) = sign_one(&ctx, &sk, &msg, &rnd);
        assert_eq!(st, PQG_OK);
        pks.push(pk);
        sks.push(sk);
        msgs.push(msg);
        rnds.push(rnd);
        sigs.push(sig);
    }
    let (mut kem_sks, mut kem_cts, mut kem_sss) = (vec![], vec![], vec![]);
    for i in 0..KEM_KEYS {
        let mut pk = vec![0u8; pqg_public_key_len(KEM)];
        let mut sk = vec![0u8; pqg_secret_key_len(KEM)];
        let mut ct = vec![0u8; pqg_ciphertext_len(KEM)];
        let mut ss = vec![0u8; pqg_shared_secret_len(KEM)];
        let seed = [i as u8 ^ 0xa5; 64];
        let coins = [i as u8 ^ 0x3c; 32];
        unsafe {
            let st = pqg_kem_keygen(
                ctx.0,
                KEM,
                seed.as_ptr(),
                pk.as_mut_ptr(),
                pk.len(),
                sk.as_mut_ptr(),
                sk.len(),
            );
            assert_eq!(st, PQG_OK);
            let st = pqg_kem_encaps(
                ctx.0,
                KEM,
                pk.as_ptr(),
                pk.len(),
                coins.as_ptr(),
                ct.as_mut_ptr(),
                ct.len(),
                ss.as_mut_ptr(),
                ss.len(),
            );
            assert_eq!(st, PQG_OK);
        }
        let mut bad_ct = ct.clone();
        bad_ct[7 * i + 1] ^= 0x10;
        let cts = [ct, bad_ct];
        let sss = [0, 1].map(|t| {
            let mut out = vec![0u8; pqg_shared_secret_len(KEM)];
            let st = unsafe {
                pqg_kem_decaps(
                    ctx.0,
                    KEM,
                    sk.as_ptr(),
                    sk.len(),
                    cts[t].as_ptr(),
                    cts[t].len(),
                    out.as_mut_ptr(),
                    out.len(),
                )
            };
            assert_eq!(st, PQG_OK);
            out
        });
        assert_eq!(sss[0], ss, "decapsulation disagrees with encapsulation");
        assert_ne!(sss[1], ss, "a tampered ciphertext gave the real secret");
        kem_sks.push(sk);
        kem_cts.push(cts);
        kem_sss.push(sss);
    }
    Expected {
        pks,
        sks,
        msgs,
        rnds,
        sigs,
        kem_sks,
        kem_cts,
        kem_sss,
    }
}

/// xorshift64: the test's own choices, reproducible per thread.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A submitted signing batch over keys `idx`, with its buffers; keys come from `sk_base`
/// (which may be registered memory) at `sk_len` spacing.
struct Batch {
    idx: Vec<usize>,
    sigs: Vec<u8>,
    statuses: Vec<pqg_status>,
    job: *mut pqg_job,
}

fn submit(ctx: &Ctx, e: &Expected, idx: Vec<usize>, sk_base: &[u8]) -> Box<Batch> {
    let sig_len = pqg_signature_len(ALG);
    let sk_len = pqg_secret_key_len(ALG);
    let mut b = Box::new(Batch {
        sigs: vec![0u8; idx.len() * sig_len],
        statuses: vec![12345; idx.len()],
        idx,
        job: null_mut(),
    });
    let sig_ptr = b.sigs.as_mut_ptr();
    let reqs: Vec<pqg_sign_request> = b
        .idx
        .iter()
        .enumerate()
        .map(|(j, &i)| pqg_sign_request {
            sk: sk_base[i * sk_len..].as_ptr(),
            msg: e.msgs[i].as_ptr(),
            msg_len: e.msgs[i].len(),
            context: b"stress".as_ptr(),
            context_len: 6,
            rnd: e.rnds[i].as_ptr(),
            // SAFETY: j < idx.len(), inside sigs.
            sig: unsafe { sig_ptr.add(j * sig_len) },
        })
        .collect();
    let st = unsafe {
        pqg_mldsa_sign_submit(
            ctx.0,
            ALG,
            reqs.as_ptr(),
            reqs.len(),
            b.statuses.as_mut_ptr(),
            &mut b.job,
        )
    };
    assert_eq!(st, PQG_OK);
    b
}

/// Checks a completed batch against the expected signatures; returns the mismatches.
fn check(e: &Expected, b: &Batch) -> usize {
    let sig_len = pqg_signature_len(ALG);
    b.idx
        .iter()
        .enumerate()
        .filter(|&(j, &i)| {
            b.statuses[j] != PQG_OK || b.sigs[j * sig_len..(j + 1) * sig_len] != e.sigs[i][..]
        })
        .count()
}

fn random_subset(rng: &mut Rng) -> Vec<usize> {
    let n = 1 + rng.below(24);
    (0..n).map(|_| rng.below(KEYS)).collect()
}

/// A verify batch of up to 24 items, each the genuine signature or one with a bit flipped;
/// waits and returns the mismatches against the expected statuses, and the items checked.
fn verify_batch(ctx: &Ctx, e: &Expected, rng: &mut Rng) -> (usize, usize) {
    let n = 1 + rng.below(24);
    let items: Vec<(usize, Vec<u8>, bool)> = (0..n)
        .map(|_| {
            let i = rng.below(KEYS);
            let mut sig = e.sigs[i].clone();
            let forged = rng.below(2) == 1;
            if forged {
                let at = rng.below(sig.len());
                sig[at] ^= 1 << rng.below(8);
            }
            (i, sig, forged)
        })
        .collect();
    let reqs: Vec<pqg_verify_request> = items
        .iter()
        .map(|(i, sig, _)| pqg_verify_request {
            pk: e.pks[*i].as_ptr(),
            msg: e.msgs[*i].as_ptr(),
            msg_len: e.msgs[*i].len(),
            context: b"stress".as_ptr(),
            context_len: 6,
            sig: sig.as_ptr(),
            sig_len: sig.len(),
        })
        .collect();
    let mut statuses = vec![12345; n];
    let mut job = null_mut();
    let st = unsafe {
        pqg_mldsa_verify_submit(
            ctx.0,
            ALG,
            reqs.as_ptr(),
            n,
            statuses.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(st, PQG_OK);
    assert_eq!(unsafe { pqg_job_wait(job, -1) }, PQG_OK);
    unsafe { pqg_job_free(job) };
    let bad = items
        .iter()
        .zip(&statuses)
        .filter(|&((_, _, forged), &s)| {
            s != if *forged {
                PQG_ERR_VERIFY_FAILED
            } else {
                PQG_OK
            }
        })
        .count();
    (bad, n)
}

/// A CTRU-Prime-761 decapsulation batch of up to 16 items, genuine and tampered ciphertexts
/// mixed, polled to completion; returns the mismatches and the items checked.
fn decaps_batch(ctx: &Ctx, e: &Expected, rng: &mut Rng) -> (usize, usize) {
    let n = 1 + rng.below(16);
    let picks: Vec<(usize, usize)> = (0..n)
        .map(|_| (rng.below(KEM_KEYS), rng.below(2)))
        .collect();
    let ss_len = pqg_shared_secret_len(KEM);
    let mut sss = vec![0u8; n * ss_len];
    let ss_ptr = sss.as_mut_ptr();
    let reqs: Vec<pqg_decaps_request> = picks
        .iter()
        .enumerate()
        .map(|(j, &(i, t))| pqg_decaps_request {
            sk: e.kem_sks[i].as_ptr(),
            ct: e.kem_cts[i][t].as_ptr(),
            // SAFETY: j < n, inside sss.
            ss: unsafe { ss_ptr.add(j * ss_len) },
        })
        .collect();
    let mut statuses = vec![12345; n];
    let mut job = null_mut();
    let st = unsafe {
        pqg_kem_decaps_submit(
            ctx.0,
            KEM,
            reqs.as_ptr(),
            n,
            statuses.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(st, PQG_OK);
    while unsafe { pqg_job_poll(job) } == PQG_PENDING {
        std::thread::yield_now();
    }
    unsafe { pqg_job_free(job) };
    let bad = picks
        .iter()
        .enumerate()
        .filter(|&(j, &(i, t))| {
            statuses[j] != PQG_OK || sss[j * ss_len..(j + 1) * ss_len] != e.kem_sss[i][t][..]
        })
        .count();
    (bad, n)
}

/// What one worker did: mismatches, operations per kind (`KINDS`), results checked.
#[derive(Default)]
struct Tally {
    bad: usize,
    ops: [usize; KINDS.len()],
    checked: usize,
}

/// One thread's mix of operations until `end`.
fn worker(
    ctx: &Ctx,
    backend: pqg_backend,
    e: &Expected,
    t: usize,
    end: Instant,
    ops: &AtomicUsize,
) -> Tally {
    let mut rng = Rng(0x9e3779b97f4a7c15 ^ ((t as u64 + 1) * 0x100000001b3));
    let all_sks: Vec<u8> = e.sks.concat();
    let mut tally = Tally::default();
    let mut bad = 0;
    while Instant::now() < end {
        let kind = rng.below(KINDS.len());
        tally.ops[kind] += 1;
        match kind {
            0 => {
                let i = rng.below(KEYS);
                let (st, sig) = sign_one(ctx, &e.sks[i], &e.msgs[i], &e.rnds[i]);
                bad += (st != PQG_OK || sig != e.sigs[i]) as usize;
                tally.checked += 1;
            }
            1 => {
                let i = rng.below(KEYS);
                bad += (verify_one(ctx, &e.pks[i], &e.msgs[i], &e.sigs[i]) != PQG_OK) as usize;
                let mut forged = e.sigs[i].clone();
                let at = rng.below(forged.len());
                forged[at] ^= 1 << rng.below(8);
                let st = verify_one(ctx, &e.pks[i], &e.msgs[i], &forged);
                bad += (st != PQG_ERR_VERIFY_FAILED) as usize;
                tally.checked += 2;
            }
            2 => {
                let i = rng.below(KEYS);
                let (st, pk, sk) = keygen(ctx, i);
                bad += (st != PQG_OK || pk != e.pks[i] || sk != e.sks[i]) as usize;
                tally.checked += 1;
            }
            3 => {
                // A batch, waited on in one of three ways.
                let b = submit(ctx, e, random_subset(&mut rng), &all_sks);
                match rng.below(3) {
                    0 => assert_eq!(unsafe { pqg_job_wait(b.job, -1) }, PQG_OK),
                    1 => {
                        while unsafe { pqg_job_poll(b.job) } == PQG_PENDING {
                            std::thread::yield_now();
                        }
                    }
                    _ => {}
                }
                unsafe { pqg_job_free(b.job) };
                bad += check(e, &b);
                tally.checked += b.idx.len();
            }
            4 => {
                // Keys in registered memory, unregistered while the job may still run: the
                // job must be complete when unregister returns.
                let mut reg = all_sks.clone();
                let st = unsafe { pqg_host_register(ctx.0, reg.as_ptr(), reg.len()) };
                assert_eq!(st, PQG_OK);
                let again = unsafe { pqg_host_register(ctx.0, reg.as_ptr(), 1) };
                bad += (again != PQG_ERR_INVALID_ARGUMENT) as usize;
                let b = submit(ctx, e, random_subset(&mut rng), &reg);
                assert_eq!(unsafe { pqg_host_unregister(ctx.0, reg.as_ptr()) }, PQG_OK);
                bad += (unsafe { pqg_job_poll(b.job) } != PQG_OK) as usize;
                reg.iter_mut().for_each(|x| *x = 0);
                unsafe { pqg_job_free(b.job) };
                bad += check(e, &b);
                tally.checked += b.idx.len();
            }
            5 => {
                // A context freed while its job runs.
                let own = Ctx::new(backend);
                let b = submit(&own, e, random_subset(&mut rng), &all_sks);
                drop(own);
                assert_eq!(unsafe { pqg_job_wait(b.job, -1) }, PQG_OK);
                unsafe { pqg_job_free(b.job) };
                bad += check(e, &b);
                tally.checked += b.idx.len();
            }
            7 => {
                let (b, n) = verify_batch(ctx, e, &mut rng);
                bad += b;
                tally.checked += n;
            }
            8 => {
                let (b, n) = decaps_batch(ctx, e, &mut rng);
                bad += b;
                tally.checked += n;
            }
            _ => {
                // Several jobs in flight, freed in another order.
                let mut jobs: Vec<Box<Batch>> = (0..3)
                    .map(|_| submit(ctx, e, random_subset(&mut rng), &all_sks))
                    .collect();
                while let Some(b) = jobs.pop() {
                    unsafe { pqg_job_free(b.job) };
                    bad += check(e, &b);
                    tally.checked += b.idx.len();
                }
            }
        }
        ops.fetch_add(1, Ordering::Relaxed);
    }
    tally.bad = bad;
    tally
}

/// A fork under load: the child signs a batch on a fresh context under a watchdog.
fn fork_under_load(e: &Expected) {
    let all_sks: Vec<u8> = e.sks.concat();
    // SAFETY: the child only runs the batch and leaves with _exit; alarm is its watchdog.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        unsafe { libc::alarm(60) };
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let ctx = Ctx::new(pqg_backend_values::PQG_BACKEND_AUTO as pqg_backend);
            let b = submit(&ctx, e, (0..KEYS).collect(), &all_sks);
            if unsafe { pqg_job_wait(b.job, -1) } != PQG_OK {
                return 2;
            }
            unsafe { pqg_job_free(b.job) };
            (check(e, &b) != 0) as i32
        }))
        .unwrap_or(99);
        unsafe { libc::_exit(code) };
    }
    let mut ws = 0;
    assert_eq!(unsafe { libc::waitpid(pid, &mut ws, 0) }, pid);
    assert!(
        libc::WIFEXITED(ws),
        "child killed by signal {} (14: hung)",
        libc::WTERMSIG(ws)
    );
    assert_eq!(libc::WEXITSTATUS(ws), 0, "child's batch was wrong");
}

#[test]
fn shared_context_under_mixed_load_matches_one_at_a_time_calls() {
    let secs: f64 = std::env::var("PQGPU_STRESS_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3.0);
    let backend = match std::env::var("PQGPU_STRESS_BACKEND").as_deref() {
        Ok("gpu") => pqg_backend_values::PQG_BACKEND_GPU,
        Ok("auto") => pqg_backend_values::PQG_BACKEND_AUTO,
        _ => pqg_backend_values::PQG_BACKEND_CPU,
    } as pqg_backend;
    let e = Arc::new(expected());
    let ctx = Arc::new(Ctx::new(backend));
    println!(
        "stress: {secs} s, backend {} ({} threads)",
        unsafe { pqg_context_backend(ctx.0) },
        THREADS
    );
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let ops = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (ctx, e, ops) = (ctx.clone(), e.clone(), ops.clone());
            std::thread::spawn(move || worker(&ctx, backend, &e, t, end, &ops))
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs / 2.0));
    fork_under_load(&e);
    let mut total = Tally::default();
    for h in handles {
        let t = h.join().unwrap();
        total.bad += t.bad;
        total.checked += t.checked;
        for (a, b) in total.ops.iter_mut().zip(t.ops) {
            *a += b;
        }
    }
    let bad = total.bad;
    // The shared context is freed while nothing runs any more; a last call on a new one.
    drop(ctx);
    let after = Ctx::new(backend);
    let (st, sig) = sign_one(&after, &e.sks[0], &e.msgs[0], &e.rnds[0]);
    assert!(st == PQG_OK && sig == e.sigs[0]);
    let kinds: Vec<String> = KINDS
        .iter()
        .zip(total.ops)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    println!(
        "stress: {} operations ({}), {} results checked, {bad} mismatches",
        ops.load(Ordering::Relaxed),
        kinds.join(", "),
        total.checked
    );
    assert_eq!(bad, 0);
    assert!(ops.load(Ordering::Relaxed) > 0);
}
