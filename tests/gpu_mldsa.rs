//! GPU ML-DSA against the CPU ground truth: keys from the same seeds, deterministic and
//! given-rnd signatures byte for byte, verify verdicts on valid, tampered and malformed
//! inputs, plus every ACVP vector through the GPU backend. Skips (with the reason printed)
//! when no GPU is usable, as on CI. `PQGPU_GPU_CASES` sets the cases per parameter set.

mod common;

use common::acvp::{self, param_set, s};
use common::reference::{self, mldsa_keygen_both as keygen_both};
use common::{bytes, unhex};
use pqgpu::backend::{cpu_backend, Backend, SignItem, VerifyItem};
use pqgpu::mldsa::{Message, ParamSet, PreHash};
use pqgpu::{Error, Status};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One signing case, owning its data.
struct Case {
    sk: Vec<u8>,
    pk: Vec<u8>,
    form: u8,
    ctx: Vec<u8>,
    msg: Vec<u8>,
    ph: PreHash,
    rnd: [u8; 32],
    sig_len: usize,
}

impl Case {
    fn message(&self) -> Message<'_> {
        match self.form {
            0 => Message::Pure {
                ctx: &self.ctx,
                msg: &self.msg,
            },
            1 => Message::PreHashed {
                ctx: &self.ctx,
                ph: self.ph,
                digest: &self.msg,
            },
            2 => Message::Internal(&self.msg),
            _ => Message::Mu(&self.msg),
        }
    }
}

fn make_cases(rng: &mut StdRng, p: ParamSet, pks: &[u8], sks: &[u8], n: usize) -> Vec<Case> {
    let (pl, sl) = (p.public_key_len(), p.secret_key_len());
    let keys = pks.len() / pl;
    (0..n)
        .map(|i| {
            let key = i % keys;
            let mut c = Case {
                sk: sks[key * sl..(key + 1) * sl].to_vec(),
                pk: pks[key * pl..(key + 1) * pl].to_vec(),
                form: rng.gen_range(0..4),
                ctx: {
                    let len = if rng.gen_ratio(1, 20) {
                        255
                    } else {
                        rng.gen_range(0..12)
                    };
                    bytes(rng, len)
                },
                msg: Vec::new(),
                ph: PreHash::ALL[rng.gen_range(0..12)],
                rnd: if rng.gen() { [0; 32] } else { rng.gen() },
                sig_len: p.signature_len(),
            };
            c.msg = match c.form {
                0 => {
                    let len = rng.gen_range(0..80);
                    bytes(rng, len)
                }
                1 => bytes(rng, c.ph.digest_len()),
                2 => {
                    let len = rng.gen_range(0..300);
                    bytes(rng, len)
                }
                _ => bytes(rng, 64),
            };
            // Malformed inputs, about 5 %.
            match rng.gen_range(0..100) {
                0 => c.sk[128] = 0xFF, // an s1 field above 2*eta: BadKey
                1 => c.sk.truncate(sl - 1),
                2 => c.ctx = bytes(rng, 256),
                3 => c.sig_len -= 1,
                4 if c.form == 1 => c.msg.push(0),
                _ => {}
            }
            c
        })
        .collect()
}

/// Signs every case on `b`, with its `rnd` (`hedged`: fresh randomness instead).
fn sign_with(
    b: &dyn Backend,
    p: ParamSet,
    cases: &[Case],
    hedged: bool,
) -> (Vec<Vec<u8>>, Vec<Status>) {
    let items: Vec<SignItem<'_>> = cases
        .iter()
        .map(|c| SignItem {
            sk: &c.sk,
            msg: c.message(),
            rnd: if hedged { None } else { Some(&c.rnd) },
        })
        .collect();
    let lens: Vec<usize> = cases.iter().map(|c| c.sig_len).collect();
    reference::sign(b, p, &items, &lens)
}

