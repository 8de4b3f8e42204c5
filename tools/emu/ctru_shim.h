// Extra CUDA intrinsics for emulating kernels/ctru.cu on the CPU (on top of shim.h, which has
// uint4 and __syncwarp). Warp exchanges (shuffles, mma) go through per-block staging arrays
// with block barriers, so they need warp-uniform control flow across the whole block, as the
// kernels have.
#pragma once
#include "shim.h"
#include <bit>

inline int __popc(unsigned x) { return std::popcount(x); }
using std::max;
using std::min;
#define __align__(x) __attribute__((aligned(x)))
inline int g_shfl[1024];
inline int __shfl_sync(unsigned, int v, int src) {
  g_shfl[threadIdx.x] = v;
  __syncthreads();
  int r = g_shfl[(threadIdx.x & ~31u) + (src & 31)];
  __syncthreads();
  return r;
}

// mma.sync.m16n8k32.row.col.s32.s8.s8.s32 with the PTX ISA fragment layouts:
// A reg r: row g + 8 (r & 1), cols 4t + 16 (r >> 1) + byte; B reg r: k = 4t + 16 r + byte, col g;
// C reg r: row g + 8 (r >> 1), col 2t + (r & 1).
inline unsigned g_ma[1024][4], g_mb[1024][2];
inline void mma_s8(int d[4], const unsigned a[4], const unsigned b[2]) {
  unsigned me = threadIdx.x, base = me & ~31u, lane = me & 31, g = lane >> 2, t = lane & 3;
  for (int r = 0; r < 4; ++r) g_ma[me][r] = a[r];
  for (int r = 0; r < 2; ++r) g_mb[me][r] = b[r];
  __syncthreads();
  auto A = [&](unsigned row, unsigned k) {
    unsigned l = base + (row & 7) * 4 + ((k & 15) >> 2);
    unsigned reg = (row >> 3) + 2 * (k >> 4);
    return (int)(signed char)(g_ma[l][reg] >> (8 * (k & 3)));
  };
  auto B = [&](unsigned k, unsigned col) {
    unsigned l = base + col * 4 + ((k & 15) >> 2);
    return (int)(signed char)(g_mb[l][k >> 4] >> (8 * (k & 3)));
  };
  for (int r = 0; r < 4; ++r) {
    unsigned row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
    int s = 0;
    for (unsigned k = 0; k < 32; ++k) s += A(row, k) * B(k, col);
    d[r] += s;
  }
  __syncthreads();
}
