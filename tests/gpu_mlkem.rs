//! GPU ML-KEM against the CPU ground truth, byte for byte: keys from the same d || z,
//! encapsulations from the same m (a key per item, one shared key, three keys), decapsulations
//! of honest, bit-flipped and random ciphertexts (implicit rejection), malformed keys and
//! lengths, fresh randomness decapsulated by the CPU, registered (DMA) buffers, and every NIST
//! ACVP ML-KEM case on the GPU. Skips (with the reason printed) when no GPU is usable, as on CI.
//! `PQGPU_GPU_CASES` sets the items per parameter set and operation (default 20,000).

mod common;

use common::{acvp, bytes, unhex};
use pqgpu::backend::{cpu_backend, Backend, DecapsItem, EncapsItem};
use pqgpu::mlkem::ParamSet;
use pqgpu::{Error, Status};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

fn keygen(b: &dyn Backend, p: ParamSet, seeds: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<Status>) {
    let n = seeds.len() / 64;
    let mut ek = vec![0u8; n * p.encaps_key_len()];
    let mut dk = vec![0u8; n * p.decaps_key_len()];
    let mut st = vec![Err(Error::Panic); n];
    b.mlkem_keygen(p, Some(seeds), &mut ek, &mut dk, &mut st);
    (ek, dk, st)
}

type Encapsulated = (Vec<Vec<u8>>, Vec<[u8; 32]>, Vec<Status>);

