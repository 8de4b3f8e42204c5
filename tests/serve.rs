//! The serving layer (issue #13): key handles, the coalescing dispatcher, asynchronous
//! single items, completion notification and options. Every result is compared with a
//! one-at-a-time call of the plain CPU functions (`mldsa::sign`, `ctru::decaps`, ...).
//!
//! GPU-like behaviour is provoked with a fake backend that reports itself as a GPU and runs
//! the CPU code (optionally failing, panicking or holding its batches), so the dispatcher
//! queues and merges items as it would on a GPU context.

mod common;

use pqgpu::backend::{
    Backend, BackendKind, CpuBackend, DecapsItem, EncapsItem, SignItem, SlhSignItem, SlhVerifyItem,
    VerifyItem,
};
use pqgpu::ffi::*;
use pqgpu::mldsa::Message;
use pqgpu::serve::{Key, KeyArg, KeyKind, Opt, Serve};
use pqgpu::{ctru, mldsa, mlkem, slhdsa, Alg, Error, Status};
use rayon::prelude::*;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Keys and the plain reference calls
// ---------------------------------------------------------------------------------------

static ZERO_RND: [u8; 32] = [0; 32];
const M44: mldsa::ParamSet = mldsa::ParamSet::MlDsa44;
const M65: mldsa::ParamSet = mldsa::ParamSet::MlDsa65;
const M87: mldsa::ParamSet = mldsa::ParamSet::MlDsa87;
const C653: ctru::ParamSet = ctru::ParamSet::Ctru653;
const C761: ctru::ParamSet = ctru::ParamSet::Ctru761;
const K768: mlkem::ParamSet = mlkem::ParamSet::MlKem768;

struct Pair {
    alg: Alg,
    pk: Vec<u8>,
    sk: Vec<u8>,
    pk_h: Key,
    sk_h: Key,
}

fn pair(alg: Alg, seed: u8) -> Pair {
    let mut pk = vec![0u8; alg.public_key_len()];
    let mut sk = vec![0u8; alg.secret_key_len()];
    match alg {
        Alg::MlDsa(p) => mldsa::keygen_internal(p, &[seed; 32], &mut pk, &mut sk).unwrap(),
        Alg::Ctru(p) => ctru::keygen_derand(p, &[seed; 64], &mut pk, &mut sk).unwrap(),
        Alg::SlhDsa(p) => {
            let seed = [seed; 96];
            slhdsa::keygen_internal(p, &seed[..p.seed_len()], &mut pk, &mut sk).unwrap()
        }
        Alg::MlKem(p) => {
            mlkem::keygen_internal(p, &[seed; 32], &[!seed; 32], &mut pk, &mut sk).unwrap()
        }
    }
    Pair {
        alg,
        pk_h: Key::new(alg, KeyKind::Public, &pk).unwrap(),
        sk_h: Key::new(alg, KeyKind::Secret, &sk).unwrap(),
        pk,
        sk,
    }
}

fn keyring() -> Vec<Pair> {
    let mut v = Vec::new();
    for (i, a) in [
        Alg::MlDsa(M44),
        Alg::MlDsa(M65),
        Alg::MlDsa(M87),
        Alg::Ctru(C653),
        Alg::Ctru(C761),
        Alg::MlKem(K768),
    ]
    .into_iter()
    .enumerate()
    {
        v.push(pair(a, 2 * i as u8 + 1));
        v.push(pair(a, 2 * i as u8 + 2));
    }
    v
}

/// One request of the mixed workload, fully determined by its index.
struct Case {
    key: usize,
    handle: bool,
    /// 0 sign, 1 verify, 2 encaps, 3 decaps (the last two for KEM keys).
    op: u8,
    msg: Vec<u8>,
    ctx: Vec<u8>,
    rnd: [u8; 32],
    /// For verify: a valid signature, or a corrupted one. For decaps: a ciphertext.
    input: Vec<u8>,
}

fn case(ring: &[Pair], i: usize) -> Case {
    let key = (i * 7) % ring.len();
    let kp = &ring[key];
    let msg: Vec<u8> = (0..(i % 50)).map(|j| (i * 31 + j) as u8).collect();
    let ctx: Vec<u8> = (0..(i % 4)).map(|j| j as u8 ^ 0x5a).collect();
    let rnd = [(i % 251) as u8; 32];
    let (op, input) = match kp.alg {
        Alg::MlDsa(p) => {
            if i % 2 == 0 {
                (0, vec![])
            } else {
                let mut sig = vec![0u8; p.signature_len()];
                let m = Message::Pure {
                    ctx: &ctx,
                    msg: &msg,
                };
                mldsa::sign(p, &kp.sk, &m, Some(&[7; 32]), &mut sig).unwrap();
                if i % 3 == 0 {
                    sig[i % 40] ^= 1;
                }
                (1, sig)
            }
        }
        Alg::Ctru(p) => {
            if i % 2 == 0 {
                (2, vec![])
            } else {
                let (mut ct, mut ss) = (vec![0u8; p.ciphertext_len()], vec![0u8; 32]);
                ctru::encaps_derand(p, &kp.pk, &[i as u8; 32], &mut ct, &mut ss).unwrap();
                if i % 3 == 0 {
                    ct[i % 50] ^= 4;
                }
                (3, ct)
            }
        }
        Alg::SlhDsa(_) => unreachable!("SLH-DSA has no key handles"),
        Alg::MlKem(p) => {
            if i % 2 == 0 {
                (2, vec![])
            } else {
                let (mut ct, mut ss) = (vec![0u8; p.ciphertext_len()], vec![0u8; 32]);
                mlkem::encaps_internal(p, &kp.pk, &[i as u8; 32], &mut ct, &mut ss).unwrap();
                if i % 3 == 0 {
                    ct[i % 50] ^= 4;
                }
                (3, ct)
            }
        }
    };
    Case {
        key,
        handle: i % 3 != 1,
        op,
        msg,
        ctx,
        rnd,
        input,
    }
}

/// What a case produced: the status and the output bytes (signature, ct || ss, or ss).
type Outcome = (Status, Vec<u8>);

/// The reference: the plain CPU function, one call.
fn expected(ring: &[Pair], c: &Case) -> Outcome {
    let kp = &ring[c.key];
    match (kp.alg, c.op) {
        (Alg::MlDsa(p), 0) => {
            let mut sig = vec![0u8; p.signature_len()];
            let m = Message::Pure {
                ctx: &c.ctx,
                msg: &c.msg,
            };
            (mldsa::sign(p, &kp.sk, &m, Some(&c.rnd), &mut sig), sig)
        }
        (Alg::MlDsa(p), 1) => {
            let m = Message::Pure {
                ctx: &c.ctx,
                msg: &c.msg,
            };
            (mldsa::verify(p, &kp.pk, &m, &c.input), vec![])
        }
        (Alg::Ctru(p), 2) => {
            let (mut ct, mut ss) = (vec![0u8; p.ciphertext_len()], vec![0u8; 32]);
            let st = ctru::encaps_derand(p, &kp.pk, &c.rnd, &mut ct, &mut ss);
            ct.extend_from_slice(&ss);
            (st, ct)
        }
        (Alg::Ctru(p), 3) => {
            let mut ss = vec![0u8; 32];
            (ctru::decaps(p, &kp.sk, &c.input, &mut ss), ss)
        }
        (Alg::MlKem(p), 2) => {
            let (mut ct, mut ss) = (vec![0u8; p.ciphertext_len()], vec![0u8; 32]);
            let st = mlkem::encaps_internal(p, &kp.pk, &c.rnd, &mut ct, &mut ss);
            ct.extend_from_slice(&ss);
            (st, ct)
        }
        (Alg::MlKem(p), 3) => {
            let mut ss = vec![0u8; 32];
            (mlkem::decaps(p, &kp.sk, &c.input, &mut ss), ss)
        }
        _ => unreachable!(),
    }
}

/// The case through the serving layer's blocking calls (handle or encoded key).
fn served(serve: &Serve, ring: &[Pair], c: &Case) -> Outcome {
    let kp = &ring[c.key];
    let (pk, sk) = if c.handle {
        (KeyArg::Handle(&kp.pk_h), KeyArg::Handle(&kp.sk_h))
    } else {
        (KeyArg::Bytes(kp.alg, &kp.pk), KeyArg::Bytes(kp.alg, &kp.sk))
    };
    match c.op {
        0 => {
            let mut sig = vec![0u8; kp.alg.signature_len()];
            let m = Message::Pure {
                ctx: &c.ctx,
                msg: &c.msg,
            };
            (serve.sign(sk, &m, Some(&c.rnd), &mut sig), sig)
        }
        1 => {
            let m = Message::Pure {
                ctx: &c.ctx,
                msg: &c.msg,
            };
            (serve.verify(pk, &m, &c.input), vec![])
        }
        2 => {
            let (mut ct, mut ss) = (vec![0u8; kp.alg.ciphertext_len()], vec![0u8; 32]);
            let st = serve.encaps(pk, Some(&c.rnd), &mut ct, &mut ss);
            ct.extend_from_slice(&ss);
            (st, ct)
        }
        _ => {
            let mut ss = vec![0u8; 32];
            (serve.decaps(sk, &c.input, &mut ss), ss)
        }
    }
}

// ---------------------------------------------------------------------------------------
// A fake GPU backend
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Runs the CPU code.
    Pass,
    /// Every item fails with `Device`, after scribbling over the outputs.
    Fail,
    /// Odd items of each batch fail with `Device`.
    FailOdd,
    /// Panics halfway through each batch.
    Panic,
    /// Rejects every signature at once without computing (a cheap, fast engine), signs as Pass.
    QuickVerify,
}

