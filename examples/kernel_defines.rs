//! Prints the NVRTC `-D` definitions of every parameter set as shell assignments, exactly as the
//! GPU engine compiles the kernels (`src/gpu/mldsa/kernels.rs`, `src/gpu/ctru/kernels.rs`): the
//! one source of the sizes, for building the kernels by hand (the CPU harnesses of
//! `kernels/emu/`: `eval "$(cargo run -q --release --example kernel_defines)"`).

fn main() {
    let sets = [
        ("P44", "ML-DSA-44"),
        ("P65", "ML-DSA-65"),
        ("P87", "ML-DSA-87"),
        ("R3_2", "Dilithium2"),
        ("R3_3", "Dilithium3"),
        ("R3_5", "Dilithium5"),
        ("C653", "CTRU-Prime-653"),
        ("C761", "CTRU-Prime-761"),
        ("C1277", "CTRU-Prime-1277"),
    ];
    for (var, set) in sets {
        let defines = pqgpu::gpu::kernel_defines(set).expect("a known parameter set");
        println!("{var}=\"{}\"", defines.join(" "));
    }
}
