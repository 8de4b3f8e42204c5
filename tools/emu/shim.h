// Runs the CUDA kernels on the CPU (one std::thread per CUDA thread, one block at a
// time) so kernel logic can be checked against ACVP vectors without a GPU.
#pragma once
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

struct dim3e { unsigned x = 0, y = 0, z = 0; };
inline thread_local dim3e threadIdx, blockIdx;
inline dim3e blockDim, gridDim;
inline std::barrier<> *g_bar;
// A warp's barrier (for warp_shim.h's shuffles and votes): spins, then yields; a futex
// barrier made the warp-shuffle Keccak ~50x slower to emulate.
struct WarpBarrier {
  explicit WarpBarrier(unsigned n) : n(n) {}
  void arrive_and_wait() {
    const unsigned g = gen.load(std::memory_order_acquire);
    if (count.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
      count.store(0, std::memory_order_relaxed);
      gen.fetch_add(1, std::memory_order_release);
      return;
    }
    for (int spins = 0; gen.load(std::memory_order_acquire) == g;)
      if (++spins > 64) std::this_thread::yield();
  }
  const unsigned n;
  std::atomic<unsigned> count{0}, gen{0};
};
inline thread_local WarpBarrier *t_wbar;
inline std::atomic<int> g_red;

struct uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
struct int4 { int x, y, z, w; };
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
#ifndef __align__
#define __align__(x) __attribute__((aligned(x)))
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __constant__
#define __shared__ static
#define __launch_bounds__(x)

inline void __syncthreads() { g_bar->arrive_and_wait(); }
// The warp's own barrier: the one-warp-per-polynomial NTT (NTT_FORM=1) has warps calling it
// different numbers of times.
inline void __syncwarp() { t_wbar->arrive_and_wait(); }
inline int __syncthreads_or(int p) {
  if (p) g_red.fetch_or(1);
  __syncthreads();
  int r = g_red.load();
  __syncthreads();
  if (threadIdx.x == 0) g_red = 0;
  __syncthreads();
  return r;
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
template <class T> T atomicAdd(T *p, T v) { return std::atomic_ref<T>(*p).fetch_add(v); }
inline unsigned atomicMin(unsigned *p, unsigned v) {
  std::atomic_ref<unsigned> a(*p);
  unsigned old = a.load();
  while (v < old && !a.compare_exchange_weak(old, v)) {}
  return old;
}

template <class F> void launch(unsigned grid, unsigned block, F f) {
  blockDim.x = block;
  gridDim.x = grid;
  for (unsigned b = 0; b < grid; ++b) {
    std::barrier<> bar(block);
    g_bar = &bar;
    std::vector<std::unique_ptr<WarpBarrier>> wbar;
    for (unsigned w = 0; w * 32 < block; ++w) wbar.push_back(std::make_unique<WarpBarrier>(std::min(32u, block - 32 * w)));
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < block; ++t)
      ts.emplace_back([=, &wbar] {
        threadIdx.x = t;
        blockIdx.x = b;
        t_wbar = wbar[t / 32].get();
        f();
      });
    for (auto &t : ts) t.join();
  }
}