struct FakeGpu {
    cpu: Arc<dyn Backend>,
    mode: Mode,
    /// What it reports itself as (a GPU unless a test says otherwise).
    kind: Mutex<BackendKind>,
    /// Sizes of the batches it was given.
    batches: Mutex<Vec<usize>>,
    /// Addresses of the output buffers it was handed (signatures, ciphertexts, secrets).
    outputs: Mutex<Vec<usize>>,
    /// While closed, batches wait.
    gate: Mutex<bool>,
    opened: Condvar,
    /// Whether it reports its device as shared with other processes (MPS).
    shared: AtomicBool,
}

impl FakeGpu {
    fn new(mode: Mode) -> Arc<FakeGpu> {
        FakeGpu::over(CpuBackend::new(), mode)
    }
    /// Wraps a real backend (the GPU, on the H200) to inject failures mid-batch.
    fn over(inner: Arc<dyn Backend>, mode: Mode) -> Arc<FakeGpu> {
        Arc::new(FakeGpu {
            cpu: inner,
            mode,
            kind: Mutex::new(BackendKind::Gpu),
            batches: Mutex::new(Vec::new()),
            outputs: Mutex::new(Vec::new()),
            gate: Mutex::new(true),
            opened: Condvar::new(),
            shared: AtomicBool::new(false),
        })
    }
    fn close(&self) {
        *self.gate.lock().unwrap() = false;
    }
    fn open(&self) {
        *self.gate.lock().unwrap() = true;
        self.opened.notify_all();
    }
    fn enter(&self, n: usize) {
        self.batches.lock().unwrap().push(n);
        let mut g = self.gate.lock().unwrap();
        while !*g {
            g = self.opened.wait(g).unwrap();
        }
    }
    fn saw(&self, outs: &[&mut [u8]]) {
        let mut o = self.outputs.lock().unwrap();
        o.extend(outs.iter().map(|b| b.as_ptr() as usize));
    }
    fn items(&self) -> usize {
        self.batches.lock().unwrap().iter().sum()
    }
    /// Applies the failure mode after (or instead of) the real work.
    fn spoil(&self, statuses: &mut [Status], outs: &mut [&mut [u8]]) {
        match self.mode {
            Mode::Pass | Mode::QuickVerify => {}
            Mode::Fail => {
                statuses.iter_mut().for_each(|s| *s = Err(Error::Device));
                outs.iter_mut().for_each(|o| o.fill(0xEE));
            }
            Mode::FailOdd => statuses
                .iter_mut()
                .skip(1)
                .step_by(2)
                .for_each(|s| *s = Err(Error::Device)),
            Mode::Panic => {
                // The first half finished, the rest never did (a panic mid-batch).
                let half = statuses.len() / 2;
                statuses[half..]
                    .iter_mut()
                    .for_each(|s| *s = Err(Error::Panic));
                panic!("fake device failure (expected by the test)");
            }
        }
    }
}

impl Backend for FakeGpu {
    fn kind(&self) -> BackendKind {
        *self.kind.lock().unwrap()
    }
    fn shared_device(&self) -> bool {
        self.shared.load(Ordering::Relaxed)
    }
    fn mldsa_keygen(
        &self,
        p: mldsa::ParamSet,
        s: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        st: &mut [Status],
    ) {
        self.enter(st.len());
        self.cpu.mldsa_keygen(p, s, pks, sks, st);
        self.spoil(st, &mut [pks, sks]);
    }
    fn mldsa_sign(
        &self,
        p: mldsa::ParamSet,
        items: &[SignItem<'_>],
        sigs: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        self.enter(items.len());
        self.saw(sigs);
        self.cpu.mldsa_sign(p, items, sigs, st);
        self.spoil(st, sigs);
    }
    fn mldsa_verify(&self, p: mldsa::ParamSet, items: &[VerifyItem<'_>], st: &mut [Status]) {
        self.enter(items.len());
        if self.mode == Mode::QuickVerify {
            st.iter_mut().for_each(|s| *s = Err(Error::VerifyFailed));
            return;
        }
        self.cpu.mldsa_verify(p, items, st);
        self.spoil(st, &mut []);
    }
    fn slhdsa_sign(
        &self,
        p: slhdsa::ParamSet,
        items: &[SlhSignItem<'_>],
        sigs: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        self.enter(items.len());
        self.saw(sigs);
        self.cpu.slhdsa_sign(p, items, sigs, st);
        self.spoil(st, sigs);
    }
    fn slhdsa_verify(&self, p: slhdsa::ParamSet, items: &[SlhVerifyItem<'_>], st: &mut [Status]) {
        self.enter(items.len());
        self.cpu.slhdsa_verify(p, items, st);
        self.spoil(st, &mut []);
    }
    fn kem_keygen(
        &self,
        p: ctru::ParamSet,
        s: Option<&[u8]>,
        pks: &mut [u8],
        sks: &mut [u8],
        st: &mut [Status],
    ) {
        self.enter(st.len());
        self.cpu.kem_keygen(p, s, pks, sks, st);
        self.spoil(st, &mut [pks, sks]);
    }
    fn kem_encaps(
        &self,
        p: ctru::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        self.enter(items.len());
        self.saw(cts);
        self.saw(sss);
        self.cpu.kem_encaps(p, items, cts, sss, st);
        self.spoil(st, sss);
    }
    fn kem_decaps(
        &self,
        p: ctru::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        self.enter(items.len());
        self.saw(sss);
        self.cpu.kem_decaps(p, items, sss, st);
        self.spoil(st, sss);
    }
    fn mlkem_keygen(
        &self,
        p: mlkem::ParamSet,
        s: Option<&[u8]>,
        eks: &mut [u8],
        dks: &mut [u8],
        st: &mut [Status],
    ) {
        self.enter(st.len());
        self.cpu.mlkem_keygen(p, s, eks, dks, st);
        self.spoil(st, &mut [eks, dks]);
    }
    fn mlkem_encaps(
        &self,
        p: mlkem::ParamSet,
        items: &[EncapsItem<'_>],
        cts: &mut [&mut [u8]],
        sss: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        self.enter(items.len());
        self.saw(cts);
        self.saw(sss);
        self.cpu.mlkem_encaps(p, items, cts, sss, st);
        self.spoil(st, sss);
    }
    fn mlkem_decaps(
        &self,
        p: mlkem::ParamSet,
        items: &[DecapsItem<'_>],
        sss: &mut [&mut [u8]],
        st: &mut [Status],
    ) {
        self.enter(items.len());
        self.saw(sss);
        self.cpu.mlkem_decaps(p, items, sss, st);
        self.spoil(st, sss);
    }
}

/// A serving layer on the fake GPU with the CPU crossover off (everything is queued).
fn gpu_serve(mode: Mode, max_wait_us: i64) -> (Arc<FakeGpu>, Serve) {
    let fake = FakeGpu::new(mode);
    let serve = Serve::new(fake.clone());
    serve
        .config
        .set(pqgpu::serve::Opt::CpuCrossover, 0)
        .unwrap();
    serve
        .config
        .set(pqgpu::serve::Opt::MaxWaitUs, max_wait_us)
        .unwrap();
    (fake, serve)
}

/// Runs cases [0, n) from `threads` threads (blocking calls) and checks each one.
fn run_threads(serve: &Serve, ring: &[Pair], threads: usize, n: usize) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let c = case(ring, i);
                assert_eq!(served(serve, ring, &c), expected(ring, &c), "case {i}");
            });
        }
    });
}

// ---------------------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------------------

#[test]
fn handles_give_the_plain_results_and_check_keys_once() {
    let ring = keyring();
    let serve = Serve::new(pqgpu::backend::cpu_backend());
    for i in 0..60 {
        let c = case(&ring, i);
        assert_eq!(
            served(&serve, &ring, &Case { handle: true, ..c }),
            expected(&ring, &case(&ring, i)),
            "case {i}"
        );
    }
    // Malformed keys are refused at creation, with the status the plain call gives.
    let mut sk = ring[0].sk.clone();
    sk[128] = 0xFF; // s1 field out of range
    assert_eq!(
        Key::new(ring[0].alg, KeyKind::Secret, &sk).unwrap_err(),
        Error::BadKey
    );
    assert_eq!(
        Key::new(ring[0].alg, KeyKind::Secret, &sk[1..]).unwrap_err(),
        Error::BadLength
    );
    let mut pk = ring[6].pk.clone();
    pk.iter_mut().for_each(|b| *b = 0xFF); // CTRU-Prime: values >= q
    assert_eq!(
        Key::new(ring[6].alg, KeyKind::Public, &pk).unwrap_err(),
        Error::BadKey
    );
    // A handle of the wrong kind or family is an invalid argument.
    let m = Message::Pure {
        ctx: &[],
        msg: b"x",
    };
    let mut sig = vec![0u8; M44.signature_len()];
    assert_eq!(
        serve.sign(KeyArg::Handle(&ring[0].pk_h), &m, None, &mut sig),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        serve.sign(KeyArg::Handle(&ring[6].sk_h), &m, None, &mut sig),
        Err(Error::InvalidArgument)
    );
}

// ---------------------------------------------------------------------------------------
// The dispatcher
// ---------------------------------------------------------------------------------------

#[test]
fn threads_with_mixed_keys_and_algorithms_get_their_own_results() {
    let ring = keyring();
    // CPU context: calls run in place.
    run_threads(&Serve::new(pqgpu::backend::cpu_backend()), &ring, 8, 120);
    // GPU-like context: calls are queued and merged.
    let (fake, serve) = gpu_serve(Mode::Pass, 2000);
    run_threads(&serve, &ring, 16, 240);
    assert!(
        fake.items() >= 240 - 10,
        "items went through the backend: {}",
        fake.items()
    );
}

