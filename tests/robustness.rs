//! Regression tests for issue #17, through the C ABI as a C caller would use it: signing that
//! must end (an adversarial secret key), `fork()`, `pqg_host_register` lengths and the
//! registration bookkeeping of a CPU context. Every test that could hang runs under a deadline.

mod common;

use pqgpu::ffi::*;
use sha3::digest::{ExtendableOutput, Update, XofReader};
use std::ptr::{null, null_mut};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

const CPU: pqg_backend = pqg_backend_values::PQG_BACKEND_CPU as pqg_backend;
const AUTO: pqg_backend = pqg_backend_values::PQG_BACKEND_AUTO as pqg_backend;
const ALG: pqg_alg = PQG_ML_DSA_44;
const CANARY: u8 = 0xC5;
/// Far above the time any call here needs (well under a second each), far below "for ever".
const DEADLINE: Duration = Duration::from_secs(120);

struct Ctx(*mut pqg_context);
// SAFETY: a pqg_context is documented thread-safe.
unsafe impl Send for Ctx {}
unsafe impl Sync for Ctx {}

impl Ctx {
    fn new(backend: pqg_backend) -> Ctx {
        let mut c = null_mut();
        assert_eq!(unsafe { pqg_context_new(backend, &mut c) }, PQG_OK);
        Ctx(c)
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        unsafe { pqg_context_free(self.0) }
    }
}

/// Runs `f` on its own thread and returns its result, failing the test if it has not
/// finished within `DEADLINE` (the thread is left behind: it is the hang being reported).
fn within_deadline<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(DEADLINE)
        .unwrap_or_else(|_| panic!("{what}: did not finish within {DEADLINE:?} (hang)"))
}

fn keypair(ctx: &Ctx, seed: &[u8; 32]) -> (Vec<u8>, Vec<u8>) {
    let mut pk = vec![0u8; pqg_public_key_len(ALG)];
    let mut sk = vec![0u8; pqg_secret_key_len(ALG)];
    let st = unsafe {
        pqg_mldsa_keygen(
            ctx.0,
            ALG,
            seed.as_ptr(),
            pk.as_mut_ptr(),
            pk.len(),
            sk.as_mut_ptr(),
            sk.len(),
        )
    };
    assert_eq!(st, PQG_OK);
    (pk, sk)
}

/// The adversarial key of issue #17: ML-DSA-44 keygen from seed 01 00 .. 00, then t0 (the
/// last 4 * 416 bytes) replaced by legal values of the largest magnitude, +4096 or -4095 at
/// random (13-bit codes 0 and 8191): the hint then needs ~137 ones against omega = 80, so
/// about one attempt in several thousand is accepted. Still a validly encoded key.
fn adversarial_sk() -> Vec<u8> {
    let ctx = Ctx::new(CPU);
    let mut seed = [0u8; 32];
    seed[0] = 1;
    let (_, mut sk) = keypair(&ctx, &seed);
    let mut bits = [0u8; 4 * 256 / 8];
    let mut h = sha3::Shake256::default();
    h.update(b"pqgpu adversarial t0");
    h.finalize_xof().read(&mut bits);
    let t0 = &mut sk[2560 - 4 * 416..];
    t0.fill(0);
    for i in 0..4 * 256 {
        let v: u32 = if bits[i / 8] >> (i % 8) & 1 == 1 {
            8191
        } else {
            0
        };
        for b in 0..13 {
            let at = i * 13 + b;
            t0[at / 8] |= (((v >> b) & 1) as u8) << (at % 8);
        }
    }
    sk
}

/// rnd = 1e 00 55 00 x 00 .. 00.
fn rnd(x: u8) -> [u8; 32] {
    let mut r = [0u8; 32];
    (r[0], r[2], r[4]) = (0x1e, 0x55, x);
    r
}
/// With this rnd no attempt with kappa < 2^16 is accepted for the adversarial key: before the
/// bound, signing looped for ever (found by searching x = 0, 1, ... with the bound lifted to
/// 2^16 / l attempts).
const HANGS: u8 = 12;
/// With this rnd an attempt within the bound is accepted.
const SIGNS: u8 = 1;

