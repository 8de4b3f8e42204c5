// CTRU-Prime KEM kernels (spec shared/spec/ctru-prime.md). Compiled once per parameter set
// with -D: CTRU_N, CTRU_NP (n+1 rounded up to 32), CTRU_Q, CTRU_D2, CTRU_ETA, CTRU_MSGBYTES,
// CTRU_COIN_HALF, CTRU_PK_LEN, CTRU_CT_LEN, CTRU_CT_STRIDE, CTRU_SKPKE_LEN, and the layout
// sizes the host shares: CTRU_KEYINFO, CTRU_MSG_STRIDE, CTRU_MF_R, CTRU_TC_WARPS, CTRU_TC_MT.
// All come from src/gpu/ctru/kernels.rs (the one place they are written).
//
// Layouts (all device buffers): polynomials of item b are rows [b][NP] (i8 digits, i16 key
// vectors, u16 results); ciphertexts are rows of CT_STRIDE bytes (zero padded, u32 aligned);
// per-key data (pk33 || z) rows of KEYINFO bytes. Every kernel's control flow and memory
// addresses depend only on public sizes, never on secret values (constant time per item).

#define N CTRU_N
#define NP CTRU_NP
#define Q CTRU_Q
#define D2 CTRU_D2
#define Q2 (1 << CTRU_D2)
#define ETA CTRU_ETA
#define MSGBYTES CTRU_MSGBYTES
#define COIN_HALF CTRU_COIN_HALF
#define PK_LEN CTRU_PK_LEN
#define CT_LEN CTRU_CT_LEN
#define CT_STRIDE CTRU_CT_STRIDE
#define SKPKE_LEN CTRU_SKPKE_LEN
#define SK_LEN (SKPKE_LEN + PK_LEN + 32)
#define BOUND (2 * ETA + 1)
#define E8_BLOCKS (2 * MSGBYTES)
#define KEYINFO CTRU_KEYINFO // pk33 (33 bytes) at 0, z (32 bytes) at 64
#define MSG_STRIDE CTRU_MSG_STRIDE // bytes per message row (MSGBYTES <= 79)
#define SHA3_512_RATE 72
typedef signed char i8;
typedef short i16;

// ---------------------------------------------------------------------------------------------
// Sponge over one thread's Keccak state, for messages and outputs of lengths the sizes fix.
// Every byte's lane and shift is a compile-time constant once the loops are unrolled, so the
// state stays in registers (a byte-indexed state at a run-time position lives in local memory,
// and the hashing kernels spent most of their time moving it).

// Keccak[RATE] over the LEN bytes in(0..LEN) with domain byte DOM, squeezing OUT bytes to
// out(i, byte).
template <u32 RATE, u32 LEN, u32 OUT, u32 DOM, class In, class Out>
__device__ __forceinline__ void sponge(In in, Out out) {
  static_assert(RATE % 8 == 0, "whole lanes per block");
  u64 s[25];
  keccak_zero(s);
#pragma unroll
  for (u32 i = 0; i < LEN; ++i) {
    s[(i % RATE) / 8] ^= (u64)in(i) << (8 * (i % 8));
    if (i % RATE == RATE - 1) keccak_f1600(s);
  }
  s[(LEN % RATE) / 8] ^= (u64)DOM << (8 * (LEN % 8));
  s[RATE / 8 - 1] ^= (u64)0x80 << 56;
  keccak_f1600(s);
#pragma unroll
  for (u32 i = 0; i < OUT; ++i) {
    if (i > 0 && i % RATE == 0) keccak_f1600(s);
    out(i, (u8)(s[(i % RATE) / 8] >> (8 * (i % 8))));
  }
}

#define SHAKE256_DOMAIN 0x1F
#define SHA3_DOMAIN 0x06

// ---------------------------------------------------------------------------------------------
// Scalar helpers.

// x mod Q in [0, Q) for any int (division by a constant compiles to multiply and shift).
__device__ __forceinline__ int mod_q(int x) {
  int r = x % Q;
  return r + ((r >> 31) & Q);
}

// CBD_eta coefficient i of the bit string buf (spec 5.1).
__device__ __forceinline__ int cbd_coeff(const u8 *buf, u32 i) {
  u32 bit = 2 * ETA * i;
  u32 w = (u32)buf[bit >> 3] | ((u32)buf[(bit >> 3) + 1] << 8);
  w >>= bit & 7;
  u32 a = w & ((1u << ETA) - 1), b = (w >> ETA) & ((1u << ETA) - 1);
  return __popc(a) - __popc(b);
}

// Writes CBD_eta(buf) as the i8 row out[0..NP) (zero past N) with 16-byte stores.
__device__ __forceinline__ void cbd_row(const u8 *buf, i8 *out) {
  for (u32 base = 0; base < NP; base += 16) {
    u32 w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      u32 v = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        u32 i = base + 4 * q + k;
        int c = i < N ? cbd_coeff(buf, i) : 0;
        v |= ((u32)c & 0xFF) << (8 * k);
      }
      w[q] = v;
    }
    *(uint4 *)(out + base) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// E8 encoding of a nibble: bit j is the message bit of coefficient j of the block (spec 5.5).
__device__ __forceinline__ u32 e8_encode(u32 a) {
  u32 w = 0;
  w ^= (0u - (a & 1)) & 0x55;
  w ^= (0u - ((a >> 1) & 1)) & 0x0F;
  w ^= (0u - ((a >> 2) & 1)) & 0x3C;
  w ^= (0u - ((a >> 3) & 1)) & 0xF0;
  return w;
}

