//! Kernel-only ML-DSA and round-3 Dilithium throughput on the GPU for every parameter set and
//! operation:
//! `cargo run --release --example gpu_kernels [N [NAME-SUFFIX]]`. With `PQGPU_PROFILE=1` each figure is
//! followed by its per-kernel breakdown (launches then synchronise, so the totals run slower).

use pqgpu::gpu::{self, Op};
use pqgpu::mldsa::ParamSet;

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
    for p in ParamSet::EVERY {
        if only
            .as_ref()
            .is_some_and(|o| !p.name().ends_with(o.as_str()))
        {
            continue;
        }
        for op in [Op::Keygen, Op::Sign, Op::Verify] {
            match gpu::kernel_throughput(p, op, n) {
                Ok(r) => println!("{} {op:?} n={n}: {:.3} M ops/s", p.name(), r / 1e6),
                Err(e) => println!("{} {op:?}: error {e}", p.name()),
            }
        }
    }
}
