//! ML-KEM's decoders through the public calls: an encapsulation key through encapsulation (the
//! FIPS 203 §7.2 modulus check, recomputed here from the 12-bit fields), a decapsulation key
//! through decapsulation of a valid ciphertext (the §7.3 hash check), and a ciphertext through
//! decapsulation with a valid key (implicit rejection: any right-length ciphertext gives Ok).
//! The first byte picks the object; the rest is shaped by `common::mutate` (which picks the set).
#![no_main]
#[path = "common.rs"]
mod common;
use common::*;
use libfuzzer_sys::fuzz_target;
#[allow(unused_imports)]
use pqgpu::{ctru, mldsa, Error};
use pqgpu::mlkem::{self, ParamSet};
use std::sync::OnceLock;

const SETS: [ParamSet; 3] = [ParamSet::MlKem512, ParamSet::MlKem768, ParamSet::MlKem1024];

struct Fixture {
    ek: Vec<u8>,
    dk: Vec<u8>,
    ct: Vec<u8>,
}

static FIX: OnceLock<Vec<Fixture>> = OnceLock::new();

fn fixture(p: ParamSet) -> Fixture {
    let (mut ek, mut dk) = (vec![0u8; p.encaps_key_len()], vec![0u8; p.decaps_key_len()]);
    mlkem::keygen_internal(p, &[9; 32], &[10; 32], &mut ek, &mut dk).unwrap();
    let (mut ct, mut ss) = (vec![0u8; p.ciphertext_len()], [0u8; 32]);
    mlkem::encaps_internal(p, &ek, &[11; 32], &mut ct, &mut ss).unwrap();
    Fixture { ek, dk, ct }
}

/// Every 12-bit field of ByteEncode12(t-hat) below q = 3329.
fn coefficients_in_range(p: ParamSet, ek: &[u8]) -> bool {
    ek[..384 * p.k()].chunks_exact(3).all(|b| {
        let c0 = u16::from(b[0]) | (u16::from(b[1] & 0x0F) << 8);
        let c1 = u16::from(b[1] >> 4) | (u16::from(b[2]) << 4);
        c0 < 3329 && c1 < 3329
    })
}

fuzz_target!(|data: &[u8]| {
    let fix = FIX.get_or_init(|| SETS.iter().map(|&p| fixture(p)).collect());
    let Some((&which, data)) = data.split_first() else { return };
    let mut ss = [0u8; 32];
    match which % 3 {
        0 => {
            let Some((set, ek)) = mutate(data, |s| fix[s].ek.clone()) else { return };
            let p = SETS[set];
            let mut ct = vec![0xAAu8; p.ciphertext_len()];
            let r = mlkem::encaps_internal(p, &ek, &[5; 32], &mut ct, &mut ss);
            if ek.len() != p.encaps_key_len() {
                assert_eq!(r, Err(Error::BadLength));
            } else if coefficients_in_range(p, &ek) {
                assert_eq!(r, Ok(()));
                assert_eq!(mlkem::check_encaps_key(p, &ek), Ok(()));
            } else {
                assert_eq!(r, Err(Error::BadKey));
                assert_eq!(mlkem::check_encaps_key(p, &ek), Err(Error::BadKey));
            }
            if r.is_err() {
                assert!(ct.iter().all(|&b| b == 0xAA) && ss == [0; 32], "nothing written");
            }
        }
        1 => {
            let Some((set, dk)) = mutate(data, |s| fix[s].dk.clone()) else { return };
            let p = SETS[set];
            let r = mlkem::decaps(p, &dk, &fix[set].ct, &mut ss);
            match r {
                Ok(()) => assert_eq!(mlkem::check_decaps_key(p, &dk), Ok(())),
                Err(e) if dk.len() != p.decaps_key_len() => assert_eq!(e, Error::BadLength),
                Err(e) => {
                    assert_eq!(e, Error::BadKey);
                    assert_eq!(mlkem::check_decaps_key(p, &dk), Err(Error::BadKey));
                    assert_eq!(ss, [0; 32], "nothing written");
                }
            }
        }
        _ => {
            let Some((set, ct)) = mutate(data, |s| fix[s].ct.clone()) else { return };
            let p = SETS[set];
            let r = mlkem::decaps(p, &fix[set].dk, &ct, &mut ss);
            if ct.len() == p.ciphertext_len() {
                assert_eq!(r, Ok(()), "implicit rejection never fails");
            } else {
                assert_eq!(r, Err(Error::BadLength));
            }
        }
    }
});