#[test]
fn failing_backends_lose_nothing() {
    let ring = keyring();
    for mode in [Mode::Fail, Mode::FailOdd, Mode::Panic] {
        let (fake, serve) = gpu_serve(mode, 500);
        run_threads(&serve, &ring, 8, 80);
        assert!(fake.items() > 0);
    }
}

#[test]
fn a_backend_of_its_own_gets_every_item_unretried() {
    // A backend that is not the library's CPU or GPU (it reports itself as a CPU): items go
    // through it, and its failures are the items' statuses.
    let ring = keyring();
    let c = case(&ring, 0);
    for (mode, want) in [
        (Mode::Pass, None),
        (Mode::Fail, Some(Error::Device)),
        (Mode::Panic, Some(Error::Panic)),
    ] {
        let fake = FakeGpu::new(mode);
        *fake.kind.lock().unwrap() = BackendKind::Cpu;
        let serve = Serve::new(fake.clone());
        let got = served(&serve, &ring, &c);
        match want {
            None => assert_eq!(got, expected(&ring, &c)),
            Some(e) => assert_eq!(got.0, Err(e)),
        }
        assert_eq!(fake.items(), 1);
    }
}

#[test]
fn a_lone_item_does_not_wait_for_company() {
    let ring = keyring();
    // Maximum wait 1 s: a lone call must still return at once (arrivals have paused).
    let (_, serve) = gpu_serve(Mode::Pass, 1_000_000);
    let c = case(&ring, 1);
    let t = Instant::now();
    assert_eq!(served(&serve, &ring, &c), expected(&ring, &c));
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn an_idle_context_runs_a_lone_async_item_at_once() {
    // A GPU-like context with the default crossover, a maximum wait of 1 s and pauses in
    // arrivals counted only after 250 ms: a lone asynchronous item on the idle context runs
    // on the CPU at once instead of waiting for company that would not change where it runs.
    let ring = keyring();
    let kp = &ring[0];
    let ctx = Ctx(context_from_backend(FakeGpu::new(Mode::Pass)));
    unsafe {
        assert_eq!(
            pqg_context_set_option(ctx.0, PQG_OPT_MAX_WAIT_US, 1_000_000),
            PQG_OK
        );
        assert_eq!(
            pqg_context_set_option(ctx.0, PQG_OPT_QUIET_US, 1_000_000),
            PQG_OK
        );
    }
    let pk = c_key(kp.alg, PQG_KEY_PUBLIC, &kp.pk);
    let Alg::MlDsa(p) = kp.alg else {
        panic!("an ML-DSA pair first")
    };
    let mut sig = vec![0u8; p.signature_len()];
    let m = Message::Pure {
        ctx: &[],
        msg: b"idle",
    };
    mldsa::sign(p, &kp.sk, &m, Some(&ZERO_RND), &mut sig).unwrap();
    for _ in 0..3 {
        let (mut status, mut job) = (77, null_mut());
        let t = Instant::now();
        unsafe {
            assert_eq!(
                pqg_mldsa_verify_async(
                    ctx.0,
                    pk,
                    b"idle".as_ptr(),
                    4,
                    null(),
                    0,
                    sig.as_ptr(),
                    sig.len(),
                    &mut status,
                    &mut job,
                ),
                PQG_OK
            );
            assert_eq!(pqg_job_wait(job, -1), PQG_OK);
            pqg_job_free(job);
        }
        assert_eq!(status, PQG_OK);
        assert!(
            t.elapsed() < Duration::from_millis(150),
            "a lone item waited {:?} (the quiet gap is 250 ms)",
            t.elapsed()
        );
    }
    unsafe { pqg_key_free(pk) };
}

#[test]
fn the_maximum_wait_bounds_a_busy_queue() {
    // An asynchronous feeder keeps items arriving; with the quiet gap off, only the oldest
    // item's deadline (here 20 ms) can flush the queue; a blocking call made meanwhile
    // must come back within that wait plus slack (for a loaded 2-core CI machine), long before
    // the feeder stops (after 3 s).
    let ring = keyring();
    // The feeder's items cost the engine nothing, so the queue is busy but not overloaded
    // (under overload an item waits behind the backlog, whatever the maximum wait).
    let fake = FakeGpu::new(Mode::QuickVerify);
    let ctx = Ctx(context_from_backend(fake.clone()));
    unsafe {
        pqg_context_set_option(ctx.0, PQG_OPT_CPU_CROSSOVER, 0);
        pqg_context_set_option(ctx.0, PQG_OPT_MAX_WAIT_US, 20_000);
        // Never full within the test, and pauses in arrivals do not count: only the deadline
        // can flush.
        pqg_context_set_option(ctx.0, PQG_OPT_MAX_BATCH, 1 << 20);
        pqg_context_set_option(ctx.0, PQG_OPT_QUIET_US, 1_000_000);
    }
    let kp = &ring[0];
    let pk = c_key(kp.alg, PQG_KEY_PUBLIC, &kp.pk);
    let sk = c_key(kp.alg, PQG_KEY_SECRET, &kp.sk);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let bad = vec![0u8; M44.signature_len()];
    let (pk_p, sk_p) = (pk as usize, sk as usize);
    let ctx_ref = &ctx;
    let elapsed = std::thread::scope(|s| {
        let feeder = s.spawn(|| {
            let mut pending = std::collections::VecDeque::new();
            let t = Instant::now();
            let mut submitted = 0usize;
            while !stop.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(3) {
                let mut st = Box::new(0);
                let mut job = null_mut();
                let r = unsafe {
                    pqg_mldsa_verify_async(
                        ctx_ref.0,
                        pk_p as *const pqg_key,
                        b"busy".as_ptr(),
                        4,
                        null(),
                        0,
                        bad.as_ptr(),
                        bad.len(),
                        &mut *st,
                        &mut job,
                    )
                };
                assert_eq!(r, PQG_OK);
                submitted += 1;
                pending.push_back((job, st));
                while let Some((j, _)) = pending.front() {
                    if unsafe { pqg_job_poll(*j) } != PQG_OK {
                        break;
                    }
                    let (j, st) = pending.pop_front().unwrap();
                    unsafe { pqg_job_free(j) };
                    assert_eq!(*st, PQG_ERR_VERIFY_FAILED);
                }
            }
            for (j, st) in pending {
                unsafe { pqg_job_wait(j, -1) };
                unsafe { pqg_job_free(j) };
                assert_eq!(*st, PQG_ERR_VERIFY_FAILED);
            }
            submitted
        });
        std::thread::sleep(Duration::from_millis(100));
        let mut sig = vec![0u8; M44.signature_len()];
        let t = Instant::now();
        let st = unsafe {
            pqg_mldsa_sign_key(
                ctx.0,
                sk_p as *const pqg_key,
                b"m".as_ptr(),
                1,
                null(),
                0,
                null(),
                sig.as_mut_ptr(),
                sig.len(),
            )
        };
        let elapsed = t.elapsed();
        stop.store(true, Ordering::Relaxed);
        assert_eq!(st, PQG_OK);
        assert!(
            feeder.join().unwrap() > 100,
            "the feeder kept items arriving"
        );
        elapsed
    });
    assert!(elapsed < Duration::from_millis(20 + 400), "{elapsed:?}");
    assert!(fake.items() > 0);
    unsafe {
        pqg_key_free(pk);
        pqg_key_free(sk);
    }
}

/// A serving layer on the fake GPU with every knob set (crossover off).
fn tuned_serve(mode: Mode, max_batch: i64, in_flight: i64) -> (Arc<FakeGpu>, Serve) {
    let (fake, serve) = gpu_serve(mode, 2000);
    let cfg = &serve.config;
    cfg.set(pqgpu::serve::Opt::MaxBatch, max_batch).unwrap();
    cfg.set(pqgpu::serve::Opt::MaxInFlight, in_flight).unwrap();
    (fake, serve)
}

/// Key generation of the plain functions (the reference) from a seed.
fn plain_keygen(alg: Alg, seed: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut pk = vec![0u8; alg.public_key_len()];
    let mut sk = vec![0u8; alg.secret_key_len()];
    match alg {
        Alg::MlDsa(p) => mldsa::keygen_internal(p, seed.try_into().unwrap(), &mut pk, &mut sk),
        Alg::Ctru(p) => ctru::keygen_derand(p, seed.try_into().unwrap(), &mut pk, &mut sk),
        Alg::SlhDsa(p) => slhdsa::keygen_internal(p, seed, &mut pk, &mut sk),
        Alg::MlKem(p) => {
            let (d, z) = seed.split_at(32);
            mlkem::keygen_internal(
                p,
                d.try_into().unwrap(),
                z.try_into().unwrap(),
                &mut pk,
                &mut sk,
            )
        }
    }
    .unwrap();
    (pk, sk)
}

/// A freshly generated pair works: a signature verifies, or both sides share a secret.
fn assert_pair_works(alg: Alg, pk: &[u8], sk: &[u8]) {
    assert!(sk.iter().any(|&b| b != 0), "secret key written");
    match alg {
        Alg::MlDsa(p) => {
            let m = Message::Pure {
                ctx: &[],
                msg: b"pair",
            };
            let mut sig = vec![0u8; p.signature_len()];
            mldsa::sign(p, sk, &m, Some(&ZERO_RND), &mut sig).unwrap();
            assert_eq!(mldsa::verify(p, pk, &m, &sig), Ok(()));
        }
        Alg::Ctru(p) => {
            let (mut ct, mut ss, mut ss2) = (vec![0u8; p.ciphertext_len()], [0u8; 32], [0u8; 32]);
            ctru::encaps(p, pk, &mut ct, &mut ss).unwrap();
            ctru::decaps(p, sk, &ct, &mut ss2).unwrap();
            assert_eq!(ss, ss2);
        }
        Alg::SlhDsa(p) => {
            let m = slhdsa::Message::Pure {
                ctx: &[],
                msg: b"pair",
            };
            let mut sig = vec![0u8; p.signature_len()];
            slhdsa::sign(p, sk, &m, None, &mut sig).unwrap();
            assert_eq!(slhdsa::verify(p, pk, &m, &sig), Ok(()));
        }
        Alg::MlKem(p) => {
            let (mut ct, mut ss, mut ss2) = (vec![0u8; p.ciphertext_len()], [0u8; 32], [0u8; 32]);
            mlkem::encaps(p, pk, &mut ct, &mut ss).unwrap();
            mlkem::decaps(p, sk, &ct, &mut ss2).unwrap();
            assert_eq!(ss, ss2);
        }
    }
}

#[test]
fn single_keygen_calls_are_coalesced_and_correct() {
    let algs = [
        Alg::MlDsa(M44),
        Alg::MlDsa(M87),
        Alg::Ctru(C653),
        Alg::Ctru(C761),
        Alg::MlKem(K768),
    ];
    // Seeded and fresh calls of four sets from 12 threads on a GPU-like context (merged into
    // batches, split by set and by seeded-or-not), also with failures injected.
    for mode in [Mode::Pass, Mode::FailOdd, Mode::Panic, Mode::Fail] {
        let (fake, serve) = tuned_serve(mode, 16, 3);
        let n = 96;
        let next = AtomicUsize::new(0);
        let fresh = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..12 {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let alg = algs[i % algs.len()];
                    let mut pk = vec![0u8; alg.public_key_len()];
                    let mut sk = vec![0u8; alg.secret_key_len()];
                    if i % 3 == 0 {
                        assert_eq!(serve.keygen(alg, None, &mut pk, &mut sk), Ok(()), "{i}");
                        assert_pair_works(alg, &pk, &sk);
                        fresh.lock().unwrap().push(pk);
                    } else {
                        let len = if matches!(alg, Alg::MlDsa(_)) { 32 } else { 64 };
                        let seed = vec![(i * 13) as u8; len];
                        assert_eq!(serve.keygen(alg, Some(&seed), &mut pk, &mut sk), Ok(()));
                        assert_eq!((pk, sk), plain_keygen(alg, &seed), "item {i}");
                    }
                });
            }
        });
        let mut fresh = fresh.into_inner().unwrap();
        let before = fresh.len();
        fresh.sort();
        fresh.dedup();
        assert_eq!(fresh.len(), before, "fresh pairs are distinct");
        assert!(fake.items() > 0, "keygen went through the backend");
        // A seed of the wrong length is the call's error, and the secret key is zeroed.
        let alg = algs[0];
        let (mut pk, mut sk) = (
            vec![0u8; alg.public_key_len()],
            vec![0xAAu8; alg.secret_key_len()],
        );
        assert_eq!(
            serve.keygen(alg, Some(&[1u8; 64]), &mut pk, &mut sk),
            Err(Error::BadLength)
        );
        assert!(sk.iter().all(|&b| b == 0));
    }
}

