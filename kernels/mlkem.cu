// ML-KEM (FIPS 203) kernels: KeyGen, Encaps, Decaps and the input checks, for one parameter
// set per compilation. -D definitions (src/gpu/mlkem/kernels.rs, the one place they are
// written): MLKEM_K, MLKEM_ETA1, MLKEM_DU, MLKEM_DV.
//
// Mapping: one thread per item (or per (item, row) and (key, i, j) where a phase splits), one
// Keccak state per thread in registers (keccak.cuh), polynomials of 256 u16 coefficients in
// [0, q) in the thread's local memory. Per-item rows on the device are the FIPS 203 byte
// encodings (ek, dk, ct: multiples of 16 bytes, rows 8-byte aligned); polynomials that move
// between kernels are "item-minor": coefficient c of polynomial p of item b at
// [(p * 256 + c) * n + b], so a warp's threads touch consecutive words.
//
// Constant time: control flow and addresses depend on public values only (sizes, counts, the
// public seed rho of SampleNTT's rejection sampling, public keys in their checks); secret
// comparisons and selections are masks.

// The transforms and the noise sampler are called from many places: out of line, each is
// compiled once (inlined everywhere, the decapsulation kernel alone was 35,000 PTX lines and
// NVRTC took twice as long). The CPU emulation leaves inlining to its compiler.
#ifdef __CUDACC__
#define MLKEM_NOINLINE __noinline__
#else
#define MLKEM_NOINLINE
#endif

#define K MLKEM_K
#define ETA1 MLKEM_ETA1
#define ETA2 2
#define DU MLKEM_DU
#define DV MLKEM_DV
#define Q 3329u
#define POLY_BYTES 384
#define EK_LEN (POLY_BYTES * K + 32)
#define DK_LEN (2 * POLY_BYTES * K + 96)
#define CT_LEN (32 * (DU * K + DV))
#define SHA3_256_RATE 136
#define SHA3_512_RATE 72
#define SHAKE_DOMAIN 0x1F
#define SHA3_DOMAIN 0x06

// zeta^BitRev7(i) mod q, zeta = 17 (FIPS 203 Appendix A): the NTT's twiddles.
__constant__ u16 MLKEM_ZETAS[128] = {
    1, 1729, 2580, 3289, 2642, 630, 1897, 848, 1062, 1919, 193, 797, 2786, 3260, 569, 1746,
    296, 2447, 1339, 1476, 3046, 56, 2240, 1333, 1426, 2094, 535, 2882, 2393, 2879, 1974, 821,
    289, 331, 3253, 1756, 1197, 2304, 2277, 2055, 650, 1977, 2513, 632, 2865, 33, 1320, 1915,
    2319, 1435, 807, 452, 1438, 2868, 1534, 2402, 2647, 2617, 1481, 648, 2474, 3110, 1227, 910,
    17, 2761, 583, 2649, 1637, 723, 2288, 1100, 1409, 2662, 3281, 233, 756, 2156, 3015, 3050,
    1703, 1651, 2789, 1789, 1847, 952, 1461, 2687, 939, 2308, 2437, 2388, 733, 2337, 268, 641,
    1584, 2298, 2037, 3220, 375, 2549, 2090, 1645, 1063, 319, 2773, 757, 2099, 561, 2466, 2594,
    2804, 1092, 403, 1026, 1143, 2150, 2775, 886, 1722, 1212, 1874, 1029, 2110, 2935, 885, 2154};