/// Verify cases: each signed case, valid or tampered in one of several ways.
fn tamper(rng: &mut StdRng, p: ParamSet, cases: &mut [Case], sigs: &mut [Vec<u8>]) {
    let hint_at = p.c_tilde_len() + p.l() * 32 * (1 + p.gamma1_bits() as usize);
    for (c, s) in cases.iter_mut().zip(sigs.iter_mut()) {
        if s.len() != p.signature_len() {
            continue;
        }
        match rng.gen_range(0..12) {
            0 => {
                let bit = rng.gen_range(0..s.len() * 8);
                s[bit / 8] ^= 1 << (bit % 8);
            }
            1 if !c.msg.is_empty() => {
                let bit = rng.gen_range(0..c.msg.len() * 8);
                c.msg[bit / 8] ^= 1 << (bit % 8);
            }
            2 => {
                let bit = rng.gen_range(0..c.pk.len() * 8);
                c.pk[bit / 8] ^= 1 << (bit % 8);
            }
            3 => s.truncate(s.len() - 1),
            4 => c.pk.push(0),
            5 => s[hint_at + p.omega()] = 0xFF, // hint count out of range
            6 => s[hint_at + p.omega() + p.k() - 1] = p.omega() as u8, // counts then padding
            7 => s[p.c_tilde_len()..p.c_tilde_len() + 8].fill(0xFF), // z out of range
            8 if !c.ctx.is_empty() && c.form < 2 => c.ctx[0] ^= 1,
            _ => {}
        }
    }
}

fn verify_with(b: &dyn Backend, p: ParamSet, cases: &[Case], sigs: &[Vec<u8>]) -> Vec<Status> {
    let items: Vec<VerifyItem<'_>> = cases
        .iter()
        .zip(sigs)
        .map(|(c, s)| VerifyItem {
            pk: &c.pk,
            msg: c.message(),
            sig: s,
        })
        .collect();
    reference::verify(b, p, &items)
}

fn differential(p: ParamSet, seed: u64) {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = common::gpu_cases(20_000);
    let mut rng = StdRng::seed_from_u64(seed);
    let seeds = bytes(&mut rng, n.div_ceil(4) * 32);
    let (pks, sks) = keygen_both(&*gpu, p, &seeds);
    let mut cs = make_cases(&mut rng, p, &pks, &sks, n);
    let (mut g_sigs, g_st) = sign_with(&*gpu, p, &cs, false);
    let (c_sigs, c_st) = sign_with(&*cpu_backend(), p, &cs, false);
    let mut signed = 0;
    for i in 0..n {
        assert_eq!(g_st[i], c_st[i], "{} sign status {i}", p.name());
        if g_st[i].is_ok() {
            assert!(g_sigs[i] == c_sigs[i], "{} signature {i} differs", p.name());
            signed += 1;
        }
    }
    tamper(&mut rng, p, &mut cs, &mut g_sigs);
    let g_v = verify_with(&*gpu, p, &cs, &g_sigs);
    let c_v = verify_with(&*cpu_backend(), p, &cs, &g_sigs);
    let mut valid = 0;
    for i in 0..n {
        assert_eq!(g_v[i], c_v[i], "{} verify verdict {i}", p.name());
        valid += g_v[i].is_ok() as usize;
    }
    // About a quarter of the cases are left untampered (see `tamper`).
    assert!(
        valid > n / 6,
        "{}: too few valid signatures ({valid})",
        p.name()
    );
    println!(
        "{}: {} keys, {n} sign cases ({signed} signed), {n} verify cases ({valid} valid) identical",
        p.name(),
        seeds.len() / 32
    );
}

#[test]
fn gpu_matches_cpu_mldsa44() {
    differential(ParamSet::MlDsa44, 44);
}

#[test]
fn gpu_matches_cpu_mldsa65() {
    differential(ParamSet::MlDsa65, 65);
}

#[test]
fn gpu_matches_cpu_mldsa87() {
    differential(ParamSet::MlDsa87, 87);
}