#[test]
fn backends_write_straight_into_the_callers_buffers() {
    // The batch a backend gets holds the callers' own output buffers (no library buffer in
    // between): the fake records the addresses it was handed.
    let ring = keyring();
    let (fake, serve) = gpu_serve(Mode::Pass, 500);
    let m = Message::Pure {
        ctx: &[],
        msg: b"in place",
    };
    let mut sig = vec![0u8; M44.signature_len()];
    let st = serve.sign(KeyArg::Handle(&ring[0].sk_h), &m, Some(&ZERO_RND), &mut sig);
    assert_eq!(st, Ok(()));
    let kem = &ring[6];
    let (mut ct, mut ss) = (vec![0u8; C653.ciphertext_len()], vec![0u8; 32]);
    let st = serve.encaps(
        KeyArg::Bytes(kem.alg, &kem.pk),
        Some(&[3; 32]),
        &mut ct,
        &mut ss,
    );
    assert_eq!(st, Ok(()));
    let seen = fake.outputs.lock().unwrap().clone();
    for (what, b) in [("sig", &sig), ("ct", &ct), ("ss", &ss)] {
        assert!(
            seen.contains(&(b.as_ptr() as usize)),
            "{what} not handed over"
        );
    }
    // And the results are the plain calls' results.
    let mut want = vec![0u8; M44.signature_len()];
    mldsa::sign(M44, &ring[0].sk, &m, Some(&ZERO_RND), &mut want).unwrap();
    assert_eq!(sig, want);
    let (mut wct, mut wss) = (vec![0u8; C653.ciphertext_len()], vec![0u8; 32]);
    ctru::encaps_derand(C653, &kem.pk, &[3; 32], &mut wct, &mut wss).unwrap();
    assert_eq!((ct, ss), (wct, wss));
}

#[test]
fn a_failed_item_keeps_nothing_the_engine_wrote() {
    // The engine fails every item after scribbling over its outputs; the CPU retry fails this
    // item too (a malformed key, accepted by length): the caller gets the CPU's status and
    // untouched (zero) outputs, not the engine's bytes.
    let ring = keyring();
    let (_, serve) = gpu_serve(Mode::Fail, 500);
    let mut sk = ring[0].sk.clone();
    sk[128] = 0xFF; // s1 out of range
    let m = Message::Pure {
        ctx: &[],
        msg: b"x",
    };
    let mut sig = vec![0u8; M44.signature_len()];
    let st = serve.sign(KeyArg::Bytes(ring[0].alg, &sk), &m, None, &mut sig);
    assert_eq!(st, Err(Error::BadKey));
    assert!(sig.iter().all(|&b| b == 0), "signature buffer untouched");
    let kem = &ring[6];
    let mut bad_sk = kem.sk.clone();
    bad_sk.iter_mut().for_each(|b| *b = 0xFF);
    let mut ss = vec![0u8; 32];
    let ct = vec![0u8; C653.ciphertext_len()];
    let st = serve.decaps(KeyArg::Bytes(kem.alg, &bad_sk), &ct, &mut ss);
    let mut want = vec![0u8; 32];
    assert_eq!(st, ctru::decaps(C653, &bad_sk, &ct, &mut want));
    if st.is_err() {
        assert!(ss.iter().all(|&b| b == 0));
    } else {
        assert_eq!(ss, want);
    }
}

/// Collects the statuses of asynchronous items submitted straight to a `Serve`.
struct Collect {
    got: Mutex<Vec<Option<Status>>>,
    twice: AtomicUsize,
    left: AtomicUsize,
}

