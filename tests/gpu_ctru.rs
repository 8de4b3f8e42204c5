//! GPU CTRU-Prime against the CPU ground truth, byte for byte: keys from the same seeds,
//! encapsulations from the same coins (one shared key and a few keys with many items each: the
//! Tensor-Core engine; one key per item: the CUDA-core engine), decapsulations of honest,
//! bit-flipped and random ciphertexts, malformed items, and every shared KAT vector. Skips
//! (with the reason printed) when no GPU is usable, as on CI. `PQGPU_GPU_CASES` sets the
//! encaps and decaps cases per parameter set (1/2 one key, 1/4 three keys, 1/4 one key each),
//! `PQGPU_GPU_KEYGEN_CASES` the keygen cases (default: the same). `PQGPU_CTRU_ENGINE=cc|tc`
//! forces one engine for every case.

mod common;

use common::bytes;
use common::reference::{
    kem_decaps_both as decaps_both, kem_encaps_both as encaps_both, kem_keygen_both as keygen_both,
};
use common::rsp;
use pqgpu::backend::{Backend, DecapsItem, EncapsItem};
use pqgpu::ctru::ParamSet;
use pqgpu::Error;
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

/// Ciphertexts to decapsulate: item j of `cts` as is (j % 4 == 0, 3), one bit flipped
/// (j % 4 == 1) or random bytes (j % 4 == 2).
fn tamper(rng: &mut StdRng, cts: &[Vec<u8>]) -> Vec<Vec<u8>> {
    cts.iter()
        .enumerate()
        .map(|(j, ct)| {
            let mut c = ct.clone();
            match j % 4 {
                1 => {
                    let bit = rng.gen_range(0..8 * c.len());
                    c[bit / 8] ^= 1 << (bit % 8);
                }
                2 => rng.fill_bytes(&mut c),
                _ => {}
            }
            c
        })
        .collect()
}

/// One engine's run: `n` encapsulations under `keys` (one key: Tensor Cores), plus malformed
/// items, then decapsulation of honest and tampered ciphertexts.
fn run_engine(
    gpu: &dyn Backend,
    p: ParamSet,
    rng: &mut StdRng,
    pks: &[&[u8]],
    sks: &[&[u8]],
    n: usize,
) {
    let coins: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
    let bad_pk = vec![0xFFu8; p.public_key_len()];
    let short_pk = vec![0u8; p.public_key_len() - 1];
    let mut items: Vec<EncapsItem> = (0..n)
        .map(|j| EncapsItem {
            pk: pks[j % pks.len()],
            coins: Some(&coins[j]),
        })
        .collect();
    items.push(EncapsItem {
        pk: &bad_pk,
        coins: Some(&coins[0]),
    });
    items.push(EncapsItem {
        pk: &short_pk,
        coins: Some(&coins[0]),
    });
    let (cts, sss, st) = encaps_both(gpu, p, &items);
    assert_eq!(st[n], Err(Error::BadKey));
    assert_eq!(st[n + 1], Err(Error::BadLength));

    let cts2 = tamper(rng, &cts[..n]);
    let mut bad_sk = sks[0].to_vec();
    bad_sk[0] = 0xFF; // nibble 15: f out of range
    let mut items: Vec<DecapsItem> = (0..n)
        .map(|j| DecapsItem {
            sk: sks[j % sks.len()],
            ct: &cts2[j],
        })
        .collect();
    items.push(DecapsItem {
        sk: &bad_sk,
        ct: &cts2[0],
    });
    items.push(DecapsItem {
        sk: sks[0],
        ct: &cts2[0][1..],
    });
    let got = decaps_both(gpu, p, &items);
    for j in (0..n).filter(|j| j % 4 == 0) {
        assert_eq!(got[j], sss[j], "{} honest decaps {j}", p.name());
    }
}

fn run_set(p: ParamSet) {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = common::gpu_cases(4000);
    let n_kg = common::env_count("PQGPU_GPU_KEYGEN_CASES", n);
    let mut rng = StdRng::seed_from_u64(0xC7A0 + p.n() as u64);
    let seeds = bytes(&mut rng, 64 * n_kg.max(8));
    let (pks, sks) = keygen_both(&*gpu, p, &seeds);
    let pk: Vec<&[u8]> = pks.chunks_exact(p.public_key_len()).collect();
    let sk: Vec<&[u8]> = sks.chunks_exact(p.secret_key_len()).collect();
    // One key: Tensor Cores, every item a matrix column.
    run_engine(&*gpu, p, &mut rng, &pk[..1], &sk[..1], n / 2);
    // Three keys with hundreds of items each: Tensor Cores, items regrouped by key (once n/4
    // reaches 3 x TC_ITEMS).
    run_engine(&*gpu, p, &mut rng, &pk[..3], &sk[..3], n / 4);
    // Every item its own key (up to the keys made above): CUDA cores, or with
    // `PQGPU_CTRU_ENGINE=tc` the per-instance Tensor-Core mode (one padded block per item).
    run_engine(&*gpu, p, &mut rng, &pk, &sk, n - n / 2 - n / 4);
    println!(
        "{}: {} keygen, {} encaps and {} decaps cases (1/4 bit-flipped, 1/4 random ct) match the CPU",
        p.name(),
        n_kg.max(8),
        n,
        n
    );
}

