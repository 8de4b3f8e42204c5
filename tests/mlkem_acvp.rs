//! NIST ACVP ML-KEM vectors (FIPS 203; layouts in `shared/vectors/README.md`): every case of the
//! keyGen and encapDecap sets, the encapsulation-key and decapsulation-key check groups included,
//! with the exact number of cases asserted so that missing vectors fail.

mod common;

use common::acvp::{cases, load, s};
use common::unhex;
use pqgpu::mlkem::{self, ParamSet};
use pqgpu::Error;
use std::collections::HashMap;

fn param_set(name: &str) -> ParamSet {
    match name {
        "ML-KEM-512" => ParamSet::MlKem512,
        "ML-KEM-768" => ParamSet::MlKem768,
        "ML-KEM-1024" => ParamSet::MlKem1024,
        other => panic!("unknown parameter set {other}"),
    }
}

fn arr32(hex: &str) -> [u8; 32] {
    unhex(hex).try_into().expect("32 bytes")
}

const ENCAP_DECAP: &str = "ML-KEM-encapDecap-FIPS203";

#[test]
fn keygen() {
    let mut n = 0;
    for (g, t, a) in cases("ML-KEM-keyGen-FIPS203") {
        let p = param_set(s(&g, "parameterSet"));
        let (d, z) = (arr32(s(&t, "d")), arr32(s(&t, "z")));
        let mut ek = vec![0u8; p.encaps_key_len()];
        let mut dk = vec![0u8; p.decaps_key_len()];
        mlkem::keygen_internal(p, &d, &z, &mut ek, &mut dk).expect("keygen");
        assert_eq!(hex::encode_upper(&ek), s(&a, "ek"), "tcId {} ek", t["tcId"]);
        assert_eq!(hex::encode_upper(&dk), s(&a, "dk"), "tcId {} dk", t["tcId"]);
        // Generated keys pass both checks.
        mlkem::check_encaps_key(p, &ek).expect("ek check");
        mlkem::check_decaps_key(p, &dk).expect("dk check");
        n += 1;
    }
    assert_eq!(n, 75);
}

/// Counts per `function` of the encapDecap set.
fn encap_decap_counts() -> HashMap<String, usize> {
    // The decapsulationKeyCheck prompts carry only tcId; their dk is in internalProjection.
    let projection = load(&format!("{ENCAP_DECAP}/internalProjection.json"));
    let mut dk_of = HashMap::new();
    for g in projection["testGroups"].as_array().expect("testGroups") {
        for t in g["tests"].as_array().expect("tests") {
            if let Some(dk) = t["dk"].as_str() {
                dk_of.insert(t["tcId"].as_u64().expect("tcId"), dk.to_string());
            }
        }
    }
    let mut counts = HashMap::new();
    for (g, t, a) in cases(ENCAP_DECAP) {
        let p = param_set(s(&g, "parameterSet"));
        let function = s(&g, "function");
        let id = t["tcId"].as_u64().expect("tcId");
        let mut ss = [0u8; 32];
        match function {
            "encapsulation" => {
                let mut ct = vec![0u8; p.ciphertext_len()];
                let ek = unhex(s(&t, "ek"));
                mlkem::encaps_internal(p, &ek, &arr32(s(&t, "m")), &mut ct, &mut ss)
                    .expect("encaps");
                assert_eq!(hex::encode_upper(&ct), s(&a, "c"), "tcId {id} c");
                assert_eq!(hex::encode_upper(ss), s(&a, "k"), "tcId {id} k");
            }
            "decapsulation" => {
                let dk = match s(&g, "keyFormat") {
                    "expanded" => unhex(s(&t, "dk")),
                    "seed" => {
                        let mut ek = vec![0u8; p.encaps_key_len()];
                        let mut dk = vec![0u8; p.decaps_key_len()];
                        let (d, z) = (arr32(s(&t, "d")), arr32(s(&t, "z")));
                        mlkem::keygen_internal(p, &d, &z, &mut ek, &mut dk).expect("keygen");
                        dk
                    }
                    other => panic!("keyFormat {other}"),
                };
                // "modified ciphertext" cases expect K-bar, with status Ok.
                mlkem::decaps(p, &dk, &unhex(s(&t, "c")), &mut ss).expect("decaps");
                assert_eq!(hex::encode_upper(ss), s(&a, "k"), "tcId {id} k");
            }
            "encapsulationKeyCheck" => {
                let passed = a["testPassed"].as_bool().expect("testPassed");
                let got = mlkem::check_encaps_key(p, &unhex(s(&t, "ek")));
                assert_eq!(got.is_ok(), passed, "tcId {id}: {got:?}");
                if !passed {
                    // The invalid keys of this set are also over-long (README): BadLength.
                    assert_eq!(got, Err(Error::BadLength), "tcId {id}");
                }
            }
            "decapsulationKeyCheck" => {
                let passed = a["testPassed"].as_bool().expect("testPassed");
                let dk = unhex(dk_of.get(&id).expect("dk in internalProjection"));
                let got = mlkem::check_decaps_key(p, &dk);
                assert_eq!(got.is_ok(), passed, "tcId {id}: {got:?}");
                if !passed {
                    assert_eq!(got, Err(Error::BadKey), "tcId {id}");
                    // Decapsulation with that key is refused, nothing written.
                    let ct = vec![0u8; p.ciphertext_len()];
                    let mut ss = [0xA5u8; 32];
                    assert_eq!(mlkem::decaps(p, &dk, &ct, &mut ss), Err(Error::BadKey));
                    assert_eq!(ss, [0xA5u8; 32]);
                }
            }
            other => panic!("unknown function {other}"),
        }
        *counts.entry(function.to_string()).or_insert(0) += 1;
    }
    counts
}

