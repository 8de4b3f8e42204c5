// ML-KEM (FIPS 203) kernels: KeyGen, Encaps, Decaps and the input checks, for one parameter
// set per compilation. -D definitions (src/gpu/mlkem/kernels.rs, the one place they are
// written): MLKEM_K, MLKEM_ETA1, MLKEM_DU, MLKEM_DV, MLKEM_NT.
//
// Mapping: the Keccak phases (G, H, J per item, SampleNTT per (key, i, j), PRF per (item,
// polynomial)) run one Keccak state per thread in registers (keccak.cuh) and leave bytes or
// coefficients in device memory; the polynomial arithmetic (CBD, NTT, base multiplication,
// NTT^-1, compression, encodings) runs a block of MLKEM_NT = 128 threads per item, thread t
// holding coefficients 2t and 2t + 1 of every polynomial, the polynomials in shared memory
// with a barrier between NTT layers. Per-item rows on the device are the FIPS 203 byte
// encodings (ek, dk, ct: multiples of 16 bytes, rows 8-byte aligned); Â is key-major
// (Â[i][j] coefficient c of key `key` at amat[((key K + i) K + j) 256 + c]), PRF outputs
// item-major (NOISE_SLOT bytes per polynomial).
//
// Constant time: control flow and addresses depend on public values only (sizes, counts, the
// public seed rho of SampleNTT's rejection sampling, public keys in their checks, ciphertexts);
// secret comparisons and selections are masks.

#if MLKEM_NT != 128
#error "the block kernels give each of 128 threads one coefficient pair"
#endif
#define NT MLKEM_NT
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


// Bytes of one PRF output (SamplePolyCBD's input) in a noise row: 64 eta, eta <= ETA1.
#define NOISE_SLOT (64 * ETA1)

// ---------------------------------------------------------------------------------------------
// Block arithmetic: 128 threads per item, thread t = threadIdx.x owning pair t (coefficients
// 2t, 2t + 1). Polynomials in shared memory as u16 in [0, q).

// NTT (FIPS 203 Algorithm 9) of NP polynomials in place: in each layer thread t computes
// butterfly t of every polynomial. Callers synchronise after writing f; ends synchronised.
template <u32 NP> __device__ __forceinline__ void ntt_block(u16 (*f)[256]) {
  const u32 t = threadIdx.x;
  for (u32 len = 128; len >= 2; len >>= 1) {
    const u32 g = t / len, j = 2 * len * g + (t & (len - 1));
    const u32 z = MLKEM_ZETAS[128 / len + g];
#pragma unroll
    for (u32 p = 0; p < NP; ++p) {
      u32 a = f[p][j], x = mod_q(z * f[p][j + len]);
      f[p][j + len] = (u16)csub_q(a + Q - x);
      f[p][j] = (u16)csub_q(a + x);
    }
    __syncthreads();
  }
}

// NTT^-1 (FIPS 203 Algorithm 10) of NP polynomials in place, with the factor 128^-1 = 3303
// in the last layer (where thread t alone holds coefficients t and t + 128). As ntt_block.
template <u32 NP> __device__ __forceinline__ void intt_block(u16 (*f)[256]) {
  const u32 t = threadIdx.x;
  for (u32 len = 2; len <= 128; len <<= 1) {
    const u32 g = t / len, j = 2 * len * g + (t & (len - 1));
    const u32 z = MLKEM_ZETAS[256 / len - 1 - g];
#pragma unroll
    for (u32 p = 0; p < NP; ++p) {
      u32 a = f[p][j], b = f[p][j + len];
      u32 lo = csub_q(a + b), hi = mod_q(z * (b + Q - a));
      if (len == 128) {
        lo = mod_q(lo * 3303u);
        hi = mod_q(hi * 3303u);
      }
      f[p][j] = (u16)lo;
      f[p][j + len] = (u16)hi;
    }
    __syncthreads();
  }
}

// Adds BaseCaseMultiply (FIPS 203 Algorithm 12) of pair m of a and b to (c0, c1), unreduced:
// each call adds less than 2^25, so a handful of terms stay far below 2^32.
__device__ __forceinline__ void basemul_acc(u32 &c0, u32 &c1, u32 a0, u32 a1, u32 b0, u32 b1,
                                            u32 m) {
  c0 += a0 * b0 + mod_q(a1 * b1) * MLKEM_GAMMAS[m];
  c1 += a0 * b1 + a1 * b0;
}