/// Items that share key slices (key handles, a server's one key) against the CPU: each key is
/// expanded once per chunk on the GPU. Five keys, one of them malformed (BadKey for all its
/// items), interleaved with items that carry their own copy of a key.
#[test]
fn shared_keys_match_cpu() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(5);
    let n = common::gpu_cases(20_000).min(6_000);
    for p in ParamSet::EVERY {
        let (pl, sl) = (p.public_key_len(), p.secret_key_len());
        let seeds = bytes(&mut rng, 5 * 32);
        let (pks, mut sks) = reference::mldsa_keygen(&*cpu_backend(), p, &seeds);
        sks[4 * sl + 128] = 0xFF; // key 4: an s1 field above 2*eta
        let own: Vec<Vec<u8>> = (0..n).map(|i| sks[(i % 4) * sl..][..sl].to_vec()).collect();
        let msgs: Vec<Vec<u8>> = (0..n).map(|i| bytes(&mut rng, i % 70)).collect();
        let rnds: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
        let key_of = |i: usize| if i % 7 == 3 { None } else { Some(i % 5) };
        let items: Vec<SignItem<'_>> = (0..n)
            .map(|i| SignItem {
                sk: match key_of(i) {
                    Some(k) => &sks[k * sl..][..sl],
                    None => &own[i],
                },
                msg: Message::Pure {
                    ctx: &[],
                    msg: &msgs[i],
                },
                rnd: Some(&rnds[i]),
            })
            .collect();
        let lens = vec![p.signature_len(); n];
        let (mut g_sigs, g_st) = reference::sign(&*gpu, p, &items, &lens);
        let (c_sigs, c_st) = reference::sign(&*cpu_backend(), p, &items, &lens);
        for i in 0..n {
            assert_eq!(g_st[i], c_st[i], "{} sign status {i}", p.name());
            let bad = key_of(i) == Some(4);
            assert_eq!(g_st[i].is_err(), bad, "{} item {i}", p.name());
            assert!(g_sigs[i] == c_sigs[i], "{} signature {i} differs", p.name());
        }
        // Verify through shared public-key slices; every third signature damaged.
        for (i, s) in g_sigs.iter_mut().enumerate() {
            if i % 3 == 0 {
                let at = i % s.len();
                s[at] ^= 1;
            }
        }
        let items: Vec<VerifyItem<'_>> = (0..n)
            .map(|i| VerifyItem {
                pk: &pks[key_of(i).unwrap_or(i % 4) * pl..][..pl],
                msg: Message::Pure {
                    ctx: &[],
                    msg: &msgs[i],
                },
                sig: &g_sigs[i],
            })
            .collect();
        let g_v = reference::verify(&*gpu, p, &items);
        let c_v = reference::verify(&*cpu_backend(), p, &items);
        for i in 0..n {
            assert_eq!(g_v[i], c_v[i], "{} verify verdict {i}", p.name());
            let valid = key_of(i) != Some(4) && i % 3 != 0;
            assert_eq!(g_v[i].is_ok(), valid, "{} verify {i}", p.name());
        }
        println!(
            "{}: {n} items over 5 shared keys identical to the CPU",
            p.name()
        );
    }
}

#[test]
fn hedged_signatures_verify() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(7);
    for p in ParamSet::ALL {
        let seeds = bytes(&mut rng, 32 * 8);
        let (pks, sks) = keygen_both(&*gpu, p, &seeds);
        let cs: Vec<Case> = make_cases(&mut rng, p, &pks, &sks, 200)
            .into_iter()
            .filter(|c| c.sk.len() == p.secret_key_len() && c.ctx.len() < 256)
            .filter(|c| c.sig_len == p.signature_len() && c.form != 1)
            .collect();
        let (sigs, st) = sign_with(&*gpu, p, &cs, true);
        let ok: Vec<bool> = cs.iter().map(|c| c.sk[128] != 0xFF).collect();
        for (i, s) in st.iter().enumerate() {
            assert_eq!(s.is_ok(), ok[i], "{} hedged status {i}", p.name());
        }
        let v = verify_with(&*cpu_backend(), p, &cs, &sigs);
        for i in 0..cs.len() {
            assert_eq!(
                v[i].is_ok(),
                ok[i],
                "{} hedged signature {i} verifies",
                p.name()
            );
        }
        let (_, det_st) = sign_with(&*gpu, p, &cs, false);
        assert_eq!(det_st.len(), cs.len());
    }
}

// ---------------------------------------------------------------- ACVP