// zeta^(2 BitRev7(i) + 1) mod q: the base multiplication's gammas.
__constant__ u16 MLKEM_GAMMAS[128] = {
    17, 3312, 2761, 568, 583, 2746, 2649, 680, 1637, 1692, 723, 2606, 2288, 1041, 1100, 2229,
    1409, 1920, 2662, 667, 3281, 48, 233, 3096, 756, 2573, 2156, 1173, 3015, 314, 3050, 279,
    1703, 1626, 1651, 1678, 2789, 540, 1789, 1540, 1847, 1482, 952, 2377, 1461, 1868, 2687, 642,
    939, 2390, 2308, 1021, 2437, 892, 2388, 941, 733, 2596, 2337, 992, 268, 3061, 641, 2688,
    1584, 1745, 2298, 1031, 2037, 1292, 3220, 109, 375, 2954, 2549, 780, 2090, 1239, 1645, 1684,
    1063, 2266, 319, 3010, 2773, 556, 757, 2572, 2099, 1230, 561, 2768, 2466, 863, 2594, 735,
    2804, 525, 1092, 2237, 403, 2926, 1026, 2303, 1143, 2186, 2150, 1179, 2775, 554, 886, 2443,
    1722, 1607, 1212, 2117, 1874, 1455, 1029, 2300, 2110, 1219, 2935, 394, 885, 2444, 2154, 1175};

// ---------------------------------------------------------------------------------------------
// Arithmetic mod q, branch free.

// floor(x / q) for any u32 (Barrett: the estimate is low by at most one).
__device__ __forceinline__ u32 div_q(u32 x) {
  u32 t = (u32)(((u64)x * 1290167u) >> 32);
  u32 r = x - t * Q;
  return t + (u32)(r >= Q);
}
__device__ __forceinline__ u32 mod_q(u32 x) {
  u32 t = (u32)(((u64)x * 1290167u) >> 32);
  u32 r = x - t * Q;
  return r - (Q & (0u - (u32)(r >= Q)));
}
// x - q if x >= q, for x < 2q.
__device__ __forceinline__ u32 csub_q(u32 x) { return x - (Q & (0u - (u32)(x >= Q))); }

// Compress_d(x) = round(2^d x / q) mod 2^d (FIPS 203 4.7), for x in [0, q).
template <u32 D> __device__ __forceinline__ u32 compress(u32 x) {
  return div_q((x << D) + Q / 2) & ((1u << D) - 1);
}
// Decompress_d(y) = round(q y / 2^d) (FIPS 203 4.8).
template <u32 D> __device__ __forceinline__ u32 decompress(u32 y) {
  return (y * Q + (1u << (D - 1))) >> D;
}

// NTT (FIPS 203 Algorithm 9) in place.
__device__ MLKEM_NOINLINE void ntt(u16 f[256]) {
  u32 i = 1;
  for (u32 len = 128; len >= 2; len >>= 1) {
    for (u32 start = 0; start < 256; start += 2 * len) {
      u32 zeta = MLKEM_ZETAS[i++];
      for (u32 j = start; j < start + len; ++j) {
        u32 t = mod_q(zeta * f[j + len]);
        u32 a = f[j];
        f[j + len] = (u16)csub_q(a + Q - t);
        f[j] = (u16)csub_q(a + t);
      }
    }
  }
}

// NTT^-1 (FIPS 203 Algorithm 10) in place, including the factor 128^-1 = 3303.
__device__ MLKEM_NOINLINE void intt(u16 f[256]) {
  u32 i = 127;
  for (u32 len = 2; len <= 128; len <<= 1) {
    for (u32 start = 0; start < 256; start += 2 * len) {
      u32 zeta = MLKEM_ZETAS[i--];
      for (u32 j = start; j < start + len; ++j) {
        u32 t = f[j], u = f[j + len];
        f[j] = (u16)csub_q(t + u);
        f[j + len] = (u16)mod_q(zeta * (u + Q - t));
      }
    }
  }
  for (u32 j = 0; j < 256; ++j) f[j] = (u16)mod_q(f[j] * 3303u);
}

// Adds BaseCaseMultiply (FIPS 203 Algorithm 12) of pair m of a and b to (c0, c1), unreduced:
// each call adds less than 2^25, so a handful of terms stay far below 2^32.
__device__ __forceinline__ void basemul_acc(u32 &c0, u32 &c1, u32 a0, u32 a1, u32 b0, u32 b1,
                                            u32 m) {
  c0 += a0 * b0 + mod_q(a1 * b1) * MLKEM_GAMMAS[m];
  c1 += a0 * b1 + a1 * b0;
}

// ---------------------------------------------------------------------------------------------
// Keccak over messages of lengths the sizes fix, the state in registers: lane(i) gives the
// message's 8-byte lane i (bytes past LEN are masked off here).