fn encaps(b: &dyn Backend, p: ParamSet, items: &[EncapsItem<'_>]) -> Encapsulated {
    let n = items.len();
    let mut cts = vec![vec![0u8; p.ciphertext_len()]; n];
    let mut sss = vec![[0u8; 32]; n];
    let mut st = vec![Err(Error::Panic); n];
    let mut c: Vec<&mut [u8]> = cts.iter_mut().map(|c| &mut c[..]).collect();
    let mut s: Vec<&mut [u8]> = sss.iter_mut().map(|s| &mut s[..]).collect();
    b.mlkem_encaps(p, items, &mut c, &mut s, &mut st);
    (cts, sss, st)
}

fn decaps(b: &dyn Backend, p: ParamSet, items: &[DecapsItem<'_>]) -> (Vec<[u8; 32]>, Vec<Status>) {
    let n = items.len();
    let mut sss = vec![[0u8; 32]; n];
    let mut st = vec![Err(Error::Panic); n];
    let mut s: Vec<&mut [u8]> = sss.iter_mut().map(|s| &mut s[..]).collect();
    b.mlkem_decaps(p, items, &mut s, &mut st);
    (sss, st)
}

/// GPU and CPU encapsulations of `items`, asserted equal (statuses; outputs of items that
/// succeeded); the GPU's.
fn encaps_both(gpu: &dyn Backend, p: ParamSet, items: &[EncapsItem<'_>]) -> Encapsulated {
    let got = encaps(gpu, p, items);
    let want = encaps(&*cpu_backend(), p, items);
    assert_eq!(got.2, want.2, "{} encaps statuses", p.name());
    for j in (0..items.len()).filter(|&j| want.2[j].is_ok()) {
        assert!(got.0[j] == want.0[j], "{} encaps ciphertext {j}", p.name());
        assert_eq!(got.1[j], want.1[j], "{} encaps shared secret {j}", p.name());
    }
    got
}

fn decaps_both(gpu: &dyn Backend, p: ParamSet, items: &[DecapsItem<'_>]) -> Vec<[u8; 32]> {
    let got = decaps(gpu, p, items);
    let want = decaps(&*cpu_backend(), p, items);
    assert_eq!(got.1, want.1, "{} decaps statuses", p.name());
    for j in (0..items.len()).filter(|&j| want.1[j].is_ok()) {
        assert_eq!(got.0[j], want.0[j], "{} decaps shared secret {j}", p.name());
    }
    got.0
}

/// Item j of `cts` as is (j % 4 == 0, 3), one bit flipped (1) or random bytes (2).
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

/// `n` encapsulations under `eks` (cycled), plus malformed items, then decapsulation of honest
/// and tampered ciphertexts under the matching `dks`, plus malformed items.
fn run_keys(
    gpu: &dyn Backend,
    p: ParamSet,
    rng: &mut StdRng,
    eks: &[&[u8]],
    dks: &[&[u8]],
    n: usize,
) {
    let m: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
    // ek's first coefficient set to q = 3329: fails the modulus check.
    let mut bad_ek = eks[0].to_vec();
    bad_ek[0] = 0x01;
    bad_ek[1] = (bad_ek[1] & 0xF0) | 0x0D;
    let short_ek = &eks[0][1..];
    let mut items: Vec<EncapsItem> = (0..n)
        .map(|j| EncapsItem {
            pk: eks[j % eks.len()],
            coins: Some(&m[j]),
        })
        .collect();
    items.push(EncapsItem {
        pk: &bad_ek,
        coins: Some(&m[0]),
    });
    items.push(EncapsItem {
        pk: short_ek,
        coins: Some(&m[0]),
    });
    let (cts, sss, st) = encaps_both(gpu, p, &items);
    assert_eq!(
        st[n],
        Err(Error::BadKey),
        "{}: ek failing the modulus check",
        p.name()
    );
    assert_eq!(st[n + 1], Err(Error::BadLength));
    assert!(st[..n].iter().all(|s| s.is_ok()));

    let cts2 = tamper(rng, &cts[..n]);
    // dk with H(ek) altered: fails the hash check.
    let mut bad_dk = dks[0].to_vec();
    let h_at = p.decaps_key_len() - 64;
    bad_dk[h_at] ^= 1;
    let mut items: Vec<DecapsItem> = (0..n)
        .map(|j| DecapsItem {
            sk: dks[j % dks.len()],
            ct: &cts2[j],
        })
        .collect();
    items.push(DecapsItem {
        sk: &bad_dk,
        ct: &cts2[0],
    });
    items.push(DecapsItem {
        sk: dks[0],
        ct: &cts2[0][1..],
    });
    let got = decaps_both(gpu, p, &items);
    let st = decaps(gpu, p, &items[n..]).1;
    assert_eq!(st, [Err(Error::BadKey), Err(Error::BadLength)]);
    for j in (0..n).filter(|j| j % 4 == 0 || j % 4 == 3) {
        assert_eq!(got[j], sss[j], "{} honest decaps {j}", p.name());
    }
    for j in (0..n).filter(|j| j % 4 == 1) {
        assert_ne!(got[j], sss[j], "{} bit-flipped decaps {j}", p.name());
    }
}

fn run_set(p: ParamSet) {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = common::gpu_cases(20_000);
    let mut rng = StdRng::seed_from_u64(0x203_0000 + p.k() as u64);
    let seeds = bytes(&mut rng, 64 * n);
    let (eks, dks, st) = keygen(&*gpu, p, &seeds);
    let (want_ek, want_dk, want_st) = keygen(&*cpu_backend(), p, &seeds);
    assert_eq!(st, want_st);
    assert!(st.iter().all(|s| s.is_ok()), "{} keygen statuses", p.name());
    assert!(eks == want_ek, "{} keygen ek", p.name());
    assert!(dks == want_dk, "{} keygen dk", p.name());
    let ek: Vec<&[u8]> = eks.chunks_exact(p.encaps_key_len()).collect();
    let dk: Vec<&[u8]> = dks.chunks_exact(p.decaps_key_len()).collect();
    // A key per item, one server key, three keys with many items each.
    run_keys(&*gpu, p, &mut rng, &ek, &dk, n);
    run_keys(&*gpu, p, &mut rng, &ek[..1], &dk[..1], n / 2);
    run_keys(&*gpu, p, &mut rng, &ek[..3], &dk[..3], n / 4);
    println!(
        "{}: {n} keygen, {} encaps and {} decaps cases (key per item, one key, three keys; 1/4 bit-flipped, 1/4 random ct; malformed keys and lengths) match the CPU",
        p.name(),
        n + n / 2 + n / 4,
        n + n / 2 + n / 4
    );
}

#[test]
fn gpu_mlkem_512_matches_cpu() {
    run_set(ParamSet::MlKem512);
}

#[test]
fn gpu_mlkem_768_matches_cpu() {
    run_set(ParamSet::MlKem768);
}

#[test]
fn gpu_mlkem_1024_matches_cpu() {
    run_set(ParamSet::MlKem1024);
}

/// One-key batches whose key changes from batch to batch, and back: a worker keeps the last
/// key's rows and Â between chunks, which must never serve another key (nor another set).
#[test]
fn gpu_mlkem_one_key_batches_with_changing_keys() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = 300;
    for p in ParamSet::ALL {
        let mut rng = StdRng::seed_from_u64(0x4E7 + p.k() as u64);
        let (eks, dks, _) = keygen(&*gpu, p, &bytes(&mut rng, 128));
        let ek: Vec<&[u8]> = eks.chunks_exact(p.encaps_key_len()).collect();
        let dk: Vec<&[u8]> = dks.chunks_exact(p.decaps_key_len()).collect();
        for key in [0, 1, 0, 0, 1] {
            let m: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
            let items: Vec<EncapsItem> = m
                .iter()
                .map(|m| EncapsItem {
                    pk: ek[key],
                    coins: Some(m),
                })
                .collect();
            let (cts, _, _) = encaps_both(&*gpu, p, &items);
            let cts = tamper(&mut rng, &cts);
            let items: Vec<DecapsItem> = cts
                .iter()
                .map(|ct| DecapsItem { sk: dk[key], ct })
                .collect();
            decaps_both(&*gpu, p, &items);
        }
    }
    println!("one-key batches alternating between two keys, every parameter set: match the CPU");
}

/// Fresh randomness (NULL m): a chunk whose items all want it draws it on the GPU, a mixed
/// chunk on the host. Every shared secret equals the CPU's decapsulation of its ciphertext and
/// no two ciphertexts of a batch are equal.
#[test]
fn gpu_mlkem_fresh_randomness_decapsulates_on_the_cpu() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let n = common::gpu_cases(2000).max(64);
    for p in ParamSet::ALL {
        let mut rng = StdRng::seed_from_u64(0xF5E + p.k() as u64);
        let (ek, dk, _) = keygen(&*gpu, p, &bytes(&mut rng, 64));
        let given: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
        for mixed in [false, true] {
            let items: Vec<EncapsItem> = (0..n)
                .map(|j| EncapsItem {
                    pk: &ek,
                    coins: (mixed && j % 2 == 0).then_some(&given[j]),
                })
                .collect();
            let (cts, sss, st) = encaps(&*gpu, p, &items);
            assert!(st.iter().all(|s| s.is_ok()), "{} encaps statuses", p.name());
            let distinct: std::collections::HashSet<&Vec<u8>> = cts.iter().collect();
            assert_eq!(
                distinct.len(),
                n,
                "{} mixed {mixed}: repeated ciphertexts",
                p.name()
            );
            let dec: Vec<DecapsItem> = cts.iter().map(|ct| DecapsItem { sk: &dk, ct }).collect();
            let (cpu_ss, cpu_st) = decaps(&*cpu_backend(), p, &dec);
            assert!(cpu_st.iter().all(|s| s.is_ok()));
            assert_eq!(cpu_ss, sss, "{} mixed {mixed}: CPU decapsulation", p.name());
        }
    }
    println!("fresh randomness ({n} items per batch, GPU-drawn and mixed): every ciphertext distinct and decapsulated by the CPU");
}

/// Fresh keys (NULL seeds): each chunk draws its seeds on the GPU from a key of OS randomness.
/// Over several chunks every key is distinct, and each key pair works on the CPU: its ek
/// encapsulates there and its dk (which the CPU checks, FIPS 203 7.3) decapsulates to the same
/// shared secret.
#[test]
fn gpu_mlkem_fresh_keys_work_on_the_cpu() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    // More than two chunks of any chunk size the engine uses (4,096-16,384).
    let n = 2 * 16_384 + 3;
    for p in ParamSet::ALL {
        let (mut eks, mut dks) = (
            vec![0u8; n * p.encaps_key_len()],
            vec![0u8; n * p.decaps_key_len()],
        );
        let mut st = vec![Err(Error::Device); n];
        gpu.mlkem_keygen(p, None, &mut eks, &mut dks, &mut st);
        assert!(st.iter().all(|s| s.is_ok()), "{} keygen statuses", p.name());
        let eks: Vec<&[u8]> = eks.chunks(p.encaps_key_len()).collect();
        let dks: Vec<&[u8]> = dks.chunks(p.decaps_key_len()).collect();
        let distinct: std::collections::HashSet<&[u8]> = eks.iter().copied().collect();
        assert_eq!(distinct.len(), n, "{}: repeated keys", p.name());
        let items: Vec<EncapsItem> = eks
            .iter()
            .map(|&pk| EncapsItem { pk, coins: None })
            .collect();
        let (cts, sss, st) = encaps(&*cpu_backend(), p, &items);
        assert!(
            st.iter().all(|s| s.is_ok()),
            "{} CPU encaps statuses",
            p.name()
        );
        let dec: Vec<DecapsItem> = dks
            .iter()
            .zip(&cts)
            .map(|(&sk, ct)| DecapsItem { sk, ct })
            .collect();
        let (got, st) = decaps(&*cpu_backend(), p, &dec);
        assert!(
            st.iter().all(|s| s.is_ok()),
            "{} CPU decaps statuses",
            p.name()
        );
        assert_eq!(
            got,
            sss,
            "{}: CPU decapsulation under the GPU's keys",
            p.name()
        );
    }
    println!(
        "fresh keys ({n} per set, GPU-drawn seeds): distinct, and every pair works on the CPU"
    );
}

/// Host buffers registered with the backend for as long as it lives: unregistered when it is
/// dropped, on a failed assertion too, so that a test that panics leaves no registration behind
/// for the next test's allocations (which would be refused as overlapping it).
struct Registered<'a> {
    gpu: &'a dyn Backend,
    ptrs: Vec<*const u8>,
}

