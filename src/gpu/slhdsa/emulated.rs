//! The SLH-DSA kernels run on the CPU, where there is no GPU (CI): `kernels/emu`'s harness
//! compiles `slhdsa.cu` (with `sha2.cuh` and `keccak.cuh`) with the system's C++ compiler and
//! runs whole batches phase by phase, one thread at a time, for every parameter set. Checked
//! against the CPU implementation (`crate::slhdsa`), which the kernels share no code with:
//! verification of valid and modified signatures on every set (F, H, T_len and T_k on SHA-256
//! and SHA-512 from their midstates, and on SHAKE256), and on the f sets key generation from
//! random seeds and signatures with a given opt_rand bit for bit (FORS, every hypertree layer,
//! the WOTS+ signatures; the top layer's leaves built per key and per item), and on every set
//! wots_pkFromSig alone on messages whose digits give empty, full and alternating chains. The s sets differ
//! only in their numbers and take tens of seconds here; the GPU suite `tests/gpu_slhdsa.rs`
//! runs every operation on every set. Skips, saying so, without a C++ compiler.

use super::kernels::{defines, JOB_BYTES};
use super::{sign, verify};
use crate::backend::{SlhSignItem, SlhVerifyItem};
use crate::gpu::emu::{compiler, Harness};
use crate::slhdsa::address::{Adrs, AdrsType};
use crate::slhdsa::hash::Hasher;
use crate::slhdsa::{self, wots, Message, ParamSet};
use crate::Status;
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

/// The harness input head: n and the number of keys.
fn head(n: usize, nkeys: usize) -> Vec<u8> {
    [(n as u32).to_le_bytes(), (nkeys as u32).to_le_bytes()].concat()
}

fn random(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

/// Keys from random seeds, emulated and on the CPU; the CPU's (pk, sk) rows.
fn keygen(h: &Harness, p: ParamSet, rng: &mut StdRng, n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let seeds = random(rng, n * p.seed_len());
    let out = h.run("slh_keygen", &[&head(n, 0)[..], &seeds].concat());
    let (pks, sks) = out.split_at(n * p.public_key_len());
    assert_eq!(
        sks.len(),
        n * p.secret_key_len(),
        "{} keygen output",
        p.name()
    );
    seeds
        .chunks_exact(p.seed_len())
        .enumerate()
        .map(|(i, seed)| {
            let mut pk = vec![0u8; p.public_key_len()];
            let mut sk = vec![0u8; p.secret_key_len()];
            slhdsa::keygen_internal(p, seed, &mut pk, &mut sk).expect("keygen");
            let got_pk = &pks[i * pk.len()..(i + 1) * pk.len()];
            let got_sk = &sks[i * sk.len()..(i + 1) * sk.len()];
            assert!(got_pk == pk, "{} keygen pk {i}", p.name());
            assert!(got_sk == sk, "{} keygen sk {i}", p.name());
            (pk, sk)
        })
        .collect()
}

/// Signs `items` emulated (key rows as given, the top layer's leaves per key when `top`) and
/// on the CPU; asserts the signatures equal. The CPU's signatures.
fn sign_both(
    h: &Harness,
    p: ParamSet,
    keys: &[&[u8]],
    key_of: &[u32],
    items: &[SlhSignItem<'_>],
    top: bool,
) -> Vec<Vec<u8>> {
    let n = items.len();
    let idx: Vec<usize> = (0..n).collect();
    let mut jobs = vec![0u8; n * JOB_BYTES];
    sign::jobs(p, items, &idx, key_of, &[], &mut jobs);
    let input = [
        &head(n, keys.len())[..],
        &keys.concat(),
        &jobs,
        &u32::from(top).to_le_bytes(),
    ]
    .concat();
    let out = h.run("slh_sign", &input);
    assert_eq!(out.len(), n * p.signature_len(), "{} sign output", p.name());
    items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let mut want = vec![0u8; p.signature_len()];
            slhdsa::sign(p, it.sk, &it.msg, it.rnd, &mut want).expect("cpu sign");
            let got = &out[i * want.len()..(i + 1) * want.len()];
            if got != want {
                let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
                panic!(
                    "{} signature {i} (top {top}) differs from byte {at} on",
                    p.name()
                );
            }
            want
        })
        .collect()
}