__device__ __forceinline__ int lt_mask(int a, int b) { return (a - b) >> 31; }
__device__ __forceinline__ int sel(int m, int a, int b) { return b ^ (m & (a ^ b)); }

// E8 decoding with the reference's tie-breaks (spec 5.5), branch free.
__device__ __forceinline__ u32 e8_decode(const int x[8]) {
  const int half = Q2 / 2;
  int cost0[8], cost1[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    int d0 = sel(lt_mask(Q2, 2 * x[j]), Q2 - x[j], x[j]);
    int d1 = x[j] - half;
    cost0[j] = d0 * d0;
    cost1[j] = d1 * d1;
  }
  int total[2], bits[2][4];
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    int min_delta = (1 << 30) - 1, t_star = 0, parity = 0;
    total[s] = 0;
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      int c0 = (s ? cost1[2 * t] : cost0[2 * t]) + cost0[2 * t + 1];
      int c1 = (s ? cost0[2 * t] : cost1[2 * t]) + cost1[2 * t + 1];
      int b = lt_mask(c1, c0);
      int best = sel(b, c1, c0);
      int delta = sel(b, c0, c1) - best;
      total[s] += best;
      bits[s][t] = b & 1;
      parity ^= b & 1;
      int smaller = lt_mask(delta, min_delta);
      min_delta = sel(smaller, delta, min_delta);
      t_star = sel(smaller, t, t_star);
    }
    int odd = -parity;
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      int d = t ^ t_star;
      int is_star = ~((d | -d) >> 31);
      bits[s][t] ^= odd & is_star & 1;
    }
    total[s] += odd & min_delta;
  }
  int s1 = lt_mask(total[1], total[0]);
  int b0 = sel(s1, bits[1][0], bits[0][0]), b1 = sel(s1, bits[1][1], bits[0][1]);
  int b3 = sel(s1, bits[1][3], bits[0][3]);
  return (u32)((s1 & 1) | (b0 << 1) | ((b0 ^ b1) << 2) | (b3 << 3));
}

// Compress-and-encode (spec 5.3 step 4) of coefficients [from, to) of item row sigma with
// message m (from and to multiples of 8, so E8 blocks stay whole), as a stream of u32
// ciphertext words handed to emit(word_index, word) starting at word0; the final word is zero
// padded. `from` must start a word (from * D2 a multiple of 32).
template <class F>
__device__ __forceinline__ void encrypt_range(const u16 *sigma, const u8 *m, u32 from, u32 to, u32 word0,
                                              F emit) {
  u64 acc = 0;
  u32 nbits = 0, word = word0;
  for (u32 base = from; base < to; base += 8) {
    uint4 raw = *(const uint4 *)(sigma + base);
    u32 pairs[4] = {raw.x, raw.y, raw.z, raw.w};
    u32 blk = base / 8;
    u32 cw = blk < E8_BLOCKS ? e8_encode((m[blk / 2] >> (4 * (blk & 1))) & 0xF) : 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      u32 i = base + j;
      if (i < N) {
        u32 s = (pairs[j / 2] >> (16 * (j & 1))) & 0xFFFF;
        u32 c = ((s << D2) + Q / 2) / Q;
        c = (c + ((cw >> j) & 1) * (Q2 / 2)) & (Q2 - 1);
        acc |= (u64)c << nbits;
        nbits += D2;
        if (nbits >= 32) {
          emit(word++, (u32)acc);
          acc >>= 32;
          nbits -= 32;
        }
      }
    }
  }
  if (nbits > 0) emit(word++, (u32)acc);
}

// The whole row, one thread.
template <class F> __device__ __forceinline__ void encrypt_words(const u16 *sigma, const u8 *m, F emit) {
  encrypt_range(sigma, m, 0, NP, 0, emit);
}

// A warp splits a row into groups of FIN_G coefficients that fill FIN_W whole words, so the
// lanes read neighbouring parts of sigma and write neighbouring ciphertext words (one thread
// per row would touch one word per 32-byte sector).
__host__ __device__ constexpr u32 fin_gcd(u32 a, u32 b) { return b ? fin_gcd(b, a % b) : a; }
constexpr u32 FIN_G = 32 / fin_gcd(D2, 32);
constexpr u32 FIN_W = FIN_G * D2 / 32;
constexpr u32 FIN_GROUPS = (N + FIN_G - 1) / FIN_G;
static_assert(FIN_G % 8 == 0 && FIN_GROUPS * FIN_G <= NP, "groups hold whole E8 blocks inside the row");

// ---------------------------------------------------------------------------------------------
// Hashing and sampling.

// Fresh encapsulation seeds e for a chunk whose items all want them: bytes [64 t, 64 t + 64)
// of ChaCha20 stream 0 under the chunk's `key` (32 bytes of OS randomness), one thread per
// 64-byte block, `len` bytes in all (the seeds of items 2t and 2t + 1).
extern "C" __global__ void encaps_coins(const u8 *key, u8 *e, u32 len) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if ((u64)t * 64 >= len) return;
  u32 w[16];
  chacha20_block(key, 0, t, w);
  u8 *out = e + (size_t)t * 64;
  u32 left = len - t * 64;
  for (u32 i = 0; i < 64 && i < left; ++i) out[i] = (u8)(w[i / 4] >> (8 * (i % 4)));
}

