//! Differential tests against RustCrypto's independent `ml-kem` crate (a dev-dependency; the
//! library ships libcrux-ml-kem): the same (d, z) must give the same keys, the same m the same
//! ciphertext and key, each side must decapsulate the other's ciphertexts, modified and random
//! ciphertexts must give the same implicit-rejection key on both sides, and both must refuse
//! the same malformed keys.

use ml_kem::array::Array;
#[allow(deprecated)] // the expanded dk encoding is exactly what the contract's keys are
use ml_kem::ExpandedKeyEncoding;
use ml_kem::{Decapsulate, DecapsulationKey, EncapsulationKey, KeyExport};
use pqgpu::mlkem::{self, ParamSet};
use pqgpu::Error;
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

/// Iterations per parameter set.
const CASES: usize = 300;

/// The test for one parameter set: `ml-kem` names its sets by types whose trait bounds it does
/// not export, so each set gets its own copy.
macro_rules! differential_for {
    ($module:ident, $P:ty) => {
        mod $module {
            use super::*;
            type P = $P;

            fn theirs_ek_ok(ek: &[u8]) -> bool {
                match Array::try_from(ek) {
                    Ok(a) => EncapsulationKey::<P>::new(&a).is_ok(),
                    Err(_) => false,
                }
            }

            #[allow(deprecated)]
            fn theirs_decaps(dk: &[u8], ct: &[u8]) -> Option<[u8; 32]> {
                let dk =
                    DecapsulationKey::<P>::from_expanded_bytes(&Array::try_from(dk).ok()?).ok()?;
                let ct = Array::try_from(ct).expect("ciphertext length");
                Some(dk.decapsulate(&ct).into())
            }

            #[allow(deprecated)]
            pub fn differential(p: ParamSet, rng_seed: u64) {
                let mut rng = StdRng::seed_from_u64(rng_seed);
                let mut ek = vec![0u8; p.encaps_key_len()];
                let mut dk = vec![0u8; p.decaps_key_len()];
                let mut ct = vec![0u8; p.ciphertext_len()];
                let (mut ss, mut ss2) = ([0u8; 32], [0u8; 32]);
                for case in 0..CASES {
                    let mut seed = [0u8; 64];
                    rng.fill_bytes(&mut seed);
                    let (d, z): ([u8; 32], [u8; 32]) = (
                        seed[..32].try_into().unwrap(),
                        seed[32..].try_into().unwrap(),
                    );
                    mlkem::keygen_internal(p, &d, &z, &mut ek, &mut dk).unwrap();
                    let their_dk = DecapsulationKey::<P>::from_seed(seed.into());
                    assert_eq!(
                        &ek[..],
                        &their_dk.encapsulation_key().to_bytes()[..],
                        "case {case} ek"
                    );
                    assert_eq!(&dk[..], &their_dk.to_expanded_bytes()[..], "case {case} dk");

                    let mut m = [0u8; 32];
                    rng.fill_bytes(&mut m);
                    mlkem::encaps_internal(p, &ek, &m, &mut ct, &mut ss).unwrap();
                    let (their_ct, their_ss) = their_dk
                        .encapsulation_key()
                        .encapsulate_deterministic(&m.into());
                    assert_eq!(&ct[..], &their_ct[..], "case {case} ct");
                    assert_eq!(&ss[..], &their_ss[..], "case {case} ss");
                    mlkem::decaps(p, &dk, &ct, &mut ss2).unwrap();
                    assert_eq!(ss, ss2, "case {case} decaps");

                    // Their encapsulation under fresh m' decapsulates on our side.
                    rng.fill_bytes(&mut m);
                    let (their_ct, their_ss) = their_dk
                        .encapsulation_key()
                        .encapsulate_deterministic(&m.into());
                    mlkem::decaps(p, &dk, &their_ct, &mut ss2).unwrap();
                    assert_eq!(&ss2[..], &their_ss[..], "case {case} cross decaps");

                    // A modified ciphertext: implicit rejection on both sides, the same K-bar.
                    let mut bad = ct.clone();
                    let at = rng.gen_range(0..bad.len());
                    bad[at] ^= 1 << rng.gen_range(0..8);
                    mlkem::decaps(p, &dk, &bad, &mut ss2).unwrap();
                    assert_ne!(ss, ss2, "case {case}: modified ciphertext accepted");
                    assert_eq!(Some(ss2), theirs_decaps(&dk, &bad), "case {case} K-bar");
                    // A random ciphertext.
                    rng.fill_bytes(&mut bad);
                    mlkem::decaps(p, &dk, &bad, &mut ss2).unwrap();
                    assert_eq!(Some(ss2), theirs_decaps(&dk, &bad), "case {case} random ct");

                    // A coefficient pushed to >= q: both refuse the encapsulation key.
                    let mut bad_ek = ek.clone();
                    let pair = rng.gen_range(0..128 * p.k()); // 3 bytes per two coefficients
                    bad_ek[3 * pair + 2] |= 0xF0; // the pair's second coefficient >= 3840
                    assert_eq!(mlkem::check_encaps_key(p, &bad_ek), Err(Error::BadKey));
                    assert!(!theirs_ek_ok(&bad_ek), "case {case}: theirs took a bad ek");
                    // Random bytes as a key: the same verdict on both sides.
                    rng.fill_bytes(&mut bad_ek);
                    assert_eq!(
                        mlkem::check_encaps_key(p, &bad_ek).is_ok(),
                        theirs_ek_ok(&bad_ek),
                        "case {case} random ek"
                    );

                    // A decapsulation key whose H(ek) is wrong: both refuse it.
                    let mut bad_dk = dk.clone();
                    let h_at = 768 * p.k() + 32 + rng.gen_range(0..32);
                    bad_dk[h_at] ^= 1 << rng.gen_range(0..8);
                    assert_eq!(mlkem::check_decaps_key(p, &bad_dk), Err(Error::BadKey));
                    assert_eq!(mlkem::decaps(p, &bad_dk, &ct, &mut ss2), Err(Error::BadKey));
                    assert_eq!(
                        theirs_decaps(&bad_dk, &ct),
                        None,
                        "case {case}: theirs took a bad dk"
                    );
                }
            }
        }
    };
}

differential_for!(set512, ml_kem::MlKem512);
differential_for!(set768, ml_kem::MlKem768);
differential_for!(set1024, ml_kem::MlKem1024);

#[test]
fn ml_kem_512() {
    set512::differential(ParamSet::MlKem512, 512);
}

#[test]
fn ml_kem_768() {
    set768::differential(ParamSet::MlKem768, 768);
}

#[test]
fn ml_kem_1024() {
    set1024::differential(ParamSet::MlKem1024, 1024);
}