// Pair t of SamplePolyCBD_eta (FIPS 203 Algorithm 8) of the PRF output at b, in [0, q).
template <u32 ETA> __device__ __forceinline__ void cbd_pair(const u8 *b, u32 t, u32 &c0, u32 &c1) {
  if (ETA == 2) {
    u32 x = b[t];
    c0 = csub_q((u32)__popc(x & 3) + Q - (u32)__popc((x >> 2) & 3));
    c1 = csub_q((u32)__popc((x >> 4) & 3) + Q - (u32)__popc((x >> 6) & 3));
  } else {
    // Bits 12 t .. 12 t + 11: within two bytes.
    u32 at = 12 * t, x = ((u32)b[at / 8] | ((u32)b[at / 8 + 1] << 8)) >> (at % 8);
    c0 = csub_q((u32)__popc(x & 7) + Q - (u32)__popc((x >> 3) & 7));
    c1 = csub_q((u32)__popc((x >> 6) & 7) + Q - (u32)__popc((x >> 9) & 7));
  }
}

// Pair t of ByteDecode_12(p) mod q.
__device__ __forceinline__ void decode12_pair(const u8 *p, u32 t, u32 &c0, u32 &c1) {
  u32 b0 = p[3 * t], b1 = p[3 * t + 1], b2 = p[3 * t + 2];
  c0 = csub_q(b0 | ((b1 & 15) << 8));
  c1 = csub_q((b1 >> 4) | (b2 << 4));
}

// Pair t of ByteEncode_12 into p.
__device__ __forceinline__ void encode12_pair(u8 *p, u32 t, u32 c0, u32 c1) {
  p[3 * t] = (u8)c0;
  p[3 * t + 1] = (u8)((c0 >> 8) | (c1 << 4));
  p[3 * t + 2] = (u8)(c1 >> 4);
}

// Coefficient c of ByteDecode_d of the 8 d words at w (aligned).
template <u32 D> __device__ __forceinline__ u32 field(const u32 *w, u32 c) {
  const u32 bit = c * D, i = bit / 32, sh = bit % 32;
  u32 v = w[i] >> sh;
  if (sh + D > 32) v |= w[i + 1] << (32 - sh);
  return v & ((1u << D) - 1);
}

// Word i of ByteEncode_d of the 256 d-bit values f.
template <u32 D> __device__ __forceinline__ u32 pack_word(const u16 f[256], u32 i) {
  u32 c = 32 * i / D, have = D - 32 * i % D;
  u64 acc = (u64)f[c] >> (D - have);
  while (have < 32) {
    acc |= (u64)f[++c] << have;
    have += D;
  }
  return (u32)acc;
}