impl<'a> Registered<'a> {
    fn new(gpu: &'a dyn Backend) -> Self {
        Registered {
            gpu,
            ptrs: Vec::new(),
        }
    }

    fn add(&mut self, buf: &[u8], what: &str) {
        self.gpu
            .register_host_memory(buf)
            .unwrap_or_else(|e| panic!("register {what}: {e:?}"));
        self.ptrs.push(buf.as_ptr());
    }

    /// Unregisters every buffer now, checking each status.
    fn release(mut self) {
        for p in std::mem::take(&mut self.ptrs) {
            self.gpu.unregister_host_memory(p).expect("unregister");
        }
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        for &p in &self.ptrs {
            // A panicking test: its buffers are freed right after this.
            let _ = self.gpu.unregister_host_memory(p);
        }
    }
}

/// Keys, ciphertexts and shared secrets in registered memory: outputs by DMA, ciphertexts in
/// by DMA, equal to the CPU's.
#[test]
fn gpu_mlkem_registered_buffers() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let p = ParamSet::MlKem768;
    let n = 5000;
    let mut rng = StdRng::seed_from_u64(0xD3A);
    let seeds = bytes(&mut rng, 64 * n);
    let (el, dl, cl) = (p.encaps_key_len(), p.decaps_key_len(), p.ciphertext_len());
    // One registered arena: eks | dks | cts | sss.
    let mut arena = vec![0u8; n * (el + dl + cl + 32)];
    let mut reg = Registered::new(&*gpu);
    reg.add(&arena, "arena");
    {
        let (eks, rest) = arena.split_at_mut(n * el);
        let (dks, rest) = rest.split_at_mut(n * dl);
        let (cts, sss) = rest.split_at_mut(n * cl);
        let mut st = vec![Err(Error::Panic); n];
        gpu.mlkem_keygen(p, Some(&seeds), eks, dks, &mut st);
        assert!(st.iter().all(|s| s.is_ok()));
        let (want_ek, want_dk, _) = keygen(&*cpu_backend(), p, &seeds);
        assert!(
            eks == &want_ek[..] && dks == &want_dk[..],
            "registered keygen"
        );
        let m: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
        let items: Vec<EncapsItem> = (0..n)
            .map(|j| EncapsItem {
                pk: &eks[j * el..(j + 1) * el],
                coins: Some(&m[j]),
            })
            .collect();
        let mut c: Vec<&mut [u8]> = cts.chunks_exact_mut(cl).collect();
        let mut s: Vec<&mut [u8]> = sss.chunks_exact_mut(32).collect();
        gpu.mlkem_encaps(p, &items, &mut c, &mut s, &mut st);
        assert!(st.iter().all(|s| s.is_ok()));
        let (want_ct, want_ss, _) = encaps(&*cpu_backend(), p, &items);
        for j in 0..n {
            assert!(
                c[j] == &want_ct[j][..] && s[j] == &want_ss[j][..],
                "registered encaps {j}"
            );
        }
        let (cts, sss): (&[u8], &mut [u8]) = (cts, sss);
        let items: Vec<DecapsItem> = (0..n)
            .map(|j| DecapsItem {
                sk: &dks[j * dl..(j + 1) * dl],
                ct: &cts[j * cl..(j + 1) * cl],
            })
            .collect();
        sss.fill(0);
        let mut s: Vec<&mut [u8]> = sss.chunks_exact_mut(32).collect();
        gpu.mlkem_decaps(p, &items, &mut s, &mut st);
        assert!(st.iter().all(|s| s.is_ok()));
        for j in 0..n {
            assert_eq!(s[j], &want_ss[j][..], "registered decaps {j}");
        }
    }
    reg.release();
    println!(
        "{}: {n} keygen, encaps and decaps through registered buffers match the CPU",
        p.name()
    );
}

