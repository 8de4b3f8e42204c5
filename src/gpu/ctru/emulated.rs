//! The kernels' per-thread code run on the CPU, where there is no GPU (CI): `kernels/emu`'s
//! harness compiles `ctru.cu`, `keccak.cuh`, `chacha.cuh` and `hostio.cuh` with the system's
//! C++ compiler (a shim gives CUDA's names host meanings) and runs one thread at a time.
//! Checked against code that is not the kernels': K-bar and the hashing front ends against the
//! `sha3` crate and the CPU backend's CBD sampler, the fresh seeds against `rand_chacha`, the
//! host-I/O row copies against plain copies, on random inputs (padding bytes included). Skips,
//! saying so, without a C++ compiler. The GPU suites compare the real kernels with the CPU
//! backend on the H200.

use super::kernels::{defines as defines_of, Sizes, KEYINFO, MSG_STRIDE};
use crate::ctru::{cbd, ParamSet};
use crate::gpu::emu::{compiler, Harness};
use rand::{Rng, RngCore, SeedableRng};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::{Digest, Sha3_512, Shake256};

/// The harness built for `p` (None: the host-I/O rows only).
fn harness(cxx: &str, p: Option<ParamSet>) -> Harness {
    let label = p.map_or("rows".into(), |p| format!("ctru{}", p.n()));
    let mut defines = vec!["-DCTRU_EMU".to_string()];
    defines.extend(p.map(defines_of).unwrap_or_default());
    Harness::build(cxx, &label, &defines)
}

fn run(h: &Harness, mode: &str, input: &[u8]) -> Vec<u8> {
    h.run(mode, input)
}

fn shake256(input: &[u8], len: usize) -> Vec<u8> {
    let mut h = Shake256::default();
    h.update(input);
    let mut out = vec![0u8; len];
    h.finalize_xof().read(&mut out);
    out
}

/// A CBD row as the kernels write it: n coefficients as i8, zero to NP.
fn cbd_row(coins: &[u8], p: ParamSet, np: usize) -> Vec<u8> {
    let mut row: Vec<u8> = cbd::sample(coins, p.n(), p.eta())
        .iter()
        .map(|&c| c as i8 as u8)
        .collect();
    row.resize(np, 0);
    row
}