fn sign(ctx: &Ctx, sk: &[u8], msg: &[u8], rnd: &[u8; 32], sig: &mut [u8]) -> pqg_status {
    unsafe {
        pqg_mldsa_sign(
            ctx.0,
            ALG,
            sk.as_ptr(),
            sk.len(),
            msg.as_ptr(),
            msg.len(),
            null(),
            0,
            rnd.as_ptr(),
            sig.as_mut_ptr(),
            sig.len(),
        )
    }
}

fn verify(ctx: &Ctx, pk: &[u8], msg: &[u8], sig: &[u8]) -> pqg_status {
    unsafe {
        pqg_mldsa_verify(
            ctx.0,
            ALG,
            pk.as_ptr(),
            pk.len(),
            msg.as_ptr(),
            msg.len(),
            null(),
            0,
            sig.as_ptr(),
            sig.len(),
        )
    }
}

/// One signing batch through `pqg_mldsa_sign_submit`; `None` if the job did not complete
/// within `timeout_ms` (the job is then leaked: freeing it would wait for it).
fn sign_batch(
    ctx: &Ctx,
    items: &[(&[u8], &[u8], [u8; 32])],
    timeout_ms: i64,
) -> Option<(Vec<pqg_status>, Vec<Vec<u8>>)> {
    let sig_len = pqg_signature_len(ALG);
    let mut sigs = vec![vec![CANARY; sig_len]; items.len()];
    let reqs: Vec<pqg_sign_request> = items
        .iter()
        .zip(sigs.iter_mut())
        .map(|((sk, msg, rnd), sig)| pqg_sign_request {
            sk: sk.as_ptr(),
            msg: msg.as_ptr(),
            msg_len: msg.len(),
            context: null(),
            context_len: 0,
            rnd: rnd.as_ptr(),
            sig: sig.as_mut_ptr(),
        })
        .collect();
    let mut statuses = vec![12345; items.len()];
    let mut job = null_mut();
    let st = unsafe {
        pqg_mldsa_sign_submit(
            ctx.0,
            ALG,
            reqs.as_ptr(),
            reqs.len(),
            statuses.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(st, PQG_OK);
    if unsafe { pqg_job_wait(job, timeout_ms) } != PQG_OK {
        std::mem::forget(sigs);
        std::mem::forget(statuses);
        return None;
    }
    unsafe { pqg_job_free(job) };
    Some((statuses, sigs))
}

// ---------------------------------------------------------------- 1. signing terminates

#[test]
fn adversarial_key_signing_ends_with_bad_key_and_writes_nothing() {
    let sk = adversarial_sk();
    let (st, sig) = within_deadline("pqg_mldsa_sign with the adversarial key", move || {
        let ctx = Ctx::new(CPU);
        let mut sig = vec![CANARY; pqg_signature_len(ALG)];
        (sign(&ctx, &sk, b"m", &rnd(HANGS), &mut sig), sig)
    });
    assert_eq!(st, PQG_ERR_BAD_KEY);
    assert!(sig.iter().all(|&b| b == CANARY), "signature output written");
}

#[test]
fn adversarial_key_in_a_batch_ends_and_its_neighbours_sign() {
    let adv = adversarial_sk();
    let ctx = Ctx::new(CPU);
    let keys: Vec<(Vec<u8>, Vec<u8>)> = (0..6u8).map(|i| keypair(&ctx, &[i + 2; 32])).collect();
    let msg: &[u8] = b"m";
    let mut items: Vec<(&[u8], &[u8], [u8; 32])> =
        vec![(&adv[..], msg, rnd(HANGS)), (&adv[..], msg, rnd(SIGNS))];
    items.extend(keys.iter().map(|(_, sk)| (&sk[..], msg, rnd(HANGS))));
    let (statuses, sigs) = sign_batch(&ctx, &items, DEADLINE.as_millis() as i64)
        .expect("the batch with an adversarial key never completed");
    assert_eq!(statuses[0], PQG_ERR_BAD_KEY);
    assert!(
        sigs[0].iter().all(|&b| b == CANARY),
        "a BAD_KEY item's signature was written"
    );
    assert_eq!(
        statuses[1], PQG_OK,
        "the adversarial key signs with this rnd"
    );
    // The batch agrees with one-at-a-time calls, and honest signatures verify.
    let mut one = vec![0u8; pqg_signature_len(ALG)];
    assert_eq!(sign(&ctx, &adv, msg, &rnd(SIGNS), &mut one), PQG_OK);
    assert_eq!(sigs[1], one);
    for (i, (pk, sk)) in keys.iter().enumerate() {
        assert_eq!(statuses[i + 2], PQG_OK);
        assert_eq!(sign(&ctx, sk, msg, &rnd(HANGS), &mut one), PQG_OK);
        assert_eq!(sigs[i + 2], one);
        assert_eq!(verify(&ctx, pk, msg, &sigs[i + 2]), PQG_OK);
    }
}

// ---------------------------------------------------------------- 2. fork

/// In the child: every check, as an exit code (0: all passed). Nothing here may panic across
/// the fork or print through the parent's locks.
fn child_checks(
    parent_ctx: &Ctx,
    parent_job: *mut pqg_job,
    keys: &[(Vec<u8>, Vec<u8>)],
    expected: &[Vec<u8>],
) -> i32 {
    let msg: &[u8] = b"after fork";
    let items: Vec<(&[u8], &[u8], [u8; 32])> =
        keys.iter().map(|(_, sk)| (&sk[..], msg, rnd(7))).collect();
    // A new context, an 8-item batch (this hung: the pool had no threads in the child).
    let ctx = Ctx::new(CPU);
    let Some((st, sigs)) = sign_batch(&ctx, &items, 60_000) else {
        return 10;
    };
    if st.iter().any(|&s| s != PQG_OK) || sigs != expected {
        return 11;
    }
    // AUTO in the child: the CPU here (no GPU, or the parent's CUDA state), never a hang.
    let auto = Ctx::new(AUTO);
    match sign_batch(&auto, &items, 60_000) {
        Some((st, sigs)) if st.iter().all(|&s| s == PQG_OK) && sigs == expected => {}
        _ => return 12,
    }
    // The context inherited from the parent still works (or fails with a status).
    match sign_batch(parent_ctx, &items, 60_000) {
        Some((st, sigs)) if st.iter().all(|&s| s == PQG_OK) && sigs == expected => {}
        _ => return 13,
    }
    // The parent's job, unfinished at the fork (it runs for a few hundred ms): a status at
    // once (OK only if it had completed before the fork), and free returns.
    let st = unsafe { pqg_job_wait(parent_job, -1) };
    if st != PQG_ERR_INVALID_ARGUMENT && st != PQG_OK {
        return 14;
    }
    if unsafe { pqg_job_poll(parent_job) } != st {
        return 15;
    }
    unsafe { pqg_job_free(parent_job) };
    // Registration works in the child like in a fresh process.
    let buf = vec![0u8; 4096];
    let reg = unsafe { pqg_host_register(ctx.0, buf.as_ptr(), buf.len()) };
    let unreg = unsafe { pqg_host_unregister(ctx.0, buf.as_ptr()) };
    if reg != PQG_OK || unreg != PQG_OK {
        return 16;
    }
    0
}

/// The per-thread stock of fresh randomness (seeds, coins, rnd) is not inherited: after a
/// fork, the child's next 32 bytes are not the parent's next 32 bytes (with an inherited stock
/// both would hand out the same block: two processes signing with the same rnd).
#[test]
fn a_child_after_fork_draws_its_own_randomness() {
    // Fills this thread's stock and takes one block of it.
    let _ = pqgpu::rng::array32().unwrap();
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child draws 32 bytes, writes them to the pipe and leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        unsafe { libc::alarm(30) };
        let code = match pqgpu::rng::array32() {
            Ok(r) => (unsafe { libc::write(fds[1], r.as_ptr().cast(), 32) } != 32) as i32,
            Err(_) => 2,
        };
        unsafe { libc::_exit(code) };
    }
    let mut child = [0u8; 32];
    let n = unsafe { libc::read(fds[0], child.as_mut_ptr().cast(), 32) };
    let mut wstatus = 0;
    assert_eq!(unsafe { libc::waitpid(pid, &mut wstatus, 0) }, pid);
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    assert_eq!(n, 32, "the child wrote no randomness");
    assert!(libc::WIFEXITED(wstatus) && libc::WEXITSTATUS(wstatus) == 0);
    let parent = pqgpu::rng::array32().unwrap();
    assert_ne!(parent, child, "parent and child handed out the same block");
}

#[test]
fn a_child_after_fork_runs_batches_and_never_hangs() {
    let ctx = Ctx::new(CPU);
    let keys: Vec<(Vec<u8>, Vec<u8>)> = (0..8u8).map(|i| keypair(&ctx, &[i + 40; 32])).collect();
    let msg: &[u8] = b"after fork";
    let items: Vec<(&[u8], &[u8], [u8; 32])> =
        keys.iter().map(|(_, sk)| (&sk[..], msg, rnd(7))).collect();
    // A parallel batch in the parent first: it starts the CPU worker pool.
    let (st, expected) = sign_batch(&ctx, &items, DEADLINE.as_millis() as i64).unwrap();
    assert!(st.iter().all(|&s| s == PQG_OK));
    // A job still running at the fork: adversarial items that take hundreds of attempts each
    // (rnd(0..12): each is accepted within 2^16 / l attempts, so this job ends before the fix
    // too and only the fork itself is tested).
    let adv = adversarial_sk();
    let adv_items: Vec<(&[u8], &[u8], [u8; 32])> =
        (0..HANGS).map(|i| (&adv[..], msg, rnd(i))).collect();
    let mut sigs = vec![vec![0u8; pqg_signature_len(ALG)]; adv_items.len()];
    let reqs: Vec<pqg_sign_request> = adv_items
        .iter()
        .zip(sigs.iter_mut())
        .map(|((sk, m, r), sig)| pqg_sign_request {
            sk: sk.as_ptr(),
            msg: m.as_ptr(),
            msg_len: m.len(),
            context: null(),
            context_len: 0,
            rnd: r.as_ptr(),
            sig: sig.as_mut_ptr(),
        })
        .collect();
    let mut statuses = vec![0; reqs.len()];
    let mut job = null_mut();
    let st = unsafe {
        pqg_mldsa_sign_submit(
            ctx.0,
            ALG,
            reqs.as_ptr(),
            reqs.len(),
            statuses.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(st, PQG_OK);
    // And a batch job runner left idle at the fork (the one that ran this batch): a child
    // that handed its batches to the parent's runners would wait for threads it lacks.
    let (st, _) = sign_batch(&ctx, &items[..1], DEADLINE.as_millis() as i64).unwrap();
    assert_eq!(st, [PQG_OK]);
    thread::sleep(Duration::from_millis(20));

    // SAFETY: the child only runs child_checks and leaves with _exit; alarm is its watchdog.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        unsafe { libc::alarm(90) };
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            child_checks(&ctx, job, &keys, &expected)
        }))
        .unwrap_or(99);
        unsafe { libc::_exit(code) };
    }
    let mut wstatus = 0;
    let r = unsafe { libc::waitpid(pid, &mut wstatus, 0) };
    assert_eq!(r, pid);
    // The parent's job is undisturbed.
    assert_eq!(unsafe { pqg_job_wait(job, -1) }, PQG_OK);
    unsafe { pqg_job_free(job) };
    assert!(statuses
        .iter()
        .all(|&s| s == PQG_OK || s == PQG_ERR_BAD_KEY));
    assert!(
        libc::WIFEXITED(wstatus),
        "the child was killed by signal {} (14 = SIGALRM: it hung)",
        libc::WTERMSIG(wstatus)
    );
    assert_eq!(
        libc::WEXITSTATUS(wstatus),
        0,
        "child check failed (see child_checks)"
    );
}