impl pqgpu::serve::Completion for Collect {
    fn complete(&self, index: usize, status: Status) {
        let mut g = self.got.lock().unwrap();
        if g[index].replace(status).is_some() {
            self.twice.fetch_add(1, Ordering::SeqCst);
        }
        self.left.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Output buffers of one asynchronous case.
struct Outs {
    a: Vec<u8>,
    ss: Vec<u8>,
}

#[test]
fn threads_and_async_submitters_share_small_batches_without_loss() {
    // Blocking threads and asynchronous submitters on one GPU-like context, a maximum batch
    // of 7 (queues are split across batches), 3 batches in flight, odd items of every batch
    // failed by the engine (retried on the CPU): every item ends once, with its own status
    // and output, and no batch is over the maximum.
    let ring = keyring();
    let (fake, serve) = tuned_serve(Mode::FailOdd, 7, 3);
    let (first_async, n_async) = (300, 240);
    let cases: Vec<Case> = (first_async..first_async + n_async)
        .into_par_iter()
        .map(|i| case(&ring, i))
        .collect();
    let mut outs: Vec<Outs> = cases
        .iter()
        .map(|c| Outs {
            a: vec![
                0u8;
                ring[c.key]
                    .alg
                    .signature_len()
                    .max(ring[c.key].alg.ciphertext_len())
            ],
            ss: vec![0u8; 32],
        })
        .collect();
    let done = Arc::new(Collect {
        got: Mutex::new(vec![None; n_async]),
        twice: AtomicUsize::new(0),
        left: AtomicUsize::new(n_async),
    });
    let serve_ref = &serve;
    std::thread::scope(|s| {
        // Two submitters, each taking every other case, in submissions of 1 to 5 items.
        let (even, odd): (Vec<_>, Vec<_>) =
            outs.iter_mut().enumerate().partition(|(i, _)| i % 2 == 0);
        for part in [even, odd] {
            let (cases, ring, done) = (&cases, &ring, done.clone());
            s.spawn(move || {
                let mut ops = Vec::new();
                for (i, o) in part {
                    let c = &cases[i];
                    let kp = &ring[c.key];
                    let (pk, sk) = if c.handle {
                        (KeyArg::Handle(&kp.pk_h), KeyArg::Handle(&kp.sk_h))
                    } else {
                        (KeyArg::Bytes(kp.alg, &kp.pk), KeyArg::Bytes(kp.alg, &kp.sk))
                    };
                    let m = Message::Pure {
                        ctx: &c.ctx,
                        msg: &c.msg,
                    };
                    let len = kp.alg.signature_len().min(o.a.len());
                    // SAFETY: cases and outs outlive the submissions (waited for below).
                    let op = unsafe {
                        match c.op {
                            0 => pqgpu::serve::Op::sign(sk, &m, Some(&c.rnd), &mut o.a[..len]),
                            1 => pqgpu::serve::Op::verify(pk, &m, &c.input),
                            2 => {
                                let n = kp.alg.ciphertext_len();
                                pqgpu::serve::Op::encaps(pk, Some(&c.rnd), &mut o.a[..n], &mut o.ss)
                            }
                            _ => pqgpu::serve::Op::decaps(sk, &c.input, &mut o.ss),
                        }
                    }
                    .unwrap();
                    ops.push((i, op));
                    if ops.len() == 1 + i % 5 {
                        // SAFETY: as above.
                        unsafe { serve_ref.submit(std::mem::take(&mut ops), done.clone()) };
                    }
                }
                // SAFETY: as above.
                unsafe { serve_ref.submit(ops, done.clone()) };
            });
        }
        // Meanwhile, blocking calls from 8 threads.
        s.spawn(|| run_threads(serve_ref, &ring, 8, 160));
    });
    let t = Instant::now();
    while done.left.load(Ordering::SeqCst) > 0 {
        assert!(t.elapsed() < Duration::from_secs(120), "items lost");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(
        done.twice.load(Ordering::SeqCst),
        0,
        "an item reported twice"
    );
    let got = done.got.lock().unwrap().clone();
    for (i, c) in cases.iter().enumerate() {
        let alg = ring[c.key].alg;
        let out = match c.op {
            0 => outs[i].a[..alg.signature_len()].to_vec(),
            1 => vec![],
            2 => [&outs[i].a[..alg.ciphertext_len()], &outs[i].ss[..]].concat(),
            _ => outs[i].ss.clone(),
        };
        assert_eq!(
            (got[i].unwrap(), out),
            expected(&ring, c),
            "async case {}",
            first_async + i
        );
    }
    let batches = fake.batches.lock().unwrap().clone();
    assert!(
        batches.iter().all(|&b| b <= 7),
        "batches over the maximum: {batches:?}"
    );
    assert!(fake.items() >= n_async, "items went through the backend");
}

// ---------------------------------------------------------------------------------------
// The C ABI: asynchronous items, notification, handles freed early, options
// ---------------------------------------------------------------------------------------

struct Ctx(*mut pqg_context);
unsafe impl Send for Ctx {}
unsafe impl Sync for Ctx {}
impl Drop for Ctx {
    fn drop(&mut self) {
        unsafe { pqg_context_free(self.0) }
    }
}

fn c_key(alg: Alg, kind: pqg_key_kind, bytes: &[u8]) -> *mut pqg_key {
    let mut k = null_mut();
    assert_eq!(
        unsafe { pqg_key_new(alg.code(), kind, bytes.as_ptr(), bytes.len(), &mut k) },
        PQG_OK
    );
    k
}

/// One outstanding asynchronous item and its buffers.
struct Pending {
    i: usize,
    job: *mut pqg_job,
    status: Box<pqg_status>,
    out: Vec<u8>,
    ss: Vec<u8>,
}

extern "C" fn count_callback(user: *mut std::ffi::c_void, job: *mut pqg_job) {
    let n = unsafe { &*(user as *const AtomicUsize) };
    assert!(!job.is_null());
    // The job's results are written but it has not yet completed.
    assert_eq!(unsafe { pqg_job_poll(job) }, PQG_PENDING);
    n.fetch_add(1, Ordering::SeqCst);
}

/// Keeps every case of [0, n) outstanding at once as an async single item, then checks them.
fn async_cases(ctx: &Ctx, ring: &[Pair], n: usize) {
    let handles: Vec<(*mut pqg_key, *mut pqg_key)> = ring
        .iter()
        .map(|p| {
            (
                c_key(p.alg, PQG_KEY_PUBLIC, &p.pk),
                c_key(p.alg, PQG_KEY_SECRET, &p.sk),
            )
        })
        .collect();
    let cases: Vec<Case> = (0..n).into_par_iter().map(|i| case(ring, i)).collect();
    let mut pending = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let kp = &ring[c.key];
        let (pk, sk) = handles[c.key];
        let mut p = Pending {
            i,
            job: null_mut(),
            status: Box::new(77),
            out: vec![],
            ss: vec![0u8; 32],
        };
        let st = unsafe {
            match c.op {
                0 => {
                    p.out = vec![0u8; kp.alg.signature_len()];
                    pqg_mldsa_sign_async(
                        ctx.0,
                        sk,
                        c.msg.as_ptr(),
                        c.msg.len(),
                        c.ctx.as_ptr(),
                        c.ctx.len(),
                        c.rnd.as_ptr(),
                        p.out.as_mut_ptr(),
                        p.out.len(),
                        &mut *p.status,
                        &mut p.job,
                    )
                }
                1 => pqg_mldsa_verify_async(
                    ctx.0,
                    pk,
                    c.msg.as_ptr(),
                    c.msg.len(),
                    c.ctx.as_ptr(),
                    c.ctx.len(),
                    c.input.as_ptr(),
                    c.input.len(),
                    &mut *p.status,
                    &mut p.job,
                ),
                2 => {
                    p.out = vec![0u8; kp.alg.ciphertext_len()];
                    pqg_kem_encaps_async(
                        ctx.0,
                        pk,
                        c.rnd.as_ptr(),
                        p.out.as_mut_ptr(),
                        p.out.len(),
                        p.ss.as_mut_ptr(),
                        32,
                        &mut *p.status,
                        &mut p.job,
                    )
                }
                _ => pqg_kem_decaps_async(
                    ctx.0,
                    sk,
                    c.input.as_ptr(),
                    c.input.len(),
                    p.ss.as_mut_ptr(),
                    32,
                    &mut *p.status,
                    &mut p.job,
                ),
            }
        };
        assert_eq!(st, PQG_OK, "case {i}");
        pending.push(p);
    }
    // The handles may go now: queued items hold their own references.
    for (pk, sk) in handles {
        unsafe {
            pqg_key_free(pk);
            pqg_key_free(sk)
        };
    }
    let mut got = Vec::with_capacity(n);
    for p in pending {
        assert_eq!(unsafe { pqg_job_wait(p.job, 60_000) }, PQG_OK);
        unsafe { pqg_job_free(p.job) };
        let c = &cases[p.i];
        let status = if *p.status == PQG_OK {
            Ok(())
        } else {
            Err(code_error(*p.status))
        };
        let mut out = p.out;
        if c.op >= 2 {
            out.extend_from_slice(&p.ss);
            if c.op == 3 {
                out = p.ss;
            }
        }
        got.push((p.i, (status, out)));
    }
    // The references on all cores (100,000 of them on the H200).
    got.into_par_iter()
        .for_each(|(i, o)| assert_eq!(o, expected(ring, &cases[i]), "case {i}"));
}

fn code_error(s: pqg_status) -> Error {
    match s {
        PQG_ERR_VERIFY_FAILED => Error::VerifyFailed,
        PQG_ERR_BAD_KEY => Error::BadKey,
        PQG_ERR_BAD_LENGTH => Error::BadLength,
        PQG_ERR_INVALID_ARGUMENT => Error::InvalidArgument,
        PQG_ERR_DEVICE => Error::Device,
        PQG_ERR_NULL_POINTER => Error::NullPointer,
        _ => Error::Panic,
    }
}

#[test]
fn async_items_with_callback_and_event_fd() {
    let ring = keyring();
    for ctx in [
        Ctx(context_from_backend(pqgpu::backend::cpu_backend())),
        Ctx(context_from_backend(FakeGpu::new(Mode::FailOdd))),
    ] {
        let calls = Box::new(AtomicUsize::new(0));
        let user = &*calls as *const AtomicUsize as *mut std::ffi::c_void;
        assert_eq!(
            unsafe { pqg_context_set_callback(ctx.0, Some(count_callback), user) },
            PQG_OK
        );
        assert_eq!(
            unsafe { pqg_context_set_option(ctx.0, PQG_OPT_CPU_CROSSOVER, 0) },
            PQG_OK
        );
        let mut fd = -1;
        assert_eq!(unsafe { pqg_context_event_fd(ctx.0, &mut fd) }, PQG_OK);
        assert!(fd >= 0);
        let n = 150;
        async_cases(&ctx, &ring, n);
        assert_eq!(calls.load(Ordering::SeqCst), n, "one callback per job");
        // The eventfd counted the completions.
        assert_eq!(event_count(fd, n as u64), n as u64);
        assert_eq!(
            unsafe { pqg_context_set_callback(ctx.0, None, null_mut()) },
            PQG_OK
        );
    }
}

/// Reads the eventfd's count until it reaches `want` (or 10 s pass): the library signals it
/// just after a job completes, so it may trail a `pqg_job_wait` that returned.
fn event_count(fd: i32, want: u64) -> u64 {
    let (mut total, deadline) = (0u64, std::time::Instant::now() + Duration::from_secs(10));
    while total < want && std::time::Instant::now() < deadline {
        let mut count = 0u64;
        if unsafe { libc_read(fd, &mut count) } == 8 {
            total += count;
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    total
}

unsafe fn libc_read(fd: i32, v: &mut u64) -> isize {
    extern "C" {
        fn read(fd: i32, buf: *mut std::ffi::c_void, n: usize) -> isize;
    }
    unsafe { read(fd, (v as *mut u64).cast(), 8) }
}

#[test]
fn a_handle_freed_while_its_items_are_queued_stays_valid() {
    let ring = keyring();
    let fake = FakeGpu::new(Mode::Pass);
    let ctx = Ctx(context_from_backend(fake.clone()));
    unsafe { pqg_context_set_option(ctx.0, PQG_OPT_CPU_CROSSOVER, 0) };
    fake.close();
    let kp = &ring[0];
    let sk = c_key(kp.alg, PQG_KEY_SECRET, &kp.sk);
    let reqs_n = 20;
    let mut sigs = vec![0u8; reqs_n * M44.signature_len()];
    let msgs: Vec<Vec<u8>> = (0..reqs_n).map(|i| vec![i as u8; i]).collect();
    let reqs: Vec<pqg_key_sign_request> = (0..reqs_n)
        .map(|i| pqg_key_sign_request {
            msg: msgs[i].as_ptr(),
            msg_len: msgs[i].len(),
            context: null(),
            context_len: 0,
            rnd: ZERO_RND.as_ptr(),
            sig: sigs[i * M44.signature_len()..].as_mut_ptr(),
        })
        .collect();
    let mut statuses = vec![99; reqs_n];
    let mut job = null_mut();
    let st = unsafe {
        pqg_mldsa_sign_key_submit(
            ctx.0,
            sk,
            reqs.as_ptr(),
            reqs_n,
            statuses.as_mut_ptr(),
            &mut job,
        )
    };
    assert_eq!(st, PQG_OK);
    unsafe { pqg_key_free(sk) };
    drop(reqs);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(unsafe { pqg_job_poll(job) }, PQG_PENDING);
    fake.open();
    assert_eq!(unsafe { pqg_job_wait(job, 60_000) }, PQG_OK);
    unsafe { pqg_job_free(job) };
    for i in 0..reqs_n {
        assert_eq!(statuses[i], PQG_OK);
        let mut want = vec![0u8; M44.signature_len()];
        mldsa::sign(
            M44,
            &kp.sk,
            &Message::Pure {
                ctx: &[],
                msg: &msgs[i],
            },
            Some(&[0; 32]),
            &mut want,
        )
        .unwrap();
        assert_eq!(&sigs[i * want.len()..][..want.len()], &want[..], "item {i}");
    }
}

#[test]
fn handles_freed_while_their_single_items_are_queued_stay_valid() {
    // Asynchronous single items hold their key through the queue, not one reference each:
    // with small batches, a queue's list is split between batches (both parts must keep
    // the keys), and with keys alternating the list holds several.
    let ring = keyring();
    let fake = FakeGpu::new(Mode::Pass);
    let ctx = Ctx(context_from_backend(fake.clone()));
    unsafe {
        pqg_context_set_option(ctx.0, PQG_OPT_CPU_CROSSOVER, 0);
        pqg_context_set_option(ctx.0, PQG_OPT_MAX_BATCH, 3);
    }
    fake.close();
    // Three ML-DSA-44 / -65 secret keys, and one public key for verification.
    let signers = [0usize, 1, 2];
    let sks: Vec<*mut pqg_key> = signers
        .iter()
        .map(|&k| c_key(ring[k].alg, PQG_KEY_SECRET, &ring[k].sk))
        .collect();
    let pk = c_key(ring[0].alg, PQG_KEY_PUBLIC, &ring[0].pk);
    let n = 25;
    let msgs: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; 3 + i]).collect();
    let mut sigs: Vec<Vec<u8>> = (0..n)
        .map(|i| vec![0u8; ring[signers[i % 3]].alg.signature_len()])
        .collect();
    let mut statuses = vec![99; n + 1];
    let mut jobs = vec![null_mut(); n + 1];
    let mut good = vec![0u8; M44.signature_len()];
    let m0 = Message::Pure {
        ctx: &[],
        msg: b"verify me",
    };
    mldsa::sign(M44, &ring[0].sk, &m0, Some(&ZERO_RND), &mut good).unwrap();
    for i in 0..n {
        let st = unsafe {
            pqg_mldsa_sign_async(
                ctx.0,
                sks[i % 3],
                msgs[i].as_ptr(),
                msgs[i].len(),
                null(),
                0,
                ZERO_RND.as_ptr(),
                sigs[i].as_mut_ptr(),
                sigs[i].len(),
                &mut statuses[i],
                &mut jobs[i],
            )
        };
        assert_eq!(st, PQG_OK);
    }
    let st = unsafe {
        pqg_mldsa_verify_async(
            ctx.0,
            pk,
            b"verify me".as_ptr(),
            9,
            null(),
            0,
            good.as_ptr(),
            good.len(),
            &mut statuses[n],
            &mut jobs[n],
        )
    };
    assert_eq!(st, PQG_OK);
    for k in sks.into_iter().chain([pk]) {
        unsafe { pqg_key_free(k) };
    }
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(unsafe { pqg_job_poll(jobs[n]) }, PQG_PENDING);
    fake.open();
    for j in jobs {
        assert_eq!(unsafe { pqg_job_wait(j, 60_000) }, PQG_OK);
        unsafe { pqg_job_free(j) };
    }
    assert_eq!(statuses[n], PQG_OK, "the verification");
    for i in 0..n {
        assert_eq!(statuses[i], PQG_OK, "item {i}");
        let kp = &ring[signers[i % 3]];
        let Alg::MlDsa(p) = kp.alg else {
            unreachable!()
        };
        let mut want = vec![0u8; p.signature_len()];
        let m = Message::Pure {
            ctx: &[],
            msg: &msgs[i],
        };
        mldsa::sign(p, &kp.sk, &m, Some(&ZERO_RND), &mut want).unwrap();
        assert_eq!(sigs[i], want, "item {i}");
    }
    // Batches of at most three: the queue's lists were split.
    assert!(fake.batches.lock().unwrap().iter().all(|&b| b <= 3));
}

#[test]
fn call_and_item_errors() {
    let ring = keyring();
    let ctx = Ctx(context_from_backend(pqgpu::backend::cpu_backend()));
    let kp = &ring[0];
    let (pk, sk) = (
        c_key(kp.alg, PQG_KEY_PUBLIC, &kp.pk),
        c_key(kp.alg, PQG_KEY_SECRET, &kp.sk),
    );
    let mut sig = vec![0u8; M44.signature_len()];
    let (mut st, mut job) = (0, null_mut());
    unsafe {
        // Key creation.
        let mut k = null_mut();
        assert_eq!(
            pqg_key_new(99, PQG_KEY_PUBLIC, kp.pk.as_ptr(), kp.pk.len(), &mut k),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_key_new(kp.alg.code(), 7, kp.pk.as_ptr(), kp.pk.len(), &mut k),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_key_new(kp.alg.code(), PQG_KEY_PUBLIC, null(), 5, &mut k),
            PQG_ERR_NULL_POINTER
        );
        assert_eq!(
            pqg_key_new(kp.alg.code(), PQG_KEY_PUBLIC, kp.pk.as_ptr(), 5, &mut k),
            PQG_ERR_BAD_LENGTH
        );
        assert!(k.is_null());
        assert_eq!(pqg_key_alg(pk), PQG_ML_DSA_44);
        // Single calls.
        let s = |key| {
            pqg_mldsa_sign_key(
                ctx.0,
                key,
                b"m".as_ptr(),
                1,
                null(),
                0,
                null(),
                sig.as_ptr() as *mut u8,
                sig.len(),
            )
        };
        assert_eq!(s(null()), PQG_ERR_NULL_POINTER);
        assert_eq!(s(pk), PQG_ERR_INVALID_ARGUMENT);
        assert_eq!(s(sk), PQG_OK);
        assert_eq!(
            pqg_mldsa_verify_key(
                ctx.0,
                pk,
                b"m".as_ptr(),
                1,
                null(),
                0,
                sig.as_ptr(),
                sig.len()
            ),
            PQG_OK
        );
        assert_eq!(
            pqg_mldsa_verify_key(
                ctx.0,
                pk,
                b"n".as_ptr(),
                1,
                null(),
                0,
                sig.as_ptr(),
                sig.len()
            ),
            PQG_ERR_VERIFY_FAILED
        );
        assert_eq!(
            pqg_mldsa_sign_key(
                ctx.0,
                sk,
                b"m".as_ptr(),
                1,
                null(),
                0,
                null(),
                sig.as_mut_ptr(),
                5
            ),
            PQG_ERR_BAD_LENGTH
        );
        assert_eq!(
            pqg_mldsa_sign_key(
                ctx.0,
                sk,
                b"m".as_ptr(),
                1,
                [0u8; 256].as_ptr(),
                256,
                null(),
                sig.as_mut_ptr(),
                sig.len()
            ),
            PQG_ERR_INVALID_ARGUMENT
        );
        // Async calls: call-level errors start nothing.
        assert_eq!(
            pqg_mldsa_sign_async(
                ctx.0,
                pk,
                null(),
                0,
                null(),
                0,
                null(),
                sig.as_mut_ptr(),
                sig.len(),
                &mut st,
                &mut job
            ),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert!(job.is_null());
        assert_eq!(
            pqg_mldsa_sign_async(
                ctx.0,
                sk,
                null(),
                0,
                null(),
                0,
                null(),
                sig.as_mut_ptr(),
                sig.len(),
                null_mut(),
                &mut job
            ),
            PQG_ERR_NULL_POINTER
        );
        assert_eq!(
            pqg_mldsa_sign_async(
                ctx.0,
                sk,
                null(),
                0,
                null(),
                0,
                null(),
                sig.as_mut_ptr(),
                3,
                &mut st,
                &mut job
            ),
            PQG_ERR_BAD_LENGTH
        );
        assert!(job.is_null());
        // Batch: a bad item gets its own status, the others run.
        let reqs = [
            pqg_key_sign_request {
                msg: null(),
                msg_len: 0,
                context: null(),
                context_len: 0,
                rnd: null(),
                sig: sig.as_mut_ptr(),
            },
            pqg_key_sign_request {
                msg: null(),
                msg_len: 0,
                context: null(),
                context_len: 0,
                rnd: null(),
                sig: null_mut(),
            },
            pqg_key_sign_request {
                msg: null(),
                msg_len: 4,
                context: null(),
                context_len: 0,
                rnd: null(),
                sig: sig.as_mut_ptr(),
            },
        ];
        let mut sts = [99; 3];
        assert_eq!(
            pqg_mldsa_sign_key_submit(ctx.0, sk, reqs.as_ptr(), 3, sts.as_mut_ptr(), &mut job),
            PQG_OK
        );
        assert_eq!(pqg_job_wait(job, -1), PQG_OK);
        pqg_job_free(job);
        assert_eq!(sts, [PQG_OK, PQG_ERR_NULL_POINTER, PQG_ERR_NULL_POINTER]);
        // An empty batch completes at once.
        assert_eq!(
            pqg_mldsa_sign_key_submit(ctx.0, sk, null(), 0, null_mut(), &mut job),
            PQG_OK
        );
        assert_eq!(pqg_job_poll(job), PQG_OK);
        pqg_job_free(job);
        pqg_key_free(pk);
        pqg_key_free(sk);
    }
}

#[test]
fn options_are_checked() {
    let ctx = Ctx(context_from_backend(pqgpu::backend::cpu_backend()));
    let mut v = 0i64;
    unsafe {
        assert_eq!(
            pqg_context_get_option(ctx.0, PQG_OPT_MAX_WAIT_US, &mut v),
            PQG_OK
        );
        assert!(v > 0 && v <= 2000, "default max wait at most 2 ms: {v}");
        assert_eq!(
            pqg_context_set_option(ctx.0, PQG_OPT_MAX_WAIT_US, 250),
            PQG_OK
        );
        assert_eq!(
            pqg_context_get_option(ctx.0, PQG_OPT_MAX_WAIT_US, &mut v),
            PQG_OK
        );
        assert_eq!(v, 250);
        assert_eq!(
            pqg_context_set_option(ctx.0, PQG_OPT_MAX_WAIT_US, -1),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_context_set_option(ctx.0, PQG_OPT_MAX_BATCH, 0),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_context_set_option(ctx.0, PQG_OPT_MAX_IN_FLIGHT, 65),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_context_set_option(ctx.0, 42, 1),
            PQG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            pqg_context_set_option(null_mut(), PQG_OPT_MAX_BATCH, 1),
            PQG_ERR_NULL_POINTER
        );
        assert_eq!(
            pqg_context_get_option(ctx.0, PQG_OPT_MAX_BATCH, null_mut()),
            PQG_ERR_NULL_POINTER
        );
    }
}

// ---------------------------------------------------------------------------------------
// The GPU (skipped without one): the same checks at scale, and failures injected mid-batch
// ---------------------------------------------------------------------------------------

/// Items per check: `PQGPU_SERVE_CASES` (the H200 script uses 100,000), default 3,000.
fn gpu_cases() -> usize {
    std::env::var("PQGPU_SERVE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

#[test]
fn gpu_serving_matches_cpu() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = gpu_cases();
    let ring = keyring();
    // Blocking calls from 256 threads, every item on the GPU (crossover off).
    let serve = Serve::new(gpu.clone());
    serve
        .config
        .set(pqgpu::serve::Opt::CpuCrossover, 0)
        .unwrap();
    let t = Instant::now();
    run_threads(&serve, &ring, 256, n);
    println!("gpu blocking: {n} items in {:?}", t.elapsed());
    // Asynchronous single items through the C ABI, all outstanding at once.
    let ctx = Ctx(context_from_backend(gpu.clone()));
    unsafe { pqg_context_set_option(ctx.0, PQG_OPT_CPU_CROSSOVER, 0) };
    let t = Instant::now();
    async_cases(&ctx, &ring, n);
    println!("gpu async: {n} items in {:?}", t.elapsed());
}

#[test]
fn gpu_failure_mid_batch_loses_nothing() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = gpu_cases() / 4;
    let ring = keyring();
    for mode in [Mode::FailOdd, Mode::Panic, Mode::Fail] {
        let fake = FakeGpu::over(gpu.clone(), mode);
        let serve = Serve::new(fake.clone());
        serve
            .config
            .set(pqgpu::serve::Opt::CpuCrossover, 0)
            .unwrap();
        run_threads(&serve, &ring, 128, n);
        assert!(fake.items() > 0);
    }
}

#[test]
fn a_forked_child_gets_its_own_dispatcher() {
    let ring = keyring();
    let (_, serve) = gpu_serve(Mode::Pass, 500);
    let c = case(&ring, 3);
    // The parent queues work first, so its dispatcher threads exist.
    assert_eq!(served(&serve, &ring, &c), expected(&ring, &c));
    // SAFETY: the child only runs the serving layer, then leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        unsafe { libc::alarm(20) }; // a hang (no dispatcher thread) ends as a failure
        let ok = served(&serve, &ring, &c) == expected(&ring, &c);
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status:#x}"
    );
}

/// A key-handle submit of at least half the maximum batch on a GPU context runs as one batch
/// (not split by the queue), with every status as the single calls give it, and tells the
/// callback and the eventfd once, like any job of the context.
#[test]
fn a_large_handle_submit_runs_as_one_batch() {
    let ring = keyring();
    let kp = &ring[0];
    let fake = FakeGpu::new(Mode::Pass);
    let ctx = Ctx(context_from_backend(fake.clone()));
    let calls = Box::new(AtomicUsize::new(0));
    let user = &*calls as *const AtomicUsize as *mut std::ffi::c_void;
    let mut fd = -1;
    unsafe {
        assert_eq!(pqg_context_set_option(ctx.0, PQG_OPT_MAX_BATCH, 64), PQG_OK);
        assert_eq!(
            pqg_context_set_option(ctx.0, PQG_OPT_CPU_CROSSOVER, 0),
            PQG_OK
        );
        assert_eq!(
            pqg_context_set_callback(ctx.0, Some(count_callback), user),
            PQG_OK
        );
        assert_eq!(pqg_context_event_fd(ctx.0, &mut fd), PQG_OK);
    }
    let (sk, pk) = (
        c_key(kp.alg, PQG_KEY_SECRET, &kp.sk),
        c_key(kp.alg, PQG_KEY_PUBLIC, &kp.pk),
    );
    let n = 100;
    let len = M44.signature_len();
    let msgs: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; i % 40]).collect();
    let long_ctx = [1u8; 256];
    let mut sigs = vec![0u8; n * len];
    let reqs: Vec<pqg_key_sign_request> = (0..n)
        .map(|i| pqg_key_sign_request {
            // Item 7: a NULL message of nonzero length; item 9: a context over 255 bytes.
            msg: if i == 7 { null() } else { msgs[i].as_ptr() },
            msg_len: if i == 7 { 3 } else { msgs[i].len() },
            context: if i == 9 { long_ctx.as_ptr() } else { null() },
            context_len: if i == 9 { 256 } else { 0 },
            rnd: ZERO_RND.as_ptr(),
            sig: sigs[i * len..].as_mut_ptr(),
        })
        .collect();
    let mut statuses = vec![99; n];
    let mut job = null_mut();
    unsafe {
        let st =
            pqg_mldsa_sign_key_submit(ctx.0, sk, reqs.as_ptr(), n, statuses.as_mut_ptr(), &mut job);
        assert_eq!(st, PQG_OK);
        assert_eq!(pqg_job_wait(job, 60_000), PQG_OK);
        pqg_job_free(job);
    }
    assert_eq!(
        *fake.batches.lock().unwrap(),
        [n - 2],
        "one batch of the good items"
    );
    for i in 0..n {
        let want_st = match i {
            7 => PQG_ERR_NULL_POINTER,
            9 => PQG_ERR_INVALID_ARGUMENT,
            _ => PQG_OK,
        };
        assert_eq!(statuses[i], want_st, "sign status {i}");
        if want_st == PQG_OK {
            let mut want = vec![0u8; len];
            let m = Message::Pure {
                ctx: &[],
                msg: &msgs[i],
            };
            mldsa::sign(M44, &kp.sk, &m, Some(&[0; 32]), &mut want).unwrap();
            assert_eq!(&sigs[i * len..][..len], &want[..], "signature {i}");
        }
    }
    // Verify the same way: item 3's signature damaged, item 5's one byte short.
    sigs[3 * len] ^= 1;
    let vreqs: Vec<pqg_key_verify_request> = (0..n)
        .map(|i| pqg_key_verify_request {
            msg: msgs[i].as_ptr(),
            msg_len: msgs[i].len(),
            context: null(),
            context_len: 0,
            sig: sigs[i * len..].as_ptr(),
            sig_len: if i == 5 { len - 1 } else { len },
        })
        .collect();
    unsafe {
        let st = pqg_mldsa_verify_key_submit(
            ctx.0,
            pk,
            vreqs.as_ptr(),
            n,
            statuses.as_mut_ptr(),
            &mut job,
        );
        assert_eq!(st, PQG_OK);
        assert_eq!(pqg_job_wait(job, 60_000), PQG_OK);
        pqg_job_free(job);
    }
    assert_eq!(fake.batches.lock().unwrap()[1], n - 1, "one verify batch");
    for (i, &st) in statuses.iter().enumerate() {
        // 7 and 9 were never signed (their rows are zero), 3 is damaged, 5 is short.
        let want_st = match i {
            3 | 5 | 7 | 9 => PQG_ERR_VERIFY_FAILED,
            _ => PQG_OK,
        };
        assert_eq!(st, want_st, "verify status {i}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2, "one callback per job");
    assert_eq!(event_count(fd, 2), 2, "one eventfd count per job");
    unsafe {
        pqg_context_set_callback(ctx.0, None, null_mut());
        pqg_key_free(sk);
        pqg_key_free(pk);
    }
}

/// Submits, as one submission on `serve`, a signature of `m` with `kp`'s secret-key handle (zero
/// rnd) into each buffer of `sigs`; the returned collector counts their reports.
///
/// # Safety
/// `sigs` and `m` must outlive the submission: the caller waits until every item has reported.
unsafe fn submit_signs(
    serve: &Serve,
    kp: &Pair,
    m: &Message<'_>,
    sigs: &mut [Vec<u8>],
) -> Arc<Collect> {
    let n = sigs.len();
    let done = Arc::new(Collect {
        got: Mutex::new(vec![None; n]),
        twice: AtomicUsize::new(0),
        left: AtomicUsize::new(n),
    });
    let ops = sigs
        .iter_mut()
        .enumerate()
        .map(|(i, s)| {
            // SAFETY: forwarded from the caller.
            let op =
                unsafe { pqgpu::serve::Op::sign(KeyArg::Handle(&kp.sk_h), m, Some(&ZERO_RND), s) };
            (i, op.unwrap())
        })
        .collect();
    // SAFETY: forwarded from the caller.
    unsafe { serve.submit(ops, done.clone()) };
    done
}

#[test]
fn the_observer_sees_every_run_in_place_or_batched() {
    // A CPU context: a blocking call runs in place (a run of one, in the caller), submitted
    // items run on the dispatcher's threads; every item is in exactly one observed run, and
    // the outputs are the plain function's.
    use pqgpu::serve::{Class, Sig};
    let kp = pair(Alg::MlDsa(M44), 9);
    let serve = Serve::new(pqgpu::backend::cpu_backend());
    let seen: Arc<Mutex<Vec<(Class, usize, bool)>>> = Arc::default();
    let log = seen.clone();
    serve.set_observer(Arc::new(move |c, n, inline| {
        log.lock().unwrap().push((c, n, inline))
    }));
    let m = Message::Pure {
        ctx: b"obs",
        msg: b"observed",
    };
    let mut want = vec![0u8; M44.signature_len()];
    mldsa::sign(M44, &kp.sk, &m, Some(&ZERO_RND), &mut want).unwrap();

    let mut sig = vec![0u8; M44.signature_len()];
    serve
        .sign(KeyArg::Handle(&kp.sk_h), &m, Some(&ZERO_RND), &mut sig)
        .unwrap();
    assert_eq!(sig, want);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(Class::Sign(Sig::MlDsa(M44)), 1, true)]
    );