// Encaps front end, one thread per item: m = SHAKE256(e) (or the given m' when from_msg),
// (K || s) = SHA3-512(pk33 || m), r = CBD(SHAKE256(s, COIN_HALF)). Writes m, K and r.
extern "C" __global__ void encaps_hash(const u8 *e, u32 from_msg, const u8 *keyinfo,
                                       const u32 *key_idx, u8 *msg, u8 *kout, i8 *r, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  u8 m[MSGBYTES];
  u8 *mrow = msg + (size_t)b * MSG_STRIDE;
  if (from_msg) {
#pragma unroll
    for (u32 i = 0; i < MSGBYTES; ++i) m[i] = mrow[i];
  } else {
    const u8 *seed = e + (size_t)b * 32;
    sponge<SHAKE256_RATE, 32, MSGBYTES, SHAKE256_DOMAIN>([&](u32 i) { return seed[i]; },
                                                        [&](u32 i, u8 v) { m[i] = mrow[i] = v; });
  }
  const u8 *ki = keyinfo + (key_idx ? key_idx[b] : b) * KEYINFO;
  u8 *k = kout + (size_t)b * 32;
  u8 sd[32];
  sponge<SHA3_512_RATE, 33 + MSGBYTES, 64, SHA3_DOMAIN>(
      [&](u32 i) { return i < 33 ? ki[i] : m[i - 33]; },
      [&](u32 i, u8 v) {
        if (i < 32) k[i] = v;
        else sd[i - 32] = v;
      });
  u8 coins[COIN_HALF + 2];
  coins[COIN_HALF] = coins[COIN_HALF + 1] = 0;
  sponge<SHAKE256_RATE, 32, COIN_HALF, SHAKE256_DOMAIN>([&](u32 i) { return sd[i]; },
                                                       [&](u32 i, u8 v) { coins[i] = v; });
  cbd_row(coins, r + (size_t)b * NP);
}

// KeyGen front end, one thread per key: coins = SHAKE256(d, 2 COIN_HALF); f = 2 CBD + 1 and
// g = CBD as i8 rows.
extern "C" __global__ void keygen_sample(const u8 *seeds, i8 *f, i8 *g, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  const u8 *d = seeds + (size_t)b * 64;
  u8 coins[2 * COIN_HALF + 2];
  coins[2 * COIN_HALF] = coins[2 * COIN_HALF + 1] = 0;
  sponge<SHAKE256_RATE, 32, 2 * COIN_HALF, SHAKE256_DOMAIN>([&](u32 i) { return d[i]; },
                                                           [&](u32 i, u8 v) { coins[i] = v; });
  for (u32 i = 0; i < NP; ++i) {
    int fi = i < N ? 2 * cbd_coeff(coins, i) + (i == 0) : 0;
    f[(size_t)b * NP + i] = (i8)fi;
  }
  // g's bytes start at COIN_HALF; cbd_row may read 2 bytes past the half (zeros or g's bytes:
  // only bits of coefficients >= N, which are dropped).
  cbd_row(coins + COIN_HALF, g + (size_t)b * NP);
}

// K-bar = SHA3-512(pk33 || z || ct)[0..32], one thread per item, with the state in registers:
// the message goes in as 8-byte lanes at offsets the sizes fix, not byte by byte through a
// sponge (whose byte-indexed state lives in local memory; that made this the costliest
// decapsulation kernel, 14-24 permutations per item).
#define KBAR_LEN (65 + CT_LEN)
#define KBAR_BLOCKS (KBAR_LEN / SHA3_512_RATE + 1) // room for at least the domain byte
#define KBAR_PAD (KBAR_LEN - SHA3_512_RATE * (KBAR_BLOCKS - 1)) // domain byte in the last block
#if KBAR_LEN < SHA3_512_RATE
#error "K-bar's message is assumed to span more than one block"
#endif

// Byte i of the first block: pk33 (33 bytes), z (32), then ct[0..7).
__device__ __forceinline__ u8 kbar_head_byte(const u8 *ki, const u8 *c, u32 i) {
  return i < 33 ? ki[i] : i < 65 ? ki[64 + (i - 33)] : c[i - 65];
}

// Ciphertext bytes [q, q + 8) as a lane, for q = 7 mod 8 (the message's 65-byte prefix puts every
// later lane there): the top byte of one aligned word of the row and the low seven of the next.
// Bytes from CT_LEN on are zero (the row's padding is not relied on).
__device__ __forceinline__ u64 kbar_ct_lane(const u64 *row, u32 q) {
  u32 w = (q - 7) / 8;
  u64 lo = 8 * w < CT_STRIDE ? row[w] : 0;
  u64 hi = 8 * (w + 1) < CT_STRIDE ? row[w + 1] : 0;
  u64 v = (lo >> 56) | (hi << 8);
  if (q + 8 > CT_LEN) v = q >= CT_LEN ? 0 : v & ((1ull << (8 * (CT_LEN - q))) - 1);
  return v;
}

extern "C" __global__ void decaps_kbar(const u8 *ct, const u8 *keyinfo, const u32 *key_idx,
                                       u8 *kbar, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  const u8 *ki = keyinfo + (key_idx ? key_idx[b] : b) * KEYINFO;
  const u8 *c = ct + (size_t)b * CT_STRIDE;
  u64 s[25];
  keccak_zero(s);
#pragma unroll
  for (u32 j = 0; j < SHA3_512_RATE / 8; ++j) {
    u64 v = 0;
#pragma unroll
    for (u32 k = 0; k < 8; ++k) v |= (u64)kbar_head_byte(ki, c, 8 * j + k) << (8 * k);
    s[j] ^= v;
  }
  keccak_f1600(s);
  for (u32 blk = 1; blk < KBAR_BLOCKS; ++blk) {
#pragma unroll
    for (u32 j = 0; j < SHA3_512_RATE / 8; ++j)
      s[j] ^= kbar_ct_lane((const u64 *)c, SHA3_512_RATE * blk + 8 * j - 65);
    if (blk == KBAR_BLOCKS - 1) {
      s[KBAR_PAD / 8] ^= (u64)0x06 << (8 * (KBAR_PAD % 8));
      s[SHA3_512_RATE / 8 - 1] ^= (u64)0x80 << 56;
    }
    keccak_f1600(s);
  }
  u64 *out = (u64 *)(kbar + (size_t)b * 32);
#pragma unroll
  for (u32 i = 0; i < 4; ++i) out[i] = s[i];
}

