//! The ML-DSA kernels' polynomial arithmetic run on the CPU, where there is no GPU (CI):
//! `kernels/emu/mldsa.cpp` compiles `mldsa.cu` with the system's C++ compiler and runs the NTT,
//! the inverse NTT and the matrix-vector product as the poly kernels call them, one block with
//! every thread a fiber (`kernels/emu/fibers.h`), and Decompose on every value mod q. The
//! transforms reduce lazily inside (their values grow to 9q and 256q), so the inputs here
//! include the largest canonical ones, which reach those bounds. Checked against the CPU
//! backend's transforms (`crate::mldsa::ntt`) and against the matrix product's definition mod
//! q. Key generation, signing and verification run too, launch by launch as `keygen.rs`,
//! `sign.rs` and `verify.rs` queue them, and their keys, signatures and verdicts are compared
//! with the CPU backend's; the GPU suite (`tests/gpu_mldsa.rs`) compares many more on the H200.
//! Skips, saying so, without a C++ compiler.

use super::kernels::{defines, Geometry};
use super::message::Regions;
use crate::gpu::emu::{compiler, Harness};
use crate::mldsa::params::{N, Q};
use crate::mldsa::ParamSet;
use crate::mldsa::{Message, Variant};
use crate::prehash::PreHash;
use crate::Error;
use rand::{Rng, SeedableRng};

fn harness(p: ParamSet) -> Option<Harness> {
    harness_with(p, &[])
}

/// The harness of `p` with `extra` -D definitions (kernel variants).
fn harness_with(p: ParamSet, extra: &[&str]) -> Option<Harness> {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (CXX, c++, g++, clang++) to run the kernels on the CPU");
        return None;
    };
    let mut defs = defines(p);
    defs.extend(extra.iter().map(|d| d.to_string()));
    Some(Harness::build_source(&cxx, p.name(), "mldsa.cpp", &defs))
}

fn bytes(polys: &[[i32; N]]) -> Vec<u8> {
    polys
        .iter()
        .flatten()
        .flat_map(|c| c.to_le_bytes())
        .collect()
}

fn polys(out: &[u8]) -> Vec<[i32; N]> {
    out.chunks_exact(4 * N)
        .map(|p| {
            std::array::from_fn(|i| i32::from_le_bytes(p[4 * i..4 * i + 4].try_into().unwrap()))
        })
        .collect()
}

fn canon(x: i64) -> i32 {
    x.rem_euclid(Q as i64) as i32
}

/// Canonical inputs: random ones, and the patterns that push the lazy transforms to their
/// bounds (every coefficient q - 1, alternating q - 1 and 0, and 0).
fn inputs(rng: &mut impl Rng) -> Vec<[i32; N]> {
    let mut v: Vec<[i32; N]> = (0..6)
        .map(|_| std::array::from_fn(|_| rng.gen_range(0..Q)))
        .collect();
    v.push([Q - 1; N]);
    v.push(std::array::from_fn(|i| if i % 2 == 0 { Q - 1 } else { 0 }));
    v.push(std::array::from_fn(|i| if i < N / 2 { Q - 1 } else { 1 }));
    v.push([0; N]);
    v.push(std::array::from_fn(|_| rng.gen_range(Q - 64..Q)));
    v
}

#[test]
fn transforms_equal_the_cpu_backends() {
    let Some(h) = harness(ParamSet::MlDsa44) else {
        return;
    };
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(204);
    let input = inputs(&mut rng);
    let head = (input.len() as u32).to_le_bytes();
    for (mode, cpu) in [
        ("ntt", crate::mldsa::ntt::ntt as fn(&mut [i32; N])),
        ("intt", crate::mldsa::ntt::invntt_tomont),
    ] {
        let got = polys(&h.run(mode, &[&head[..], &bytes(&input)].concat()));
        assert_eq!(got.len(), input.len());
        for (k, (g, x)) in got.iter().zip(&input).enumerate() {
            let mut want = *x;
            cpu(&mut want);
            for i in 0..N {
                assert!(
                    (0..Q).contains(&g[i]),
                    "{mode} input {k} coefficient {i}: {} not canonical",
                    g[i]
                );
                assert_eq!(
                    g[i],
                    canon(want[i] as i64),
                    "{mode} input {k} coefficient {i}"
                );
            }
        }
    }
}