template <u32 RATE, u32 LEN, u32 DOM, class Lane>
__device__ __forceinline__ void absorb(u64 A[25], Lane lane) {
  constexpr u32 RL = RATE / 8, FULL = LEN / RATE, REM = LEN % RATE;
  keccak_zero(A);
  for (u32 b = 0; b < FULL; ++b) {
#pragma unroll
    for (u32 l = 0; l < RL; ++l) A[l] ^= lane(b * RL + l);
    keccak_f1600(A);
  }
#pragma unroll
  for (u32 l = 0; l < RL; ++l) {
    if (8 * l < REM) {
      u64 v = lane(FULL * RL + l);
      if (8 * l + 8 > REM) v &= (1ull << (8 * (REM - 8 * l))) - 1;
      A[l] ^= v;
    }
  }
  A[REM / 8] ^= (u64)DOM << (8 * (REM % 8));
  A[RL - 1] ^= 0x80ull << 56;
  keccak_f1600(A);
}

// Lane l of the aligned row p.
__device__ __forceinline__ u64 ld64(const u8 *p, u32 l) { return ((const u64 *)p)[l]; }

// ---------------------------------------------------------------------------------------------
// Sampling.

// SampleNTT(rho || j || i) (FIPS 203 Algorithm 7): out(c, v) for c = 0..255 in order.
// The rejections depend on the public seed only.
template <class Out>
__device__ __forceinline__ void sample_ntt(const u64 rho[4], u32 j, u32 i, Out out) {
  u64 A[25];
  keccak_zero(A);
#pragma unroll
  for (int l = 0; l < 4; ++l) A[l] = rho[l];
  A[4] = (u64)j | ((u64)i << 8) | ((u64)SHAKE_DOMAIN << 16);
  A[SHAKE128_RATE / 8 - 1] ^= 0x80ull << 56;
  keccak_f1600(A);
  u32 cnt = 0;
  for (;;) {
#pragma unroll
    for (u32 t = 0; t < SHAKE128_RATE / 3; ++t) {
      u32 b0 = (u32)(A[(3 * t) / 8] >> (8 * ((3 * t) % 8))) & 0xFF;
      u32 b1 = (u32)(A[(3 * t + 1) / 8] >> (8 * ((3 * t + 1) % 8))) & 0xFF;
      u32 b2 = (u32)(A[(3 * t + 2) / 8] >> (8 * ((3 * t + 2) % 8))) & 0xFF;
      u32 d1 = b0 | ((b1 & 15) << 8), d2 = (b1 >> 4) | (b2 << 4);
      if (d1 < Q && cnt < 256) out(cnt++, d1);
      if (d2 < Q && cnt < 256) out(cnt++, d2);
    }
    if (cnt >= 256) break;
    keccak_f1600(A);
  }
}