// ---------------------------------------------------------------------------------------------
// Element-wise back ends (one thread per item).

// ct = PackCT(Compress(sigma) + E8(m)) into rows of CT_STRIDE bytes.
// One warp per item (see FIN_G).
extern "C" __global__ void __launch_bounds__(256) encaps_finish(const u16 *sigma, const u8 *msg, u8 *ct, u32 n) {
  u32 b = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x & 31;
  if (b >= n) return;
  const u16 *row = sigma + (size_t)b * NP;
  const u8 *m = msg + (size_t)b * MSG_STRIDE;
  u32 *out = (u32 *)(ct + (size_t)b * CT_STRIDE);
  for (u32 g = lane; g < FIN_GROUPS; g += 32)
    encrypt_range(row, m, g * FIN_G, (g + 1) * FIN_G, g * FIN_W, [&](u32 i, u32 w) { out[i] = w; });
}

// UnpackCT into two i8 digit rows: c = 128 * hi + lo (lo in [0, 128), hi in [0, 16)).
extern "C" __global__ void decaps_unpack(const u8 *ct, i8 *lo, i8 *hi, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  const u8 *in = ct + (size_t)b * CT_STRIDE;
  u64 acc = 0;
  u32 nbits = 0, pos = 0;
  for (u32 base = 0; base < NP; base += 16) {
    u32 wl[4], wh[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      u32 vl = 0, vh = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        u32 i = base + 4 * q + k;
        u32 c = 0;
        if (i < N) {
          while (nbits < D2) {
            acc |= (u64)in[pos++] << nbits;
            nbits += 8;
          }
          c = (u32)acc & (Q2 - 1);
          acc >>= D2;
          nbits -= D2;
        }
        vl |= (c & 127) << (8 * k);
        vh |= (c >> 7) << (8 * k);
      }
      wl[q] = vl;
      wh[q] = vh;
    }
    *(uint4 *)(lo + (size_t)b * NP + base) = make_uint4(wl[0], wl[1], wl[2], wl[3]);
    *(uint4 *)(hi + (size_t)b * NP + base) = make_uint4(wh[0], wh[1], wh[2], wh[3]);
  }
}

// m' = E8-decode of v = c f mod q2 (spec 5.4), into msg rows.
extern "C" __global__ void decaps_decode(const u16 *v, u8 *msg, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  const u16 *row = v + (size_t)b * NP;
  for (u32 j = 0; j < MSGBYTES; ++j) {
    u32 byte = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint4 raw = *(const uint4 *)(row + 16 * j + 8 * h);
      u32 w[4] = {raw.x, raw.y, raw.z, raw.w};
      int x[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) x[k] = (w[k / 2] >> (16 * (k & 1))) & 0xFFFF;
      byte |= e8_decode(x) << (4 * h);
    }
    msg[b * MSG_STRIDE + j] = (u8)byte;
  }
}

// Re-encrypts m' (sigma = h r'), compares with ct over every byte in constant time and writes
// K' or K-bar (spec 5.6, pqgpu's full implicit rejection).
extern "C" __global__ void decaps_finish(const u16 *sigma, const u8 *msg, const u8 *ct,
                                         const u8 *kprime, const u8 *kbar, u8 *ss, u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  const u32 *in = (const u32 *)(ct + (size_t)b * CT_STRIDE);
  u32 diff = 0;
  encrypt_words(sigma + (size_t)b * NP, msg + b * MSG_STRIDE, [&](u32 i, u32 w) { diff |= w ^ in[i]; });
  u32 keep = 0u - (u32)(((u64)diff - 1) >> 63); // all ones iff diff == 0
  for (u32 i = 0; i < 32; ++i) {
    u32 k = kprime[b * 32 + i], kb = kbar[b * 32 + i];
    ss[b * 32 + i] = (u8)(kb ^ (keep & (k ^ kb)));
  }
}

// ---------------------------------------------------------------------------------------------
// KeyGen: inversion and output packing.

// A representative in (-q, q): enough for the divstep products (|f0 g - g0 f| < 2 q^2).
__device__ __forceinline__ int red_lazy(int x) { return x % Q; }

