//! GPU SLH-DSA against the CPU ground truth, byte for byte, for every parameter set: keys from
//! the same seeds; signatures with the same opt_rand (given, and deterministic: PK.seed) over
//! the pure interface with contexts, HashSLH-DSA and the internal interface, with a key per
//! item, one key for the whole batch (twice, so the kept top tree is used, then another key)
//! and three keys; hedged signatures verified by the CPU; verification of valid, modified and
//! mismatched signatures; malformed items getting the CPU's statuses; registered (DMA)
//! buffers; and NIST's ACVP SLH-DSA keyGen and sigVer cases on the GPU (the sigVer set's
//! valid signatures re-signed by the GPU from their internal projection). Skips (with the
//! reason printed) when no GPU is usable, as on CI. `PQGPU_GPU_CASES` sets the items per set
//! (default 16; signing on the s sets, slow on the CPU side, uses a tenth, at least 4).

mod common;

use common::acvp::{cases, load, s};
use common::{bytes, unhex};
use pqgpu::backend::{cpu_backend, Backend, SlhSignItem, SlhVerifyItem};
use pqgpu::slhdsa::{Message, ParamSet};
use pqgpu::{Error, Status};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn keygen(b: &dyn Backend, p: ParamSet, seeds: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<Status>) {
    let n = seeds.len() / p.seed_len();
    let mut pk = vec![0u8; n * p.public_key_len()];
    let mut sk = vec![0u8; n * p.secret_key_len()];
    let mut st = vec![Err(Error::Panic); n];
    b.slhdsa_keygen(p, Some(seeds), &mut pk, &mut sk, &mut st);
    (pk, sk, st)
}

fn sign(b: &dyn Backend, p: ParamSet, items: &[SlhSignItem<'_>]) -> (Vec<Vec<u8>>, Vec<Status>) {
    let mut sigs = vec![vec![0u8; p.signature_len()]; items.len()];
    let mut st = vec![Err(Error::Panic); items.len()];
    let mut s: Vec<&mut [u8]> = sigs.iter_mut().map(|s| &mut s[..]).collect();
    b.slhdsa_sign(p, items, &mut s, &mut st);
    (sigs, st)
}

fn verify(b: &dyn Backend, p: ParamSet, items: &[SlhVerifyItem<'_>]) -> Vec<Status> {
    let mut st = vec![Err(Error::Panic); items.len()];
    b.slhdsa_verify(p, items, &mut st);
    st
}

/// GPU and CPU signatures of `items`, asserted equal (statuses; signatures of items that
/// succeeded); the GPU's.
fn sign_both(
    gpu: &dyn Backend,
    p: ParamSet,
    items: &[SlhSignItem<'_>],
    what: &str,
) -> (Vec<Vec<u8>>, Vec<Status>) {
    let got = sign(gpu, p, items);
    let want = sign(&*cpu_backend(), p, items);
    assert_eq!(got.1, want.1, "{} {what} statuses", p.name());
    for j in (0..items.len()).filter(|&j| want.1[j].is_ok()) {
        assert!(got.0[j] == want.0[j], "{} {what} signature {j}", p.name());
    }
    got
}

fn verify_both(
    gpu: &dyn Backend,
    p: ParamSet,
    items: &[SlhVerifyItem<'_>],
    what: &str,
) -> Vec<Status> {
    let got = verify(gpu, p, items);
    let want = verify(&*cpu_backend(), p, items);
    assert_eq!(got, want, "{} {what} verdicts", p.name());
    got
}

/// Messages in every interface: pure with a context of 0-255 bytes, HashSLH-DSA (SHA2-256,
/// SHAKE128), internal.
struct Messages {
    msgs: Vec<Vec<u8>>,
    ctxs: Vec<Vec<u8>>,
    digests: Vec<(pqgpu::mldsa::PreHash, Vec<u8>)>,
}

impl Messages {
    fn new(rng: &mut StdRng, n: usize) -> Messages {
        let msgs: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                let len = rng.gen_range(0..300);
                bytes(rng, len)
            })
            .collect();
        let ctxs = (0..n)
            .map(|_| {
                let len = rng.gen_range(0..=255);
                bytes(rng, len)
            })
            .collect();
        let digests = msgs
            .iter()
            .enumerate()
            .map(|(j, m)| common::prehash(if j % 2 == 0 { "SHA2-256" } else { "SHAKE-128" }, m))
            .collect();
        Messages {
            msgs,
            ctxs,
            digests,
        }
    }

    fn get(&self, j: usize) -> Message<'_> {
        match j % 4 {
            0 | 1 => Message::Pure {
                ctx: &self.ctxs[j][..if j % 4 == 0 { 0 } else { self.ctxs[j].len() }],
                msg: &self.msgs[j],
            },
            2 => Message::PreHashed {
                ctx: &self.ctxs[j],
                ph: self.digests[j].0,
                digest: &self.digests[j].1,
            },
            _ => Message::Internal(&self.msgs[j]),
        }
    }
}

/// Items signing message j with key `key(j)`: opt_rand given (even j) or PK.seed.
fn sign_items<'a>(
    p: ParamSet,
    m: &'a Messages,
    rnd: &'a [u8],
    sks: &'a [u8],
    key: impl Fn(usize) -> usize,
) -> Vec<SlhSignItem<'a>> {
    let (n, sl) = (p.n(), p.secret_key_len());
    (0..m.msgs.len())
        .map(|j| {
            let sk = &sks[key(j) * sl..(key(j) + 1) * sl];
            SlhSignItem {
                sk,
                msg: m.get(j),
                rnd: Some(if j % 2 == 0 {
                    &rnd[j * n..(j + 1) * n]
                } else {
                    &sk[2 * n..3 * n]
                }),
            }
        })
        .collect()
}