#[test]
fn ctru_hashing_kernels_match_sha3_and_the_cpu_sampler() {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (CXX, c++, g++, clang++) to run the kernels on the CPU");
        return;
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xE3u64);
    for p in ParamSet::ALL {
        let s = Sizes::of(p);
        let exe = harness(&cxx, Some(p));
        let n = 40usize;
        let head = (n as u32).to_le_bytes();

        // K-bar = SHA3-512(pk33 || z || ct)[..32]; the rows' padding is random, not zero.
        let mut ki = vec![0u8; n * KEYINFO];
        let mut ct = vec![0u8; n * s.ct_stride];
        rng.fill_bytes(&mut ki);
        rng.fill_bytes(&mut ct);
        let got = run(&exe, "kbar", &[&head[..], &ki, &ct].concat());
        for b in 0..n {
            let k = &ki[b * KEYINFO..];
            let c = &ct[b * s.ct_stride..][..s.ct];
            let want = Sha3_512::new()
                .chain_update(&k[..33])
                .chain_update(&k[64..96])
                .chain_update(c)
                .finalize();
            assert_eq!(
                got[32 * b..32 * b + 32],
                want[..32],
                "{} K-bar {b}",
                p.name()
            );
        }

        // Encaps front end: m = SHAKE256(e), (K || s) = SHA3-512(pk33 || m), r = CBD(SHAKE256(s)).
        let mut e = vec![0u8; n * 32];
        rng.fill_bytes(&mut e);
        let got = run(&exe, "enc", &[&head[..], &e, &ki].concat());
        let (msg, rest) = got.split_at(n * MSG_STRIDE);
        let (kout, r) = rest.split_at(n * 32);
        let mb = p.msg_bytes();
        for b in 0..n {
            let m = shake256(&e[32 * b..32 * b + 32], mb);
            assert_eq!(msg[b * MSG_STRIDE..][..mb], m[..], "{} m {b}", p.name());
            let ks = Sha3_512::new()
                .chain_update(&ki[b * KEYINFO..][..33])
                .chain_update(&m)
                .finalize();
            assert_eq!(kout[32 * b..32 * b + 32], ks[..32], "{} K {b}", p.name());
            let coins = shake256(&ks[32..], p.coin_half_bytes());
            assert_eq!(
                r[b * s.np..][..s.np],
                cbd_row(&coins, p, s.np)[..],
                "{} r {b}",
                p.name()
            );
        }

        // Fresh seeds: ChaCha20 stream 0 under the chunk's key, as rand_chacha's generator
        // (the host's `rng::fill_bulk`) gives it; an odd count ends inside a block.
        for count in [n, 41] {
            let mut key = [0u8; 32];
            rng.fill_bytes(&mut key);
            let head = (count as u32).to_le_bytes();
            let got = run(&exe, "coins", &[&head[..], &key].concat());
            let mut want = vec![0u8; count * 32];
            let mut chacha = rand_chacha::ChaCha20Rng::from_seed(key);
            chacha.set_stream(0);
            chacha.fill_bytes(&mut want);
            assert_eq!(got, want, "{} seeds for {count} items", p.name());
        }

        // KeyGen front end: coins = SHAKE256(d), f = 2 CBD + 1, g = CBD.
        let mut seeds = vec![0u8; n * 64];
        rng.fill_bytes(&mut seeds);
        let got = run(&exe, "kg", &[&head[..], &seeds].concat());
        let (f, g) = got.split_at(n * s.np);
        let half = p.coin_half_bytes();
        for b in 0..n {
            let coins = shake256(&seeds[64 * b..64 * b + 32], 2 * half);
            let mut want_f = cbd_row(&coins[..half], p, s.np);
            for (i, c) in want_f.iter_mut().enumerate().take(p.n()) {
                *c = (2 * (*c as i8) + (i == 0) as i8) as u8;
            }
            assert_eq!(f[b * s.np..][..s.np], want_f[..], "{} f {b}", p.name());
            assert_eq!(
                g[b * s.np..][..s.np],
                cbd_row(&coins[half..], p, s.np)[..],
                "{} g {b}",
                p.name()
            );
        }
    }
}

#[test]
fn host_io_rows_copy_every_byte_at_every_alignment() {
    let Some(cxx) = compiler() else {
        println!("SKIPPED: no C++ compiler (CXX, c++, g++, clang++) to run the kernels on the CPU");
        return;
    };
    let exe = harness(&cxx, None);
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x10);
    let cases: Vec<(u32, u32, u32)> = (0..400)
        .map(|i| {
            let len = if i < 64 { i } else { rng.gen_range(0..3000) };
            (len, rng.gen_range(0..48), rng.gen_range(0..48))
        })
        .collect();
    let mut input = Vec::new();
    let mut bufs = Vec::new();
    for &(len, so, dof) in &cases {
        let mut src = vec![0u8; 4096];
        let mut dst = vec![0u8; 4096];
        rng.fill_bytes(&mut src);
        rng.fill_bytes(&mut dst);
        input.extend(len.to_le_bytes());
        input.extend(so.to_le_bytes());
        input.extend(dof.to_le_bytes());
        input.extend(&src);
        input.extend(&dst);
        bufs.push((src, dst));
    }
    let got = run(&exe, "rows", &input);
    assert_eq!(got.len(), cases.len() * 2 * 4096);
    for (i, (&(len, so, dof), (src, dst))) in cases.iter().zip(&bufs).enumerate() {
        let (len, so, dof) = (len as usize, so as usize, dof as usize);
        let mut want = dst.clone();
        want[dof..dof + len].copy_from_slice(&src[so..so + len]);
        for (dir, name) in ["to the host", "from the host"].iter().enumerate() {
            let out = &got[(2 * i + dir) * 4096..][..4096];
            assert!(
                out == &want[..],
                "row of {len} bytes {name}, offsets {so} -> {dof}"
            );
        }
    }
}