/// What a batch of encapsulations and then decapsulations leaves: statuses and every output
/// row (a failed item's ciphertext as it was, its shared secret zeroed).
#[derive(PartialEq)]
struct Outputs {
    enc_st: Vec<Status>,
    dec_st: Vec<Status>,
    cts: Vec<u8>,
    enc_ss: Vec<u8>,
    dec_ss: Vec<u8>,
}

/// `enc` then `dec` on `b`, into `cts` and `sss` (rows of the item order) filled with `fill`
/// before each operation.
fn outputs(
    b: &dyn Backend,
    p: ParamSet,
    enc: &[EncapsItem<'_>],
    dec: &[DecapsItem<'_>],
    (cts, sss): (&mut [u8], &mut [u8]),
    fill: u8,
) -> Outputs {
    cts.fill(fill);
    sss.fill(fill);
    let mut enc_st = vec![Err(Error::Panic); enc.len()];
    let mut c: Vec<&mut [u8]> = cts.chunks_exact_mut(p.ciphertext_len()).collect();
    let mut s: Vec<&mut [u8]> = sss.chunks_exact_mut(32).collect();
    b.mlkem_encaps(p, enc, &mut c, &mut s, &mut enc_st);
    let enc_ss = sss.to_vec();
    sss.fill(fill);
    let mut dec_st = vec![Err(Error::Panic); dec.len()];
    let mut s: Vec<&mut [u8]> = sss.chunks_exact_mut(32).collect();
    b.mlkem_decaps(p, dec, &mut s, &mut dec_st);
    Outputs {
        enc_st,
        dec_st,
        cts: cts.to_vec(),
        enc_ss,
        dec_ss: sss.to_vec(),
    }
}

/// Which 32-byte rows differ, by kind (a failed item's row not zeroed; a live item's row left
/// as the filler, zeroed or else wrong), with the first few items of each: what tells apart
/// rows never written, written to the wrong place and written wrong.
fn row_diff(got: &[u8], want: &[u8], len: usize, st: &[Status], fill: u8) -> String {
    let mut kinds: [(&str, Vec<usize>); 4] = [
        ("failed item, row not zeroed", vec![]),
        ("live item, row left as filler", vec![]),
        ("live item, row zeroed", vec![]),
        ("live item, other bytes", vec![]),
    ];
    for (j, (g, w)) in got.chunks(len).zip(want.chunks(len)).enumerate() {
        if g == w {
            continue;
        }
        let k = match (st[j].is_ok(), g) {
            (false, _) => 0,
            (true, g) if g.iter().all(|&b| b == fill) => 1,
            (true, g) if g.iter().all(|&b| b == 0) => 2,
            _ => 3,
        };
        kinds[k].1.push(j);
    }
    let parts: Vec<String> = kinds
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(what, v)| format!("{what}: {} rows, first {:?}", v.len(), &v[..v.len().min(8)]))
        .collect();
    format!("rows differ: {}", parts.join("; "))
}

/// A key per item with malformed keys among them (every 7th ek fails the modulus check, every
/// 5th dk the hash check; in the shuffled batches some items use a copy of a key from
/// elsewhere), keys and outputs in registered memory (keys in by DMA, outputs by DMA or the
/// scatter kernel) or not, in array order or shuffled: statuses, ciphertexts, shared secrets
/// and the untouched outputs of the failed items all equal the CPU's.
#[test]
fn gpu_mlkem_key_per_item_with_malformed_keys() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let p = ParamSet::MlKem768;
    let n = common::gpu_cases(20_000).max(64);
    let (el, dl, cl) = (p.encaps_key_len(), p.decaps_key_len(), p.ciphertext_len());
    let mut rng = StdRng::seed_from_u64(0xBAD_4E7);
    let (mut eks, mut dks, _) = keygen(&*cpu_backend(), p, &bytes(&mut rng, 64 * n));
    for j in 0..n {
        if j % 7 == 3 {
            // Coefficient 2 g of t̂_0 set to q + j % 700 (12 bits still).
            let (v, at) = (3329 + (j % 700) as u16, j * el + 3 * (j % 128));
            eks[at] = v as u8;
            eks[at + 1] = (eks[at + 1] & 0xF0) | (v >> 8) as u8;
        }
        if j % 5 == 2 {
            // A bit of H(ek) in dk.
            dks[j * dl + dl - 64 + j % 32] ^= 1 << (j % 8);
        }
    }
    let (copy_ek, copy_dk) = (eks[..el].to_vec(), dks[..dl].to_vec());
    let m: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
    // One arena: eks | dks | cts | sss.
    let mut arena = vec![0u8; n * (el + dl + cl + 32)];
    let (keys, io) = arena.split_at_mut(n * (el + dl));
    keys[..n * el].copy_from_slice(&eks);
    keys[n * el..].copy_from_slice(&dks);
    let keys: &[u8] = keys;
    let (ek_arr, dk_arr) = keys.split_at(n * el);
    let (mut cpu_cts, mut cpu_sss) = (vec![0u8; n * cl], vec![0u8; n * 32]);
    let mut tried = 0;
    for registered in [true, false] {
        let mut reg = Registered::new(&*gpu);
        if registered {
            reg.add(keys, "keys");
            reg.add(io, "outputs");
        }
        for shuffled in [false, true] {
            let mut order: Vec<usize> = (0..n).collect();
            if shuffled {
                for j in (1..n).rev() {
                    order.swap(j, rng.gen_range(0..=j));
                }
            }
            let ek_of = |j: usize| match shuffled && j % 13 == 0 {
                true => &copy_ek[..],
                false => &ek_arr[order[j] * el..(order[j] + 1) * el],
            };
            let dk_of = |j: usize| match shuffled && j % 11 == 0 {
                true => &copy_dk[..],
                false => &dk_arr[order[j] * dl..(order[j] + 1) * dl],
            };
            let enc: Vec<EncapsItem> = (0..n)
                .map(|j| EncapsItem {
                    pk: ek_of(j),
                    coins: Some(&m[j]),
                })
                .collect();
            // The CPU's ciphertexts, every fourth with a bit flipped (a failed item's row is
            // the filler, decapsulated all the same).
            let cpu = &*cpu_backend();
            let sent = outputs(cpu, p, &enc, &[], (&mut cpu_cts, &mut cpu_sss), 0x5A);
            let mut ct_rows: Vec<Vec<u8>> = sent.cts.chunks(cl).map(|c| c.to_vec()).collect();
            ct_rows
                .iter_mut()
                .skip(1)
                .step_by(4)
                .for_each(|c| c[0] ^= 1);
            let dec: Vec<DecapsItem> = (0..n)
                .map(|j| DecapsItem {
                    sk: dk_of(j),
                    ct: &ct_rows[j],
                })
                .collect();
            let want = outputs(cpu, p, &enc, &dec, (&mut cpu_cts, &mut cpu_sss), 0x5A);
            let (ct_io, ss_io) = io.split_at_mut(n * cl);
            let got = outputs(&*gpu, p, &enc, &dec, (ct_io, ss_io), 0x5A);
            let case = format!("registered {registered}, shuffled {shuffled}");
            let bad = |st: &[Status]| st.iter().filter(|s| **s == Err(Error::BadKey)).count();
            // About n/7 bad eks and n/5 bad dks, fewer where shuffled items use the copies of
            // key 0 (valid): the bounds leave room for the shuffle at small n.
            assert!(
                bad(&want.enc_st) >= n / 12 && bad(&want.dec_st) >= n / 8,
                "too few malformed keys in the batch, {case}"
            );
            assert_eq!(got.enc_st, want.enc_st, "encaps statuses, {case}");
            assert_eq!(got.dec_st, want.dec_st, "decaps statuses, {case}");
            assert!(
                got.cts == want.cts,
                "ciphertexts, {case}: {}",
                row_diff(&got.cts, &want.cts, cl, &want.enc_st, 0x5A)
            );
            let ss = |what: &str, got: &[u8], want: &[u8], st: &[Status]| {
                let diff = || row_diff(got, want, 32, st, 0x5A);
                assert!(got == want, "{what} shared secrets, {case}: {}", diff());
            };
            ss("encaps", &got.enc_ss, &want.enc_ss, &want.enc_st);
            ss("decaps", &got.dec_ss, &want.dec_ss, &want.dec_st);
            tried += 1;
        }
        reg.release();
    }
    println!(
        "{}: {tried} batches of {n} items with a key per item, malformed keys among them (registered or not, in order or shuffled), match the CPU: statuses, outputs, untouched failures",
        p.name()
    );
}

