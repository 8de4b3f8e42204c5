//! The ML-DSA kernels' polynomial arithmetic run on the CPU, where there is no GPU (CI):
//! `kernels/emu/mldsa.cpp` compiles `mldsa.cu` with the system's C++ compiler and runs the NTT,
//! the inverse NTT and the matrix-vector product as the poly kernels call them, one block with
//! every thread a fiber (`kernels/emu/fibers.h`), and Decompose on every value mod q. The transforms reduce lazily inside (their
//! values grow to 9q and 256q), so the inputs here include the largest canonical ones, which
//! reach those bounds. Checked against the CPU backend's transforms (`crate::mldsa::ntt`) and
//! against the matrix product's definition mod q; the GPU suite (`tests/gpu_mldsa.rs`)
//! compares whole signatures on the H200. Skips, saying so, without a C++ compiler.

use super::kernels::defines;
use crate::gpu::emu::{compiler, Harness};
use crate::mldsa::params::{N, Q};
use crate::mldsa::ParamSet;
use rand::{Rng, SeedableRng};

fn harness(p: ParamSet) -> Option<Harness> {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (CXX, c++, g++, clang++) to run the kernels on the CPU");
        return None;
    };
    Some(Harness::build_source(
        &cxx,
        p.name(),
        "mldsa.cpp",
        &defines(p),
    ))
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
