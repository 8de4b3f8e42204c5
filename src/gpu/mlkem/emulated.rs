//! The ML-KEM kernels run on the CPU, where there is no GPU (CI): `kernels/emu/mlkem.cpp`
//! compiles `mlkem.cu` (with `keccak.cuh` and `chacha.cuh`) with the system's C++ compiler and
//! runs a whole batch phase by phase as the GPU does: the one-thread kernels a thread at a time,
//! the block kernels a block at a time with every thread a fiber and real barriers
//! (`kernels/emu/fibers.h`). Checked against what the kernels
//! did not compute: NIST's ACVP vectors (keyGen, encapsulation, decapsulation with valid and
//! modified ciphertexts, both key checks), the one-key path against the key-per-item path,
//! implicit rejection against SHAKE256(z || c) from the `sha3` crate, the GPU-drawn messages
//! against `rand_chacha`, and random items against the CPU implementation (`crate::mlkem`).
//! Skips, saying so, without a C++ compiler. The GPU suite
//! (`tests/gpu_mlkem.rs`) compares the real kernels with the CPU backend on the H200.

use super::kernels::{defines, Sizes};
use crate::gpu::emu::{compiler, Harness};
use crate::mlkem::ParamSet;
use rand::{RngCore, SeedableRng};
use serde_json::Value;
use sha3::digest::{ExtendableOutput, Update, XofReader};
use std::path::PathBuf;

fn vectors() -> PathBuf {
    crate::settings::test_env::vectors_dir().join("acvp")
}

/// The test groups of an ACVP file.
fn groups(file: &str) -> Vec<Value> {
    let path = vectors().join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (set PQGPU_VECTORS_DIR)", path.display()));
    let v: Value = serde_json::from_str(&text).expect("ACVP JSON");
    v["testGroups"].as_array().expect("testGroups").clone()
}

fn set_of(g: &Value) -> ParamSet {
    let name = g["parameterSet"].as_str().expect("parameterSet");
    ParamSet::ALL
        .into_iter()
        .find(|p| p.name() == name)
        .unwrap_or_else(|| panic!("unknown set {name}"))
}

fn hex(t: &Value, field: &str) -> Vec<u8> {
    hex::decode(t[field].as_str().unwrap_or_else(|| panic!("field {field}"))).expect("hex")
}

fn passed(t: &Value) -> bool {
    match &t["testPassed"] {
        Value::Bool(b) => *b,
        Value::String(s) => s == "True" || s == "true",
        other => panic!("testPassed {other}"),
    }
}

/// The harness input head: n and whether every item uses key 0.
fn head(n: usize, one_key: bool) -> Vec<u8> {
    [(n as u32).to_le_bytes(), (one_key as u32).to_le_bytes()].concat()
}

struct Sets {
    cxx: String,
    built: Vec<(ParamSet, Harness)>,
}

impl Sets {
    fn get(&mut self, p: ParamSet) -> &Harness {
        if !self.built.iter().any(|(q, _)| *q == p) {
            let label = format!("mlkem{}", Sizes::of(p).k);
            let h = Harness::build_source(&self.cxx, &label, "mlkem.cpp", &defines(p));
            self.built.push((p, h));
        }
        &self.built.iter().find(|(q, _)| *q == p).expect("built").1
    }
}

/// The harness input head of `idx.len()` items, item j on key `idx[j]` of `nkeys` (the key
/// index array the engine sends when keys repeat).
fn head_idx(nkeys: usize, idx: &[u32]) -> Vec<u8> {
    let mut h = [(idx.len() as u32).to_le_bytes(), 2u32.to_le_bytes()].concat();
    h.extend_from_slice(&(nkeys as u32).to_le_bytes());
    idx.iter()
        .for_each(|x| h.extend_from_slice(&x.to_le_bytes()));
    h
}

/// Encaps of `n` items: (key check verdicts, ciphertexts, shared secrets).
fn encaps(
    h: &Harness,
    s: &Sizes,
    eks: &[u8],
    m: &[u8],
    one_key: bool,
) -> (Vec<bool>, Vec<u8>, Vec<u8>) {
    let n = m.len() / 32;
    encaps_with(h, s, eks, m, &head(n, one_key))
}