#define INV_C (NP / 32)
// in^-1 in R_q by the constant-time divstep recip (spec 4.3), by the calling warp (warp w of
// its block). `in` is a row of NP coefficients in (-q, q) (i8 f or u16 residues); `out` gets
// NP residues in [0, q). Coefficient i = 32c + lane of each state vector lives in register c
// of that lane; shifts by one coefficient are one shuffle per register. Work beyond the public
// degree bounds (they depend only on the iteration) is skipped a whole register row at a time.
template <class T> __device__ __forceinline__ void invert_warp(const T *in, i16 *out) {
  u32 lane = threadIdx.x & 31;
  int F[INV_C], G[INV_C], V[INV_C], R[INV_C];
#pragma unroll
  for (int c = 0; c < INV_C; ++c) {
    int i = 32 * c + lane;
    F[c] = (i == 0) ? 1 : (i == N - 1 || i == N) ? -1 : 0;
    G[c] = (i < N) ? (int)in[N - 1 - i] : 0;
    V[c] = 0;
    R[c] = (i == 0);
  }
  int delta = 1;
  for (int k = 0; k < 2 * N - 1; ++k) {
    int fg_len = min(N, 2 * N - 1 - k) + 1;
    int vr_len = min(N, k) + 1;
    int cfg = (fg_len + 31) / 32, cvr = (vr_len + 31) / 32;
    // v <- x v
    int carry = 0;
#pragma unroll
    for (int c = 0; c < INV_C; ++c) {
      if (c < cvr) {
        int t = __shfl_sync(0xffffffffu, V[c], (lane + 31) & 31);
        V[c] = lane == 0 ? carry : t;
        carry = t;
      }
    }
    int g0 = __shfl_sync(0xffffffffu, G[0], 0);
    int f0 = __shfl_sync(0xffffffffu, F[0], 0);
    int g0_nonzero = -(int)(g0 != 0); // g0 in (-q, q): zero mod q only when 0
    int swap = ((-delta) >> 31) & g0_nonzero;
    delta = sel(swap, -delta, delta) + 1;
#pragma unroll
    for (int c = 0; c < INV_C; ++c) {
      if (c < cfg) {
        int t = swap & (F[c] ^ G[c]);
        F[c] ^= t;
        G[c] ^= t;
      }
      if (c < cvr) {
        int t = swap & (V[c] ^ R[c]);
        V[c] ^= t;
        R[c] ^= t;
      }
    }
    f0 = __shfl_sync(0xffffffffu, F[0], 0);
    int gg0 = __shfl_sync(0xffffffffu, G[0], 0);
    // g <- (f0 g - g0 f) / x ; r <- f0 r - g0 v
#pragma unroll
    for (int c = 0; c < INV_C; ++c) {
      if (c < cvr) R[c] = red_lazy(f0 * R[c] - gg0 * V[c]);
    }
    int y[INV_C];
#pragma unroll
    for (int c = 0; c < INV_C; ++c) y[c] = (c < cfg) ? red_lazy(f0 * G[c] - gg0 * F[c]) : 0;
    int up = 0;
#pragma unroll
    for (int c = INV_C - 1; c >= 0; --c) {
      if (c < cfg) {
        int t = __shfl_sync(0xffffffffu, y[c], (lane + 1) & 31);
        G[c] = lane == 31 ? up : t;
        up = t;
      }
    }
  }
  // f is now a nonzero constant f0; v * input = f0 (reversed).
  int f0 = mod_q(__shfl_sync(0xffffffffu, F[0], 0));
  int scale = 1, base = f0;
  for (int e = Q - 2; e > 0; e >>= 1) { // public exponent: fixed sequence
    if (e & 1) scale = mod_q(scale * base);
    base = mod_q(base * base);
  }
  // finv[i] = scale * v[n-1-i]: gather through shared memory.
  __shared__ int vs[4][NP];
  int w = threadIdx.x / 32;
#pragma unroll
  for (int c = 0; c < INV_C; ++c) vs[w][32 * c + lane] = V[c];
  __syncwarp();
  for (int i = lane; i < NP; i += 32) {
    int o = i < N ? mod_q(scale * mod_q(vs[w][N - 1 - i])) : 0;
    out[i] = (i16)o;
  }
}

// f^-1 for each key's i8 row f, one warp per key (the per-key path, PQGPU_CTRU_INVERT=perkey).
extern "C" __global__ void __launch_bounds__(128) keygen_invert(const i8 *f_in, i16 *finv, u32 n) {
  u32 key = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (key >= n) return; // whole warps only (n keys -> n warps)
  invert_warp(f_in + (size_t)key * NP, finv + (size_t)key * NP);
}

// ---------------------------------------------------------------------------------------------
// KeyGen: Montgomery batch inversion over a binary product tree. R_q is a field and every
// f = 2f' + 1 is nonzero, so the chunk's f^-1 come from one divstep inversion of the product of
// all f plus 3 (m - 1) full products: up the tree (parent = left child * right child), invert
// the root, down the tree (inv(left) = inv(parent) * right, inv(right) = inv(parent) * left).
// A level of m nodes has ceil(m / 2) parents; an odd last node is carried up (and its
// inverse down) by a copy. The shape depends only on m. Nodes are u16 rows of NP residues in
// [0, q), zero past N.

#define MF_R CTRU_MF_R     // consecutive output coefficients per thread
#define MF_T (NP / MF_R)  // threads per product (NP is a multiple of 32)
#define MF_CHUNK 128      // terms per i32 partial sum: centred operands, |a b| <= ((q-1)/2)^2
#define MF_OFF (NP + MF_R - 1) // ms[u + MF_OFF] holds s_u; aligns each thread's loads to 16 B
static_assert((long long)MF_CHUNK * ((Q - 1) / 2) * ((Q - 1) / 2) <= 2147483647LL,
              "full product partial sums must fit in i32");

// x mod q centred in [-(q-1)/2, (q-1)/2] (q odd).
__device__ __forceinline__ int center_q(int x) {
  x = mod_q(x);
  return x - (Q & -(int)(2 * x > Q));
}

// Coefficient t of row a, 0 outside [0, N) (t is public).
__device__ __forceinline__ int coef(const u16 *a, int t) { return (t >= 0 && t < N) ? a[t] : 0; }

