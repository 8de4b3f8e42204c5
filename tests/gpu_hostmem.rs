//! Registered host memory on the GPU backend: batches whose buffers lie in registered memory
//! take the direct paths (strided DMA for evenly spaced rows, the gather/scatter kernels for
//! rows anywhere), and every result must still equal the CPU backend's, byte for byte. Skips
//! (with the reason printed) when no GPU is usable, as on CI. `PQGPU_GPU_CASES` sets the
//! cases per parameter set.

mod common;

use pqgpu::backend::{cpu_backend, Backend, DecapsItem, EncapsItem, VerifyItem};
use pqgpu::mldsa::{Message, ParamSet};
use pqgpu::{ctru, Error, Status};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};

/// Cases per parameter set: `PQGPU_GPU_CASES`, else 3000.
fn cases() -> usize {
    common::gpu_cases(3000)
}

/// A buffer registered in two parts that share a page (as neighbouring heap allocations do),
/// so that copies into it span two driver registrations; unregistered when dropped.
struct Registered<'a> {
    gpu: &'a dyn Backend,
    buf: Vec<u8>,
    split: usize,
}

impl<'a> Registered<'a> {
    fn new(gpu: &'a dyn Backend, len: usize) -> Self {
        let buf = vec![0u8; len];
        let split = 100.min(len / 2);
        gpu.register_host_memory(&buf[..split]).expect("register");
        gpu.register_host_memory(&buf[split..]).expect("register");
        Registered { gpu, buf, split }
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        for at in [0, self.split] {
            self.gpu
                .unregister_host_memory(self.buf[at..].as_ptr())
                .expect("unregister");
        }
    }
}

