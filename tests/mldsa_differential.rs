//! Differential tests against RustCrypto's independent `ml-dsa` crate: the same seeds must give
//! the same keys, the same (rnd, message) the same signatures, each side must accept the other's
//! signatures, and a tampered signature must fail on both sides.

use ml_dsa::{ExpandedSigningKey, MlDsaParams, Signature, VerifyingKey};
use pqgpu::mldsa::{self, Message, ParamSet, PreHash};
use pqgpu::Error;
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

/// Iterations per parameter set.
const CASES: usize = 1000;

/// Does `ml-dsa` accept `sig` for M' (formed by the caller)?
fn theirs_accepts_internal<P: MlDsaParams>(
    vk: &VerifyingKey<P>,
    m_prime: &[u8],
    sig: &[u8],
) -> bool {
    match Signature::<P>::try_from(sig) {
        Ok(s) => vk.verify_internal(m_prime, &s),
        Err(_) => false,
    }
}

fn random_bytes(rng: &mut StdRng, max_len: usize) -> Vec<u8> {
    let len = rng.gen_range(0..=max_len);
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

#[allow(deprecated)] // to_expanded: the expanded sk encoding is exactly what we compare
fn differential<P: MlDsaParams>(p: ParamSet, rng_seed: u64) {
    let mut rng = StdRng::seed_from_u64(rng_seed);
    let (mut pk, mut sk) = (vec![0u8; p.public_key_len()], vec![0u8; p.secret_key_len()]);
    let mut sig = vec![0u8; p.signature_len()];
    for case in 0..CASES {
        // KeyGen_internal from the same seed.
        let mut xi = [0u8; 32];
        rng.fill_bytes(&mut xi);
        mldsa::keygen_internal(p, &xi, &mut pk, &mut sk).unwrap();
        let their_sk = ExpandedSigningKey::<P>::from_seed(&xi.into());
        let their_vk = their_sk.verifying_key();
        assert_eq!(
            pk.as_slice(),
            their_vk.encode().as_slice(),
            "{p:?} case {case}: pk"
        );
        assert_eq!(
            sk.as_slice(),
            their_sk.to_expanded().as_slice(),
            "{p:?} case {case}: sk"
        );

        let msg = random_bytes(&mut rng, 256);
        let ctx = if rng.gen_bool(0.3) {
            Vec::new()
        } else {
            random_bytes(&mut rng, 255)
        };
        let pure = Message::Pure {
            ctx: &ctx,
            msg: &msg,
        };
        let m_prime = [&[0u8, ctx.len() as u8][..], &ctx, &msg].concat();

        // Deterministic ML-DSA.Sign.
        mldsa::sign(p, &sk, &pure, Some(&[0; 32]), &mut sig).unwrap();
        let their_sig = their_sk.sign_deterministic(&msg, &ctx).unwrap().encode();
        assert_eq!(
            sig.as_slice(),
            their_sig.as_slice(),
            "{p:?} case {case}: deterministic sig"
        );
        assert_eq!(mldsa::verify(p, &pk, &pure, &their_sig), Ok(()));

        // Sign_internal with a given rnd (the hedged path with its randomness fixed).
        let mut rnd = [0u8; 32];
        rng.fill_bytes(&mut rnd);
        mldsa::sign(p, &sk, &pure, Some(&rnd), &mut sig).unwrap();
        let their_sig = their_sk.sign_internal(&[&m_prime], &rnd.into()).encode();
        assert_eq!(
            sig.as_slice(),
            their_sig.as_slice(),
            "{p:?} case {case}: sig with rnd"
        );
        let s = Signature::<P>::try_from(sig.as_slice()).expect("ml-dsa decodes our signature");
        assert!(
            their_vk.verify_with_context(&msg, &ctx, &s),
            "{p:?} case {case}: theirs rejects ours"
        );

        // External mu and HashML-DSA (as Sign_internal on the HashML-DSA M') on a sample of cases.
        if case % 4 == 0 {
            let mut mu = [0u8; 64];
            rng.fill_bytes(&mut mu);
            mldsa::sign(p, &sk, &Message::Mu(&mu), Some(&[0; 32]), &mut sig).unwrap();
            let their_sig = their_sk.sign_mu_deterministic(&mu.into()).encode();
            assert_eq!(
                sig.as_slice(),
                their_sig.as_slice(),
                "{p:?} case {case}: external mu"
            );
            assert!(their_vk.verify_mu(
                &mu.into(),
                &Signature::<P>::try_from(sig.as_slice()).unwrap()
            ));
            assert_eq!(mldsa::verify(p, &pk, &Message::Mu(&mu), &sig), Ok(()));

            let ph = PreHash::ALL[case / 4 % 12];
            let mut digest = vec![0u8; ph.digest_len()];
            rng.fill_bytes(&mut digest);
            let hashed = Message::PreHashed {
                ctx: &ctx,
                ph,
                digest: &digest,
            };
            let hm_prime = [&[1u8, ctx.len() as u8][..], &ctx, &ph.oid_der(), &digest].concat();
            mldsa::sign(p, &sk, &hashed, Some(&rnd), &mut sig).unwrap();
            let their_sig = their_sk.sign_internal(&[&hm_prime], &rnd.into()).encode();
            assert_eq!(
                sig.as_slice(),
                their_sig.as_slice(),
                "{p:?} case {case}: HashML-DSA {ph:?}"
            );
            assert!(theirs_accepts_internal(&their_vk, &hm_prime, &sig));
            assert_eq!(mldsa::verify(p, &pk, &hashed, &sig), Ok(()));
            assert_eq!(
                mldsa::verify(p, &pk, &Message::Internal(&hm_prime), &sig),
                Ok(())
            );
        }

        // Hedged signing: fresh randomness, still accepted by both.
        mldsa::sign(p, &sk, &pure, None, &mut sig).unwrap();
        assert_eq!(mldsa::verify(p, &pk, &pure, &sig), Ok(()));
        assert!(theirs_accepts_internal(&their_vk, &m_prime, &sig));

        // A random bit flip fails on both sides; so does a different message.
        let bit = rng.gen_range(0..sig.len() * 8);
        sig[bit / 8] ^= 1 << (bit % 8);
        assert_eq!(
            mldsa::verify(p, &pk, &pure, &sig),
            Err(Error::VerifyFailed),
            "{p:?} case {case}: bit {bit}"
        );
        assert!(
            !theirs_accepts_internal(&their_vk, &m_prime, &sig),
            "{p:?} case {case}: bit {bit}"
        );
        sig[bit / 8] ^= 1 << (bit % 8);
        let other = [&msg[..], b"x"].concat();
        let other_msg = Message::Pure {
            ctx: &ctx,
            msg: &other,
        };
        assert_eq!(
            mldsa::verify(p, &pk, &other_msg, &sig),
            Err(Error::VerifyFailed)
        );
        assert!(!their_vk.verify_with_context(
            &other,
            &ctx,
            &Signature::<P>::try_from(sig.as_slice()).unwrap()
        ));
    }
}

#[test]
fn differential_ml_dsa_44() {
    differential::<ml_dsa::MlDsa44>(ParamSet::MlDsa44, 44);
}

#[test]
fn differential_ml_dsa_65() {
    differential::<ml_dsa::MlDsa65>(ParamSet::MlDsa65, 65);
}

#[test]
fn differential_ml_dsa_87() {
    differential::<ml_dsa::MlDsa87>(ParamSet::MlDsa87, 87);
}