    let n = 40;
    let mut sigs = vec![vec![0u8; M44.signature_len()]; n];
    // SAFETY: `sigs` and the message outlive the submission: this test waits below until
    // every item has reported.
    let done = unsafe { submit_signs(&serve, &kp, &m, &mut sigs) };
    let t0 = Instant::now();
    while done.left.load(Ordering::SeqCst) > 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "items never reported"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(done.twice.load(Ordering::SeqCst), 0);
    assert!(done.got.lock().unwrap().iter().all(|s| *s == Some(Ok(()))));
    assert!(sigs.iter().all(|s| *s == want));
    let runs = seen.lock().unwrap()[1..].to_vec();
    assert!(
        runs.iter()
            .all(|&(c, _, inline)| c == Class::Sign(Sig::MlDsa(M44)) && !inline),
        "{runs:?}"
    );
    assert_eq!(runs.iter().map(|r| r.1).sum::<usize>(), n, "{runs:?}");
}

/// A queue deeper than the batches in flight can take at once is shared out: each batch takes
/// an even share of what is outstanding (queued and running), so no batch takes the whole
/// queue while the other dispatcher threads idle (a deep queue in one batch made the next
/// arrivals wait for it).
#[test]
fn a_deep_queue_is_shared_out_over_the_batches_in_flight() {
    let kp = pair(Alg::MlDsa(M44), 11);
    let (fake, serve) = tuned_serve(Mode::Pass, 65536, 4);
    let cfg = &serve.config;
    cfg.set(pqgpu::serve::Opt::MaxWaitUs, 100_000).unwrap();
    cfg.set(pqgpu::serve::Opt::QuietUs, 20_000).unwrap();
    let m = Message::Pure {
        ctx: b"",
        msg: b"shared out",
    };
    let n = 2048;
    let mut sigs = vec![vec![0u8; M44.signature_len()]; n];
    // Batches wait at the fake device until all four are taken.
    fake.close();
    // SAFETY: `sigs` and the message outlive the submission (this test waits below until every
    // item has reported).
    let done = unsafe { submit_signs(&serve, &kp, &m, &mut sigs) };
    let t0 = Instant::now();
    while fake.batches.lock().unwrap().len() < 4 && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let taken = fake.batches.lock().unwrap().clone();
    fake.open();
    while done.left.load(Ordering::SeqCst) > 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "items never reported"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(taken, vec![n / 4; 4], "batches taken while the first ran");
    assert_eq!(done.twice.load(Ordering::SeqCst), 0);
    assert!(done.got.lock().unwrap().iter().all(|s| *s == Some(Ok(()))));
    let mut want = vec![0u8; M44.signature_len()];
    mldsa::sign(M44, &kp.sk, &m, Some(&ZERO_RND), &mut want).unwrap();
    assert!(sigs.iter().all(|s| *s == want));
}