// SamplePolyCBD_eta(PRF_eta(s, nonce)) (FIPS 203 Algorithms 8, 4.3), coefficients in [0, q).
template <u32 ETA>
__device__ MLKEM_NOINLINE void cbd_prf(const u64 s[4], u32 nonce, u16 f[256]) {
  u64 A[25];
  absorb<SHAKE256_RATE, 33, SHAKE_DOMAIN>(A, [&](u32 l) { return l < 4 ? s[l] : (u64)nonce; });
  u64 buf[24];
#pragma unroll
  for (int l = 0; l < 17; ++l) buf[l] = A[l];
  if (ETA == 3) {
    keccak_f1600(A);
#pragma unroll
    for (int l = 0; l < 7; ++l) buf[17 + l] = A[l];
  }
  const u8 *b = (const u8 *)buf;
  if (ETA == 2) {
    for (u32 w = 0; w < 32; ++w) {
      u32 x = (u32)b[4 * w] | ((u32)b[4 * w + 1] << 8) | ((u32)b[4 * w + 2] << 16) |
              ((u32)b[4 * w + 3] << 24);
#pragma unroll
      for (u32 c = 0; c < 8; ++c) {
        u32 nib = x >> (4 * c);
        u32 v = (u32)__popc(nib & 3) + Q - (u32)__popc((nib >> 2) & 3);
        f[8 * w + c] = (u16)csub_q(v);
      }
    }
  } else {
    for (u32 w = 0; w < 64; ++w) {
      u32 x = (u32)b[3 * w] | ((u32)b[3 * w + 1] << 8) | ((u32)b[3 * w + 2] << 16);
#pragma unroll
      for (u32 c = 0; c < 4; ++c) {
        u32 six = x >> (6 * c);
        u32 v = (u32)__popc(six & 7) + Q - (u32)__popc((six >> 3) & 7);
        f[4 * w + c] = (u16)csub_q(v);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Encodings.

// Coefficients 8 g .. 8 g + 7 of ByteDecode_12(p) mod q (three aligned words of p).
__device__ __forceinline__ void decode12x8(const u8 *p, u32 g, u32 c[8]) {
  const u32 *w = (const u32 *)(p + 12 * g);
  u32 w0 = w[0], w1 = w[1], w2 = w[2];
  c[0] = w0 & 0xFFF;
  c[1] = (w0 >> 12) & 0xFFF;
  c[2] = (w0 >> 24) | ((w1 & 0xF) << 8);
  c[3] = (w1 >> 4) & 0xFFF;
  c[4] = (w1 >> 16) & 0xFFF;
  c[5] = (w1 >> 28) | ((w2 & 0xFF) << 4);
  c[6] = (w2 >> 8) & 0xFFF;
  c[7] = w2 >> 20;
#pragma unroll
  for (int i = 0; i < 8; ++i) c[i] = csub_q(c[i]);
}

// Whether every coefficient of ByteDecode_12(p) is below q (the modulus check, FIPS 203 7.2).
__device__ __forceinline__ bool canonical12(const u8 *p) {
  u32 bad = 0;
  for (u32 g = 0; g < 32; ++g) {
    const u32 *w = (const u32 *)(p + 12 * g);
    u32 w0 = w[0], w1 = w[1], w2 = w[2];
    u32 c[8] = {w0 & 0xFFF, (w0 >> 12) & 0xFFF, (w0 >> 24) | ((w1 & 0xF) << 8),
                (w1 >> 4) & 0xFFF, (w1 >> 16) & 0xFFF, (w1 >> 28) | ((w2 & 0xFF) << 4),
                (w2 >> 8) & 0xFFF, w2 >> 20};
#pragma unroll
    for (int i = 0; i < 8; ++i) bad |= (u32)(c[i] >= Q);
  }
  return bad == 0;
}

// ByteEncode_12(f) into p (aligned): 8 coefficients per three words.
__device__ __forceinline__ void encode12(const u16 f[256], u8 *p) {
  u32 *w = (u32 *)p;
  for (u32 g = 0; g < 32; ++g) {
    const u16 *c = f + 8 * g;
    w[3 * g] = (u32)c[0] | ((u32)c[1] << 12) | ((u32)c[2] << 24);
    w[3 * g + 1] = ((u32)c[2] >> 8) | ((u32)c[3] << 4) | ((u32)c[4] << 16) | ((u32)c[5] << 28);
    w[3 * g + 2] = ((u32)c[5] >> 4) | ((u32)c[6] << 8) | ((u32)c[7] << 20);
  }
}

// ByteEncode_d(Compress_d(f)) as 8 d words, word i handed to sink(base + i, word).
template <u32 D, class Sink>
__device__ __forceinline__ void pack_compressed(const u16 f[256], u32 base, Sink sink) {
  u64 acc = 0;
  u32 bits = 0, w = base;
  for (u32 c = 0; c < 256; ++c) {
    acc |= (u64)compress<D>(f[c]) << bits;
    bits += D;
    if (bits >= 32) {
      sink(w++, (u32)acc);
      acc >>= 32;
      bits -= 32;
    }
  }
}

// Decompress_d(ByteDecode_d(words)) of the 8 d words at w (aligned).
template <u32 D>
__device__ __forceinline__ void unpack_decompress(const u32 *w, u16 f[256]) {
  u64 acc = 0;
  u32 bits = 0, i = 0;
  for (u32 c = 0; c < 256; ++c) {
    if (bits < D) {
      acc |= (u64)w[i++] << bits;
      bits += 32;
    }
    f[c] = (u16)decompress<D>((u32)acc & ((1u << D) - 1));
    acc >>= D;
    bits -= D;
  }
}

// ---------------------------------------------------------------------------------------------
// K-PKE.Encrypt (FIPS 203 Algorithm 14) of message m (4 lanes) under coins r (4 lanes).
// Â (item-minor over keys: Â[i][j] coefficient c of key `key` at
// amat[((i K + j) 256 + c) nkeys + key]) and t̂ (the ek row) are the key's; ciphertext word i
// goes to sink(i, word).
template <class Sink>
__device__ __forceinline__ void pke_encrypt(const u16 *amat, u32 nkeys, u32 key, const u8 *ek,
                                            const u64 m[4], const u64 r[4], Sink sink) {
  u16 rh[K][256];
  u16 p[256], e[256];
  for (u32 j = 0; j < K; ++j) {
    cbd_prf<ETA1>(r, j, rh[j]);
    ntt(rh[j]);
  }
  for (u32 i = 0; i < K; ++i) {
    // u_i = NTT^-1(sum_j Â[j][i] ∘ r̂_j) + e1_i
    for (u32 m2 = 0; m2 < 128; ++m2) {
      u32 c0 = 0, c1 = 0;
#pragma unroll
      for (u32 j = 0; j < K; ++j) {
        const u16 *a = amat + ((size_t)(j * K + i) * 256 + 2 * m2) * nkeys + key;
        basemul_acc(c0, c1, a[0], a[nkeys], rh[j][2 * m2], rh[j][2 * m2 + 1], m2);
      }
      p[2 * m2] = (u16)mod_q(c0);
      p[2 * m2 + 1] = (u16)mod_q(c1);
    }
    intt(p);
    cbd_prf<ETA2>(r, K + i, e);
    for (u32 c = 0; c < 256; ++c) p[c] = (u16)csub_q((u32)p[c] + e[c]);
    pack_compressed<DU>(p, 8 * DU * i, sink);
  }
  // v = NTT^-1(t̂ ∘ r̂) + e2 + Decompress_1(m)
  for (u32 g = 0; g < 32; ++g) {
    u32 c0[4] = {0, 0, 0, 0}, c1[4] = {0, 0, 0, 0};
#pragma unroll
    for (u32 j = 0; j < K; ++j) {
      u32 t[8];
      decode12x8(ek + POLY_BYTES * j, g, t);
#pragma unroll
      for (u32 h = 0; h < 4; ++h) {
        u32 m2 = 4 * g + h;
        basemul_acc(c0[h], c1[h], t[2 * h], t[2 * h + 1], rh[j][2 * m2], rh[j][2 * m2 + 1], m2);
      }
    }
#pragma unroll
    for (u32 h = 0; h < 4; ++h) {
      p[8 * g + 2 * h] = (u16)mod_q(c0[h]);
      p[8 * g + 2 * h + 1] = (u16)mod_q(c1[h]);
    }
  }
  intt(p);
  cbd_prf<ETA2>(r, 2 * K, e);
  for (u32 c = 0; c < 256; ++c) {
    u32 bit = (u32)(m[c / 64] >> (c % 64)) & 1;
    p[c] = (u16)csub_q(csub_q((u32)p[c] + e[c]) + (1665u & (0u - bit)));
  }
  pack_compressed<DV>(p, 8 * DU * K, sink);
}

// ---------------------------------------------------------------------------------------------
// Kernels: coins and key preparation.

// Fresh messages m for a chunk whose items all want them: bytes [64 t, 64 t + 64) of ChaCha20
// stream 0 under the chunk's `key` (32 bytes of OS randomness), one thread per 64-byte block,
// `len` bytes in all.
extern "C" __global__ void mlkem_coins(const u8 *key, u8 *m, u32 len) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if ((u64)t * 64 >= len) return;
  u32 w[16];
  chacha20_block(key, 0, t, w);
  u8 *out = m + (size_t)t * 64;
  u32 left = len - t * 64;
  for (u32 i = 0; i < 64 && i < left; ++i) out[i] = (u8)(w[i / 4] >> (8 * (i % 4)));
}

// One thread per distinct encapsulation key (rows of EK_LEN): ok[key] = the modulus check
// (FIPS 203 7.2), hek[key] = H(ek).
extern "C" __global__ void mlkem_ek_prep(const u8 *eks, u32 nkeys, u8 *hek, u32 *ok) {
  u32 key = blockIdx.x * blockDim.x + threadIdx.x;
  if (key >= nkeys) return;
  const u8 *ek = eks + (size_t)key * EK_LEN;
  bool good = true;
  for (u32 j = 0; j < K; ++j) good = good && canonical12(ek + POLY_BYTES * j);
  ok[key] = good;
  u64 A[25];
  absorb<SHA3_256_RATE, EK_LEN, SHA3_DOMAIN>(A, [&](u32 l) { return ld64(ek, l); });
  u64 *h = (u64 *)(hek + (size_t)key * 32);
#pragma unroll
  for (int l = 0; l < 4; ++l) h[l] = A[l];
}

// One thread per distinct decapsulation key (rows of DK_LEN): ok[key] = the hash check
// H(dk[384k : 768k + 32]) == dk[768k + 32 : 768k + 64] (FIPS 203 7.3).
extern "C" __global__ void mlkem_dk_prep(const u8 *dks, u32 nkeys, u32 *ok) {
  u32 key = blockIdx.x * blockDim.x + threadIdx.x;
  if (key >= nkeys) return;
  const u8 *dk = dks + (size_t)key * DK_LEN;
  const u8 *ek = dk + POLY_BYTES * K;
  u64 A[25];
  absorb<SHA3_256_RATE, EK_LEN, SHA3_DOMAIN>(A, [&](u32 l) { return ld64(ek, l); });
  u64 diff = 0;
#pragma unroll
  for (int l = 0; l < 4; ++l) diff |= A[l] ^ ld64(ek + EK_LEN, l);
  ok[key] = diff == 0;
}

// Â of each key: one thread per (key, i, j); rho at rho_rows + key * stride.
extern "C" __global__ void mlkem_expand_a(const u8 *rho_rows, u32 stride, u32 nkeys, u16 *amat) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nkeys * K * K) return;
  u32 key = t % nkeys, ij = t / nkeys, i = ij / K, j = ij % K;
  const u8 *src = rho_rows + (size_t)key * stride;
  u64 rho[4];
#pragma unroll
  for (int l = 0; l < 4; ++l) rho[l] = ld64(src, l);
  u16 *a = amat + (size_t)ij * 256 * nkeys + key;
  sample_ntt(rho, j, i, [&](u32 c, u32 v) { a[(size_t)c * nkeys] = (u16)v; });
}

// ---------------------------------------------------------------------------------------------
// KeyGen (FIPS 203 Algorithms 13, 16): keygen_g, keygen_noise, keygen_t, keygen_finish.

// (rho || sigma) = G(d || k), one thread per item; seeds are rows of d || z.
extern "C" __global__ void mlkem_keygen_g(const u8 *seeds, u8 *rs, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  const u8 *d = seeds + (size_t)b * 64;
  u64 A[25];
  absorb<SHA3_512_RATE, 33, SHA3_DOMAIN>(A, [&](u32 l) { return l < 4 ? ld64(d, l) : (u64)K; });
  u64 *out = (u64 *)(rs + (size_t)b * 64);
#pragma unroll
  for (int l = 0; l < 8; ++l) out[l] = A[l];
}

// s_j and e_j, one thread per (item, j): ŝ_j into dk (ByteEncode_12) and shat, ê_j into
// ehat (item-minor).
extern "C" __global__ void mlkem_keygen_noise(const u8 *rs, u16 *shat, u16 *ehat, u8 *dks, u32 n) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * K) return;
  u32 b = t % n, j = t / n;
  u64 sigma[4];