// c = a b in R_q for u16 residue rows a, b; the calling block (MF_T threads) computes it. As a
// matrix product c_i = sum_j M[i][j] b_j (spec 9.2), M[i][j] = s_{i-j} for every row i >= 1
// with s_u = a_u + a_{n+u-1} + a_{n+u} (a_t = 0 outside [0, n)); row 0 lacks the a_{n+u-1}
// term, so c_0 = (row 0 with s) - d_{n-1} and d_{n-1} = c_{n-1} - a_{n-1} b_{n-1}. Every
// thread does the same NP x NP multiply-adds: R outputs per thread over a sliding window of s,
// 16-byte shared loads, i32 partials reduced every MF_CHUNK terms.
__device__ __forceinline__ void mul_full(const u16 *a, const u16 *b, u16 *c) {
  __shared__ __align__(16) int ms[2 * NP + MF_R];
  __shared__ __align__(16) int mb[NP];
  __shared__ int last; // c_{n-1}, for the row-0 correction
  for (int k = threadIdx.x; k < 2 * NP + MF_R; k += MF_T) {
    int u = k - MF_OFF;
    int v = (u > -N && u < N) ? coef(a, u) + coef(a, N + u - 1) + coef(a, N + u) : 0;
    ms[k] = center_q(v);
  }
  for (int j = threadIdx.x; j < NP; j += MF_T) mb[j] = center_q(coef(b, j));
  __syncthreads();
  const int i0 = MF_R * threadIdx.x;
  int tot[MF_R], prev[MF_R], cur[MF_R], bb[MF_R];
  // prev: s at i0 - jb + 1 .. i0 - jb + R; cur: s at i0 - jb - R + 1 .. i0 - jb.
#pragma unroll
  for (int q = 0; q < MF_R / 4; ++q) {
    uint4 v = *(const uint4 *)&ms[i0 + MF_OFF + 1 + 4 * q];
    prev[4 * q] = v.x, prev[4 * q + 1] = v.y, prev[4 * q + 2] = v.z, prev[4 * q + 3] = v.w;
  }
#pragma unroll
  for (int r = 0; r < MF_R; ++r) tot[r] = 0;
  for (int c0 = 0; c0 < NP; c0 += MF_CHUNK) {
    int acc[MF_R];
#pragma unroll
    for (int r = 0; r < MF_R; ++r) acc[r] = 0;
    const int end = min(c0 + MF_CHUNK, NP);
    for (int jb = c0; jb < end; jb += MF_R) {
#pragma unroll
      for (int q = 0; q < MF_R / 4; ++q) {
        uint4 v = *(const uint4 *)&ms[i0 - jb + MF_OFF - MF_R + 1 + 4 * q];
        cur[4 * q] = v.x, cur[4 * q + 1] = v.y, cur[4 * q + 2] = v.z, cur[4 * q + 3] = v.w;
        uint4 w = *(const uint4 *)&mb[jb + 4 * q];
        bb[4 * q] = w.x, bb[4 * q + 1] = w.y, bb[4 * q + 2] = w.z, bb[4 * q + 3] = w.w;
      }
      // acc[r] += s_{i0 + r - (jb + t)} b_{jb + t}
#pragma unroll
      for (int t = 0; t < MF_R; ++t)
#pragma unroll
        for (int r = 0; r < MF_R; ++r) {
          int d = r - t;
          acc[r] += (d <= 0 ? cur[d + MF_R - 1] : prev[d - 1]) * bb[t];
        }
#pragma unroll
      for (int r = 0; r < MF_R; ++r) prev[r] = cur[r];
    }
#pragma unroll
    for (int r = 0; r < MF_R; ++r) tot[r] += acc[r] % Q;
  }
#pragma unroll
  for (int r = 0; r < MF_R; ++r) tot[r] = mod_q(tot[r]);
  if (threadIdx.x == (N - 1) / MF_R) last = tot[(N - 1) % MF_R];
  __syncthreads();
  if (threadIdx.x == 0) tot[0] = mod_q(tot[0] - last + ms[N - 1 + MF_OFF] * mb[N - 1]);
  u32 w[MF_R / 2];
#pragma unroll
  for (int r = 0; r < MF_R; r += 2) {
    u32 lo = i0 + r < N ? tot[r] : 0, hi = i0 + r + 1 < N ? tot[r + 1] : 0;
    w[r / 2] = lo | (hi << 16);
  }
#pragma unroll
  for (int q = 0; q < MF_R / 8; ++q)
    *(uint4 *)(c + i0 + 8 * q) = make_uint4(w[4 * q], w[4 * q + 1], w[4 * q + 2], w[4 * q + 3]);
}

// dst = src for one row, by the calling block.
__device__ __forceinline__ void copy_row(const u16 *src, u16 *dst) {
  for (int i = threadIdx.x; i < NP; i += blockDim.x) dst[i] = src[i];
}

// Leaves: f (i8 rows) as residue rows, one thread per coefficient.
extern "C" __global__ void tree_leaves(const i8 *f, u16 *leaf, u32 n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (size_t)n * NP) return;
  leaf[i] = (u16)mod_q(f[i]);
}

// One level up: upper[k] = lower[2k] lower[2k+1] (a copy of lower[2k] when 2k + 1 = m).
// One block of MF_T threads per parent, ceil(m / 2) blocks.
extern "C" __global__ void __launch_bounds__(MF_T) tree_up(const u16 *lower, u16 *upper, u32 m) {
  u32 k = blockIdx.x;
  const u16 *l = lower + (size_t)(2 * k) * NP;
  if (2 * k + 1 < m) mul_full(l, l + NP, upper + (size_t)k * NP);
  else copy_row(l, upper + (size_t)k * NP);
}

// The root's inverse, one warp (the product of all leaves; nonzero in the field R_q).
extern "C" __global__ void __launch_bounds__(32) tree_invert(const u16 *root, i16 *inv) {
  invert_warp(root, inv);
}