#[test]
fn encap_decap_with_key_checks() {
    let counts = encap_decap_counts();
    assert_eq!(counts["encapsulation"], 75);
    assert_eq!(counts["decapsulation"], 60);
    assert_eq!(counts["encapsulationKeyCheck"], 30);
    assert_eq!(counts["decapsulationKeyCheck"], 30);
}

/// The ACVP invalid encapsulation keys are also too long, so the modulus check of §7.2 is
/// tested here on its own: a right-length key of an ACVP case with one 12-bit coefficient set
/// to q = 3329 (or 4095) is `BadKey` for the check and for encapsulation, and nothing is written.
#[test]
fn modulus_check_in_isolation() {
    let mut n = 0;
    for (g, t, _) in cases(ENCAP_DECAP) {
        if s(&g, "function") != "encapsulation" {
            continue;
        }
        let p = param_set(s(&g, "parameterSet"));
        let ek = unhex(s(&t, "ek"));
        let last_coeff = 384 * p.k() - 2; // coefficient pairs are 3 bytes; the last pair's high half
        for (at, value) in [(0usize, 3329u16), (last_coeff, 4095)] {
            let mut bad = ek.clone();
            if at == 0 {
                // First coefficient: the low 12 bits of bytes 0..2.
                bad[0] = (value & 0xFF) as u8;
                bad[1] = (bad[1] & 0xF0) | (value >> 8) as u8;
            } else {
                // Second coefficient of the last pair: the high 12 bits of its 3 bytes.
                bad[at - 1] = (bad[at - 1] & 0x0F) | ((value & 0x0F) << 4) as u8;
                bad[at] = (value >> 4) as u8;
            }
            assert_eq!(mlkem::check_encaps_key(p, &bad), Err(Error::BadKey));
            let mut ct = vec![0x5Au8; p.ciphertext_len()];
            let mut ss = [0x5Au8; 32];
            let m = [7u8; 32];
            assert_eq!(
                mlkem::encaps_internal(p, &bad, &m, &mut ct, &mut ss),
                Err(Error::BadKey)
            );
            assert!(ct.iter().all(|&b| b == 0x5A) && ss == [0x5Au8; 32]);
        }
        // q - 1 = 3328 in the first coefficient is in range.
        let mut edge = ek.clone();
        edge[0] = (3328u16 & 0xFF) as u8;
        edge[1] = (edge[1] & 0xF0) | (3328u16 >> 8) as u8;
        assert_eq!(mlkem::check_encaps_key(p, &edge), Ok(()));
        n += 1;
    }
    assert_eq!(n, 75);
}

