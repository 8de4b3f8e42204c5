// Launches as the host does, for the emulator harnesses: a one-thread-per-item kernel over
// `total` threads, one thread at a time outside any block (its index is threadIdx.x; the
// kernels' bounds checks see the grid the host would launch), and a block kernel over `nb`
// blocks of `nt` threads, every thread a fiber (fibers.h). Include after the kernels (their
// integer typedefs).
#pragma once
#include <vector>

template <class F> static void each_thread(u32 total, F f) {
  for (u32 t = 0; t < total; ++t) {
    blockIdx.x = 0;
    blockDim.x = 1u << 30;
    threadIdx.x = t;
    f();
  }
}
template <class F> static void each_block(u32 nb, u32 nt, F f) {
  for (u32 b = 0; b < nb; ++b) fib::run_block(b, nt, f);
}

// Zeroed, 8-byte aligned device stand-ins.
static std::vector<u64> buf(size_t bytes) { return std::vector<u64>(bytes / 8 + 1, 0); }
static u8 *b8(std::vector<u64> &v) { return (u8 *)v.data(); }