#[test]
fn a_gpu_shared_with_other_processes_keeps_two_batches_in_flight_by_default() {
    let fake = FakeGpu::new(Mode::Pass);
    let own = Serve::new(fake.clone());
    assert_eq!(own.config.get(Opt::MaxInFlight), 4);
    fake.shared.store(true, Ordering::Relaxed);
    let shared = Serve::new(fake.clone());
    assert_eq!(shared.config.get(Opt::MaxInFlight), 2);
    // Only the default moves: a setting still wins, and the other options keep theirs.
    shared.config.set(Opt::MaxInFlight, 6).unwrap();
    assert_eq!(shared.config.get(Opt::MaxInFlight), 6);
    for o in [
        Opt::MaxWaitUs,
        Opt::MaxBatch,
        Opt::CpuCrossover,
        Opt::QuietUs,
    ] {
        assert_eq!(shared.config.get(o), own.config.get(o), "{o:?}");
    }
    // And the dispatcher runs with it: items complete as on any GPU context.
    let k = pair(Alg::MlDsa(M44), 9);
    let m = Message::Pure {
        ctx: &[],
        msg: &[7u8; 32],
    };
    let mut sig = vec![0u8; M44.signature_len()];
    shared
        .sign(KeyArg::Handle(&k.sk_h), &m, None, &mut sig)
        .unwrap();
    shared.verify(KeyArg::Handle(&k.pk_h), &m, &sig).unwrap();
}

