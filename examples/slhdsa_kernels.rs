//! Kernel-only SLH-DSA throughput on the GPU, and the hash ceilings it is set against:
//! SHA-256 compressions and Keccak-f[1600] permutations per second, then for each set keygen,
//! signing (a key per item, and one key whose top tree is built), verification, each with the
//! hash calls per operation and the ceiling they imply.
//! `cargo run --release --example slhdsa_kernels [SCALE [SET...]]`: SCALE multiplies the batch
//! sizes (default 1: about one GPU's worth of threads per batch; verification 131,072
//! signatures, one thread each), SETs are FIPS 205 names or their endings (`SHA2-128f`);
//! default every set.

use pqgpu::gpu::{self, SlhOp};
use pqgpu::slhdsa::ParamSet;

/// Hash calls (SHA-256/512 compressions or Keccak permutations of the F/H/T calls, counting a
/// multi-block T as its blocks) of keygen, sign and verify: FIPS 205's structure, counted.
fn hash_calls(p: ParamSet) -> (f64, f64, f64) {
    let q = p.params();
    let len = q.wots_len() as f64;
    // Blocks of T_len and T_k: SHA-256 64-byte blocks (SHA-512 128 for n > 16), Keccak 136.
    let blocks = |bytes: usize| -> f64 {
        let (block, extra) = if !q.sha2 {
            (136, q.n + 32)
        } else if q.n == 16 {
            (64, 22 + 9)
        } else {
            (128, 22 + 17)
        };
        (bytes + extra).div_ceil(block) as f64
    };
    let leaf = len * 16.0 + blocks(q.wots_len() * q.n);
    let tree = |h: usize| (1u64 << h) as f64 * leaf + ((1u64 << h) - 1) as f64;
    let keygen = tree(q.hp);
    let fors = q.k as f64 * ((2u64 << q.a) as f64 + ((1u64 << q.a) - 1) as f64) + blocks(q.k * q.n);
    let sign = fors + q.d as f64 * (tree(q.hp) + len * 8.5) + 6.0;
    let verify = q.k as f64 * (1.0 + q.a as f64)
        + blocks(q.k * q.n)
        + q.d as f64 * (len * 7.5 + blocks(q.wots_len() * q.n) + q.hp as f64)
        + 6.0;
    (keygen, sign, verify)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let scale: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let only: Vec<String> = args.collect();
    match gpu::device_description() {
        Some(d) => println!("gpu: {d}"),
        None => {
            println!("no usable GPU");
            return;
        }
    }
    let ceil = match gpu::hash_ceilings(ParamSet::Sha2_128f) {
        Ok(c) => c,
        Err(e) => {
            println!("hash ceilings: error {e}");
            return;
        }
    };
    println!(
        "ceilings: SHA-256 {:.2} G compressions/s, Keccak-f[1600] {:.2} G permutations/s",
        ceil.sha256_compressions / 1e9,
        ceil.keccak_permutations / 1e9
    );
    for p in ParamSet::ALL {
        if !only.is_empty() && !only.iter().any(|o| p.name().ends_with(o.as_str())) {
            continue;
        }
        let q = p.params();
        let rate = if q.sha2 {
            ceil.sha256_compressions
        } else {
            ceil.keccak_permutations
        };
        let (kg, sg, vf) = hash_calls(p);
        let s = |n: f64| ((n * scale) as usize).max(1);
        let runs = [
            (SlhOp::Keygen, s((1 << 20 >> q.hp) as f64), kg),
            (SlhOp::Sign, s((1 << 20) as f64 / (q.d << q.hp) as f64), sg),
            (
                SlhOp::SignOneKey,
                s((1 << 20) as f64 / (q.d << q.hp) as f64),
                sg,
            ),
            (SlhOp::Verify, s(131_072.0), vf),
        ];
        for (op, n, calls) in runs {
            let bound = rate / calls;
            match gpu::slhdsa_kernel_throughput(p, op, n) {
                Ok(r) => println!(
                    "{} {op:?} n={n}: {:.1} k ops/s ({:.0} hash calls each; ceiling {:.1} k/s, {:.0} %)",
                    p.name(),
                    r / 1e3,
                    calls,
                    bound / 1e3,
                    100.0 * r / bound
                ),
                Err(e) => println!("{} {op:?}: error {e}", p.name()),
            }
        }
    }
}