#[test]
fn acvp_vectors_on_gpu() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let mut counts = [0usize; 3];
    for dir in [
        "ML-DSA-keyGen-FIPS204",
        "v1.1.0.35-hotfix/ML-DSA-keyGen-FIPS204",
    ] {
        for (g, t, a) in acvp::cases(dir) {
            let p = param_set(s(&g, "parameterSet"));
            let seed = unhex(s(&t, "seed"));
            let mut pk = vec![0u8; p.public_key_len()];
            let mut sk = vec![0u8; p.secret_key_len()];
            let mut st = [Err(Error::Panic)];
            gpu.mldsa_keygen(p, Some(&seed), &mut pk, &mut sk, &mut st);
            assert_eq!(st[0], Ok(()));
            assert_eq!(hex::encode_upper(&pk), s(&a, "pk"), "{dir} {}", t["tcId"]);
            assert_eq!(hex::encode_upper(&sk), s(&a, "sk"), "{dir} {}", t["tcId"]);
            counts[0] += 1;
        }
    }
    let dir = "v1.1.0.35-hotfix/ML-DSA-sigGen-FIPS204";
    for (g, t, a) in acvp::cases(dir) {
        let p = param_set(s(&g, "parameterSet"));
        let rnd: [u8; 32] = if g["deterministic"].as_bool().expect("deterministic") {
            [0; 32]
        } else {
            unhex(s(&t, "rnd")).try_into().expect("rnd")
        };
        let (sk, msg) = (unhex(s(&t, "sk")), unhex(s(&t, "message")));
        let mut sig = vec![0u8; p.signature_len()];
        let mut st = [Err(Error::Panic)];
        let item = SignItem {
            sk: &sk,
            msg: Message::Internal(&msg),
            rnd: Some(&rnd),
        };
        gpu.mldsa_sign(p, &[item], &mut [&mut sig[..]], &mut st);
        assert_eq!(st[0], Ok(()));
        assert_eq!(
            hex::encode_upper(&sig),
            s(&a, "signature"),
            "{dir} {}",
            t["tcId"]
        );
        counts[1] += 1;
    }
    for dir in [
        "ML-DSA-sigVer-FIPS204",
        "v1.1.0.35-hotfix/ML-DSA-sigVer-FIPS204",
    ] {
        for (g, t, a) in acvp::cases(dir) {
            let p = param_set(s(&g, "parameterSet"));
            let pk = unhex(t["pk"].as_str().unwrap_or_else(|| s(&g, "pk")));
            let sig = unhex(s(&t, "signature"));
            let msg = t["message"].as_str().map(unhex).unwrap_or_default();
            let ctx = t["context"].as_str().map(unhex).unwrap_or_default();
            let mu = t["mu"].as_str().map(unhex).unwrap_or_default();
            let digest;
            let m = match (g["signatureInterface"].as_str(), g["preHash"].as_str()) {
                (Some("external"), Some("preHash")) => {
                    let (ph, d) = common::prehash(s(&t, "hashAlg"), &msg);
                    digest = d;
                    Message::PreHashed {
                        ctx: &ctx,
                        ph,
                        digest: &digest,
                    }
                }
                (Some("external"), _) => Message::Pure {
                    ctx: &ctx,
                    msg: &msg,
                },
                _ if g["externalMu"].as_bool() == Some(true) => Message::Mu(&mu),
                _ => Message::Internal(&msg),
            };
            let mut st = [Err(Error::Panic)];
            gpu.mldsa_verify(
                p,
                &[VerifyItem {
                    pk: &pk,
                    msg: m,
                    sig: &sig,
                }],
                &mut st,
            );
            let want = if a["testPassed"].as_bool().expect("testPassed") {
                Ok(())
            } else {
                Err(Error::VerifyFailed)
            };
            assert_eq!(st[0], want, "{dir} {}", t["tcId"]);
            counts[2] += 1;
        }
    }
    assert_eq!(
        counts,
        [150, 60, 225],
        "ACVP case counts (keyGen, sigGen, sigVer)"
    );
    println!(
        "ACVP on GPU: {} keyGen, {} sigGen, {} sigVer cases pass",
        counts[0], counts[1], counts[2]
    );
}
