//! CTRU-Prime known-answer tests: every case of the shared `.rsp` files (keygen, encaps, decaps
//! and the tampered-ciphertext rejection keys of the pqgpu decision, `ss_reject_intended`).

mod common;

use common::rsp;
use pqgpu::ctru::{self, ParamSet};

const CASES_PER_SET: usize = 100;
const TAMPERED_PER_SET: usize = 20;

fn run_set(p: ParamSet) {
    let cases = rsp::ctru_records(p);
    let field = rsp::field;

    let (mut checked, mut tampered) = (0, 0);
    for case in &cases {
        let count = &case["count"];
        let mut seed = [0u8; 64];
        seed[..32].copy_from_slice(&field(case, "kg_rand0"));
        seed[32..].copy_from_slice(&field(case, "kg_rand1"));
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = vec![0u8; p.secret_key_len()];
        ctru::keygen_derand(p, &seed, &mut pk, &mut sk).unwrap();
        assert!(pk == field(case, "pk"), "{} count {count}: pk", p.name());
        assert!(sk == field(case, "sk"), "{} count {count}: sk", p.name());

        let e: [u8; 32] = field(case, "enc_rand0").try_into().unwrap();
        let mut ct = vec![0u8; p.ciphertext_len()];
        let mut ss = [0u8; 32];
        ctru::encaps_derand(p, &pk, &e, &mut ct, &mut ss).unwrap();
        assert!(ct == field(case, "ct"), "{} count {count}: ct", p.name());
        assert_eq!(
            ss.to_vec(),
            field(case, "ss"),
            "{} count {count}: ss",
            p.name()
        );

        let mut ss_dec = [0u8; 32];
        ctru::decaps(p, &sk, &ct, &mut ss_dec).unwrap();
        assert_eq!(
            ss_dec.to_vec(),
            field(case, "ss_dec"),
            "{} count {count}: ss_dec",
            p.name()
        );

        if case.contains_key("ct_tampered") {
            let byte: usize = case["tamper_byte"].parse().unwrap();
            let bit: u32 = case["tamper_bit"].parse().unwrap();
            let mut bad = ct.clone();
            bad[byte] ^= 1 << bit;
            assert!(
                bad == field(case, "ct_tampered"),
                "{} count {count}: tamper",
                p.name()
            );
            let mut ss_rej = [0u8; 32];
            ctru::decaps(p, &sk, &bad, &mut ss_rej).unwrap();
            assert_eq!(
                ss_rej.to_vec(),
                field(case, "ss_reject_intended"),
                "{} count {count}: ss_reject_intended",
                p.name()
            );
            tampered += 1;
        }
        checked += 1;
    }
    assert_eq!(checked, CASES_PER_SET, "{}: case count", p.name());
    assert_eq!(
        tampered,
        TAMPERED_PER_SET,
        "{}: tampered case count",
        p.name()
    );
}

#[test]
fn kat_ctru_prime_653() {
    run_set(ParamSet::Ctru653);
}

#[test]
fn kat_ctru_prime_761() {
    run_set(ParamSet::Ctru761);
}

#[test]
fn kat_ctru_prime_1277() {
    run_set(ParamSet::Ctru1277);
}