/// SLH-DSA through the dispatcher of a GPU-like context: handles and encoded keys, blocking
/// calls from several threads merged into backend batches, the backend's failures retried on
/// the CPU; every signature equals the plain function's and verifies.
#[test]
fn slhdsa_is_served_through_the_backend_batches() {
    let p = slhdsa::ParamSet::Sha2_128f;
    let kp = pair(Alg::SlhDsa(p), 21);
    let n = p.n();
    let msgs: Vec<Vec<u8>> = (0..6u8).map(|i| vec![i; 10 + i as usize]).collect();
    let want: Vec<Vec<u8>> = msgs
        .iter()
        .map(|m| {
            let mut s = vec![0u8; p.signature_len()];
            let msg = slhdsa::Message::Pure { ctx: b"s", msg: m };
            slhdsa::sign(p, &kp.sk, &msg, Some(&kp.sk[2 * n..3 * n]), &mut s).unwrap();
            s
        })
        .collect();
    for mode in [Mode::Pass, Mode::Fail] {
        let (fake, serve) = gpu_serve(mode, 20_000);
        // Plain threads: blocking calls must not hold the CPU pool the batches run on.
        let got: Vec<(Vec<u8>, Status)> = std::thread::scope(|sc| {
            let (kp, serve) = (&kp, &serve);
            let hs: Vec<_> = msgs
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    sc.spawn(move || {
                        let msg = slhdsa::Message::Pure { ctx: b"s", msg: m };
                        let key = if i % 2 == 0 {
                            KeyArg::Handle(&kp.sk_h)
                        } else {
                            KeyArg::Bytes(kp.alg, &kp.sk)
                        };
                        let mut s = vec![0u8; p.signature_len()];
                        serve
                            .slh_sign(key, &msg, Some(&kp.sk[2 * n..3 * n]), &mut s)
                            .unwrap();
                        let pk = if i % 2 == 0 {
                            KeyArg::Bytes(kp.alg, &kp.pk)
                        } else {
                            KeyArg::Handle(&kp.pk_h)
                        };
                        let v = serve.slh_verify(pk, &msg, &s);
                        (s, v)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (i, (s, v)) in got.iter().enumerate() {
            assert_eq!(s, &want[i], "item {i}");
            assert_eq!(*v, Ok(()), "item {i}");
        }
        assert_eq!(
            fake.items(),
            2 * msgs.len(),
            "every item went to the backend once"
        );
        // A wrong signature through a handle, and calls the op itself refuses.
        let msg = slhdsa::Message::Pure {
            ctx: b"s",
            msg: &msgs[0],
        };
        let mut bad = want[0].clone();
        bad[40] ^= 1;
        if mode == Mode::Pass {
            assert_eq!(
                serve.slh_verify(KeyArg::Handle(&kp.pk_h), &msg, &bad),
                Err(Error::VerifyFailed)
            );
        }
        let mut s = vec![0u8; p.signature_len()];
        assert_eq!(
            serve.slh_sign(KeyArg::Handle(&kp.pk_h), &msg, None, &mut s),
            Err(Error::InvalidArgument)
        );
        assert_eq!(
            serve.slh_sign(KeyArg::Handle(&kp.sk_h), &msg, Some(&[0u8; 32]), &mut s),
            Err(Error::BadLength),
            "opt_rand is n bytes"
        );
        let m44 = pair(Alg::MlDsa(M44), 1);
        assert_eq!(
            serve.slh_sign(KeyArg::Handle(&m44.sk_h), &msg, None, &mut s),
            Err(Error::InvalidArgument)
        );
        let mm = Message::Pure { ctx: b"", msg: b"" };
        assert_eq!(
            serve.sign(KeyArg::Handle(&kp.sk_h), &mm, None, &mut s),
            Err(Error::InvalidArgument)
        );
    }
}
