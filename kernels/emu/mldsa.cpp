// Runs the ML-DSA kernels' polynomial arithmetic of kernels/mldsa.cu on the CPU for
// src/gpu/mldsa/emulated.rs: the NTT, the inverse NTT and the matrix-vector product as the
// poly kernels call them, one block of NT threads, every thread a fiber (fibers.h).
// `mldsa MODE` reads the inputs on stdin (little-endian i32 coefficients) and writes the
// outputs to stdout:
//   ntt, intt: cnt (u32), then cnt polynomials; out: the cnt transformed polynomials.
//   matvec: A (K x L polynomials, row-major), then v (L polynomials); out: A o v (K).
//   decompose: no input; out: r1, r0 of Decompose(r) for every r in [0, q).
#include "fibers.h"
#include "../keccak.cuh"
#include "../mldsa.cu"
#include <string>
#include "stdin.h"

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const std::string mode = argv[1];
  const std::vector<u8> in = read_all();
  std::vector<i32> out;
  if (mode == "ntt" || mode == "intt") {
    u32 cnt;
    if (in.size() < 4) return 1;
    memcpy(&cnt, in.data(), 4);
    if (in.size() != 4 + (size_t)cnt * N * 4) return 1;
    out.resize((size_t)cnt * N);
    memcpy(out.data(), in.data() + 4, out.size() * 4);
    fib::run_block(0, NT, [&] {
      __shared__ i32 z[N];
      load_zetas(z);
      if (mode == "ntt") ntt_polys(out.data(), cnt, z);
      else intt_polys(out.data(), cnt, z);
    });
  } else if (mode == "matvec") {
    if (in.size() != (size_t)(K * L + L) * N * 4) return 1;
    const u32 *a = (const u32 *)in.data();
    std::vector<i32> v(L * N);
    memcpy(v.data(), in.data() + (size_t)K * L * N * 4, v.size() * 4);
    out.resize((size_t)K * N);
    fib::run_block(0, NT, [&] {
      const int tid = threadIdx.x;
      matvec(a, v.data(), tid, [&](int i, i32 s) { out[i * N + tid] = s; });
    });
  } else if (mode == "decompose") {
    out.resize(2 * (size_t)Q);
    for (i32 r = 0; r < Q; ++r) out[2 * r] = decompose(r, &out[2 * r + 1]);
  } else {
    return 2;
  }
  fwrite(out.data(), 4, out.size(), stdout);
  return 0;
}