fn acvp_set(name: &str) -> ParamSet {
    ParamSet::ALL
        .into_iter()
        .find(|p| p.name() == name)
        .unwrap_or_else(|| panic!("unknown parameter set {name}"))
}

fn test_passed(t: &serde_json::Value) -> bool {
    match &t["testPassed"] {
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::String(s) => s.eq_ignore_ascii_case("true"),
        other => panic!("testPassed {other}"),
    }
}

/// Every NIST ACVP ML-KEM case on the GPU, each group as one batch: keyGen; encapsulation;
/// decapsulation (valid and modified ciphertexts); both key checks, through the statuses.
#[test]
fn gpu_mlkem_acvp_vectors() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let mut count = 0;
    let kg = acvp::load("ML-KEM-keyGen-FIPS203/internalProjection.json");
    for g in kg["testGroups"].as_array().expect("testGroups") {
        let p = acvp_set(acvp::s(g, "parameterSet"));
        let tests = g["tests"].as_array().expect("tests");
        let seeds: Vec<u8> = tests
            .iter()
            .flat_map(|t| [unhex(acvp::s(t, "d")), unhex(acvp::s(t, "z"))].concat())
            .collect();
        let (eks, dks, st) = keygen(&*gpu, p, &seeds);
        assert!(st.iter().all(|s| s.is_ok()));
        for (j, t) in tests.iter().enumerate() {
            let (el, dl) = (p.encaps_key_len(), p.decaps_key_len());
            assert_eq!(
                eks[j * el..(j + 1) * el],
                unhex(acvp::s(t, "ek"))[..],
                "keyGen {}",
                t["tcId"]
            );
            assert_eq!(
                dks[j * dl..(j + 1) * dl],
                unhex(acvp::s(t, "dk"))[..],
                "keyGen {}",
                t["tcId"]
            );
            count += 1;
        }
    }
    let ed = acvp::load("ML-KEM-encapDecap-FIPS203/internalProjection.json");
    for g in ed["testGroups"].as_array().expect("testGroups") {
        let p = acvp_set(acvp::s(g, "parameterSet"));
        let tests = g["tests"].as_array().expect("tests");
        let field =
            |f: &str| -> Vec<Vec<u8>> { tests.iter().map(|t| unhex(acvp::s(t, f))).collect() };
        match acvp::s(g, "function") {
            "encapsulation" => {
                let (ek, m) = (field("ek"), field("m"));
                let m: Vec<[u8; 32]> = m.iter().map(|m| m[..].try_into().expect("m")).collect();
                let items: Vec<EncapsItem> = (0..tests.len())
                    .map(|j| EncapsItem {
                        pk: &ek[j],
                        coins: Some(&m[j]),
                    })
                    .collect();
                let (cts, sss, st) = encaps(&*gpu, p, &items);
                for (j, t) in tests.iter().enumerate() {
                    assert_eq!(st[j], Ok(()), "encapsulation {}", t["tcId"]);
                    assert_eq!(
                        cts[j],
                        unhex(acvp::s(t, "c")),
                        "encapsulation {}: c",
                        t["tcId"]
                    );
                    assert_eq!(
                        sss[j][..],
                        unhex(acvp::s(t, "k"))[..],
                        "encapsulation {}: k",
                        t["tcId"]
                    );
                }
            }
            "decapsulation" => {
                let (dk, c) = (field("dk"), field("c"));
                let items: Vec<DecapsItem> = (0..tests.len())
                    .map(|j| DecapsItem {
                        sk: &dk[j],
                        ct: &c[j],
                    })
                    .collect();
                let (sss, st) = decaps(&*gpu, p, &items);
                for (j, t) in tests.iter().enumerate() {
                    assert_eq!(st[j], Ok(()), "decapsulation {}", t["tcId"]);
                    assert_eq!(
                        sss[j][..],
                        unhex(acvp::s(t, "k"))[..],
                        "decapsulation {}",
                        t["tcId"]
                    );
                }
            }
            "encapsulationKeyCheck" => {
                let ek = field("ek");
                let m = [0u8; 32];
                let items: Vec<EncapsItem> = ek
                    .iter()
                    .map(|ek| EncapsItem {
                        pk: ek,
                        coins: Some(&m),
                    })
                    .collect();
                let st = encaps(&*gpu, p, &items).2;
                for (j, t) in tests.iter().enumerate() {
                    assert_eq!(
                        st[j].is_ok(),
                        test_passed(t),
                        "encapsulationKeyCheck {}",
                        t["tcId"]
                    );
                }
            }
            "decapsulationKeyCheck" => {
                let dk = field("dk");
                let ct = vec![0u8; p.ciphertext_len()];
                let items: Vec<DecapsItem> =
                    dk.iter().map(|dk| DecapsItem { sk: dk, ct: &ct }).collect();
                let st = decaps(&*gpu, p, &items).1;
                for (j, t) in tests.iter().enumerate() {
                    assert_eq!(
                        st[j].is_ok(),
                        test_passed(t),
                        "decapsulationKeyCheck {}",
                        t["tcId"]
                    );
                }
            }
            other => panic!("unexpected function {other}"),
        }
        count += tests.len();
    }
    assert_eq!(count, 75 + 195);
    println!("ACVP ML-KEM on the GPU: {count} cases (keyGen, encapsulation, decapsulation, both key checks) pass");
}