// One level down: inv_lower[c] = inv_upper[c / 2] lower[c ^ 1] (a copy of inv_upper[c / 2]
// when c has no sibling). One block of MF_T threads per node of the lower level, m blocks.
extern "C" __global__ void __launch_bounds__(MF_T) tree_down(const u16 *inv_upper, const u16 *lower,
                                                              u16 *inv_lower, u32 m) {
  u32 c = blockIdx.x;
  const u16 *ip = inv_upper + (size_t)(c / 2) * NP;
  if ((c ^ 1) < m) mul_full(ip, lower + (size_t)(c ^ 1) * NP, inv_lower + (size_t)c * NP);
  else copy_row(ip, inv_lower + (size_t)c * NP);
}

// Encode(R, M) of h with every M_i = Q (spec 6.1). All moduli of one level are equal except
// possibly the last (odd carry), so two scalars track them. In place: level values overwrite
// the front of r.
__device__ __forceinline__ void encode_pk(u32 *r, u8 *out) {
  u32 len = N, m = Q, mlast = Q, pos = 0;
  while (len > 1) {
    u32 half = (len + 1) / 2;
    u32 m2 = 0, m2last = 0;
    for (u32 i = 0; i + 1 < len; i += 2) {
      u32 mi1 = (i + 1 == len - 1) ? mlast : m;
      u32 rr = r[i] + r[i + 1] * m;
      u32 mm = m * mi1;
      while (mm >= 16384) {
        out[pos++] = (u8)rr;
        rr >>= 8;
        mm = (mm + 255) / 256;
      }
      r[i / 2] = rr;
      if (i / 2 == half - 1) m2last = mm; else m2 = mm;
    }
    if (len & 1) {
      r[half - 1] = r[len - 1];
      m2last = mlast;
    }
    if (half == 1) m2 = m2last;
    if (m2 == 0) m2 = m2last;
    len = half;
    m = m2;
    mlast = m2last;
  }
  u32 r0 = r[0], m0 = mlast;
  while (m0 > 1) {
    out[pos++] = (u8)r0;
    r0 >>= 8;
    m0 = (m0 + 255) / 256;
  }
}

// pk = Encode(h); sk = PackF(f) || pk || z. One thread per key (pk is public: plain division).
extern "C" __global__ void keygen_pack(const u16 *h, const i8 *f, const u8 *seeds, u8 *pk, u8 *sk,
                                       u32 n) {
  u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n) return;
  u32 r[N];
  for (u32 i = 0; i < N; ++i) r[i] = h[(size_t)b * NP + i];
  u8 *o = pk + (size_t)b * PK_LEN;
  encode_pk(r, o);
  u8 *s = sk + (size_t)b * SK_LEN;
  for (u32 j = 0; j < SKPKE_LEN; ++j) {
    u32 lo = BOUND - f[(size_t)b * NP + 2 * j];
    u32 hi = 2 * j + 1 < N ? BOUND - f[(size_t)b * NP + 2 * j + 1] : 0;
    s[j] = (u8)(lo | (hi << 4));
  }
  for (u32 j = 0; j < PK_LEN; ++j) s[SKPKE_LEN + j] = o[j];
  for (u32 j = 0; j < 32; ++j) s[SKPKE_LEN + PK_LEN + j] = seeds[b * 64 + 32 + j];
}

// ---------------------------------------------------------------------------------------------
// Engine 1, CUDA cores: exact schoolbook product of a key vector (i16 row, |.| < 2^13) and an
// item vector (i8 digits lo + 128 hi) in Z[x]/(x^n - x - 1), reduced mod q (mod_q2 = 0) or
// mod q2. One block per item; every bound is public. Exact in i32: |coefficient| < 2^28.
extern "C" __global__ void __launch_bounds__(256) mul_cc(const i16 *keyvec, const u32 *key_idx,
                                                         const i8 *lo, const i8 *hi, u16 *out,
                                                         u32 mod_q2, u32 n) {
  __shared__ int a[NP], bv[NP], d[2 * NP];
  u32 item = blockIdx.x;
  if (item >= n) return;
  const i16 *kv = keyvec + (size_t)(key_idx ? key_idx[item] : item) * NP;
  for (u32 i = threadIdx.x; i < NP; i += blockDim.x) {
    a[i] = kv[i];
    int v = lo[(size_t)item * NP + i];
    if (hi) v += 128 * hi[(size_t)item * NP + i];
    bv[i] = v;
  }
  __syncthreads();
  for (int k = threadIdx.x; k < 2 * N - 1; k += blockDim.x) {
    int lo_i = max(0, k - (N - 1)), hi_i = min(k, N - 1);
    int s = 0;
    for (int i = lo_i; i <= hi_i; ++i) s += a[i] * bv[k - i];
    d[k] = s;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < NP; i += blockDim.x) {
    int c = 0;
    if (i < N) {
      c = d[i];
      if (i >= 1) c += d[N + i - 1];
      if (i <= N - 2) c += d[N + i];
      c = mod_q2 ? (c & (Q2 - 1)) : mod_q(c);
    }
    out[(size_t)item * NP + i] = (u16)c;
  }
}

// ---------------------------------------------------------------------------------------------
// Engine 2, Tensor Cores: the product as an integer matrix product. The key polynomial a is
// expanded to its multiplication matrix M (M[i][j] = coefficient i of a x^j mod x^n - x - 1,
// spec 9.2); output row b = M * (item vector b). int8 MMA with int32 accumulation.

// M[i][j] for 0 <= i, j < N (spec 9.2).
__device__ __forceinline__ int mul_matrix(const i16 *a, int i, int j) {
  if (i > j) return a[i - j];
  if (i == j) return a[0] + (i >= 1 ? a[N - 1] : 0);
  return a[N - (j - i)] + (i >= 1 ? a[N - 1 - (j - i)] : 0);
}