/// Encaps of the items of `m` under the rows `eks`, the harness head given.
fn encaps_with(
    h: &Harness,
    s: &Sizes,
    eks: &[u8],
    m: &[u8],
    head: &[u8],
) -> (Vec<bool>, Vec<u8>, Vec<u8>) {
    let n = m.len() / 32;
    let nkeys = eks.len() / s.ek;
    let out = h.run("mlkem_encaps", &[head, eks, m].concat());
    let (ok, rest) = out.split_at(4 * nkeys);
    let (ct, ss) = rest.split_at(n * s.ct);
    let ok = ok.chunks_exact(4).map(|x| x != [0; 4]).collect();
    (ok, ct.to_vec(), ss.to_vec())
}

/// Decaps of `n` items: (key check verdicts, shared secrets).
fn decaps(h: &Harness, s: &Sizes, dks: &[u8], cts: &[u8], one_key: bool) -> (Vec<bool>, Vec<u8>) {
    decaps_with(h, s, dks, cts, &head(cts.len() / s.ct, one_key))
}

/// Decaps of the ciphertexts `cts` under the rows `dks`, the harness head given.
fn decaps_with(
    h: &Harness,
    s: &Sizes,
    dks: &[u8],
    cts: &[u8],
    head: &[u8],
) -> (Vec<bool>, Vec<u8>) {
    let nkeys = dks.len() / s.dk;
    let out = h.run("mlkem_decaps", &[head, dks, cts].concat());
    let (ok, ss) = out.split_at(4 * nkeys);
    (
        ok.chunks_exact(4).map(|x| x != [0; 4]).collect(),
        ss.to_vec(),
    )
}

fn sets() -> Option<Sets> {
    match compiler() {
        Some(cxx) => Some(Sets {
            cxx,
            built: Vec::new(),
        }),
        None => {
            println!(
                "SKIPPED: no C++ compiler (CXX, c++, g++, clang++) to run the kernels on the CPU"
            );
            None
        }
    }
}

/// Every check below on one build of each set's harness (builds dominate the time).
#[test]
fn mlkem_kernels_on_the_cpu() {
    let Some(mut sets) = sets() else { return };
    acvp_keygen(&mut sets);
    acvp_encap_decap_and_key_checks(&mut sets);
    one_key_path_and_implicit_rejection(&mut sets);
    coins_match_rand_chacha(&mut sets);
    random_items_match_the_cpu(&mut sets);
    key_index_with_repeated_and_bad_keys(&mut sets);
}

fn acvp_keygen(sets: &mut Sets) {
    let mut count = 0;
    for g in groups("ML-KEM-keyGen-FIPS203/internalProjection.json") {
        let p = set_of(&g);
        let s = Sizes::of(p);
        let tests = g["tests"].as_array().expect("tests");
        let seeds: Vec<u8> = tests
            .iter()
            .flat_map(|t| [hex(t, "d"), hex(t, "z")].concat())
            .collect();
        let n = tests.len();
        let out = sets
            .get(p)
            .run("mlkem_keygen", &[&head(n, false)[..], &seeds].concat());
        let (eks, dks) = out.split_at(n * s.ek);
        for (b, t) in tests.iter().enumerate() {
            let id = &t["tcId"];
            assert_eq!(
                eks[b * s.ek..][..s.ek],
                hex(t, "ek")[..],
                "keyGen tcId {id}: ek"
            );
            assert_eq!(
                dks[b * s.dk..][..s.dk],
                hex(t, "dk")[..],
                "keyGen tcId {id}: dk"
            );
            count += 1;
        }
    }
    assert_eq!(count, 75);
}