// ---------------------------------------------------------------------------------------------
// K-PKE.Encrypt (FIPS 203 Algorithm 14) of the 32-byte message m under the PRF outputs of the
// coins r (noise: r_0..r_{K-1}, e1_0..e1_{K-1}, e2), one block per item. a: the key's Â; ek:
// its row (t̂ and rho). Ciphertext word i goes to sink(i, word) (every word once, spread over
// the threads).
template <class Sink>
__device__ __forceinline__ void pke_encrypt_block(const u16 *a, const u8 *ek, const u8 *m,
                                                  const u8 *noise, Sink sink) {
  __shared__ u16 rh[K][256];
  __shared__ u16 u[K + 1][256]; // u_0 .. u_{K-1}, v
  const u32 t = threadIdx.x;
  for (u32 j = 0; j < K; ++j) {
    u32 c0, c1;
    cbd_pair<ETA1>(noise + NOISE_SLOT * j, t, c0, c1);
    rh[j][2 * t] = (u16)c0;
    rh[j][2 * t + 1] = (u16)c1;
  }
  __syncthreads();
  ntt_block<K>(rh);
  // û_i = sum_j Â[j][i] ∘ r̂_j, v̂ = sum_j t̂_j ∘ r̂_j: pair t of each.
  const u32 *a2 = (const u32 *)a;
  for (u32 i = 0; i <= K; ++i) {
    u32 c0 = 0, c1 = 0;
#pragma unroll
    for (u32 j = 0; j < K; ++j) {
      u32 a0, a1;
      if (i < K) {
        u32 w = a2[(j * K + i) * 128 + t];
        a0 = w & 0xFFFF;
        a1 = w >> 16;
      } else {
        decode12_pair(ek + POLY_BYTES * j, t, a0, a1);
      }
      basemul_acc(c0, c1, a0, a1, rh[j][2 * t], rh[j][2 * t + 1], t);
    }
    u[i][2 * t] = (u16)mod_q(c0);
    u[i][2 * t + 1] = (u16)mod_q(c1);
  }
  __syncthreads();
  intt_block<K + 1>(u);
  // u_i + e1_i and v + e2 + Decompress_1(m), compressed in place (each thread its own pair).
  for (u32 i = 0; i < K; ++i) {
    u32 e0, e1;
    cbd_pair<ETA2>(noise + NOISE_SLOT * (K + i), t, e0, e1);
    u[i][2 * t] = (u16)compress<DU>(csub_q(u[i][2 * t] + e0));
    u[i][2 * t + 1] = (u16)compress<DU>(csub_q(u[i][2 * t + 1] + e1));
  }
  {
    u32 e0, e1;
    cbd_pair<ETA2>(noise + NOISE_SLOT * 2 * K, t, e0, e1);
    u32 bits = m[t / 4] >> (2 * (t % 4));
    u32 v0 = csub_q(csub_q(u[K][2 * t] + e0) + (1665u & (0u - (bits & 1))));
    u32 v1 = csub_q(csub_q(u[K][2 * t + 1] + e1) + (1665u & (0u - ((bits >> 1) & 1))));
    u[K][2 * t] = (u16)compress<DV>(v0);
    u[K][2 * t + 1] = (u16)compress<DV>(v1);
  }
  __syncthreads();
  for (u32 w = t; w < CT_LEN / 4; w += NT) {
    u32 word = w < 8 * DU * K ? pack_word<DU>(u[w / (8 * DU)], w % (8 * DU))
                              : pack_word<DV>(u[K], w - 8 * DU * K);
    sink(w, word);
  }
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

// ---------------------------------------------------------------------------------------------
// The key checks.
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
  u32 key = t / (K * K), ij = t % (K * K), i = ij / K, j = ij % K;
  const u8 *src = rho_rows + (size_t)key * stride;
  u64 rho[4];
#pragma unroll
  for (int l = 0; l < 4; ++l) rho[l] = ld64(src, l);
  // Four coefficients per store.
  u64 *a = (u64 *)(amat + (size_t)t * 256);
  u64 acc = 0;
  sample_ntt(rho, j, i, [&](u32 c, u32 v) {
    acc |= (u64)v << (16 * (c % 4));
    if (c % 4 == 3) {
      a[c / 4] = acc;
      acc = 0;
    }
  });
}

// PRF_eta(s, nonce) (FIPS 203 4.3) of `count` consecutive nonces 0 .. count - 1 per item, one
// thread per (item, nonce): nonces below `wide` with ETA1, the others with ETA2; s at
// seeds + item * stride. Output: item b's nonce p at noise + (b count + p) NOISE_SLOT.
extern "C" __global__ void mlkem_prf(const u8 *seeds, u32 stride, u32 count, u32 wide, u8 *noise,
                                     u32 n) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * count) return;
  u32 b = t / count, p = t % count;
  const u8 *s = seeds + (size_t)b * stride;
  u64 A[25];
  absorb<SHAKE256_RATE, 33, SHAKE_DOMAIN>(A, [&](u32 l) { return l < 4 ? ld64(s, l) : (u64)p; });
  u64 *out = (u64 *)(noise + (size_t)t * NOISE_SLOT);
#pragma unroll
  for (int l = 0; l < 16; ++l) out[l] = A[l];
  if (ETA1 == 3 && p < wide) {
    out[16] = A[16];
    keccak_f1600(A);
#pragma unroll
    for (int l = 0; l < 7; ++l) out[17 + l] = A[l];
  }
}

// ---------------------------------------------------------------------------------------------
// KeyGen (FIPS 203 Algorithms 13, 16): keygen_g; expand_a and prf (s_0..s_{K-1},
// e_0..e_{K-1}); keygen_main; keygen_finish.

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