// Expands key row `key` to M stored row-major [i][j] (NP x NP, zero padded). digits = 2: M mod q
// centered and split as M = 128 hi + lo (lo in [-64, 64)); digits = 1: M itself (|M| <= 14,
// the f matrix) into `lo`.
extern "C" __global__ void expand_key(const i16 *keyvec, u32 key, u32 digits, i8 *hi, i8 *lo) {
  u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= NP * NP) return;
  int i = t / NP, j = t % NP;
  const i16 *a = keyvec + (size_t)key * NP;
  int v = (i < N && j < N) ? mul_matrix(a, i, j) : 0;
  if (digits == 2) {
    v = mod_q(v);
    v -= Q & -(int)(2 * v > Q); // centered
    int l = ((v + 64) & 127) - 64;
    hi[t] = (i8)((v - l) / 128);
    lo[t] = (i8)l;
  } else {
    lo[t] = (i8)v;
  }
}

#ifndef CTRU_EMU
__device__ __forceinline__ void mma_s8(int d[4], const u32 a[4], const u32 b[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

#define TC_WARPS CTRU_TC_WARPS // warps per block, stacked along items
#define TC_MT CTRU_TC_MT       // m16 tiles per warp (32 items)
#define TC_NT 4    // n8 tiles per warp (32 output coefficients)

// out[b][i] = (sum_j M[i][j] x_b[j]) reduced, for items b of the block's 128 rows and the
// block's 32 output coefficients. The item side is the MMA's A (row-major [item][k]), the key
// matrix its B ("col": output coefficient i's k-run is row i of M, contiguous).
// two_key: M = 128 Mhi + Mlo with one item digit x (encaps, h r mod q).
// otherwise: x = 128 xhi + xlo with one key digit M (decaps, c f mod q2).
extern "C" __global__ void __launch_bounds__(128) mul_tc(const i8 *x_lo, const i8 *x_hi,
                                                         const i8 *m_lo, const i8 *m_hi,
                                                         u32 two_key, u16 *out, u32 items) {
  const u32 coef_tiles = NP / 32;
  u32 item_block = blockIdx.x / coef_tiles, coef_tile = blockIdx.x % coef_tiles;
  u32 warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  u32 g = lane >> 2, t = lane & 3;
  u32 i0 = (item_block * TC_WARPS + warp) * (16 * TC_MT);
  u32 j0 = coef_tile * 32;
  if (i0 >= items) return; // items are padded to whole warps; warp-uniform
  int acc_hi[TC_MT][TC_NT][4], acc_lo[TC_MT][TC_NT][4];
#pragma unroll
  for (int mt = 0; mt < TC_MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < TC_NT; ++nt)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc_hi[mt][nt][r] = acc_lo[mt][nt][r] = 0;

  for (u32 k0 = 0; k0 < NP; k0 += 32) {
    u32 a_lo[TC_MT][4], a_hi[TC_MT][4];
#pragma unroll
    for (int mt = 0; mt < TC_MT; ++mt) {
      size_t r0 = (size_t)(i0 + 16 * mt + g) * NP + k0 + 4 * t;
      size_t r1 = r0 + 8 * NP;
      a_lo[mt][0] = *(const u32 *)(x_lo + r0);
      a_lo[mt][1] = *(const u32 *)(x_lo + r1);
      a_lo[mt][2] = *(const u32 *)(x_lo + r0 + 16);
      a_lo[mt][3] = *(const u32 *)(x_lo + r1 + 16);
      if (!two_key) {
        a_hi[mt][0] = *(const u32 *)(x_hi + r0);
        a_hi[mt][1] = *(const u32 *)(x_hi + r1);
        a_hi[mt][2] = *(const u32 *)(x_hi + r0 + 16);
        a_hi[mt][3] = *(const u32 *)(x_hi + r1 + 16);
      }
    }
#pragma unroll
    for (int nt = 0; nt < TC_NT; ++nt) {
      size_t c0 = (size_t)(j0 + 8 * nt + g) * NP + k0 + 4 * t;
      u32 b_lo[2] = {*(const u32 *)(m_lo + c0), *(const u32 *)(m_lo + c0 + 16)};
      if (two_key) {
        u32 b_hi[2] = {*(const u32 *)(m_hi + c0), *(const u32 *)(m_hi + c0 + 16)};
#pragma unroll
        for (int mt = 0; mt < TC_MT; ++mt) {
          mma_s8(acc_hi[mt][nt], a_lo[mt], b_hi);
          mma_s8(acc_lo[mt][nt], a_lo[mt], b_lo);
        }
      } else {
#pragma unroll
        for (int mt = 0; mt < TC_MT; ++mt) {
          mma_s8(acc_hi[mt][nt], a_hi[mt], b_lo);
          mma_s8(acc_lo[mt][nt], a_lo[mt], b_lo);
        }
      }
    }
  }
  // Recombine the digits, reduce and store: c0,c1 are (row g, cols 2t, 2t+1), c2,c3 row g+8.
#pragma unroll
  for (int mt = 0; mt < TC_MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < TC_NT; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        u32 v[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          int x = 128 * acc_hi[mt][nt][2 * h + e] + acc_lo[mt][nt][2 * h + e];
          v[e] = two_key ? (u32)mod_q(x) : ((u32)x & (Q2 - 1));
        }
        size_t o = (size_t)(i0 + 16 * mt + g + 8 * h) * NP + j0 + 8 * nt + 2 * t;
        *(u32 *)(out + o) = v[0] | (v[1] << 16);
      }
}