#pragma unroll
  for (int l = 0; l < 4; ++l) sigma[l] = ld64(rs + (size_t)b * 64 + 32, l);
  u16 f[256];
  cbd_prf<ETA1>(sigma, j, f);
  ntt(f);
  encode12(f, dks + (size_t)b * DK_LEN + POLY_BYTES * j);
  u16 *s = shat + (size_t)j * 256 * n + b;
  for (u32 c = 0; c < 256; ++c) s[(size_t)c * n] = f[c];
  cbd_prf<ETA1>(sigma, K + j, f);
  ntt(f);
  u16 *e = ehat + (size_t)j * 256 * n + b;
  for (u32 c = 0; c < 256; ++c) e[(size_t)c * n] = f[c];
}

// t̂_i = sum_j Â[i][j] ∘ ŝ_j + ê_i, one thread per (item, i), Â sampled on the fly; writes
// ByteEncode_12(t̂_i) and (row 0) rho into the ek row.
extern "C" __global__ void mlkem_keygen_t(const u8 *rs, const u16 *shat, const u16 *ehat, u8 *eks,
                                          u32 n) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * K) return;
  u32 b = t % n, i = t / n;
  u64 rho[4];
#pragma unroll
  for (int l = 0; l < 4; ++l) rho[l] = ld64(rs + (size_t)b * 64, l);
  u32 acc[256];
  const u16 *e = ehat + (size_t)i * 256 * n + b;
  for (u32 c = 0; c < 256; ++c) acc[c] = e[(size_t)c * n];
  u16 a[256];
  for (u32 j = 0; j < K; ++j) {
    sample_ntt(rho, j, i, [&](u32 c, u32 v) { a[c] = (u16)v; });
    const u16 *s = shat + (size_t)j * 256 * n + b;
    for (u32 m2 = 0; m2 < 128; ++m2)
      basemul_acc(acc[2 * m2], acc[2 * m2 + 1], a[2 * m2], a[2 * m2 + 1], s[(size_t)(2 * m2) * n],
                  s[(size_t)(2 * m2 + 1) * n], m2);
  }
  for (u32 c = 0; c < 256; ++c) a[c] = (u16)mod_q(acc[c]);
  u8 *ek = eks + (size_t)b * EK_LEN;
  encode12(a, ek + POLY_BYTES * i);
  if (i == 0) {
    u64 *r = (u64 *)(ek + POLY_BYTES * K);
#pragma unroll
    for (int l = 0; l < 4; ++l) r[l] = rho[l];
  }
}