#[test]
fn wrong_lengths() {
    for p in ParamSet::ALL {
        let (e, d, c) = (p.encaps_key_len(), p.decaps_key_len(), p.ciphertext_len());
        let m = [1u8; 32];
        let mut ek = vec![0u8; e];
        let mut dk = vec![0u8; d];
        mlkem::keygen_internal(p, &m, &m, &mut ek, &mut dk).unwrap();
        let mut ct = vec![0u8; c];
        let mut ss = [0u8; 32];
        for (el, dl) in [(e - 1, d), (e, d + 1), (0, 0)] {
            let (mut a, mut b) = (vec![0u8; el], vec![0u8; dl]);
            assert_eq!(
                mlkem::keygen_internal(p, &m, &m, &mut a, &mut b),
                Err(Error::BadLength)
            );
            assert_eq!(mlkem::keygen(p, &mut a, &mut b), Err(Error::BadLength));
        }
        assert_eq!(mlkem::check_encaps_key(p, &ek[1..]), Err(Error::BadLength));
        assert_eq!(mlkem::check_decaps_key(p, &dk[1..]), Err(Error::BadLength));
        let enc =
            |ek: &[u8], ct: &mut [u8], ss: &mut [u8]| mlkem::encaps_internal(p, ek, &m, ct, ss);
        assert_eq!(enc(&ek[1..], &mut ct, &mut ss), Err(Error::BadLength));
        assert_eq!(enc(&ek, &mut ct[1..], &mut ss), Err(Error::BadLength));
        assert_eq!(enc(&ek, &mut ct, &mut ss[1..]), Err(Error::BadLength));
        assert_eq!(
            mlkem::encaps(p, &ek, &mut vec![0u8; c + 1], &mut ss),
            Err(Error::BadLength)
        );
        enc(&ek, &mut ct, &mut ss).unwrap();
        assert_eq!(
            mlkem::decaps(p, &dk[1..], &ct, &mut ss),
            Err(Error::BadLength)
        );
        assert_eq!(
            mlkem::decaps(p, &dk, &ct[1..], &mut ss),
            Err(Error::BadLength)
        );
        assert_eq!(
            mlkem::decaps(p, &dk, &ct, &mut ss[..31]),
            Err(Error::BadLength)
        );
        // Fresh randomness round trip.
        let mut ss2 = [0u8; 32];
        mlkem::keygen(p, &mut ek, &mut dk).unwrap();
        mlkem::encaps(p, &ek, &mut ct, &mut ss).unwrap();
        mlkem::decaps(p, &dk, &ct, &mut ss2).unwrap();
        assert_eq!(ss, ss2);
    }
}

/// The CPU backend, item by item, follows the contract for a failed item's shared secret: an
/// encapsulation key failing the modulus check and a decapsulation key failing the hash check
/// leave the shared secret zeroed (the GPU backend does the same, and `tests/gpu_mlkem.rs`
/// compares the two row by row).
#[test]
fn backend_zeroes_the_shared_secret_of_a_bad_key() {
    use pqgpu::backend::{cpu_backend, DecapsItem, EncapsItem};
    let p = pqgpu::mlkem::ParamSet::MlKem768;
    let (mut ek, mut dk) = (vec![0u8; p.encaps_key_len()], vec![0u8; p.decaps_key_len()]);
    pqgpu::mlkem::keygen_seeded(p, &[7u8; 64], &mut ek, &mut dk).unwrap();
    ek[0] = 0xff;
    ek[1] = 0xff; // first coefficient 4095 >= q
    let mut ct = vec![0x5au8; p.ciphertext_len()];
    let mut ss = [0x5au8; 32];
    let mut st = [Ok(())];
    let coins = [1u8; 32];
    let enc = [EncapsItem {
        pk: &ek,
        coins: Some(&coins),
    }];
    cpu_backend().mlkem_encaps(p, &enc, &mut [&mut ct[..]], &mut [&mut ss[..]], &mut st);
    assert_eq!(st[0], Err(pqgpu::Error::BadKey));
    assert_eq!(ss, [0u8; 32], "encaps: failed item's shared secret zeroed");
    assert!(
        ct.iter().all(|&b| b == 0x5a),
        "encaps: no ciphertext written"
    );

    let last = dk.len() - 64; // H(ek) inside dk
    dk[last] ^= 1;
    let mut ss = [0x5au8; 32];
    let dec = [DecapsItem { sk: &dk, ct: &ct }];
    cpu_backend().mlkem_decaps(p, &dec, &mut [&mut ss[..]], &mut st);
    assert_eq!(st[0], Err(pqgpu::Error::BadKey));
    assert_eq!(ss, [0u8; 32], "decaps: failed item's shared secret zeroed");
}