#[test]
fn gpu_ctru_653_matches_cpu() {
    run_set(ParamSet::Ctru653);
}

#[test]
fn gpu_ctru_761_matches_cpu() {
    run_set(ParamSet::Ctru761);
}

#[test]
fn gpu_ctru_1277_matches_cpu() {
    run_set(ParamSet::Ctru1277);
}

/// One-key batches whose key changes from batch to batch, and back: a worker keeps the last
/// key's expanded matrix between chunks, which must never serve another key (nor the same key
/// under another parameter set, nor h for f), so every batch must still equal the CPU.
#[test]
fn gpu_ctru_one_key_batches_with_changing_keys() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = 300;
    for p in ParamSet::ALL {
        let mut rng = StdRng::seed_from_u64(0x4E7 + p.n() as u64);
        let seeds = bytes(&mut rng, 64 * 2);
        let (pks, sks) = keygen_both(&*gpu, p, &seeds);
        let pk: Vec<&[u8]> = pks.chunks_exact(p.public_key_len()).collect();
        let sk: Vec<&[u8]> = sks.chunks_exact(p.secret_key_len()).collect();
        for (round, key) in [0, 1, 0, 0, 1].into_iter().enumerate() {
            let coins: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
            let items: Vec<EncapsItem> = coins
                .iter()
                .map(|c| EncapsItem {
                    pk: pk[key],
                    coins: Some(c),
                })
                .collect();
            let (cts, sss, _) = encaps_both(&*gpu, p, &items);
            let cts = tamper(&mut rng, &cts);
            let items: Vec<DecapsItem> = cts
                .iter()
                .map(|ct| DecapsItem { sk: sk[key], ct })
                .collect();
            let got = decaps_both(&*gpu, p, &items);
            for j in (0..n).filter(|j| j % 4 == 0) {
                assert_eq!(
                    got[j],
                    sss[j],
                    "{} round {round} honest decaps {j}",
                    p.name()
                );
            }
        }
    }
    println!("one-key batches alternating between two keys, every parameter set: match the CPU");
}

/// Fresh coins (NULL coins through the C ABI): a chunk whose items all want them draws them on
/// the GPU (`encaps_coins`), a mixed chunk on the host. No CPU result to compare with, so: every
/// shared secret equals the CPU's decapsulation of its ciphertext, no two ciphertexts of a
/// batch are equal (fresh per item), and the mixed batch's items with given coins equal the CPU.
#[test]
fn gpu_ctru_fresh_coins_decapsulate_on_the_cpu() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = common::gpu_cases(2000).max(64);
    for p in ParamSet::ALL {
        let mut rng = StdRng::seed_from_u64(0xF5E + p.n() as u64);
        let seeds = bytes(&mut rng, 64);
        let (pks, sks) = keygen_both(&*gpu, p, &seeds);
        let given: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
        for mixed in [false, true] {
            let items: Vec<EncapsItem> = (0..n)
                .map(|j| EncapsItem {
                    pk: &pks,
                    coins: (mixed && j % 2 == 0).then_some(&given[j]),
                })
                .collect();
            let mut cts = vec![vec![0u8; p.ciphertext_len()]; n];
            let mut sss = vec![[0u8; 32]; n];
            let mut st = vec![Err(Error::Panic); n];
            let mut ct_refs: Vec<&mut [u8]> = cts.iter_mut().map(|c| &mut c[..]).collect();
            let mut ss_refs: Vec<&mut [u8]> = sss.iter_mut().map(|s| &mut s[..]).collect();
            gpu.kem_encaps(p, &items, &mut ct_refs, &mut ss_refs, &mut st);
            assert!(st.iter().all(|s| s.is_ok()), "{} encaps statuses", p.name());
            let distinct: std::collections::HashSet<&Vec<u8>> = cts.iter().collect();
            assert_eq!(
                distinct.len(),
                n,
                "{} mixed {mixed}: repeated ciphertexts",
                p.name()
            );
            let dec: Vec<DecapsItem> = cts.iter().map(|ct| DecapsItem { sk: &sks, ct }).collect();
            let mut cpu_ss = vec![[0u8; 32]; n];
            let mut cpu_st = vec![Err(Error::Panic); n];
            let mut refs: Vec<&mut [u8]> = cpu_ss.iter_mut().map(|s| &mut s[..]).collect();
            pqgpu::backend::cpu_backend().kem_decaps(p, &dec, &mut refs, &mut cpu_st);
            for j in 0..n {
                assert_eq!(cpu_st[j], Ok(()), "{} mixed {mixed} decaps {j}", p.name());
                assert_eq!(cpu_ss[j], sss[j], "{} mixed {mixed} item {j}", p.name());
            }
            if mixed {
                let fixed: Vec<EncapsItem> = items.iter().step_by(2).cloned().collect();
                let (want_cts, _, _) = encaps_both(&*gpu, p, &fixed);
                for (k, ct) in want_cts.iter().enumerate() {
                    assert!(*ct == cts[2 * k], "{} given coins item {}", p.name(), 2 * k);
                }
            }
        }
    }
    println!("fresh coins ({n} items per batch, GPU-drawn and mixed): every ciphertext distinct and decapsulated by the CPU");
}

