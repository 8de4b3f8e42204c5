// Warp intrinsics for the ML-DSA emulator (emu.cpp): shuffles and votes exchange through
// per-block staging arrays behind the warp's own barrier (shim.h's t_wbar), so they need
// only warp-uniform control flow (all 32 lanes make the same calls), which is what the
// full-mask CUDA intrinsics require anyway. Warps of a block may diverge from each other.
#pragma once
#include "shim.h"
#include <bit>
#include <type_traits>

inline unsigned long long g_wx[1024];
template <class T> inline T __shfl_sync(unsigned, T v, int src) {
  static_assert(sizeof(T) <= 8 && std::is_integral_v<T>);
  const unsigned me = threadIdx.x;
  g_wx[me] = (unsigned long long)v;
  t_wbar->arrive_and_wait();
  T r = (T)g_wx[(me & ~31u) + (src & 31)];
  t_wbar->arrive_and_wait();
  return r;
}
inline unsigned __ballot_sync(unsigned, int p) {
  const unsigned me = threadIdx.x, base = me & ~31u;
  g_wx[me] = p != 0;
  t_wbar->arrive_and_wait();
  unsigned r = 0;
  for (unsigned l = 0; l < 32 && base + l < blockDim.x; ++l) r |= (unsigned)g_wx[base + l] << l;
  t_wbar->arrive_and_wait();
  return r;
}
inline int __popc(unsigned x) { return std::popcount(x); }
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)((((unsigned long long)hi << 32 | lo) << (s & 31)) >> 32);
}