// dk = dk_pke || ek || H(ek) || z, one thread per item (dk_pke is already in place).
extern "C" __global__ void mlkem_keygen_finish(const u8 *seeds, const u8 *eks, u8 *dks, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  const u8 *ek = eks + (size_t)b * EK_LEN;
  u64 *dk = (u64 *)(dks + (size_t)b * DK_LEN + POLY_BYTES * K);
  for (u32 l = 0; l < EK_LEN / 8; ++l) dk[l] = ld64(ek, l);
  u64 A[25];
  absorb<SHA3_256_RATE, EK_LEN, SHA3_DOMAIN>(A, [&](u32 l) { return ld64(ek, l); });
#pragma unroll
  for (int l = 0; l < 4; ++l) dk[EK_LEN / 8 + l] = A[l];
  const u8 *z = seeds + (size_t)b * 64 + 32;
#pragma unroll
  for (int l = 0; l < 4; ++l) dk[EK_LEN / 8 + 4 + l] = ld64(z, l);
}

// ---------------------------------------------------------------------------------------------
// Encaps and Decaps, one thread per item. key_idx null: item b uses key b.

// ML-KEM.Encaps_internal (FIPS 203 Algorithm 17): (K, r) = G(m || H(ek)), c = Encrypt.
extern "C" __global__ void mlkem_encaps(const u8 *msgs, const u32 *key_idx, const u8 *eks,
                                        const u8 *hek, const u16 *amat, u32 nkeys, u8 *cts,
                                        u8 *sss, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  u32 key = key_idx ? key_idx[b] : b;
  const u8 *ek = eks + (size_t)key * EK_LEN;
  const u8 *h = hek + (size_t)key * 32;
  u64 m[4];
#pragma unroll
  for (int l = 0; l < 4; ++l) m[l] = ld64(msgs + (size_t)b * 32, l);
  u64 A[25];
  absorb<SHA3_512_RATE, 64, SHA3_DOMAIN>(A, [&](u32 l) { return l < 4 ? m[l] : ld64(h, l - 4); });
  u64 r[4];
  u64 *ss = (u64 *)(sss + (size_t)b * 32);
#pragma unroll
  for (int l = 0; l < 4; ++l) {
    ss[l] = A[l];
    r[l] = A[4 + l];
  }
  u32 *ct = (u32 *)(cts + (size_t)b * CT_LEN);
  pke_encrypt(amat, nkeys, key, ek, m, r, [&](u32 i, u32 w) { ct[i] = w; });
}

