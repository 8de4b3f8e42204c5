# -D flags per parameter set, exactly as the GPU engine passes them to NVRTC (the sizes are
# written once, in src/gpu/mldsa/kernels.rs and src/gpu/ctru/kernels.rs). Source from the
# repository root: `. tools/emu/params.sh` sets P44 P65 P87 (ML-DSA), R3_2 R3_3 R3_5
# (Dilithium round 3, PARAM_ROUND3=1) and C653 C761 C1277 (CTRU-Prime).
eval "$(cargo run -q --release --example kernel_defines)"