/// Every KAT case through the GPU: batched (distinct keys: CUDA cores) and one by one (one
/// key: Tensor Cores).
#[test]
fn gpu_ctru_kat_vectors() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    for p in ParamSet::ALL {
        let file = rsp::ctru_file(p);
        let cases = rsp::ctru_records(p);
        assert_eq!(cases.len(), 100, "{file}");
        let f = rsp::field;
        let seeds: Vec<u8> = cases
            .iter()
            .flat_map(|c| [f(c, "kg_rand0"), f(c, "kg_rand1")].concat())
            .collect();
        let n = cases.len();
        let mut pks = vec![0u8; n * p.public_key_len()];
        let mut sks = vec![0u8; n * p.secret_key_len()];
        let mut st = vec![Err(Error::Panic); n];
        gpu.kem_keygen(p, Some(&seeds), &mut pks, &mut sks, &mut st);
        let coins: Vec<[u8; 32]> = cases
            .iter()
            .map(|c| f(c, "enc_rand0").try_into().unwrap())
            .collect();
        let mut tampered = 0;
        for (i, c) in cases.iter().enumerate() {
            assert!(st[i].is_ok());
            assert!(
                pks[i * p.public_key_len()..(i + 1) * p.public_key_len()] == f(c, "pk")[..],
                "{file} pk {i}"
            );
            assert!(
                sks[i * p.secret_key_len()..(i + 1) * p.secret_key_len()] == f(c, "sk")[..],
                "{file} sk {i}"
            );
        }
        let pk_of = |i: usize| &pks[i * p.public_key_len()..(i + 1) * p.public_key_len()];
        let sk_of = |i: usize| &sks[i * p.secret_key_len()..(i + 1) * p.secret_key_len()];
        for batch in [(0..n).collect::<Vec<_>>()]
            .into_iter()
            .chain((0..n).map(|i| vec![i]))
        {
            let items: Vec<EncapsItem> = batch
                .iter()
                .map(|&i| EncapsItem {
                    pk: pk_of(i),
                    coins: Some(&coins[i]),
                })
                .collect();
            let (cts, sss, st) = encaps_both(&*gpu, p, &items);
            let mut dec_cts = Vec::new();
            for (j, &i) in batch.iter().enumerate() {
                assert!(st[j].is_ok());
                assert!(cts[j] == f(&cases[i], "ct"), "{file} ct {i}");
                assert_eq!(sss[j].to_vec(), f(&cases[i], "ss"), "{file} ss {i}");
                dec_cts.push((i, cts[j].clone(), f(&cases[i], "ss_dec")));
                if cases[i].contains_key("ct_tampered") {
                    dec_cts.push((
                        i,
                        f(&cases[i], "ct_tampered"),
                        f(&cases[i], "ss_reject_intended"),
                    ));
                }
            }
            // Decapsulate per key so that one-by-one runs stay on one key (Tensor Cores).
            let items: Vec<DecapsItem> = dec_cts
                .iter()
                .map(|(i, ct, _)| DecapsItem { sk: sk_of(*i), ct })
                .collect();
            let got = decaps_both(&*gpu, p, &items);
            for (j, (i, _, want)) in dec_cts.iter().enumerate() {
                assert_eq!(got[j].to_vec(), *want, "{file} decaps {i} (entry {j})");
            }
            tampered += dec_cts.len() - batch.len();
        }
        assert_eq!(
            tampered,
            2 * 20,
            "{file}: tampered cases (batched + one by one)"
        );
        println!(
            "{}: all {n} KAT cases (20 tampered) match on the GPU, batched and one by one",
            p.name()
        );
    }
}