fn acvp_encap_decap_and_key_checks(sets: &mut Sets) {
    let mut count = 0;
    for g in groups("ML-KEM-encapDecap-FIPS203/internalProjection.json") {
        let p = set_of(&g);
        let s = Sizes::of(p);
        let h = sets.get(p);
        let tests = g["tests"].as_array().expect("tests");
        let function = g["function"].as_str().expect("function");
        let cat = |f: &str| -> Vec<u8> { tests.iter().flat_map(|t| hex(t, f)).collect() };
        match function {
            "encapsulation" => {
                let (ok, ct, ss) = encaps(h, &s, &cat("ek"), &cat("m"), false);
                for (b, t) in tests.iter().enumerate() {
                    let id = &t["tcId"];
                    assert!(ok[b], "tcId {id}: ek check");
                    assert_eq!(ct[b * s.ct..][..s.ct], hex(t, "c")[..], "tcId {id}: c");
                    assert_eq!(ss[32 * b..][..32], hex(t, "k")[..], "tcId {id}: K");
                }
            }
            "decapsulation" => {
                let (ok, ss) = decaps(h, &s, &cat("dk"), &cat("c"), false);
                for (b, t) in tests.iter().enumerate() {
                    let id = &t["tcId"];
                    assert!(ok[b], "tcId {id}: dk check");
                    assert_eq!(ss[32 * b..][..32], hex(t, "k")[..], "tcId {id}: K");
                }
            }
            "encapsulationKeyCheck" | "decapsulationKeyCheck" => {
                let enc = function == "encapsulationKeyCheck";
                let (field, len) = if enc { ("ek", s.ek) } else { ("dk", s.dk) };
                // A key of the wrong length fails before any kernel (the host's length check).
                let right: Vec<&Value> = tests
                    .iter()
                    .filter(|t| hex(t, field).len() == len)
                    .collect();
                for t in tests.iter().filter(|t| hex(t, field).len() != len) {
                    assert!(
                        !passed(t),
                        "tcId {}: a key of the wrong length passes",
                        t["tcId"]
                    );
                }
                let keys: Vec<u8> = right.iter().flat_map(|t| hex(t, field)).collect();
                let ok = if enc {
                    encaps(h, &s, &keys, &vec![0; 32 * right.len()], false).0
                } else {
                    decaps(h, &s, &keys, &vec![0; s.ct * right.len()], false).0
                };
                for (b, t) in right.iter().enumerate() {
                    assert_eq!(ok[b], passed(t), "tcId {}: {function}", t["tcId"]);
                }
            }
            other => panic!("unexpected function {other}"),
        }
        count += tests.len();
    }
    assert_eq!(count, 195);
}

fn shake256(input: &[u8]) -> [u8; 32] {
    let mut h = sha3::Shake256::default();
    h.update(input);
    let mut out = [0u8; 32];
    h.finalize_xof().read(&mut out);
    out
}

/// A server's key: every item on key 0 gives what each item on its own copy gives; tampered
/// ciphertexts decapsulate to SHAKE256(z || c) (implicit rejection).
fn one_key_path_and_implicit_rejection(sets: &mut Sets) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x203);
    for p in ParamSet::ALL {
        let s = Sizes::of(p);
        let h = sets.get(p);
        let mut seed = vec![0u8; 64];
        rng.fill_bytes(&mut seed);
        let out = h.run("mlkem_keygen", &[&head(1, false)[..], &seed].concat());
        let (ek, dk) = out.split_at(s.ek);
        let n = 6;
        let mut m = vec![0u8; 32 * n];
        rng.fill_bytes(&mut m);
        let (ok1, ct1, ss1) = encaps(h, &s, ek, &m, true);
        let (okn, ctn, ssn) = encaps(h, &s, &ek.repeat(n), &m, false);
        assert!(ok1[0] && okn.iter().all(|&x| x));
        assert_eq!(ct1, ctn, "{}: one-key ciphertexts", p.name());
        assert_eq!(ss1, ssn, "{}: one-key shared secrets", p.name());
        // Items 0, 2, 4 as sent; 1, 3, 5 with one bit flipped (first, middle, last byte).
        let mut cts = ct1.clone();
        for (b, at) in [(1, 0), (3, s.ct / 2), (5, s.ct - 1)] {
            cts[b * s.ct + at] ^= 0x10;
        }
        let (okd, ssd) = decaps(h, &s, dk, &cts, true);
        let (okn, ssn) = decaps(h, &s, &dk.repeat(n), &cts, false);
        assert!(okd[0] && okn.iter().all(|&x| x));
        assert_eq!(ssd, ssn, "{}: one-key decapsulation", p.name());
        let z = &dk[s.dk - 32..];
        for b in 0..n {
            let got = &ssd[32 * b..][..32];
            if b % 2 == 0 {
                assert_eq!(got, &ss1[32 * b..][..32], "{} item {b}: K", p.name());
            } else {
                let kbar = shake256(&[z, &cts[b * s.ct..][..s.ct]].concat());
                assert_eq!(got, kbar, "{} item {b}: K-bar", p.name());
            }
        }
        // A dk whose H(ek) is altered fails the check, and its items' shared secrets come out
        // zero (the rows go back before the host reads the verdicts); an ek coefficient of q
        // fails the modulus check.
        let mut bad_dk = dk.to_vec();
        bad_dk[s.dk - 40] ^= 1;
        let (ok, ss) = decaps(h, &s, &bad_dk, &ct1[..s.ct], false);
        assert!(!ok[0]);
        assert_eq!(ss, [0; 32], "{}: a failed key's shared secret", p.name());
        let mut bad_ek = ek.to_vec();
        bad_ek[0] = (3329 & 0xFF) as u8;
        bad_ek[1] = (bad_ek[1] & 0xF0) | (3329 >> 8) as u8;
        assert!(!encaps(h, &s, &bad_ek, &m[..32], false).0[0]);
    }
}

