//! The CPU vector paths (`pqgpu::simd`) give byte-identical keys, signatures and KEM outputs to
//! the portable code, on many random inputs, both paths in one process. (The ACVP and CTRU-Prime
//! vector tests run under both paths too: scripts/test.sh repeats them with PQGPU_CPU_SIMD=off.)
//! Switching the global setting while other tests run is harmless: both paths compute the same.

use pqgpu::{ctru, mldsa, simd};
use rand::{RngCore, SeedableRng};

fn both<T: PartialEq + std::fmt::Debug>(mut f: impl FnMut() -> T) -> T {
    simd::set_enabled(false);
    let portable = f();
    simd::set_enabled(true);
    let vector = f();
    assert_eq!(portable, vector, "portable vs {}", simd::active());
    vector
}

#[test]
fn mldsa_paths_agree() {
    println!("vector path on this CPU: {}", simd::active());
    let mut rng = rand::rngs::StdRng::seed_from_u64(15);
    for p in mldsa::ParamSet::ALL {
        for i in 0..25 {
            let mut xi = [0u8; 32];
            rng.fill_bytes(&mut xi);
            let (pk, sk) = both(|| {
                let mut pk = vec![0u8; p.public_key_len()];
                let mut sk = vec![0u8; p.secret_key_len()];
                mldsa::keygen_internal(p, &xi, &mut pk, &mut sk).unwrap();
                (pk, sk)
            });
            let mut msg = vec![0u8; i * 7];
            rng.fill_bytes(&mut msg);
            let mut rnd = [0u8; 32];
            rng.fill_bytes(&mut rnd);
            let ctx = [i as u8; 3];
            let forms = [
                mldsa::Message::Pure {
                    ctx: &ctx,
                    msg: &msg,
                },
                mldsa::Message::Internal(&msg),
            ];
            for m in &forms {
                let sig = both(|| {
                    let mut sig = vec![0u8; p.signature_len()];
                    mldsa::sign(p, &sk, m, Some(&rnd), &mut sig).unwrap();
                    sig
                });
                both(|| mldsa::verify(p, &pk, m, &sig).is_ok());
                let mut bad = sig.clone();
                let n = bad.len();
                bad[i % n] ^= 1;
                assert!(!both(|| mldsa::verify(p, &pk, m, &bad).is_ok()));
            }
        }
    }
}

#[test]
fn ctru_paths_agree() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    for p in ctru::ParamSet::ALL {
        for _ in 0..5 {
            let mut seed = [0u8; 64];
            rng.fill_bytes(&mut seed);
            let (pk, sk) = both(|| {
                let mut pk = vec![0u8; p.public_key_len()];
                let mut sk = vec![0u8; p.secret_key_len()];
                ctru::keygen_derand(p, &seed, &mut pk, &mut sk).unwrap();
                (pk, sk)
            });
            let mut e = [0u8; 32];
            rng.fill_bytes(&mut e);
            let (ct, ss) = both(|| {
                let mut ct = vec![0u8; p.ciphertext_len()];
                let mut ss = vec![0u8; p.shared_secret_len()];
                ctru::encaps_derand(p, &pk, &e, &mut ct, &mut ss).unwrap();
                (ct, ss)
            });
            let got = both(|| {
                let mut ss2 = vec![0u8; p.shared_secret_len()];
                ctru::decaps(p, &sk, &ct, &mut ss2).unwrap();
                ss2
            });
            assert_eq!(got, ss);
            // Decryption of arbitrary ciphertexts (implicit rejection): every coefficient value
            // in [0, 2^bits), and all of them at the top, go through the product c * f.
            let mut bad = vec![0u8; p.ciphertext_len()];
            rng.fill_bytes(&mut bad);
            for ct in [bad, vec![0xff; p.ciphertext_len()]] {
                both(|| {
                    let mut ss2 = vec![0u8; p.shared_secret_len()];
                    ctru::decaps(p, &sk, &ct, &mut ss2).unwrap();
                    ss2
                });
            }
        }
    }
}