// ---------------------------------------------------------------- 3. register lengths

#[test]
fn host_register_rejects_lengths_over_ptrdiff_max() {
    let ctx = Ctx::new(CPU);
    let buf = [0u8; 64];
    for len in [usize::MAX, isize::MAX as usize + 1, usize::MAX - 7] {
        let st = unsafe { pqg_host_register(ctx.0, buf.as_ptr(), len) };
        assert_eq!(st, PQG_ERR_INVALID_ARGUMENT, "len {len:#x}");
    }
    // Nothing was recorded: the real buffer registers and unregisters once.
    assert_eq!(
        unsafe { pqg_host_register(ctx.0, buf.as_ptr(), buf.len()) },
        PQG_OK
    );
    assert_eq!(unsafe { pqg_host_unregister(ctx.0, buf.as_ptr()) }, PQG_OK);
}

// ---------------------------------------------------------------- 5. registration parity

#[test]
fn cpu_context_registration_has_the_gpu_statuses() {
    let ctx = Ctx::new(CPU);
    let buf = vec![0u8; 1024];
    let p = buf.as_ptr();
    let reg = |at: usize, len: usize| unsafe { pqg_host_register(ctx.0, p.add(at), len) };
    let unreg = |at: usize| unsafe { pqg_host_unregister(ctx.0, p.add(at)) };
    assert_eq!(reg(0, 512), PQG_OK);
    assert_eq!(reg(0, 512), PQG_ERR_INVALID_ARGUMENT, "duplicate");
    assert_eq!(reg(256, 512), PQG_ERR_INVALID_ARGUMENT, "overlap");
    assert_eq!(reg(511, 2), PQG_ERR_INVALID_ARGUMENT, "overlap by one byte");
    assert_eq!(reg(0, 0), PQG_ERR_INVALID_ARGUMENT, "empty");
    assert_eq!(reg(512, 512), PQG_OK, "adjacent");
    assert_eq!(
        unreg(100),
        PQG_ERR_INVALID_ARGUMENT,
        "not a registered start"
    );
    assert_eq!(unreg(0), PQG_OK);
    assert_eq!(unreg(0), PQG_ERR_INVALID_ARGUMENT, "twice");
    assert_eq!(unreg(512), PQG_OK);
    assert_eq!(
        unsafe { pqg_host_unregister(ctx.0, null()) },
        PQG_ERR_NULL_POINTER
    );
}