/// Messages drawn on the GPU: ChaCha20 stream 0 under the chunk's key, as rand_chacha's
/// generator gives it; an odd count ends inside a block.
fn coins_match_rand_chacha(sets: &mut Sets) {
    let h = sets.get(ParamSet::MlKem768);
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xC0);
    for count in [1usize, 40, 41] {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        let got = h.run("mlkem_coins", &[&head(count, false)[..], &key].concat());
        let mut want = vec![0u8; count * 32];
        let mut chacha = rand_chacha::ChaCha20Rng::from_seed(key);
        chacha.set_stream(0);
        chacha.fill_bytes(&mut want);
        assert_eq!(got, want, "messages for {count} items");
    }
}

/// Random items against the CPU implementation (`crate::mlkem`, an independent code base):
/// keys from random d || z, encapsulations of random m under them, decapsulations of honest and
/// bit-flipped ciphertexts.
fn random_items_match_the_cpu(sets: &mut Sets) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xD1FF);
    for p in ParamSet::ALL {
        let s = Sizes::of(p);
        let h = sets.get(p);
        let n = 12;
        let mut seeds = vec![0u8; 64 * n];
        rng.fill_bytes(&mut seeds);
        let out = h.run("mlkem_keygen", &[&head(n, false)[..], &seeds].concat());
        let (eks, dks) = out.split_at(n * s.ek);
        let mut m = vec![0u8; 32 * n];
        rng.fill_bytes(&mut m);
        let (ok, cts, sss) = encaps(h, &s, eks, &m, false);
        let mut tampered = cts.clone();
        for b in (0..n).filter(|b| b % 2 == 1) {
            tampered[b * s.ct + (b * 97) % s.ct] ^= 1 << (b % 8);
        }
        let (okd, ssd) = decaps(h, &s, dks, &tampered, false);
        for b in 0..n {
            let (d, z) = seeds[64 * b..64 * b + 64].split_at(32);
            let (mut ek, mut dk) = (vec![0u8; s.ek], vec![0u8; s.dk]);
            crate::mlkem::keygen_internal(
                p,
                d.try_into().unwrap(),
                z.try_into().unwrap(),
                &mut ek,
                &mut dk,
            )
            .expect("CPU keygen");
            assert_eq!(eks[b * s.ek..][..s.ek], ek[..], "{} ek {b}", p.name());
            assert_eq!(dks[b * s.dk..][..s.dk], dk[..], "{} dk {b}", p.name());
            let (mut ct, mut ss) = (vec![0u8; s.ct], [0u8; 32]);
            let mb: &[u8; 32] = m[32 * b..32 * b + 32].try_into().unwrap();
            crate::mlkem::encaps_internal(p, &ek, mb, &mut ct, &mut ss).expect("CPU encaps");
            assert!(ok[b] && okd[b]);
            assert_eq!(cts[b * s.ct..][..s.ct], ct[..], "{} ct {b}", p.name());
            assert_eq!(sss[32 * b..][..32], ss, "{} K {b}", p.name());
            crate::mlkem::decaps(p, &dk, &tampered[b * s.ct..][..s.ct], &mut ss)
                .expect("CPU decaps");
            assert_eq!(ssd[32 * b..][..32], ss, "{} decaps {b}", p.name());
        }
    }
}

