// CUDA's keywords, launch indices and the few vector types and intrinsics every emulator
// harness needs, for a host C++ compiler (shim.h: a thread at a time; fibers.h: a block at a
// time).
#pragma once
#include <cstdint>
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __constant__ static const
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
struct Dim3 { unsigned x, y, z; };
static Dim3 blockIdx{0, 0, 0}, blockDim{1, 1, 1}, threadIdx{0, 0, 0};
struct uint4 { unsigned x, y, z, w; };
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