#[test]
fn cpu_unregister_waits_for_a_running_job() {
    let ctx = Ctx::new(CPU);
    // Secret keys in one registered buffer; each item runs the attempt bound out (tens of
    // ms), so the job runs for a second or more.
    let adv = adversarial_sk();
    let n = 48;
    let mut keys = adv.repeat(n);
    let st = unsafe { pqg_host_register(ctx.0, keys.as_mut_ptr(), keys.len()) };
    assert_eq!(st, PQG_OK);
    let msg: &[u8] = b"m";
    let rnds: Vec<[u8; 32]> = (0..n as u8).map(|i| rnd(i.wrapping_mul(5))).collect();
    let mut sigs = vec![vec![0u8; pqg_signature_len(ALG)]; n];
    let reqs: Vec<pqg_sign_request> = (0..n)
        .zip(sigs.iter_mut())
        .map(|(i, sig)| pqg_sign_request {
            sk: keys[i * adv.len()..].as_ptr(),
            msg: msg.as_ptr(),
            msg_len: msg.len(),
            context: null(),
            context_len: 0,
            rnd: rnds[i].as_ptr(),
            sig: sig.as_mut_ptr(),
        })
        .collect();
    let mut statuses = vec![0; n];
    let mut job = null_mut();
    let st = unsafe {
        pqg_mldsa_sign_submit(
            ctx.0,
            ALG,
            reqs.as_ptr(),
            n,
            statuses.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(st, PQG_OK);
    // Unregister at once, while the job runs (jobs are counted from their submit call, so
    // no wait for the job's thread to start is needed).
    assert_eq!(
        unsafe { pqg_job_poll(job) },
        PQG_PENDING,
        "the job ended too soon for this test to mean anything"
    );
    assert_eq!(unsafe { pqg_host_unregister(ctx.0, keys.as_ptr()) }, PQG_OK);
    assert_eq!(
        unsafe { pqg_job_poll(job) },
        PQG_OK,
        "unregister returned while a job using the buffer was running"
    );
    unsafe { pqg_job_free(job) };
    drop(keys);
}

// ---------------------------------------------------------------- the same on the GPU

const GPU: pqg_backend = pqg_backend_values::PQG_BACKEND_GPU as pqg_backend;

/// Adversarial keys (bound exhausted, or accepted late), a malformed key and honest keys in
/// one GPU batch, then forged and wrong-length signatures in a GPU verify batch: the batches
/// complete, and every status and signature equals the CPU's one-at-a-time result. This
/// checks that the kernels' attempt bound is the CPU's.
#[test]
fn gpu_batches_with_adversarial_keys_match_the_cpu() {
    let mut g = null_mut();
    let st = unsafe { pqg_context_new(GPU, &mut g) };
    if st != PQG_OK {
        common::ffi::print_gpu_skip(st);
        return;
    }
    let gpu = Ctx(g);
    let cpu = Ctx::new(CPU);
    let adv = adversarial_sk();
    let keys: Vec<(Vec<u8>, Vec<u8>)> = (0..8u8).map(|i| keypair(&cpu, &[i + 60; 32])).collect();
    let mut malformed = keys[0].1.clone();
    malformed[128] = 0xff; // s1's first coefficients out of [-eta, eta]
    let msg: &[u8] = b"m";
    let mut items: Vec<(&[u8], &[u8], [u8; 32])> =
        (0..48u8).map(|x| (&adv[..], msg, rnd(x))).collect();
    items.push((&malformed[..], msg, rnd(0)));
    for r in 0..64u8 {
        items.extend(keys.iter().map(|(_, sk)| (&sk[..], msg, rnd(r))));
    }
    let (statuses, sigs) = sign_batch(&gpu, &items, DEADLINE.as_millis() as i64)
        .expect("the GPU batch never completed");
    let (mut bad_keys, mut signed) = (0, 0);
    for (i, (sk, m, r)) in items.iter().enumerate() {
        let mut one = vec![CANARY; pqg_signature_len(ALG)];
        let st = sign(&cpu, sk, m, r, &mut one);
        assert_eq!(
            statuses[i], st,
            "item {i}: GPU status differs from the CPU's"
        );
        assert_eq!(
            sigs[i], one,
            "item {i}: GPU signature differs (or a failed one was written)"
        );
        if st == PQG_ERR_BAD_KEY {
            bad_keys += 1;
        } else {
            signed += 1;
        }
    }
    println!("GPU batch: {bad_keys} BAD_KEY, {signed} signed, all as on the CPU");
    assert!(bad_keys > 1 && signed > 8);

    // Verify: valid, bit-flipped, random and wrong-length signatures.
    let sig_len = pqg_signature_len(ALG);
    let mut cases: Vec<(usize, Vec<u8>)> = Vec::new();
    for (i, s) in sigs.iter().enumerate().skip(49).take(64) {
        let k = (i - 49) % keys.len();
        cases.push((k, s.clone()));
        let mut f = s.clone();
        f[(i * 7919) % sig_len] ^= 1 << (i % 8);
        cases.push((k, f));
        cases.push((k, vec![(i as u8).wrapping_mul(31); sig_len]));
        cases.push((k, s[..sig_len - 1 - i % 3].to_vec()));
    }
    let reqs: Vec<pqg_verify_request> = cases
        .iter()
        .map(|(k, s)| pqg_verify_request {
            pk: keys[*k].0.as_ptr(),
            msg: msg.as_ptr(),
            msg_len: msg.len(),
            context: null(),
            context_len: 0,
            sig: s.as_ptr(),
            sig_len: s.len(),
        })
        .collect();
    let mut vst = vec![12345; reqs.len()];
    let mut job = null_mut();
    let st = unsafe {
        pqg_mldsa_verify_submit(
            gpu.0,
            ALG,
            reqs.as_ptr(),
            reqs.len(),
            vst.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(st, PQG_OK);
    assert_eq!(
        unsafe { pqg_job_wait(job, DEADLINE.as_millis() as i64) },
        PQG_OK
    );
    unsafe { pqg_job_free(job) };
    for (i, (k, s)) in cases.iter().enumerate() {
        assert_eq!(vst[i], verify(&cpu, &keys[*k].0, msg, s), "verify case {i}");
    }
}

/// The attempt bound is FIPS 204 Appendix C's (Table 3: 814, 585, 421 for ML-DSA-44, -65,
/// -87), and the kernels' `MAX_ATTEMPTS` is the same table, so CPU and GPU agree on which
/// keys exhaust it (checked here without a GPU; on one, by the batch test above).
#[test]
fn attempt_bound_is_fips_204_appendix_c_on_cpu_and_gpu() {
    use pqgpu::mldsa::{max_sign_attempts, ParamSet};
    for (p, fips) in [
        (ParamSet::MlDsa44, 814),
        (ParamSet::MlDsa65, 585),
        (ParamSet::MlDsa87, 421),
    ] {
        assert_eq!(max_sign_attempts(p.l()), fips, "{p:?}");
        assert!(fips as usize * p.l() < 1 << 16, "kappa would wrap");
    }
    let cu =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/mldsa.cu")).unwrap();
    let line = cu
        .lines()
        .find(|l| l.starts_with("#define MAX_ATTEMPTS"))
        .expect("MAX_ATTEMPTS in kernels/mldsa.cu");
    assert_eq!(
        line.split_whitespace().skip(2).collect::<String>(),
        "(L==4?814u:L==5?585u:421u)",
        "the kernels' bound differs from the CPU's"
    );
}