/// Row offsets inside an arena: evenly spaced (`pitch`), or shuffled with odd gaps so rows
/// start at every alignment (the gather kernel's byte, word and 16-byte paths).
fn layout(rng: &mut StdRng, n: usize, len: usize, even: bool) -> (Vec<usize>, usize) {
    if even {
        return ((0..n).map(|i| i * len).collect(), n * len);
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    let mut offs = vec![0; n];
    let mut at = 0;
    for &i in &order {
        at += rng.gen_range(0..20);
        offs[i] = at;
        at += len;
    }
    (offs, at)
}

#[test]
fn registration_rules() {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let buf = vec![0u8; 1 << 16];
    gpu.register_host_memory(&buf).expect("register");
    assert_eq!(
        gpu.register_host_memory(&buf[100..200]),
        Err(Error::InvalidArgument),
        "an overlapping registration is refused"
    );
    assert_eq!(
        gpu.unregister_host_memory(buf[1..].as_ptr()),
        Err(Error::InvalidArgument),
        "only the start of a registered buffer unregisters it"
    );
    gpu.unregister_host_memory(buf.as_ptr())
        .expect("unregister");
    assert_eq!(
        gpu.unregister_host_memory(buf.as_ptr()),
        Err(Error::InvalidArgument),
        "a second unregister is refused"
    );
    assert_eq!(gpu.register_host_memory(&[]), Err(Error::InvalidArgument));
}

fn mldsa(p: ParamSet, seed: u64) {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let gpu = &*gpu;
    let cpu = cpu_backend();
    let n = cases();
    let (pl, sl, gl) = (p.public_key_len(), p.secret_key_len(), p.signature_len());
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seeds = vec![0u8; n * 32];
    rng.fill_bytes(&mut seeds);

    // KeyGen straight into registered key arrays (DMA), against the CPU.
    let mut keys = Registered::new(gpu, n * (pl + sl));
    let (pks, sks) = keys.buf.split_at_mut(n * pl);
    let mut st = vec![Err(Error::Panic); n];
    gpu.mldsa_keygen(p, Some(&seeds), pks, sks, &mut st);
    assert!(st.iter().all(|s| s.is_ok()));
    let (mut cpk, mut csk) = (vec![0u8; n * pl], vec![0u8; n * sl]);
    cpu.mldsa_keygen(p, Some(&seeds), &mut cpk, &mut csk, &mut st);
    assert!(
        pks[..] == cpk[..] && sks[..] == csk[..],
        "{}: keys differ",
        p.name()
    );

    // Signatures from the CPU, a third of them tampered.
    let msgs: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
    let mut sigs = vec![0u8; n * gl];
    {
        let items: Vec<_> = (0..n)
            .map(|i| pqgpu::backend::SignItem {
                sk: &csk[i * sl..(i + 1) * sl],
                msg: Message::Pure {
                    ctx: b"hostmem",
                    msg: &msgs[i],
                },
                rnd: Some(&[0; 32]),
            })
            .collect();
        let mut outs: Vec<&mut [u8]> = sigs.chunks_exact_mut(gl).collect();
        cpu.mldsa_sign(p, &items, &mut outs, &mut st);
        assert!(st.iter().all(|s| s.is_ok()));
    }
    // Signing from a registered key array (one DMA) into registered signature rows, evenly
    // spaced (one DMA) and shuffled (the scatter kernel). One key is malformed: its status is
    // BadKey, as on the CPU, and its row comes back zeroed, not with the device's stale bytes.
    {
        let mut keyreg = Registered::new(gpu, n * sl);
        keyreg.buf.copy_from_slice(&csk);
        let bad = 1.min(n - 1);
        keyreg.buf[bad * sl + 128] = 0xFF; // s1's first coefficient out of [-eta, eta]
        for even in [true, false] {
            let (off, end) = layout(&mut rng, n, gl, even);
            let mut out = Registered::new(gpu, end);
            out.buf.fill(0xAA);
            let items: Vec<_> = (0..n)
                .map(|i| pqgpu::backend::SignItem {
                    sk: &keyreg.buf[i * sl..(i + 1) * sl],
                    msg: Message::Pure {
                        ctx: b"hostmem",
                        msg: &msgs[i],
                    },
                    rnd: Some(&[0; 32]),
                })
                .collect();
            let mut g = vec![Err(Error::Panic); n];
            gpu.mldsa_sign(p, &items, &mut rows_mut(&mut out.buf, &off, gl), &mut g);
            let mut c = vec![Err(Error::Panic); n];
            let mut scratch = vec![0u8; gl];
            cpu.mldsa_sign(
                p,
                &items[bad..bad + 1],
                &mut [&mut scratch[..]],
                &mut c[..1],
            );
            assert_eq!((g[bad], c[0]), (Err(Error::BadKey), Err(Error::BadKey)));
            assert!(out.buf[off[bad]..off[bad] + gl].iter().all(|&b| b == 0));
            for i in (0..n).filter(|&i| i != bad) {
                assert_eq!(g[i], Ok(()), "{} sign {i} (even {even})", p.name());
                assert!(
                    out.buf[off[i]..off[i] + gl] == sigs[i * gl..(i + 1) * gl],
                    "{} signature {i} (even {even})",
                    p.name()
                );
            }
        }
    }

    for i in (0..n).step_by(3) {
        let bit = rng.gen_range(0..gl * 8);
        sigs[i * gl + bit / 8] ^= 1 << (bit % 8);
    }

    // Verify from registered rows: evenly spaced (strided DMA) and scattered (gather kernel),
    // and once with one signature outside registered memory (the staged path).
    for even in [true, false] {
        let (pk_off, pk_end) = layout(&mut rng, n, pl, even);
        let (sig_off, sig_end) = layout(&mut rng, n, gl, even);
        let mut arena = Registered::new(gpu, pk_end + sig_end);
        for i in 0..n {
            arena.buf[pk_off[i]..pk_off[i] + pl].copy_from_slice(&cpk[i * pl..(i + 1) * pl]);
            let at = pk_end + sig_off[i];
            arena.buf[at..at + gl].copy_from_slice(&sigs[i * gl..(i + 1) * gl]);
        }
        let outside = sigs[..gl].to_vec();
        for with_outside in [false, true] {
            let items: Vec<VerifyItem> = (0..n)
                .map(|i| VerifyItem {
                    pk: &arena.buf[pk_off[i]..pk_off[i] + pl],
                    msg: Message::Pure {
                        ctx: b"hostmem",
                        msg: &msgs[i],
                    },
                    sig: if with_outside && i == 0 {
                        &outside
                    } else {
                        &arena.buf[pk_end + sig_off[i]..][..gl]
                    },
                })
                .collect();
            let mut g = vec![Err(Error::Panic); n];
            let mut c = vec![Err(Error::Panic); n];
            gpu.mldsa_verify(p, &items, &mut g);
            cpu.mldsa_verify(p, &items, &mut c);
            assert_eq!(g, c, "{} verify verdicts (even {even})", p.name());
            let valid = g.iter().filter(|s| s.is_ok()).count();
            assert_eq!(valid, n - n.div_ceil(3), "{}: valid count", p.name());
        }
    }
    println!(
        "{}: {n} keys, 2 x {n} signatures and 4 x {n} verifies through registered memory identical",
        p.name()
    );
}

#[test]
fn mldsa44_registered_matches_cpu() {
    mldsa(ParamSet::MlDsa44, 1);
}

#[test]
fn mldsa65_registered_matches_cpu() {
    mldsa(ParamSet::MlDsa65, 2);
}

#[test]
fn mldsa87_registered_matches_cpu() {
    mldsa(ParamSet::MlDsa87, 3);
}

fn kem(p: ctru::ParamSet, seed: u64) {
    let Some(gpu) = common::gpu_or_skip() else {
        return;
    };
    let gpu = &*gpu;
    let cpu = cpu_backend();
    let n = cases();
    let (pl, sl, cl) = (p.public_key_len(), p.secret_key_len(), p.ciphertext_len());
    let mut rng = StdRng::seed_from_u64(seed);
    let mut kseed = [0u8; 64];
    rng.fill_bytes(&mut kseed);
    let (mut pk, mut sk) = (vec![0u8; pl], vec![0u8; sl]);
    let mut st1 = [Err(Error::Panic)];
    cpu.kem_keygen(p, Some(&kseed), &mut pk, &mut sk, &mut st1);
    assert!(st1[0].is_ok());

    // KeyGen straight into registered key arrays (DMA), against the CPU.
    let mut seeds = vec![0u8; n * 64];
    rng.fill_bytes(&mut seeds);
    let mut keys = Registered::new(gpu, n * (pl + sl));
    let (pks, sks) = keys.buf.split_at_mut(n * pl);
    let mut st = vec![Err(Error::Panic); n];
    gpu.kem_keygen(p, Some(&seeds), pks, sks, &mut st);
    assert!(st.iter().all(|s| s.is_ok()));
    let (mut cpk, mut csk) = (vec![0u8; n * pl], vec![0u8; n * sl]);
    cpu.kem_keygen(p, Some(&seeds), &mut cpk, &mut csk, &mut st);
    assert!(
        pks[..] == cpk[..] && sks[..] == csk[..],
        "{}: keys differ",
        p.name()
    );
    drop(keys);

    let coins: Vec<[u8; 32]> = (0..n).map(|_| rng.gen()).collect();
    let items: Vec<EncapsItem> = coins
        .iter()
        .map(|c| EncapsItem {
            pk: &pk,
            coins: Some(c),
        })
        .collect();
    // The CPU's ciphertexts and secrets.
    let mut c_ct = vec![0u8; n * cl];
    let mut c_ss = vec![0u8; n * 32];
    let mut st = vec![Err(Error::Panic); n];
    {
        let mut cts: Vec<&mut [u8]> = c_ct.chunks_exact_mut(cl).collect();
        let mut sss: Vec<&mut [u8]> = c_ss.chunks_exact_mut(32).collect();
        cpu.kem_encaps(p, &items, &mut cts, &mut sss, &mut st);
        assert!(st.iter().all(|s| s.is_ok()));
    }
    for even in [true, false] {
        // Encaps on the GPU into registered rows (strided DMA or the scatter kernel).
        let (ct_off, ct_end) = layout(&mut rng, n, cl, even);
        let (ss_off, ss_end) = layout(&mut rng, n, 32, even);
        let mut arena = Registered::new(gpu, ct_end + ss_end);
        {
            let (cts_mem, sss_mem) = arena.buf.split_at_mut(ct_end);
            let mut cts = rows_mut(cts_mem, &ct_off, cl);
            let mut sss = rows_mut(sss_mem, &ss_off, 32);
            gpu.kem_encaps(p, &items, &mut cts, &mut sss, &mut st);
            assert!(st.iter().all(|s| s.is_ok()));
        }
        for i in 0..n {
            assert!(
                arena.buf[ct_off[i]..ct_off[i] + cl] == c_ct[i * cl..(i + 1) * cl]
                    && arena.buf[ct_end + ss_off[i]..][..32] == c_ss[i * 32..(i + 1) * 32],
                "{} encaps {i} (even {even})",
                p.name()
            );
        }
        // A quarter of the ciphertexts bit-flipped (implicit rejection), then decaps from the
        // registered rows into registered rows, against the CPU.
        for i in (0..n).step_by(4) {
            let bit = rng.gen_range(0..cl * 8);
            arena.buf[ct_off[i] + bit / 8] ^= 1 << (bit % 8);
        }
        let mut out = Registered::new(gpu, ss_end);
        let (cts_mem, _) = arena.buf.split_at(ct_end);
        let dec: Vec<DecapsItem> = ct_off
            .iter()
            .map(|&o| DecapsItem {
                sk: &sk,
                ct: &cts_mem[o..o + cl],
            })
            .collect();
        {
            let mut sss = rows_mut(&mut out.buf, &ss_off, 32);
            gpu.kem_decaps(p, &dec, &mut sss, &mut st);
            assert!(st.iter().all(|s| s.is_ok()));
        }
        let mut c_dec = vec![0u8; n * 32];
        let mut c_st: Vec<Status> = vec![Err(Error::Panic); n];
        {
            let mut sss: Vec<&mut [u8]> = c_dec.chunks_exact_mut(32).collect();
            cpu.kem_decaps(p, &dec, &mut sss, &mut c_st);
        }
        for i in 0..n {
            assert!(
                out.buf[ss_off[i]..ss_off[i] + 32] == c_dec[i * 32..(i + 1) * 32],
                "{} decaps {i} (even {even})",
                p.name()
            );
            assert_eq!(
                i % 4 != 0,
                c_dec[i * 32..(i + 1) * 32] == c_ss[i * 32..(i + 1) * 32]
            );
        }
    }
    println!(
        "{}: 2 x {n} encaps and decaps in registered memory identical",
        p.name()
    );
}

/// Mutable rows at `offs` (disjoint, each `len` bytes) inside `mem`, in item order.
fn rows_mut<'a>(mem: &'a mut [u8], offs: &[usize], len: usize) -> Vec<&'a mut [u8]> {
    let mut order: Vec<usize> = (0..offs.len()).collect();
    order.sort_by_key(|&i| offs[i]);
    let mut rows: Vec<Option<&'a mut [u8]>> = (0..offs.len()).map(|_| None).collect();
    let mut rest = mem;
    let mut base = 0;
    for i in order {
        let (_, tail) = rest.split_at_mut(offs[i] - base);
        let (row, tail) = tail.split_at_mut(len);
        rows[i] = Some(row);
        rest = tail;
        base = offs[i] + len;
    }
    rows.into_iter()
        .map(|r| r.expect("every row placed"))
        .collect()
}

#[test]
fn ctru653_registered_matches_cpu() {
    kem(ctru::ParamSet::Ctru653, 4);
}

#[test]
fn ctru761_registered_matches_cpu() {
    kem(ctru::ParamSet::Ctru761, 5);
}

#[test]
fn ctru1277_registered_matches_cpu() {
    kem(ctru::ParamSet::Ctru1277, 6);
}