/// Distinct key rows in another order than the items, a key index array with repeated keys,
/// some eks failing the modulus check and some dks the hash check: every item of a good key
/// against the CPU implementation (`crate::mlkem`), every key's verdict against the CPU's.
fn key_index_with_repeated_and_bad_keys(sets: &mut Sets) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x1DC5);
    for p in ParamSet::ALL {
        let s = Sizes::of(p);
        let h = sets.get(p);
        let (nkeys, n) = (7, 24);
        let (mut eks, mut dks) = (vec![0u8; nkeys * s.ek], vec![0u8; nkeys * s.dk]);
        for (ek, dk) in eks.chunks_exact_mut(s.ek).zip(dks.chunks_exact_mut(s.dk)) {
            let (mut d, mut z) = ([0u8; 32], [0u8; 32]);
            rng.fill_bytes(&mut d);
            rng.fill_bytes(&mut z);
            crate::mlkem::keygen_internal(p, &d, &z, ek, dk).expect("CPU keygen");
        }
        // ek 2: a t-hat coefficient of 4095 (>= q); dk 4: a bit of H(ek) flipped.
        eks[2 * s.ek + 384 + 1] |= 0xF0;
        eks[2 * s.ek + 384 + 2] = 0xFF;
        dks[4 * s.dk + s.dk - 40] ^= 1;
        // Item j on key idx[j]: every key repeated, in no order.
        let idx: Vec<u32> = (0..n).map(|j| ((j * 5 + j / 7) % nkeys) as u32).collect();
        let mut m = vec![0u8; 32 * n];
        rng.fill_bytes(&mut m);
        let (ok, cts, sss) = encaps_with(h, &s, &eks, &m, &head_idx(nkeys, &idx));
        let mut tampered = cts.clone();
        for b in (0..n).filter(|b| b % 3 == 1) {
            tampered[b * s.ct + (b * 89) % s.ct] ^= 1 << (b % 8);
        }
        let (okd, ssd) = decaps_with(h, &s, &dks, &tampered, &head_idx(nkeys, &idx));
        for key in 0..nkeys {
            let (mut ct, mut ss) = (vec![0u8; s.ct], [0u8; 32]);
            let ek = &eks[key * s.ek..][..s.ek];
            let cpu_ok = crate::mlkem::encaps_internal(p, ek, &[0; 32], &mut ct, &mut ss).is_ok();
            assert_eq!(ok[key], cpu_ok, "{} ek {key} check", p.name());
            assert_eq!(ok[key], key != 2, "{} ek {key} check", p.name());
            assert_eq!(okd[key], key != 4, "{} dk {key} check", p.name());
        }
        for (b, &key) in idx.iter().enumerate() {
            let key = key as usize;
            let (mut ct, mut ss) = (vec![0u8; s.ct], [0u8; 32]);
            if ok[key] {
                let ek = &eks[key * s.ek..][..s.ek];
                let mb: &[u8; 32] = m[32 * b..32 * b + 32].try_into().unwrap();
                crate::mlkem::encaps_internal(p, ek, mb, &mut ct, &mut ss).expect("CPU encaps");
                assert_eq!(
                    cts[b * s.ct..][..s.ct],
                    ct[..],
                    "{} ct {b} (key {key})",
                    p.name()
                );
                assert_eq!(sss[32 * b..][..32], ss, "{} K {b} (key {key})", p.name());
            }
            if okd[key] {
                let dk = &dks[key * s.dk..][..s.dk];
                crate::mlkem::decaps(p, dk, &tampered[b * s.ct..][..s.ct], &mut ss)
                    .expect("CPU decaps");
                assert_eq!(
                    ssd[32 * b..][..32],
                    ss,
                    "{} decaps {b} (key {key})",
                    p.name()
                );
            }
        }
    }
}
