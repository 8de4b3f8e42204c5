// CUDA's block model on the CPU, for tests of kernels whose threads cooperate (the ML-KEM
// block kernels, src/gpu/mlkem/emulated.rs): every thread of a block is a fiber (ucontext)
// on one OS thread, switched at barriers, so __syncthreads, __syncwarp, warp shuffles, ballots
// and shared memory (function statics) behave as on the GPU, one block at a time. Kernels
// whose threads never meet run as in shim.h: a thread at a time, outside any block.
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <cstdlib>
#include <cstdio>
#include <ucontext.h>
#include <vector>
#include <functional>
#include "cuda_names.h"
struct int4 { int x, y, z, w; };
struct ulonglong2 { unsigned long long x, y; };
static inline ulonglong2 make_ulonglong2(unsigned long long a, unsigned long long b) { return {a, b}; }
static inline int4 make_int4(int a, int b, int c, int d) { return {a, b, c, d}; }
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) { s &= 31; return s ? (unsigned)((((unsigned long long)hi << 32) | lo) >> s) : lo; }
template <class T> static inline T min(T a, T b) { return a < b ? a : b; }
template <class T> static inline T max(T a, T b) { return a < b ? b : a; }
static inline void __threadfence() {}
template <class T> static inline T atomicAdd(T *p, T v) { T o = *p; *p = o + v; return o; }
template <class T> static inline T atomicMin(T *p, T v) { T o = *p; if (v < o) *p = v; return o; }
static inline void mma_s8(int d[4], const unsigned a[4], const unsigned b[2]) { (void)d; (void)a; (void)b; }

namespace fib {
struct Fiber { ucontext_t ctx; std::vector<char> stack; bool done; int wait; unsigned gen; }; // wait: 0 runnable, 1 block barrier, 2 warp barrier
static std::vector<Fiber> fibers;
static ucontext_t sched;
static int cur = -1; // -1: not inside a block (plain per-thread emulation)
static std::function<void()> body;
static unsigned bar_count, bar_gen, warp_count[32], warp_gen[32];
static unsigned long long xbuf[32][32];
static int or_acc;
static void yield() { swapcontext(&fibers[cur].ctx, &sched); }
static void entry() { body(); fibers[cur].done = true; swapcontext(&fibers[cur].ctx, &sched); }
// Runs body as every thread of block bx of nt threads.
static void run_block(unsigned bx, unsigned nt, std::function<void()> f) {
  body = f;
  blockIdx.x = bx;
  blockDim.x = nt;
  bar_count = 0; or_acc = 0;
  memset(warp_count, 0, sizeof warp_count);
  fibers.assign(nt, Fiber());
  for (unsigned t = 0; t < nt; ++t) {
    Fiber &F = fibers[t];
    F.stack.resize(1 << 16);
    F.done = false;
    F.wait = 0;
    getcontext(&F.ctx);
    F.ctx.uc_stack.ss_sp = F.stack.data();
    F.ctx.uc_stack.ss_size = F.stack.size();
    F.ctx.uc_link = nullptr;
    makecontext(&F.ctx, entry, 0);
  }
  for (;;) {
    bool all = true, ran = false;
    for (unsigned t = 0; t < nt; ++t) {
      if (fibers[t].done) continue;
      all = false;
      if (fibers[t].wait == 1 && bar_gen == fibers[t].gen) continue;
      if (fibers[t].wait == 2 && warp_gen[t >> 5] == fibers[t].gen) continue;
      fibers[t].wait = 0;
      ran = true;
      cur = t;
      threadIdx.x = t;
      swapcontext(&sched, &fibers[t].ctx);
    }
    if (all) break;
    if (!ran) {
      fprintf(stderr, "deadlock in block %u:", bx);
      for (unsigned t = 0; t < nt; ++t) fprintf(stderr, " %u:%c%d", t, fibers[t].done ? 'D' : 'W', fibers[t].wait);
      fprintf(stderr, "\n");
      abort();
    }
  }
  cur = -1;
}
} // namespace fib

static inline void __syncthreads() {
  if (fib::cur < 0) return;
  const unsigned g = fib::bar_gen;
  if (++fib::bar_count == blockDim.x) { fib::bar_count = 0; ++fib::bar_gen; return; }
  unsigned spins = 0;
  while (fib::bar_gen == g) { fib::fibers[fib::cur].wait = 1; fib::fibers[fib::cur].gen = g; fib::yield(); if (++spins > 100000000u) { fprintf(stderr, "barrier deadlock\n"); abort(); } }
}
static inline void __syncwarp(unsigned = 0xFFFFFFFFu) {
  if (fib::cur < 0) return;
  const unsigned w = threadIdx.x >> 5, g = fib::warp_gen[w];
  if (++fib::warp_count[w] == 32) { fib::warp_count[w] = 0; ++fib::warp_gen[w]; return; }
  while (fib::warp_gen[w] == g) { fib::fibers[fib::cur].wait = 2; fib::fibers[fib::cur].gen = g; fib::yield(); }
}
template <class T> static inline T __shfl_sync(unsigned, T v, int src) {
  const unsigned w = threadIdx.x >> 5;
  unsigned long long x = 0;
  memcpy(&x, &v, sizeof v);
  fib::xbuf[w][threadIdx.x & 31] = x;
  __syncwarp();
  x = fib::xbuf[w][src & 31];
  __syncwarp();
  T r;
  memcpy(&r, &x, sizeof r);
  return r;
}
static inline unsigned __ballot_sync(unsigned, int p) {
  const unsigned w = threadIdx.x >> 5;
  fib::xbuf[w][threadIdx.x & 31] = p != 0;
  __syncwarp();
  unsigned m = 0;
  for (int l = 0; l < 32; ++l) m |= (unsigned)fib::xbuf[w][l] << l;
  __syncwarp();
  return m;
}
static inline int __syncthreads_or(int p) {
  if (p) fib::or_acc = 1;
  __syncthreads();
  const int r = fib::or_acc;
  __syncthreads();
  if (threadIdx.x == 0) fib::or_acc = 0;
  __syncthreads();
  return r;
}
