//! Kernel-only ML-KEM throughput on the GPU for every parameter set: keygen, encaps and decaps
//! with a key per item, and encaps and decaps of a one-key batch (the key's state kept):
//! `cargo run --release --example mlkem_kernels [N [512|768|1024]]` (N default 65,536).

use pqgpu::gpu::{self, KemOp};
use pqgpu::mlkem::ParamSet;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(65_536);
    let only = std::env::args().nth(2);
    match gpu::device_description() {
        Some(d) => println!("gpu: {d}"),
        None => {
            println!("no usable GPU");
            return;
        }
    }
    for p in ParamSet::ALL {
        if only
            .as_ref()
            .is_some_and(|o| !p.name().ends_with(o.as_str()))
        {
            continue;
        }
        for op in [
            KemOp::Keygen,
            KemOp::Encaps,
            KemOp::Decaps,
            KemOp::EncapsOneKey,
            KemOp::DecapsOneKey,
        ] {
            match gpu::mlkem_kernel_throughput(p, op, n) {
                Ok(r) => println!("{} {op:?} n={n}: {:.3} M ops/s", p.name(), r / 1e6),
                Err(e) => println!("{} {op:?}: error {e}", p.name()),
            }
        }
    }
}