/// Verdicts of `items` emulated, asserted equal to the CPU's.
fn verify_both(h: &Harness, p: ParamSet, items: &[SlhVerifyItem<'_>]) -> Vec<bool> {
    let n = items.len();
    let mut st: Vec<Status> = vec![Ok(()); n];
    verify::check(p, items, &mut st);
    assert!(st.iter().all(|s| s.is_ok()), "well-formed items");
    let idx: Vec<usize> = (0..n).collect();
    let mut jobs = vec![0u8; n * JOB_BYTES];
    verify::jobs(p, items, &idx, &mut jobs);
    let pks: Vec<u8> = items.iter().flat_map(|it| it.pk.to_vec()).collect();
    let sigs: Vec<u8> = items.iter().flat_map(|it| it.sig.to_vec()).collect();
    let out = h.run(
        "slh_verify",
        &[&head(n, 0)[..], &jobs, &pks, &sigs].concat(),
    );
    assert_eq!(out.len(), 4 * n);
    items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let got = out[4 * i..4 * i + 4] == [1, 0, 0, 0];
            let want = slhdsa::verify(p, it.pk, &it.msg, it.sig).is_ok();
            assert_eq!(got, want, "{} verify item {i}", p.name());
            got
        })
        .collect()
}

/// An n-byte message of the given base-w digits (two per byte, the high one first).
fn from_digits(d: &[u8]) -> Vec<u8> {
    d.chunks_exact(2).map(|p| p[0] << 4 | p[1]).collect()
}

/// wots_pkFromSig emulated against the CPU's on messages whose digits make the edge cases of
/// the flattened chain loop: every chain the full 15 steps (digits 0), a run of chains with
/// no steps from the first on (digits 15, checksum digits 0), alternating full and empty
/// chains, empty last chains (a checksum of 255: digits 0, 15, 15), and random ones. A step
/// skipped or repeated, or a chain started at the wrong digit or address, changes the key.
fn check_wots(h: &Harness, p: ParamSet, rng: &mut StdRng) {
    let q = p.params();
    let (n, len1) = (q.n, 2 * q.n);
    let mut last_empty = vec![15u8; len1];
    last_empty[..17].fill(0);
    let msgs = [
        vec![0u8; n],
        vec![0xff; n],
        vec![0xf0; n],
        from_digits(&last_empty),
        random(rng, n),
        random(rng, n),
    ];
    let sig_len = q.wots_len() * n;
    let mut input = head(msgs.len(), 0);
    let mut want = Vec::new();
    for m in &msgs {
        let seed = random(rng, n);
        let sig = random(rng, sig_len);
        let layer = rng.gen_range(0..q.d as u32);
        let kp = rng.gen_range(0..1u32 << q.hp);
        let tree: u64 = rng.gen();
        input.extend_from_slice(&seed);
        input.extend_from_slice(m);
        input.extend_from_slice(&layer.to_le_bytes());
        input.extend_from_slice(&kp.to_le_bytes());
        input.extend_from_slice(&tree.to_le_bytes());
        input.extend_from_slice(&sig);
        let mut adrs = Adrs::default();
        adrs.set_layer_address(layer);
        adrs.set_tree_address(tree);
        adrs.set_type_and_clear(AdrsType::WotsHash);
        adrs.set_key_pair_address(kp);
        let mut pk = vec![0u8; n];
        wots::pk_from_sig(&Hasher::new(q, &seed), &sig, m, &adrs, &mut pk);
        want.push(pk);
    }
    let out = h.run("slh_wots_pk", &input);
    assert_eq!(out.len(), msgs.len() * n, "{} wots output", p.name());
    for (i, (got, want)) in out.chunks_exact(n).zip(&want).enumerate() {
        assert!(
            got == &want[..],
            "{} wots_pk_from_sig, message {i}",
            p.name()
        );
    }
}

