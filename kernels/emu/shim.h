// CUDA's names for a host C++ compiler, so that the kernels' per-thread code can run on the
// CPU in tests (src/gpu/ctru/emulated.rs): one thread at a time, blockIdx/threadIdx set by the
// caller. Warp and block primitives are stand-ins that only let the other kernels compile.
#include <cstdint>
#include <cstddef>
#include <cstring>
#include "cuda_names.h"
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) { s &= 31; return s ? (unsigned)((((unsigned long long)hi << 32) | lo) >> s) : lo; }
template <class T> static inline T __shfl_sync(unsigned, T v, int) { return v; }
static inline void __syncthreads() {}
static inline void __syncwarp() {}
template <class T> static inline T min(T a, T b) { return a < b ? a : b; }
template <class T> static inline T max(T a, T b) { return a < b ? b : a; }
static inline void mma_s8(int d[4], const unsigned a[4], const unsigned b[2]) { (void)d; (void)a; (void)b; }