#[test]
fn matrix_products_are_sums_of_montgomery_products() {
    // a * v * 2^-32 mod q, summed over a row.
    let r_inv = {
        let (mut r, mut b, mut e) = (1i64, (1i64 << 32) % Q as i64, Q as i64 - 2);
        while e > 0 {
            if e & 1 == 1 {
                r = r * b % Q as i64;
            }
            b = b * b % Q as i64;
            e >>= 1;
        }
        r
    };
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(45);
    for p in ParamSet::ALL {
        let Some(h) = harness(p) else { return };
        let (k, l) = (p.k(), p.l());
        for round in 0..3 {
            // Round 0: every coefficient q - 1 (the largest sums); then random.
            let mut coeff = |_| {
                if round == 0 {
                    Q - 1
                } else {
                    rng.gen_range(0..Q)
                }
            };
            let a: Vec<[i32; N]> = (0..k * l)
                .map(|_| std::array::from_fn(&mut coeff))
                .collect();
            let v: Vec<[i32; N]> = (0..l).map(|_| std::array::from_fn(&mut coeff)).collect();
            let got = polys(&h.run("matvec", &[bytes(&a), bytes(&v)].concat()));
            assert_eq!(got.len(), k);
            for i in 0..k {
                for c in 0..N {
                    let sum = (0..l).fold(0i64, |s, j| {
                        (s + a[i * l + j][c] as i64 * v[j][c] as i64) % Q as i64
                    });
                    assert_eq!(
                        got[i][c],
                        canon(sum * r_inv),
                        "{} row {i} coefficient {c}",
                        p.name()
                    );
                }
            }
        }
    }
}

#[test]
fn decompose_is_fips_204s_on_every_value() {
    for p in [ParamSet::MlDsa44, ParamSet::MlDsa65] {
        let Some(h) = harness(p) else { return };
        let two_g2 = 2 * p.gamma2();
        let out = h.run("decompose", &[]);
        assert_eq!(out.len(), 8 * Q as usize);
        for (r, pair) in out.chunks_exact(8).enumerate() {
            let r = r as i32;
            // Alg. 36: r0 = r mod+- 2 gamma2; (r1, r0) = (0, r0 - 1) when r - r0 = q - 1.
            let mut r0 = r % two_g2;
            if r0 > two_g2 / 2 {
                r0 -= two_g2;
            }
            let want = if r - r0 == Q - 1 {
                (0, r0 - 1)
            } else {
                ((r - r0) / two_g2, r0)
            };
            let got = (
                i32::from_le_bytes(pair[..4].try_into().unwrap()),
                i32::from_le_bytes(pair[4..].try_into().unwrap()),
            );
            assert_eq!(got, want, "{} r = {r}", p.name());
        }
    }
}

/// The messages of one signing test: every form the set's scheme takes (FIPS 204: pure with and
/// without a context, pre-hashed, internal, external mu; round 3: the message alone).
fn messages<'a>(v: Variant, bytes: &'a [Vec<u8>]) -> Vec<Message<'a>> {
    let b = |i: usize| &bytes[i % bytes.len()][..];
    match v {
        Variant::Fips204 => vec![
            Message::Pure {
                ctx: &[],
                msg: b(0),
            },
            Message::Pure {
                ctx: b(1),
                msg: b(2),
            },
            Message::PreHashed {
                ctx: b(3),
                ph: PreHash::Sha2_256,
                digest: &b(4)[..32],
            },
            Message::Internal(b(5)),
            Message::Mu(b(6)[..64].try_into().unwrap()),
        ],
        Variant::Round3 => vec![
            Message::Pure {
                ctx: &[],
                msg: b(0),
            },
            Message::Internal(b(1)),
        ],
    }
}

/// The messages as the engine stages them for the kernels (`Regions::write`).
fn staged(p: ParamSet, msgs: &[Message<'_>]) -> Vec<u8> {
    let regions = Regions::of(p.variant(), msgs.iter());
    let mut h = vec![0u8; regions.host_bytes()];
    regions.write(msgs.iter(), &mut h);
    h
}

/// `n` (pk, sk) pairs from the CPU backend, from random seeds.
fn key_pairs(p: ParamSet, n: usize, rng: &mut impl Rng) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|_| {
            let (mut pk, mut sk) = (vec![0; p.public_key_len()], vec![0; p.secret_key_len()]);
            crate::mldsa::keygen_internal(p, &rng.gen(), &mut pk, &mut sk).unwrap();
            (pk, sk)
        })
        .collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

