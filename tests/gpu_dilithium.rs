//! GPU Dilithium round 3 (v3.1) against the reference KAT and the CPU ground truth: every KAT
//! record through the GPU backend, then random cases per level (keys from the same seeds,
//! deterministic and given-rnd signatures byte for byte, FIPS 204-only message forms refused
//! alike, verify verdicts on valid, tampered and malformed inputs), and hedged signatures.
//! Skips (with the reason printed) when no GPU is usable, as on CI. `PQGPU_GPU_CASES` sets the
//! random cases per level (default 20,000).

mod common;

use common::bytes;
use common::r3kat;
use common::reference::{self, mldsa_keygen as keygen, mldsa_keygen_both};
use pqgpu::backend::{cpu_backend, Backend, SignItem, VerifyItem};
use pqgpu::mldsa::{Message, ParamSet, PreHash};
use pqgpu::{Error, Status};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One case, owning its data. `form`: 0 pure with an empty context, 1 internal, 2 a context,
/// 3 HashML-DSA, 4 external mu (2-4 must be `InvalidArgument` on both backends).
struct Case {
    sk: Vec<u8>,
    pk: Vec<u8>,
    form: u8,
    msg: Vec<u8>,
    rnd: [u8; 32],
    sig_len: usize,
}

impl Case {
    fn message(&self) -> Message<'_> {
        match self.form {
            0 => Message::Pure {
                ctx: &[],
                msg: &self.msg,
            },
            1 => Message::Internal(&self.msg),
            2 => Message::Pure {
                ctx: b"context",
                msg: &self.msg,
            },
            3 => Message::PreHashed {
                ctx: &[],
                ph: PreHash::Sha2_256,
                digest: &self.msg[..32.min(self.msg.len())],
            },
            _ => Message::Mu(&self.msg[..64.min(self.msg.len())]),
        }
    }
}

fn make_cases(rng: &mut StdRng, p: ParamSet, pks: &[u8], sks: &[u8], n: usize) -> Vec<Case> {
    let (pl, sl) = (p.public_key_len(), p.secret_key_len());
    let keys = pks.len() / pl;
    (0..n)
        .map(|i| {
            let key = i % keys;
            let form = match rng.gen_range(0..100) {
                0..=79 => 0,
                80..=91 => 1,
                f => 2 + f % 3,
            };
            let len = if form >= 3 { 64 } else { rng.gen_range(0..300) };
            let mut c = Case {
                sk: sks[key * sl..(key + 1) * sl].to_vec(),
                pk: pks[key * pl..(key + 1) * pl].to_vec(),
                form,
                msg: bytes(rng, len),
                rnd: if rng.gen() { [0; 32] } else { rng.gen() },
                sig_len: p.signature_len(),
            };
            // Malformed inputs, about 3 %.
            match rng.gen_range(0..100) {
                // sk = rho || K || tr (32 bytes in round 3) || s1 ...: an s1 field above 2 eta.
                0 => c.sk[96] = 0xFF,
                1 => c.sk.truncate(sl - 1),
                2 => c.sig_len -= 1,
                _ => {}
            }
            c
        })
        .collect()
}

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

fn tamper(rng: &mut StdRng, p: ParamSet, cases: &mut [Case], sigs: &mut [Vec<u8>]) {
    let hint_at = p.c_tilde_len() + p.l() * 32 * (1 + p.gamma1_bits() as usize);
    for (c, s) in cases.iter_mut().zip(sigs.iter_mut()) {
        if s.len() != p.signature_len() {
            continue;
        }
        match rng.gen_range(0..10) {
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
            4 => s[hint_at + p.omega()] = 0xFF,
            5 => s[32..40].fill(0xFF), // z out of range (c~ is 32 bytes)
            _ => {}
        }
    }
}

/// Every KAT record: keys from the DRBG seeds, deterministic signatures, verification.
fn kat(p: ParamSet) {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let recs = r3kat::records(p);
    let seeds: Vec<u8> = recs.iter().flat_map(|r| r.xi()).collect();
    let (pks, sks) = keygen(&*gpu, p, &seeds);
    let (pl, sl) = (p.public_key_len(), p.secret_key_len());
    let cs: Vec<Case> = recs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            assert!(
                pks[i * pl..(i + 1) * pl] == r.pk[..],
                "{} pk {}",
                p.name(),
                r.count
            );
            assert!(
                sks[i * sl..(i + 1) * sl] == r.sk[..],
                "{} sk {}",
                p.name(),
                r.count
            );
            Case {
                sk: r.sk.clone(),
                pk: r.pk.clone(),
                form: 0,
                msg: r.msg.clone(),
                rnd: [0; 32],
                sig_len: p.signature_len(),
            }
        })
        .collect();
    let (sigs, st) = sign_with(&*gpu, p, &cs, false);
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(st[i], Ok(()));
        assert!(sigs[i] == r.sig(p), "{} sig {}", p.name(), r.count);
    }
    let v = verify_with(&*gpu, p, &cs, &sigs);
    assert!(v.iter().all(|s| s.is_ok()), "{} KAT verify", p.name());
    println!(
        "{}: all {} KAT records identical on the GPU",
        p.name(),
        recs.len()
    );
}