/// Every check on one set: on the f sets one key emulated (a second from the CPU) and
/// signing; on all, verification (every hash function: F, H, T_len, T_k). The s sets' trees
/// take tens of seconds here; their keygen and signing run on the GPU in `tests/gpu_slhdsa.rs`.
fn check_set(cxx: &str, p: ParamSet) {
    let h = Harness::build(cxx, &format!("slh{}", p.index()), &defines(p));
    let mut rng = StdRng::seed_from_u64(0x205 + p.index() as u64);
    check_wots(&h, p, &mut rng);
    let small = p.params().a >= 12;
    let mut keys = if small {
        Vec::new()
    } else {
        keygen(&h, p, &mut rng, 1)
    };
    while keys.len() < 2 {
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = vec![0u8; p.secret_key_len()];
        let seed = random(&mut rng, p.seed_len());
        slhdsa::keygen_internal(p, &seed, &mut pk, &mut sk).expect("keygen");
        keys.push((pk, sk));
    }
    let n = p.n();
    let msgs: Vec<Vec<u8>> = (0..2).map(|i| random(&mut rng, 1 + 40 * i)).collect();
    let ctx = random(&mut rng, 9);
    let rnd = random(&mut rng, n);
    // Pure with a context and a given opt_rand (key 0); internal, deterministic (key 1).
    let messages = [
        Message::Pure {
            ctx: &ctx,
            msg: &msgs[0],
        },
        Message::Internal(&msgs[1]),
    ];
    let key_of = [0usize, 1];
    let items: Vec<SlhSignItem<'_>> = messages
        .iter()
        .zip(key_of)
        .map(|(m, k)| {
            let sk = &keys[k].1[..];
            SlhSignItem {
                sk,
                msg: *m,
                rnd: Some(if k == 1 { &sk[2 * n..3 * n] } else { &rnd[..] }),
            }
        })
        .collect();
    let sigs: Vec<Vec<u8>> = if !small {
        let key_rows: Vec<&[u8]> = keys.iter().map(|(_, sk)| &sk[..]).collect();
        let sigs = sign_both(&h, p, &key_rows, &[0, 1], &items, true);
        if p == ParamSet::Sha2_128f || p == ParamSet::Shake128f {
            sign_both(&h, p, &key_rows, &[0, 1], &items[..1], false);
        }
        sigs
    } else {
        items
            .iter()
            .map(|it| {
                let mut s = vec![0u8; p.signature_len()];
                slhdsa::sign(p, it.sk, &it.msg, it.rnd, &mut s).expect("cpu sign");
                s
            })
            .collect()
    };
    // Valid signatures, one under the wrong key, and each modified in R, FORS, the first and
    // the last layer.
    let q = p.params();
    let spots = [
        0,
        n + rng.gen_range(0..q.fors_sig_len()),
        n + q.fors_sig_len() + rng.gen_range(0..q.xmss_sig_len()),
        p.signature_len() - 1 - rng.gen_range(0..q.xmss_sig_len()),
    ];
    let bad: Vec<Vec<u8>> = spots
        .iter()
        .enumerate()
        .map(|(j, &at)| {
            let mut s = sigs[j % 2].clone();
            s[at] ^= 1 << rng.gen_range(0..8);
            s
        })
        .collect();
    let mut vitems: Vec<SlhVerifyItem<'_>> = (0..2)
        .map(|j| SlhVerifyItem {
            pk: &keys[key_of[j]].0,
            msg: messages[j],
            sig: &sigs[j],
        })
        .collect();
    vitems.push(SlhVerifyItem {
        pk: &keys[1].0,
        msg: messages[0],
        sig: &sigs[0],
    });
    for (j, s) in bad.iter().enumerate() {
        vitems.push(SlhVerifyItem {
            pk: &keys[key_of[j % 2]].0,
            msg: messages[j % 2],
            sig: s,
        });
    }
    let verdicts = verify_both(&h, p, &vitems);
    assert_eq!(verdicts[..2], [true; 2], "{} valid signatures", p.name());
    assert!(
        verdicts[2..].iter().all(|&v| !v),
        "{} invalid ones",
        p.name()
    );
}

/// Every parameter set, two sets at a time (the harness builds dominate).
#[test]
fn slhdsa_kernels_on_the_cpu() {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (CXX, c++, g++, clang++) to run the kernels on the CPU");
        return;
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&p) = ParamSet::ALL.get(i) else {
                    break;
                };
                let start = std::time::Instant::now();
                check_set(&cxx, p);
                println!(
                    "{}: emulated kernels match the CPU ({:.1} s)",
                    p.name(),
                    start.elapsed().as_secs_f64()
                );
            });
        }
    });
}