/// The GPU backend with `p`'s kernels loaded (a set whose kernels fail to load would run on the
/// CPU and compare equal to it: that is a failure here, not a pass).
fn gpu_with(p: ParamSet) -> Option<std::sync::Arc<dyn Backend>> {
    let gpu = common::gpu_or_skip()?;
    if let Err(why) = pqgpu::gpu::slhdsa_kernels_loaded(p) {
        panic!("{} GPU kernels did not load: {why}", p.name());
    }
    Some(gpu)
}

fn run_set(p: ParamSet) {
    let Some(gpu) = gpu_with(p) else {
        return;
    };
    let start = std::time::Instant::now();
    let n = common::gpu_cases(16).max(4);
    let small = p.params().a >= 12;
    let ns = if small { (n / 10).max(4) } else { n };
    let mut rng = StdRng::seed_from_u64(0x205 ^ p.index() as u64);
    let (nl, pl, sl, sig_len) = (
        p.n(),
        p.public_key_len(),
        p.secret_key_len(),
        p.signature_len(),
    );

    // Keygen.
    let seeds = bytes(&mut rng, n * p.seed_len());
    let (pks, sks, st) = keygen(&*gpu, p, &seeds);
    let want = keygen(&*cpu_backend(), p, &seeds);
    assert!(st.iter().all(|s| s.is_ok()), "{} keygen statuses", p.name());
    assert!(pks == want.0 && sks == want.1, "{} keygen", p.name());

    // Signing: a key per item, one key (twice, then another), three keys.
    let m = Messages::new(&mut rng, ns);
    let rnd = bytes(&mut rng, ns * nl);
    let own = sign_items(p, &m, &rnd, &sks, |j| j % n);
    let (sigs, st) = sign_both(&*gpu, p, &own, "key per item");
    assert!(st.iter().all(|s| s.is_ok()), "{} sign statuses", p.name());
    sign_both(&*gpu, p, &sign_items(p, &m, &rnd, &sks, |_| 0), "one key");
    sign_both(
        &*gpu,
        p,
        &sign_items(p, &m, &rnd, &sks, |_| 0),
        "one key again",
    );
    sign_both(
        &*gpu,
        p,
        &sign_items(p, &m, &rnd, &sks, |_| 1),
        "another key",
    );
    sign_both(
        &*gpu,
        p,
        &sign_items(p, &m, &rnd, &sks, |j| j % 3),
        "three keys",
    );

    // Hedged signing (fresh opt_rand): the CPU verifies every signature.
    let hedged: Vec<SlhSignItem> = own
        .iter()
        .map(|it| SlhSignItem { rnd: None, ..*it })
        .collect();
    let (hs, st) = sign(&*gpu, p, &hedged);
    assert!(st.iter().all(|s| s.is_ok()), "{} hedged statuses", p.name());
    let items: Vec<SlhVerifyItem> = hedged
        .iter()
        .zip(&hs)
        .enumerate()
        .map(|(j, (it, s))| SlhVerifyItem {
            pk: &pks[(j % n) * pl..(j % n + 1) * pl],
            msg: it.msg,
            sig: s,
        })
        .collect();
    assert!(
        verify(&*cpu_backend(), p, &items).iter().all(|s| s.is_ok()),
        "{} hedged signatures verify on the CPU",
        p.name()
    );
    assert!(
        hs != sigs,
        "{} hedged signatures differ from given-rnd ones",
        p.name()
    );

    // Verification: valid, one bit flipped anywhere, the wrong message, the wrong key.
    let tampered: Vec<Vec<u8>> = sigs
        .iter()
        .map(|s| {
            let mut s = s.clone();
            let bit = rng.gen_range(0..8 * sig_len);
            s[bit / 8] ^= 1 << (bit % 8);
            s
        })
        .collect();
    let mut items = Vec::new();
    for j in 0..ns {
        let pk = &pks[(j % n) * pl..(j % n + 1) * pl];
        let other = &pks[((j + 1) % n) * pl..((j + 1) % n + 1) * pl];
        let msg = own[j].msg;
        items.push(SlhVerifyItem {
            pk,
            msg,
            sig: &sigs[j],
        });
        items.push(SlhVerifyItem {
            pk,
            msg,
            sig: &tampered[j],
        });
        items.push(SlhVerifyItem {
            pk,
            msg: own[(j + 1) % ns].msg,
            sig: &sigs[j],
        });
        items.push(SlhVerifyItem {
            pk: other,
            msg,
            sig: &sigs[j],
        });
    }
    let st = verify_both(&*gpu, p, &items, "verify");
    for (j, s) in st.iter().enumerate() {
        assert_eq!(s.is_ok(), j % 4 == 0, "{} verify item {j}", p.name());
    }

    // Malformed items among good ones: the CPU's statuses, good items unharmed.
    let long_ctx = vec![7u8; 256];
    let mut bad = own[..4].to_vec();
    bad[1].sk = &sks[..sl - 1];
    bad[2].rnd = Some(&rnd[..nl - 1]);
    bad[3].msg = Message::Pure {
        ctx: &long_ctx,
        msg: b"m",
    };
    let (_, st) = sign_both(&*gpu, p, &bad, "malformed");
    assert_eq!(
        st,
        [
            Ok(()),
            Err(Error::BadLength),
            Err(Error::BadLength),
            Err(Error::InvalidArgument)
        ],
        "{} malformed sign statuses",
        p.name()
    );
    let mut vbad = items[..4].to_vec();
    vbad[1].pk = &pks[..pl + 1];
    vbad[2].sig = &sigs[0][..sig_len - 1];
    vbad[3].msg = Message::Pure {
        ctx: &long_ctx,
        msg: b"m",
    };
    let st = verify_both(&*gpu, p, &vbad, "malformed verify");
    assert_eq!(
        st,
        [
            Ok(()),
            Err(Error::BadLength),
            Err(Error::VerifyFailed),
            Err(Error::InvalidArgument)
        ],
        "{} malformed verify statuses",
        p.name()
    );
    println!(
        "{}: {n} keygen, {} x 6 sign and {} verify cases match the CPU ({:.1} s)",
        p.name(),
        ns,
        items.len() + 4,
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn gpu_slhdsa_sha2_128s_matches_cpu() {
    run_set(ParamSet::Sha2_128s);
}
#[test]
fn gpu_slhdsa_shake_128s_matches_cpu() {
    run_set(ParamSet::Shake128s);
}
#[test]
fn gpu_slhdsa_sha2_128f_matches_cpu() {
    run_set(ParamSet::Sha2_128f);
}
#[test]
fn gpu_slhdsa_shake_128f_matches_cpu() {
    run_set(ParamSet::Shake128f);
}
#[test]
fn gpu_slhdsa_sha2_192s_matches_cpu() {
    run_set(ParamSet::Sha2_192s);
}
#[test]
fn gpu_slhdsa_shake_192s_matches_cpu() {
    run_set(ParamSet::Shake192s);
}
#[test]
fn gpu_slhdsa_sha2_192f_matches_cpu() {
    run_set(ParamSet::Sha2_192f);
}
#[test]
fn gpu_slhdsa_shake_192f_matches_cpu() {
    run_set(ParamSet::Shake192f);
}
#[test]
fn gpu_slhdsa_sha2_256s_matches_cpu() {
    run_set(ParamSet::Sha2_256s);
}
#[test]
fn gpu_slhdsa_shake_256s_matches_cpu() {
    run_set(ParamSet::Shake256s);
}
#[test]
fn gpu_slhdsa_sha2_256f_matches_cpu() {
    run_set(ParamSet::Sha2_256f);
}
#[test]
fn gpu_slhdsa_shake_256f_matches_cpu() {
    run_set(ParamSet::Shake256f);
}

/// Keys and signatures in registered memory: keys out and signatures out by DMA, signatures
/// and keys in by DMA for verification, equal to the CPU's.
#[test]
fn gpu_slhdsa_registered_buffers() {
    let p = ParamSet::Sha2_128f;
    let Some(gpu) = gpu_with(p) else {
        return;
    };
    let n = common::gpu_cases(16).clamp(4, 2000);
    let mut rng = StdRng::seed_from_u64(0xD3A5);
    let seeds = bytes(&mut rng, n * p.seed_len());
    let (pl, sl, gl) = (p.public_key_len(), p.secret_key_len(), p.signature_len());
    let mut arena = vec![0u8; n * (pl + sl + gl)];
    gpu.register_host_memory(&arena).expect("register");
    {
        let (pks, rest) = arena.split_at_mut(n * pl);
        let (sks, sigs) = rest.split_at_mut(n * sl);
        let mut st = vec![Err(Error::Panic); n];
        gpu.slhdsa_keygen(p, Some(&seeds), pks, sks, &mut st);
        assert!(st.iter().all(|s| s.is_ok()));
        let want = keygen(&*cpu_backend(), p, &seeds);
        assert!(
            pks == &want.0[..] && sks == &want.1[..],
            "registered keygen"
        );
        let msgs: Vec<Vec<u8>> = (0..n).map(|j| bytes(&mut rng, j % 100)).collect();
        let items: Vec<SlhSignItem> = (0..n)
            .map(|j| SlhSignItem {
                sk: &sks[j * sl..(j + 1) * sl],
                msg: Message::Pure {
                    ctx: b"reg",
                    msg: &msgs[j],
                },
                rnd: Some(&sks[j * sl + 2 * p.n()..j * sl + 3 * p.n()]),
            })
            .collect();
        let mut s: Vec<&mut [u8]> = sigs.chunks_exact_mut(gl).collect();
        gpu.slhdsa_sign(p, &items, &mut s, &mut st);
        assert!(st.iter().all(|s| s.is_ok()));
        let want = sign(&*cpu_backend(), p, &items);
        for (j, (got, want)) in s.iter().zip(&want.0).enumerate() {
            assert!(got[..] == want[..], "registered sign {j}");
        }
        let sigs: &[u8] = sigs;
        let items: Vec<SlhVerifyItem> = (0..n)
            .map(|j| SlhVerifyItem {
                pk: &pks[j * pl..(j + 1) * pl],
                msg: Message::Pure {
                    ctx: b"reg",
                    msg: &msgs[j],
                },
                sig: &sigs[j * gl..(j + 1) * gl],
            })
            .collect();
        gpu.slhdsa_verify(p, &items, &mut st);
        assert!(st.iter().all(|s| s.is_ok()), "registered verify");
    }
    gpu.unregister_host_memory(arena.as_ptr())
        .expect("unregister");
    println!(
        "{}: {n} keygen, sign and verify through registered buffers match the CPU",
        p.name()
    );
}

fn param_set(name: &str) -> ParamSet {
    ParamSet::from_name(name).unwrap_or_else(|| panic!("unknown parameter set {name}"))
}

/// NIST ACVP SLH-DSA keyGen (every set, 120 cases) and sigVer (internal interface, 45 cases)
/// on the GPU; the sigVer set's 15 valid signatures re-signed by the GPU from their internal
/// projection (sk, additionalRandomness) must come out byte for byte.
#[test]
fn gpu_slhdsa_acvp_vectors() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    for p in ParamSet::ALL {
        gpu_with(p);
    }
    let mut kg = 0;
    for (g, t, a) in cases("SLH-DSA-keyGen-FIPS205") {
        let p = param_set(s(&g, "parameterSet"));
        let seed = [
            unhex(s(&t, "skSeed")),
            unhex(s(&t, "skPrf")),
            unhex(s(&t, "pkSeed")),
        ]
        .concat();
        let (pk, sk, st) = keygen(&*gpu, p, &seed);
        assert_eq!(st, [Ok(())]);
        assert_eq!(
            hex::encode_upper(&pk),
            s(&a, "pk"),
            "keyGen tcId {}",
            t["tcId"]
        );
        assert_eq!(
            hex::encode_upper(&sk),
            s(&a, "sk"),
            "keyGen tcId {}",
            t["tcId"]
        );
        kg += 1;
    }
    assert_eq!(kg, 120);
    let dir = "v1.1.0.35-hotfix/SLH-DSA-sigVer-FIPS205";
    let (mut sv, mut valid) = (0, 0);
    for (g, t, a) in cases(dir) {
        let p = param_set(s(&g, "parameterSet"));
        let (pk, msg, sig) = (
            unhex(s(&t, "pk")),
            unhex(s(&t, "message")),
            unhex(s(&t, "signature")),
        );
        let st = verify(
            &*gpu,
            p,
            &[SlhVerifyItem {
                pk: &pk,
                msg: Message::Internal(&msg),
                sig: &sig,
            }],
        );
        let passed = a["testPassed"].as_bool().expect("testPassed");
        let want = if passed {
            Ok(())
        } else {
            Err(Error::VerifyFailed)
        };
        assert_eq!(st, [want], "sigVer tcId {}", t["tcId"]);
        valid += usize::from(passed);
        sv += 1;
    }
    assert_eq!((sv, valid), (45, 15));
    let file = load(&format!("{dir}/internalProjection.json"));
    let mut resigned = 0;
    for g in file["testGroups"].as_array().expect("testGroups") {
        let p = param_set(s(g, "parameterSet"));
        for t in g["tests"].as_array().expect("tests") {
            if !t["testPassed"].as_bool().expect("testPassed") {
                continue;
            }
            let (sk, msg, addrnd) = (
                unhex(s(t, "sk")),
                unhex(s(t, "message")),
                unhex(s(t, "additionalRandomness")),
            );
            let item = SlhSignItem {
                sk: &sk,
                msg: Message::Internal(&msg),
                rnd: Some(&addrnd),
            };
            let (sigs, st) = sign(&*gpu, p, &[item]);
            assert_eq!(st, [Ok(())]);
            assert_eq!(
                hex::encode_upper(&sigs[0]),
                s(t, "signature"),
                "re-signed tcId {}",
                t["tcId"]
            );
            resigned += 1;
        }
    }
    assert_eq!(resigned, 15);
    println!("ACVP on the GPU: {kg} keyGen, {sv} sigVer ({valid} valid) and {resigned} re-signed sigVer cases pass");
}