#[test]
fn keygen_kernels_make_the_cpus_keys() {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(206);
    for p in ParamSet::EVERY {
        let Some(h) = harness(p) else { return };
        let g = Geometry::of(p);
        let seeds: Vec<[u8; 32]> = (0..5).map(|_| rng.gen()).collect();
        let mut input = (seeds.len() as u32).to_le_bytes().to_vec();
        input.extend(seeds.iter().flatten());
        let out = h.run("keygen", &input);
        assert_eq!(out.len(), seeds.len() * (g.pk_len + g.sk_len));
        let (pks, sks) = out.split_at(seeds.len() * g.pk_len);
        for (i, xi) in seeds.iter().enumerate() {
            let (mut pk, mut sk) = (vec![0; g.pk_len], vec![0; g.sk_len]);
            crate::mldsa::keygen_internal(p, xi, &mut pk, &mut sk).unwrap();
            assert!(
                pks[i * g.pk_len..][..g.pk_len] == pk[..],
                "{} key {i}: pk",
                p.name()
            );
            assert!(
                sks[i * g.sk_len..][..g.sk_len] == sk[..],
                "{} key {i}: sk",
                p.name()
            );
        }
    }
}

#[test]
fn verification_kernels_judge_as_the_cpu_does() {
    // Per set: valid signatures on every message form, and the same signatures with one bit
    // flipped in c~, in z, in the hint's indices or counts, or on another message; keys shared
    // by several items (tr hashed once per key) and a key per item (tr hashed per item).
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(207);
    for p in ParamSet::EVERY {
        let Some(h) = harness(p) else { return };
        let g = Geometry::of(p);
        let keys = key_pairs(p, 3, &mut rng);
        let bytes: Vec<Vec<u8>> = (0..7)
            .map(|i| (0..64 + 29 * i).map(|_| rng.gen()).collect())
            .collect();
        let forms = messages(p.variant(), &bytes);
        let n = 24;
        let kidx: Vec<usize> = (0..n).map(|i| i % 3).collect();
        let mut msgs: Vec<Message<'_>> = (0..n).map(|i| forms[i % forms.len()]).collect();
        let mut sigs: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                let mut sig = vec![0u8; g.sig_len];
                crate::mldsa::sign(p, &keys[kidx[i]].1, &msgs[i], Some(&[0; 32]), &mut sig)
                    .unwrap();
                sig
            })
            .collect();
        // Items 0, 1, 2 stay valid; the rest are changed in turn.
        let hints = g.sig_len - p.omega() - p.k();
        for (i, sig) in sigs.iter_mut().enumerate().skip(3) {
            match i % 5 {
                0 => sig[rng.gen_range(0..p.c_tilde_len())] ^= 1 << rng.gen_range(0..8),
                1 => sig[rng.gen_range(p.c_tilde_len()..hints)] ^= 1 << rng.gen_range(0..8),
                2 => sig[rng.gen_range(hints..g.sig_len - p.k())] ^= 1 << rng.gen_range(0..8),
                3 => sig[g.sig_len - 1 - rng.gen_range(0..p.k())] ^= 1,
                _ => msgs[i] = forms[(i + 1) % forms.len()],
            }
        }
        for shared in [true, false] {
            // A key per item: each item's own row, the same key repeated.
            let (rows, idx): (Vec<&[u8]>, Vec<u32>) = if shared {
                (
                    keys.iter().map(|k| &k.0[..]).collect(),
                    kidx.iter().map(|&k| k as u32).collect(),
                )
            } else {
                (
                    kidx.iter().map(|&k| &keys[k].0[..]).collect(),
                    (0..n as u32).collect(),
                )
            };
            let mut input = Vec::new();
            for x in [n, rows.len()] {
                input.extend((x as u32).to_le_bytes());
            }
            input.extend(idx.iter().flat_map(|k| k.to_le_bytes()));
            input.extend(rows.iter().copied().flatten());
            for sig in &sigs {
                input.extend(sig);
                input.resize(input.len() + g.sig_stride - g.sig_len, 0);
            }
            input.extend(staged(p, &msgs));
            let got = u32s(&h.run("verify", &input));
            assert_eq!(got.len(), n);
            for i in 0..n {
                let cpu = crate::mldsa::verify(p, &keys[kidx[i]].0, &msgs[i], &sigs[i]);
                assert!(i >= 3 || cpu.is_ok(), "{}: item {i} must verify", p.name());
                assert_eq!(
                    got[i] == 0,
                    cpu.is_ok(),
                    "{} shared keys {shared} item {i}: the kernels say {}, the CPU {cpu:?}",
                    p.name(),
                    got[i]
                );
            }
        }
    }
}

