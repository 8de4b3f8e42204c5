//! CTRU-Prime known-answer tests: every case of the shared `.rsp` files (keygen, encaps, decaps
//! and the tampered-ciphertext rejection keys of the pqgpu decision, `ss_reject_intended`).

mod common;

use pqgpu::ctru::{self, ParamSet};
use std::collections::HashMap;

const CASES_PER_SET: usize = 100;
const TAMPERED_PER_SET: usize = 20;

fn file_name(p: ParamSet) -> &'static str {
    match p {
        ParamSet::Ctru653 => "ctru-prime-653.rsp",
        ParamSet::Ctru761 => "ctru-prime-761.rsp",
        ParamSet::Ctru1277 => "ctru-prime-1277.rsp",
    }
}

/// The `key = value` blocks of an `.rsp` file, skipping `#` comments.
fn parse_rsp(text: &str) -> Vec<HashMap<String, String>> {
    let mut cases = Vec::new();
    let mut current = HashMap::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            if !current.is_empty() {
                cases.push(std::mem::take(&mut current));
            }
            continue;
        }
        let (k, v) = line.split_once('=').expect("malformed .rsp line");
        current.insert(k.trim().to_string(), v.trim().to_string());
    }
    if !current.is_empty() {
        cases.push(current);
    }
    cases
}

fn run_set(p: ParamSet) {
    let path = common::vectors_dir().join("ctru-prime").join(file_name(p));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let cases = parse_rsp(&text);
    let field = |case: &HashMap<String, String>, k: &str| -> Vec<u8> {
        common::unhex(case.get(k).unwrap_or_else(|| panic!("missing field {k}")))
    };

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