fn differential(p: ParamSet, seed: u64) {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = common::gpu_cases(20_000);
    let mut rng = StdRng::seed_from_u64(seed);
    let seeds = bytes(&mut rng, n.div_ceil(4) * 32);
    let (pks, sks) = mldsa_keygen_both(&*gpu, p, &seeds);
    let mut cs = make_cases(&mut rng, p, &pks, &sks, n);
    let (mut g_sigs, g_st) = sign_with(&*gpu, p, &cs, false);
    let (c_sigs, c_st) = sign_with(&*cpu_backend(), p, &cs, false);
    let (mut signed, mut refused) = (0, 0);
    for i in 0..n {
        assert_eq!(g_st[i], c_st[i], "{} sign status {i}", p.name());
        if g_st[i].is_ok() {
            assert!(g_sigs[i] == c_sigs[i], "{} signature {i} differs", p.name());
            signed += 1;
        }
        refused += (g_st[i] == Err(Error::InvalidArgument)) as usize;
    }
    assert!(
        refused > n / 30,
        "{}: FIPS 204-only forms refused",
        p.name()
    );
    tamper(&mut rng, p, &mut cs, &mut g_sigs);
    let g_v = verify_with(&*gpu, p, &cs, &g_sigs);
    let c_v = verify_with(&*cpu_backend(), p, &cs, &g_sigs);
    let mut valid = 0;
    for i in 0..n {
        assert_eq!(g_v[i], c_v[i], "{} verify verdict {i}", p.name());
        valid += g_v[i].is_ok() as usize;
    }
    assert!(
        valid > n / 4,
        "{}: too few valid signatures ({valid})",
        p.name()
    );
    println!(
        "{}: {} keys, {n} sign cases ({signed} signed, {refused} refused), {n} verify cases \
         ({valid} valid) identical",
        p.name(),
        seeds.len() / 32
    );
}

#[test]
fn gpu_kat_dilithium2() {
    kat(ParamSet::Dilithium2);
}

#[test]
fn gpu_kat_dilithium3() {
    kat(ParamSet::Dilithium3);
}

#[test]
fn gpu_kat_dilithium5() {
    kat(ParamSet::Dilithium5);
}

#[test]
fn gpu_matches_cpu_dilithium2() {
    differential(ParamSet::Dilithium2, 2);
}

#[test]
fn gpu_matches_cpu_dilithium3() {
    differential(ParamSet::Dilithium3, 3);
}

#[test]
fn gpu_matches_cpu_dilithium5() {
    differential(ParamSet::Dilithium5, 5);
}

/// Hedged (fresh randomness) GPU signatures verify on the CPU.
#[test]
fn hedged_signatures_verify() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(9);
    for p in ParamSet::ROUND3 {
        let seeds = bytes(&mut rng, 32 * 8);
        let (pks, sks) = keygen(&*gpu, p, &seeds);
        let cs: Vec<Case> = make_cases(&mut rng, p, &pks, &sks, 300)
            .into_iter()
            .filter(|c| c.form < 2 && c.sk.len() == p.secret_key_len())
            .filter(|c| c.sig_len == p.signature_len() && c.sk[96] != 0xFF)
            .collect();
        let (sigs, st) = sign_with(&*gpu, p, &cs, true);
        assert!(st.iter().all(|s| s.is_ok()), "{} hedged statuses", p.name());
        let v = verify_with(&*cpu_backend(), p, &cs, &sigs);
        assert!(v.iter().all(|s| s.is_ok()), "{} hedged verify", p.name());
        let (det, _) = sign_with(&*gpu, p, &cs, false);
        let differ = det.iter().zip(&sigs).filter(|(a, b)| a != b).count();
        assert!(
            differ > cs.len() / 3,
            "{}: hedged equal to given-rnd",
            p.name()
        );
    }
}