// ML-KEM.Decaps_internal (FIPS 203 Algorithm 18): m' = Decrypt(c), (K', r') = G(m' || h),
// K-bar = J(z || c), c' = Encrypt(m', r'); K' when c' == c, else K-bar (selected by mask).
extern "C" __global__ void mlkem_decaps(const u8 *cts, const u32 *key_idx, const u8 *dks,
                                        const u16 *amat, u32 nkeys, u8 *sss, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  u32 key = key_idx ? key_idx[b] : b;
  const u8 *dk = dks + (size_t)key * DK_LEN;
  const u8 *ek = dk + POLY_BYTES * K;
  const u8 *h = ek + EK_LEN, *z = h + 32;
  const u8 *c = cts + (size_t)b * CT_LEN;
  const u32 *cw = (const u32 *)c;

  // K-PKE.Decrypt (FIPS 203 Algorithm 15): w = v' - NTT^-1(ŝ ∘ NTT(u')).
  u32 acc[256];
  u16 p[256];
  for (u32 x = 0; x < 256; ++x) acc[x] = 0;
  for (u32 j = 0; j < K; ++j) {
    unpack_decompress<DU>(cw + 8 * DU * j, p);
    ntt(p);
    for (u32 g = 0; g < 32; ++g) {
      u32 s[8];
      decode12x8(dk + POLY_BYTES * j, g, s);
#pragma unroll
      for (u32 hh = 0; hh < 4; ++hh) {
        u32 m2 = 4 * g + hh;
        basemul_acc(acc[2 * m2], acc[2 * m2 + 1], s[2 * hh], s[2 * hh + 1], p[2 * m2],
                    p[2 * m2 + 1], m2);
      }
    }
  }
  for (u32 x = 0; x < 256; ++x) p[x] = (u16)mod_q(acc[x]);
  intt(p);
  u16 v[256];
  unpack_decompress<DV>(cw + 8 * DU * K, v);
  u64 m[4];
#pragma unroll
  for (u32 q4 = 0; q4 < 4; ++q4) {
    u64 word = 0;
    for (u32 x = 0; x < 64; ++x) {
      u32 w = csub_q((u32)v[64 * q4 + x] + Q - p[64 * q4 + x]);
      word |= (u64)compress<1>(w) << x;
    }
    m[q4] = word;
  }

  u64 A[25];
  absorb<SHA3_512_RATE, 64, SHA3_DOMAIN>(A, [&](u32 l) { return l < 4 ? m[l] : ld64(h, l - 4); });
  u64 kp[4], r[4];
#pragma unroll
  for (int l = 0; l < 4; ++l) {
    kp[l] = A[l];
    r[l] = A[4 + l];
  }
  u32 diff = 0;
  pke_encrypt(amat, nkeys, key, ek, m, r, [&](u32 i, u32 w) { diff |= w ^ cw[i]; });
  absorb<SHAKE256_RATE, 32 + CT_LEN, SHAKE_DOMAIN>(
      A, [&](u32 l) { return l < 4 ? ld64(z, l) : ld64(c, l - 4); });
  u64 reject = 0ull - (u64)((diff | (0u - diff)) >> 31);
  u64 *ss = (u64 *)(sss + (size_t)b * 32);
#pragma unroll
  for (int l = 0; l < 4; ++l) ss[l] = kp[l] ^ (reject & (kp[l] ^ A[l]));
}