// One block per item: ŝ = NTT(s), ê = NTT(e), t̂ = Â ∘ ŝ + ê; ByteEncode_12(ŝ) into the dk
// row, ByteEncode_12(t̂) || rho into the ek row. amat: Â per item; noise: 2K PRF outputs per
// item.
extern "C" __global__ void __launch_bounds__(NT)
    mlkem_keygen_main(const u8 *rs, const u16 *amat, const u8 *noise, u8 *eks, u8 *dks) {
  __shared__ u16 se[2 * K][256]; // ŝ_0 .. ŝ_{K-1}, ê_0 .. ê_{K-1}
  const u32 b = blockIdx.x, t = threadIdx.x;
  const u8 *nz = noise + (size_t)b * 2 * K * NOISE_SLOT;
  for (u32 p = 0; p < 2 * K; ++p) {
    u32 c0, c1;
    cbd_pair<ETA1>(nz + NOISE_SLOT * p, t, c0, c1);
    se[p][2 * t] = (u16)c0;
    se[p][2 * t + 1] = (u16)c1;
  }
  __syncthreads();
  ntt_block<2 * K>(se);
  u8 *ek = eks + (size_t)b * EK_LEN, *dk = dks + (size_t)b * DK_LEN;
  const u32 *a2 = (const u32 *)(amat + (size_t)b * K * K * 256);
  for (u32 i = 0; i < K; ++i) {
    encode12_pair(dk + POLY_BYTES * i, t, se[i][2 * t], se[i][2 * t + 1]);
    u32 c0 = se[K + i][2 * t], c1 = se[K + i][2 * t + 1];
#pragma unroll
    for (u32 j = 0; j < K; ++j) {
      u32 w = a2[(i * K + j) * 128 + t];
      basemul_acc(c0, c1, w & 0xFFFF, w >> 16, se[j][2 * t], se[j][2 * t + 1], t);
    }
    encode12_pair(ek + POLY_BYTES * i, t, mod_q(c0), mod_q(c1));
  }
  if (t < 4) ((u64 *)(ek + POLY_BYTES * K))[t] = ld64(rs + (size_t)b * 64, t);
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
// Encaps: encaps_g, prf (of r: 2K + 1 outputs), encaps_encrypt. Decaps: decrypt, decaps_g,
// prf (of r'), decaps_check. key_idx null: item b uses key b.

// ML-KEM.Encaps_internal (FIPS 203 Algorithm 17), its hash: (K, r) = G(m || H(ek)), one
// thread per item; K into the shared-secret row, r into the coins row (32 bytes).
extern "C" __global__ void mlkem_encaps_g(const u8 *msgs, const u32 *key_idx, const u8 *hek,
                                          u8 *sss, u8 *coins, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  u32 key = key_idx ? key_idx[b] : b;
  const u8 *h = hek + (size_t)key * 32, *m = msgs + (size_t)b * 32;
  u64 A[25];
  absorb<SHA3_512_RATE, 64, SHA3_DOMAIN>(A, [&](u32 l) { return l < 4 ? ld64(m, l) : ld64(h, l - 4); });
  u64 *ss = (u64 *)(sss + (size_t)b * 32), *r = (u64 *)(coins + (size_t)b * 32);
#pragma unroll
  for (int l = 0; l < 4; ++l) {
    ss[l] = A[l];
    r[l] = A[4 + l];
  }
}

// c = K-PKE.Encrypt(ek, m, r), one block per item (noise: the PRF outputs of r).
extern "C" __global__ void __launch_bounds__(NT)
    mlkem_encaps_encrypt(const u8 *msgs, const u32 *key_idx, const u8 *eks, const u16 *amat,
                         const u8 *noise, u8 *cts) {
  const u32 b = blockIdx.x;
  const u32 key = key_idx ? key_idx[b] : b;
  u32 *ct = (u32 *)(cts + (size_t)b * CT_LEN);
  pke_encrypt_block(amat + (size_t)key * K * K * 256, eks + (size_t)key * EK_LEN,
                    msgs + (size_t)b * 32, noise + (size_t)b * (2 * K + 1) * NOISE_SLOT,
                    [&](u32 i, u32 w) { ct[i] = w; });
}

// K-PKE.Decrypt (FIPS 203 Algorithm 15), one block per item: m' = Compress_1(v' -
// NTT^-1(ŝ ∘ NTT(u'))) into the message row (32 bytes).
extern "C" __global__ void __launch_bounds__(NT)
    mlkem_decrypt(const u8 *cts, const u32 *key_idx, const u8 *dks, u8 *msgs) {
  __shared__ u16 up[K][256];
  __shared__ u16 w[1][256];
  const u32 b = blockIdx.x, t = threadIdx.x;
  const u32 key = key_idx ? key_idx[b] : b;
  const u8 *dk = dks + (size_t)key * DK_LEN;
  const u32 *cw = (const u32 *)(cts + (size_t)b * CT_LEN);
  for (u32 j = 0; j < K; ++j) {
    up[j][2 * t] = (u16)decompress<DU>(field<DU>(cw + 8 * DU * j, 2 * t));
    up[j][2 * t + 1] = (u16)decompress<DU>(field<DU>(cw + 8 * DU * j, 2 * t + 1));
  }
  __syncthreads();
  ntt_block<K>(up);
  u32 c0 = 0, c1 = 0;
#pragma unroll
  for (u32 j = 0; j < K; ++j) {
    u32 s0, s1;
    decode12_pair(dk + POLY_BYTES * j, t, s0, s1);
    basemul_acc(c0, c1, s0, s1, up[j][2 * t], up[j][2 * t + 1], t);
  }
  w[0][2 * t] = (u16)mod_q(c0);
  w[0][2 * t + 1] = (u16)mod_q(c1);
  __syncthreads();
  intt_block<1>(w);
  const u32 *vw = cw + 8 * DU * K;
  u32 v0 = decompress<DV>(field<DV>(vw, 2 * t)), v1 = decompress<DV>(field<DV>(vw, 2 * t + 1));
  u32 m0 = compress<1>(csub_q(v0 + Q - w[0][2 * t]));
  u32 m1 = compress<1>(csub_q(v1 + Q - w[0][2 * t + 1]));
  w[0][2 * t] = (u16)m0;
  w[0][2 * t + 1] = (u16)m1;
  __syncthreads();
  if (t < 8) ((u32 *)(msgs + (size_t)b * 32))[t] = pack_word<1>(w[0], t);
}

// ML-KEM.Decaps_internal (FIPS 203 Algorithm 18), its hashes, one thread per item:
// (K', r') = G(m' || h) and K-bar = J(z || c); K' || K-bar into the row kk (64 bytes), r' into
// the coins row (32 bytes).
extern "C" __global__ void mlkem_decaps_g(const u8 *cts, const u32 *key_idx, const u8 *dks,
                                          const u8 *msgs, u8 *kk, u8 *coins, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  u32 key = key_idx ? key_idx[b] : b;
  const u8 *h = dks + (size_t)key * DK_LEN + POLY_BYTES * K + EK_LEN, *z = h + 32;
  const u8 *m = msgs + (size_t)b * 32, *c = cts + (size_t)b * CT_LEN;
  u64 A[25];
  absorb<SHA3_512_RATE, 64, SHA3_DOMAIN>(A, [&](u32 l) { return l < 4 ? ld64(m, l) : ld64(h, l - 4); });
  u64 *o = (u64 *)(kk + (size_t)b * 64), *r = (u64 *)(coins + (size_t)b * 32);
#pragma unroll
  for (int l = 0; l < 4; ++l) {
    o[l] = A[l];
    r[l] = A[4 + l];
  }
  absorb<SHAKE256_RATE, 32 + CT_LEN, SHAKE_DOMAIN>(
      A, [&](u32 l) { return l < 4 ? ld64(z, l) : ld64(c, l - 4); });
#pragma unroll
  for (int l = 0; l < 4; ++l) o[4 + l] = A[l];
}

// c' = K-PKE.Encrypt(ek, m', r'), compared with c over the whole block (a constant-time OR of
// the word differences); the shared secret K' if c' == c, else K-bar, selected by mask; zero
// for an item whose key failed its check (ok[key] == 0; ok null: every key passed), so the
// rows can go back before the host has read the verdicts.
extern "C" __global__ void __launch_bounds__(NT)
    mlkem_decaps_check(const u8 *cts, const u32 *key_idx, const u8 *dks, const u16 *amat,
                       const u8 *msgs, const u8 *noise, const u8 *kk, const u32 *ok, u8 *sss) {
  const u32 b = blockIdx.x, t = threadIdx.x;
  const u32 key = key_idx ? key_idx[b] : b;
  const u32 *cw = (const u32 *)(cts + (size_t)b * CT_LEN);
  u32 diff = 0;
  pke_encrypt_block(amat + (size_t)key * K * K * 256,
                    dks + (size_t)key * DK_LEN + POLY_BYTES * K, msgs + (size_t)b * 32,
                    noise + (size_t)b * (2 * K + 1) * NOISE_SLOT,
                    [&](u32 i, u32 w) { diff |= w ^ cw[i]; });
  const u64 reject = 0ull - (u64)__syncthreads_or(diff != 0);
  if (t < 4) {
    const u8 *row = kk + (size_t)b * 64;
    u64 kp = ld64(row, t), kbar = ld64(row, 4 + t);
    const u64 good = ok ? 0ull - (u64)(ok[key] != 0) : ~0ull;
    ((u64 *)(sss + (size_t)b * 32))[t] = (kp ^ (reject & (kp ^ kbar))) & good;
  }
}