#[test]
fn signing_kernels_sign_as_the_cpu_does() {
    // Per set: three keys, the third malformed (an s1 field out of range: BadKey on both),
    // shared by several tasks as a key handle's are; deterministic and given rnd; a round of
    // at least `fill` attempts, so the last tasks run speculative attempts and the smallest
    // successful one must still win. Both block sizes of the round's poly kernels (sign_w,
    // sign_z: a coefficient or two per thread).
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2048);
    let variants: [&[&str]; 2] = [&[], &["-DSIGN_W_NT=128", "-DSIGN_Z_NT=128"]];
    for (p, variant) in ParamSet::EVERY
        .into_iter()
        .flat_map(|p| variants.map(|v| (p, v)))
    {
        let Some(h) = harness_with(p, variant) else {
            return;
        };
        let g = Geometry::of(p);
        let mut sks: Vec<Vec<u8>> = key_pairs(p, 3, &mut rng)
            .into_iter()
            .map(|(_, sk)| sk)
            .collect();
        let s1_off = if p.variant() == Variant::Round3 {
            96
        } else {
            128
        };
        sks[2][s1_off] = 0xFF;
        let bytes: Vec<Vec<u8>> = (0..7)
            .map(|i| (0..64 + 37 * i).map(|_| rng.gen()).collect())
            .collect();
        let forms = messages(p.variant(), &bytes);
        let n = 12;
        let kidx: Vec<u32> = (0..n).map(|i| [0, 1, 0, 2][i % 4]).collect();
        let msgs: Vec<Message<'_>> = (0..n).map(|i| forms[i % forms.len()]).collect();
        let rnds: Vec<[u8; 32]> = (0..n)
            .map(|i| if i % 3 == 0 { [0; 32] } else { rng.gen() })
            .collect();
        for fill in [n, 8 * n] {
            let mut input = Vec::new();
            for x in [n, sks.len(), fill] {
                input.extend((x as u32).to_le_bytes());
            }
            input.extend(kidx.iter().flat_map(|k| k.to_le_bytes()));
            input.extend(sks.iter().flatten());
            for r in &rnds {
                input.extend([0; 32]);
                input.extend(r);
                input.extend([0; 64]);
            }
            input.extend(staged(p, &msgs));
            let out = h.run("sign", &input);
            assert_eq!(out.len(), n * (g.sig_stride + 4));
            let (sigs, statuses) = out.split_at(n * g.sig_stride);
            for i in 0..n {
                let mut want = vec![0u8; g.sig_len];
                let cpu = crate::mldsa::sign(
                    p,
                    &sks[kidx[i] as usize],
                    &msgs[i],
                    Some(&rnds[i]),
                    &mut want,
                );
                let status = u32::from_le_bytes(statuses[4 * i..4 * i + 4].try_into().unwrap());
                let what = format!("{} {variant:?} fill {fill} task {i}", p.name());
                match cpu {
                    Ok(()) => {
                        assert_eq!(status, 0, "{what}: status");
                        let got = &sigs[i * g.sig_stride..i * g.sig_stride + g.sig_len];
                        assert!(
                            got == &want[..],
                            "{what}: the signature differs from the CPU's"
                        );
                    }
                    Err(e) => {
                        assert_eq!(e, Error::BadKey, "{what}");
                        assert_eq!(status, 1, "{what}: status (ST_BADKEY)");
                    }
                }
            }
        }
    }
}
