// SLH-DSA (FIPS 205) kernels: keygen, the phases of signing, verification and the hash
// ceilings, for one parameter set per compilation. -D definitions (src/gpu/slhdsa/kernels.rs,
// the one place they are written): SLH_N, SLH_H, SLH_D, SLH_HP, SLH_A, SLH_K, SLH_SHA2 (1: the
// SHA2 instantiation of section 11.2, 0: SHAKE, 11.1) and SLH_FG (log2 of the FORS leaves one
// thread builds).
//
// Mapping: every thread hashes on its own (one SHA-256/512 or Keccak state in registers),
// never cooperating with its neighbours, so the per-thread code also runs on the CPU in tests
// (kernels/emu). Signing is cut into phases over the whole chunk:
//   slh_prep        one thread per key: PK.seed's SHA-256 (and SHA-512) midstate, once per key
//   slh_fors_leaves one thread per (item, FORS tree, group of 2^SLH_FG leaves): the group's
//                   subtree, its authentication nodes and the revealed secret value
//   slh_fors_top    one thread per (item, FORS tree): the tree above the groups, its root
//   slh_fors_pk     one thread per item: T_k of the roots (the message of layer 0), and R
//   slh_ht_leaves   one thread per (item, layer, leaf): a WOTS+ public key (wots_pkGen)
//   slh_ht_top      one thread per (item, layer): the XMSS tree, its auth path and root
//   slh_wots_sign   one thread per (item, layer, chain): the chains of the WOTS+ signatures
// Every XMSS tree of a signature is fixed by its address alone (the message only picks the
// trees and leaves), so all layers are built at once; only the WOTS+ signatures need the root
// of the layer below. For a chunk signed by one key the top layer's leaves are built once per
// key (slh_keygen_leaves on the key) and kept between chunks.
// Verification is one thread per item (FORS and then the d layers in turn; each layer needs
// the root below it), its WOTS+ chains flattened into one loop of F calls per layer
// (wots_pk_from_sig).
//
// Values of n bytes travel as NW = n/4 little-endian words (the bytes as FIPS 205 orders them).
// Message digests (R, H_msg and its split) are computed by the host: a few hash calls per item
// against tens of thousands here.
//
// Constant time: control flow and addresses depend on public values only (tree and leaf
// indices, FORS indices and WOTS+ digits all come from the message digest); SK.seed only
// flows through the hash functions.

#define NW (SLH_N / 4)
#define LEN1 (2 * SLH_N)
#define WLEN (LEN1 + 3)
#define HP SLH_HP
#define FG SLH_FG
#define NG (1 << (SLH_A - FG))
#define FORS_SIG (SLH_K * (SLH_A + 1) * SLH_N)
#define XMSS_SIG ((WLEN + HP) * SLH_N)
#define SIG_BYTES (SLH_N + FORS_SIG + SLH_D * XMSS_SIG)

// Rows shared with the host (src/gpu/slhdsa/kernels.rs): a job per item, a context per key.
// Job: md (44 bytes, zero past its length), idx_tree (u64 at 48), idx_leaf (u32 at 56), key
// index (u32 at 60), R (n bytes at 64).
#define JOB_BYTES 96
#define JOB_TREE 48
#define JOB_LEAF 56
#define JOB_KEY 60
#define JOB_R 64
// Context: SHA-256 midstate (8 words), SHA-512 midstate (8 u64 at byte 32), PK.seed (at 96),
// SK.seed (at 128).
#define CTX_BYTES 160

#define ADRS_WOTS_HASH 0
#define ADRS_WOTS_PK 1
#define ADRS_TREE 2
#define ADRS_FORS_TREE 3
#define ADRS_FORS_ROOTS 4
#define ADRS_WOTS_PRF 5
#define ADRS_FORS_PRF 6

#ifdef __CUDACC__
#define SLH_NOINLINE __noinline__
#else
#define SLH_NOINLINE
#endif

// ADRS (FIPS 205 section 4.2) by field: chain doubles as tree height, hash as tree index.
struct Adrs {
  u32 layer;
  u64 tree;
  u32 type;
  u32 kp;
  u32 chain;
  u32 hash;
};

__device__ __forceinline__ Adrs adrs(u32 layer, u64 tree, u32 type, u32 kp, u32 chain, u32 hash) {
  Adrs a;
  a.layer = layer;
  a.tree = tree;
  a.type = type;
  a.kp = kp;
  a.chain = chain;
  a.hash = hash;
  return a;
}

// The hash functions' key: PK.seed and, for SHA2, its midstates.
struct Ctx {
  u32 seed[8];
#if SLH_SHA2
  u32 m256[8];
#if SLH_N > 16
  u64 m512[8];
#endif
#endif
};

__device__ __forceinline__ void ld(const u8 *p, u32 *v) {
#pragma unroll
  for (int i = 0; i < NW; ++i) v[i] = ((const u32 *)p)[i];
}

__device__ __forceinline__ void st(u8 *p, const u32 *v) {
#pragma unroll
  for (int i = 0; i < NW; ++i) ((u32 *)p)[i] = v[i];
}

__device__ __forceinline__ void cp(u32 *d, const u32 *s) {
#pragma unroll
  for (int i = 0; i < NW; ++i) d[i] = s[i];
}

__device__ __forceinline__ Ctx load_ctx(const u8 *ctx_rows, u32 key) {
  const u8 *r = ctx_rows + (size_t)key * CTX_BYTES;
  Ctx c;
  ld(r + 96, c.seed);
#if SLH_SHA2
#pragma unroll
  for (int i = 0; i < 8; ++i) c.m256[i] = ((const u32 *)r)[i];
#if SLH_N > 16
#pragma unroll
  for (int i = 0; i < 8; ++i) c.m512[i] = ((const u64 *)(r + 32))[i];
#endif
#endif
  return c;
}

// ---------------------------------------------------------------------------------------
// T_l(PK.seed, ADRS, M) for M of NB bytes (F, PRF: NB = n; H: 2n; T_len, T_k), and the
// SHA-256 form F and PRF always take for the SHA2 sets.

// Byte j of ADRS^c (section 11.2): layer (1), tree address (8), type (1), the last 12 bytes.
__device__ __forceinline__ u32 adrsc_byte(const Adrs &a, int j) {
  if (j == 0) return a.layer & 0xff;
  if (j < 9) return (u32)(a.tree >> (8 * (8 - j))) & 0xff;
  if (j == 9) return a.type & 0xff;
  int w = (j - 10) >> 2, b = (j - 10) & 3;
  u32 v = w == 0 ? a.kp : (w == 1 ? a.chain : a.hash);
  return (v >> (24 - 8 * b)) & 0xff;
}

// Byte p of ADRS^c || M || 0x80 || 0... (the padded tail after PK.seed's block).
template <int NB>
__device__ __forceinline__ u32 tail_byte(const Adrs &a, const u32 *in, int p) {
  if (p < 22) return adrsc_byte(a, p);
  p -= 22;
  if (p < NB) return (in[p >> 2] >> (8 * (p & 3))) & 0xff;
  return p == NB ? 0x80 : 0;
}

#if SLH_SHA2
// Block b of SHA-256's padded tail (ADRS^c || M || padding, after PK.seed's block) as words.
template <int NB>
__device__ __forceinline__ void sha256_block(const Adrs &a, const u32 *in, int b, u32 w[16]) {
  const int T = 22 + NB;
  const int BLOCKS = (T + 9 + 63) / 64;
  const u64 BITS = (u64)(64 + T) * 8;
#pragma unroll
  for (int t = 0; t < 16; ++t) {
    int p = 64 * b + 4 * t;
    if (b == BLOCKS - 1 && t == 14)
      w[t] = (u32)(BITS >> 32);
    else if (b == BLOCKS - 1 && t == 15)
      w[t] = (u32)BITS;
    else
      w[t] = tail_byte<NB>(a, in, p) << 24 | tail_byte<NB>(a, in, p + 1) << 16 |
             tail_byte<NB>(a, in, p + 2) << 8 | tail_byte<NB>(a, in, p + 3);
  }
}

// Trunc_n(SHA-256(PK.seed || 0^(64-n) || ADRS^c || M)) from PK.seed's midstate. One or two
// blocks (F, PRF, H) unrolled, in registers; the long inputs (T_len, T_k) block by block, so
// the compression is compiled once per call site.
template <int NB>
__device__ __forceinline__ void sha256_thash(const u32 mid[8], const Adrs &a, const u32 *in, u32 *out) {
  const int BLOCKS = (22 + NB + 9 + 63) / 64;
  u32 s[8], w[16];
#pragma unroll
  for (int i = 0; i < 8; ++i) s[i] = mid[i];
  if (BLOCKS <= 2) {
#pragma unroll
    for (int b = 0; b < BLOCKS; ++b) {
      sha256_block<NB>(a, in, b, w);
      sha256_compress(s, w);
    }
  } else {
#pragma unroll 1
    for (int b = 0; b < BLOCKS; ++b) {
      sha256_block<NB>(a, in, b, w);
      sha256_compress(s, w);
    }
  }
#pragma unroll
  for (int i = 0; i < NW; ++i) out[i] = bswap32(s[i]);
}

#if SLH_N > 16
// Trunc_n(SHA-512(PK.seed || 0^(128-n) || ADRS^c || M)) from PK.seed's midstate (blocks as
// sha256_thash).
template <int NB>
__device__ __forceinline__ void sha512_block(const Adrs &a, const u32 *in, int b, u64 w[16]) {
  const int T = 22 + NB;
  const int BLOCKS = (T + 17 + 127) / 128;
  const u64 BITS = (u64)(128 + T) * 8;
#pragma unroll
  for (int t = 0; t < 16; ++t) {
    int p = 128 * b + 8 * t;
    if (b == BLOCKS - 1 && t == 14) {
      w[t] = 0;
    } else if (b == BLOCKS - 1 && t == 15) {
      w[t] = BITS;
    } else {
      u64 v = 0;
#pragma unroll
      for (int j = 0; j < 8; ++j) v = (v << 8) | tail_byte<NB>(a, in, p + j);
      w[t] = v;
    }
  }
}

template <int NB>
__device__ __forceinline__ void sha512_thash(const u64 mid[8], const Adrs &a, const u32 *in, u32 *out) {
  const int BLOCKS = (22 + NB + 17 + 127) / 128;
  u64 s[8], w[16];
#pragma unroll
  for (int i = 0; i < 8; ++i) s[i] = mid[i];
  if (BLOCKS <= 2) {
#pragma unroll
    for (int b = 0; b < BLOCKS; ++b) {
      sha512_block<NB>(a, in, b, w);
      sha512_compress(s, w);
    }
  } else {
#pragma unroll 1
    for (int b = 0; b < BLOCKS; ++b) {
      sha512_block<NB>(a, in, b, w);
      sha512_compress(s, w);
    }
  }
#pragma unroll
  for (int i = 0; i < NW / 2; ++i) {
    out[2 * i] = bswap32((u32)(s[i] >> 32));
    out[2 * i + 1] = bswap32((u32)s[i]);
  }
}
#endif
#else
// Lane i of PK.seed || ADRS || M (every part a whole number of lanes).
template <int NB>
__device__ __forceinline__ u64 shake_lane(const Ctx &c, const Adrs &a, const u32 *in, int i) {
  if (i < SLH_N / 8) return (u64)c.seed[2 * i] | (u64)c.seed[2 * i + 1] << 32;
  i -= SLH_N / 8;
  if (i == 0) return bswap32(a.layer);
  if (i == 1) return (u64)bswap32((u32)a.tree) << 32 | bswap32((u32)(a.tree >> 32));
  if (i == 2) return (u64)bswap32(a.type) | (u64)bswap32(a.kp) << 32;
  if (i == 3) return (u64)bswap32(a.chain) | (u64)bswap32(a.hash) << 32;
  i -= 4;
  return (u64)in[2 * i] | (u64)in[2 * i + 1] << 32;
}

// Absorbs block b of PK.seed || ADRS || M || padding into A.
template <int NB>
__device__ __forceinline__ void shake_block(const Ctx &c, const Adrs &a, const u32 *in, int b, u64 A[25]) {
  const int L = SLH_N / 8 + 4 + NB / 8;
  const int BLOCKS = L / 17 + 1;
#pragma unroll
  for (int i = 0; i < 17; ++i) {
    int g = 17 * b + i;
    u64 v = g < L ? shake_lane<NB>(c, a, in, g) : 0;
    if (g == L) v ^= 0x1FULL;
    if (i == 16 && b == BLOCKS - 1) v ^= 0x80ULL << 56;
    A[i] ^= v;
  }
}

// Trunc_n(SHAKE256(PK.seed || ADRS || M, 8n)) (blocks as sha256_thash).
template <int NB>
__device__ __forceinline__ void shake_thash(const Ctx &c, const Adrs &a, const u32 *in, u32 *out) {
  const int BLOCKS = (SLH_N / 8 + 4 + NB / 8) / 17 + 1;
  u64 A[25];
  keccak_zero(A);
  if (BLOCKS <= 2) {
#pragma unroll
    for (int b = 0; b < BLOCKS; ++b) {
      shake_block<NB>(c, a, in, b, A);
      keccak_f1600(A);
    }
  } else {
#pragma unroll 1
    for (int b = 0; b < BLOCKS; ++b) {
      shake_block<NB>(c, a, in, b, A);
      keccak_f1600(A);
    }
  }
#pragma unroll
  for (int i = 0; i < NW; ++i) out[i] = (u32)(A[i / 2] >> (32 * (i & 1)));
}
#endif

// F(PK.seed, ADRS, M_1) and PRF(PK.seed, SK.seed, ADRS).
__device__ __forceinline__ void hash_f(const Ctx &c, const Adrs &a, const u32 *in, u32 *out) {
#if SLH_SHA2
  sha256_thash<SLH_N>(c.m256, a, in, out);
#else
  shake_thash<SLH_N>(c, a, in, out);
#endif
}

// H and T_l: SHA-512 for the SHA2 sets with n > 16.
template <int NB>
__device__ __forceinline__ void hash_t(const Ctx &c, const Adrs &a, const u32 *in, u32 *out) {
#if SLH_SHA2 && SLH_N > 16
  sha512_thash<NB>(c.m512, a, in, out);
#elif SLH_SHA2
  sha256_thash<NB>(c.m256, a, in, out);
#else
  shake_thash<NB>(c, a, in, out);
#endif
}

// H of two nodes (the tree nodes of XMSS and FORS).
__device__ SLH_NOINLINE void hash_h(const Ctx &c, const Adrs &a, const u32 *l, const u32 *r, u32 *out) {
  u32 pair[2 * NW];
  cp(pair, l);
  cp(pair + NW, r);
  hash_t<2 * SLH_N>(c, a, pair, out);
}

// The context of PK.seed (its midstates for SHA2).
__device__ __forceinline__ void make_ctx(Ctx &c, const u32 *pk_seed) {
#pragma unroll
  for (int i = 0; i < 8; ++i) c.seed[i] = i < NW ? pk_seed[i] : 0;
#if SLH_SHA2
  u32 w[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) w[i] = i < NW ? bswap32(pk_seed[i]) : 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) c.m256[i] = SHA256_IV[i];
  sha256_compress(c.m256, w);
#if SLH_N > 16
  u64 w64[16];
#pragma unroll
  for (int i = 0; i < 16; ++i)
    w64[i] = i < NW / 2 ? ((u64)bswap32(pk_seed[2 * i]) << 32 | bswap32(pk_seed[2 * i + 1])) : 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) c.m512[i] = SHA512_IV[i];
  sha512_compress(c.m512, w64);
#endif
#endif
}

// ---------------------------------------------------------------------------------------
// WOTS+ (section 5), XMSS and FORS trees (sections 6, 8).

// chain (Alg. 5): `steps` applications of F from position `start`, in place; a is WOTS_HASH
// with layer, tree, key pair and chain set.
__device__ __forceinline__ void chain(const Ctx &c, Adrs a, u32 *x, u32 start, u32 steps) {
  for (u32 j = start; j < start + steps; ++j) {
    a.hash = j;
    u32 t[NW];
    hash_f(c, a, x, t);
    cp(x, t);
  }
}

// Chain i's secret start value (PRF at WOTS_PRF).
__device__ __forceinline__ void wots_sk(const Ctx &c, const u32 *sk_seed, u32 layer, u64 tree, u32 kp, u32 i, u32 *out) {
  hash_f(c, adrs(layer, tree, ADRS_WOTS_PRF, kp, i, 0), sk_seed, out);
}

// The len base-w digits of an n-byte message with its checksum (Alg. 6 lines 2-9).
__device__ __forceinline__ void wots_digits(const u32 *m, u8 *d) {
  u32 csum = 0;
#pragma unroll
  for (int i = 0; i < LEN1; ++i) {
    u32 byte = (m[i >> 3] >> (8 * ((i >> 1) & 3))) & 0xff;
    u32 v = (i & 1) ? (byte & 15) : (byte >> 4);
    d[i] = (u8)v;
    csum += 15 - v;
  }
  d[LEN1] = (u8)((csum >> 8) & 15);
  d[LEN1 + 1] = (u8)((csum >> 4) & 15);
  d[LEN1 + 2] = (u8)(csum & 15);
}

// wots_pkGen (Alg. 6) of key pair kp of the XMSS tree (layer, tree).
__device__ SLH_NOINLINE void wots_pk_gen(const Ctx &c, const u32 *sk_seed, u32 layer, u64 tree, u32 kp, u32 *out) {
  u32 ends[WLEN * NW];
  for (int i = 0; i < WLEN; ++i) {
    u32 x[NW];
    wots_sk(c, sk_seed, layer, tree, kp, i, x);
    chain(c, adrs(layer, tree, ADRS_WOTS_HASH, kp, i, 0), x, 0, 15);
    cp(ends + i * NW, x);
  }
  hash_t<WLEN * SLH_N>(c, adrs(layer, tree, ADRS_WOTS_PK, kp, 0, 0), ends, out);
}

// wots_pkFromSig (Alg. 8): the public key of key pair kp of the XMSS tree (layer, tree) that
// the WOTS+ signature at sig of the message m implies.
//
// The len chains run as one loop of F calls: each iteration is one step of the thread's
// current chain, and a thread whose chain has reached w - 1 moves on to the next chain (past
// any with no steps left) before its step. A warp then costs the largest per-thread *sum* of
// steps over its 32 threads rather than the sum over the chains of the largest step count.
// With random digests the sum is 267 +- 27 for n = 16 and its maximum over 32 threads about
// 329, so 81 % of the warp's F slots do work (n = 24, 32: 86 %), where running the chains one
// at a time in step kept 51 % (the longest of 32 chains is 14.9 steps against a mean of 7.5).
// T_len follows in step for the whole warp.
__device__ SLH_NOINLINE void wots_pk_from_sig(const Ctx &c, u32 layer, u64 tree, u32 kp, const u8 *sig,
                                              const u32 *m, u32 *out) {
  u8 d[WLEN];
  wots_digits(m, d);
  u32 ends[WLEN * NW];
  // a.chain is the current chain, a.hash its position.
  Adrs a = adrs(layer, tree, ADRS_WOTS_HASH, kp, 0, d[0]);
  u32 x[NW];
  ld(sig, x);
  for (;;) {
    while (a.hash >= 15) {
      cp(ends + a.chain * NW, x);
      if (++a.chain == WLEN) break;
      a.hash = d[a.chain];
      ld(sig + a.chain * SLH_N, x);
    }
    if (a.chain == WLEN) break;
    u32 t[NW];
    hash_f(c, a, x, t);
    cp(x, t);
    ++a.hash;
  }
  hash_t<WLEN * SLH_N>(c, adrs(layer, tree, ADRS_WOTS_PK, kp, 0, 0), ends, out);
}

// T_k of the k FORS roots: the FORS public key (Alg. 16/17's last step).
__device__ SLH_NOINLINE void fors_roots_pk(const Ctx &c, u64 tree, u32 kp, const u32 *roots, u32 *out) {
  hash_t<SLH_K * SLH_N>(c, adrs(0, tree, ADRS_FORS_ROOTS, kp, 0, 0), roots, out);
}

// Builds the subtree whose leaves are nodes base .. base + 2^H - 1 at height z0 of a tree
// (leaf(i, v) gives node base + i) and writes its root. Every node of the authentication path
// of `path` (a node index at height z0) that lies inside the subtree goes to
// auth + height * NW (heights z0 .. z0 + H - 1); a path of ~0 writes none. node(z, t, l, r, v)
// hashes the children l, r of node t at height z. Treehash: a stack of H + 1 nodes.
template <int H, class Leaf, class Node>
__device__ __forceinline__ void subtree(u32 base, int z0, u32 path, Leaf leaf, Node node, u8 *auth, u32 *root) {
  u32 stack[(H + 1) * NW];
  int heights[H + 1];
  int top = 0;
  for (u32 i = 0; i < (1u << H); ++i) {
    u32 v[NW];
    leaf(i, v);
    int h = 0;
    u32 t = base + i;
    if ((t ^ 1) == path) st(auth + z0 * SLH_N, v);
    while (top > 0 && heights[top - 1] == h) {
      u32 p[NW];
      node(z0 + h + 1, t >> 1, stack + (top - 1) * NW, v, p);
      --top;
      ++h;
      t >>= 1;
      cp(v, p);
      if (h < H && (t ^ 1) == (path >> h)) st(auth + (z0 + h) * SLH_N, v);
    }
    cp(stack + top * NW, v);
    heights[top++] = h;
  }
  cp(root, stack);
}

// Climbs from a leaf (node, at tree index `index`; path bits of `leaf` pick the side) through
// H authentication nodes at `auth` to the root (Alg. 11 lines 6-17, Alg. 17 lines 7-18); a has
// the type, layer, tree and key pair set.
template <int H>
__device__ __forceinline__ void climb(const Ctx &c, Adrs a, u32 leaf, u32 index, const u8 *auth, u32 *node) {
  for (int k = 0; k < H; ++k) {
    u32 sib[NW];
    ld(auth + k * SLH_N, sib);
    a.chain = k + 1;
    index >>= 1;
    a.hash = index;
    // The children picked by value, so that a warp whose threads climb on different sides
    // makes one H call, not one per side.
    u32 right = (leaf >> k) & 1, l[NW], r[NW], p[NW];
#pragma unroll
    for (int i = 0; i < NW; ++i) {
      l[i] = right ? sib[i] : node[i];
      r[i] = right ? node[i] : sib[i];
    }
    hash_h(c, a, l, r, p);
    cp(node, p);
  }
}

// The FORS index of tree i: bits i*a .. i*a + a - 1 of md, most significant first (base_2b).
__device__ __forceinline__ u32 fors_index(const u8 *md, int i) {
  u32 bit = (u32)i * SLH_A;
  u32 b0 = bit >> 3;
  u32 acc = (u32)md[b0] << 16 | (u32)md[b0 + 1] << 8 | (u32)md[b0 + 2];
  return (acc >> (24 - (bit & 7) - SLH_A)) & ((1u << SLH_A) - 1);
}

// The tree and leaf of layer j for a signature at (idx_tree, idx_leaf) (Alg. 12 lines 9-10).
// (A shift by 64, the top layer of SLH-DSA-*-256f, is no shift in C: that tree is tree 0.)
__device__ __forceinline__ u64 layer_tree(u64 idx_tree, int j) { return j * HP >= 64 ? 0 : idx_tree >> (j * HP); }
__device__ __forceinline__ u32 layer_leaf(u64 idx_tree, u32 idx_leaf, int j) {
  return j == 0 ? idx_leaf : (u32)(idx_tree >> ((j - 1) * HP)) & ((1u << HP) - 1);
}

struct Job {
  const u8 *md;
  u64 tree;
  u32 leaf;
  u32 key;
};

__device__ __forceinline__ Job load_job(const u8 *jobs, u32 item) {
  const u8 *r = jobs + (size_t)item * JOB_BYTES;
  Job j;
  j.md = r;
  j.tree = *(const u64 *)(r + JOB_TREE);
  j.leaf = *(const u32 *)(r + JOB_LEAF);
  j.key = *(const u32 *)(r + JOB_KEY);
  return j;
}

__device__ __forceinline__ u32 thread_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// ---------------------------------------------------------------------------------------
// Kernels.

// One thread per key row (stride bytes apart; SK.seed at sk_off, PK.seed at pk_off): its context.
extern "C" __global__ void slh_prep(const u8 *rows, u32 stride, u32 sk_off, u32 pk_off, u8 *ctx, u32 nkeys) {
  u32 t = thread_id();
  if (t >= nkeys) return;
  const u8 *r = rows + (size_t)t * stride;
  u32 seed[NW], sk[NW];
  ld(r + pk_off, seed);
  ld(r + sk_off, sk);
  Ctx c;
  make_ctx(c, seed);
  u8 *o = ctx + (size_t)t * CTX_BYTES;
  st(o + 96, c.seed);
  st(o + 128, sk);
#if SLH_SHA2
#pragma unroll
  for (int i = 0; i < 8; ++i) ((u32 *)o)[i] = c.m256[i];
#if SLH_N > 16
#pragma unroll
  for (int i = 0; i < 8; ++i) ((u64 *)(o + 32))[i] = c.m512[i];
#endif
#endif
}

// One thread per (key, leaf) of the top layer's tree (layer d - 1, tree 0): its WOTS+ public
// key into leaves (2^h' per key). Keygen's leaves, and a one-key signing chunk's top layer.
extern "C" __global__ void slh_keygen_leaves(const u8 *ctx, u8 *leaves, u32 nkeys) {
  u32 t = thread_id();
  if (t >= nkeys << HP) return;
  u32 key = t >> HP, l = t & ((1u << HP) - 1);
  Ctx c = load_ctx(ctx, key);
  u32 sk[NW], v[NW];
  ld(ctx + (size_t)key * CTX_BYTES + 128, sk);
  wots_pk_gen(c, sk, SLH_D - 1, 0, l, v);
  st(leaves + (size_t)t * SLH_N, v);
}

// One thread per item: the top tree's root from its leaves; pk = PK.seed || PK.root and
// sk = SK.seed || SK.prf || PK.seed || PK.root from the seed row (SK.seed || SK.prf || PK.seed).
extern "C" __global__ void slh_keygen_top(const u8 *seeds, const u8 *ctx, const u8 *leaves, u8 *pks, u8 *sks, u32 n) {
  u32 t = thread_id();
  if (t >= n) return;
  Ctx c = load_ctx(ctx, t);
  const u8 *lv = leaves + ((size_t)t << HP) * SLH_N;
  u32 root[NW];
  subtree<HP>(
      0, 0, ~0u, [&](u32 i, u32 *v) { ld(lv + (size_t)i * SLH_N, v); },
      [&](int z, u32 idx, const u32 *l, const u32 *r, u32 *v) {
        hash_h(c, adrs(SLH_D - 1, 0, ADRS_TREE, 0, z, idx), l, r, v);
      },
      nullptr, root);
  const u8 *s = seeds + (size_t)t * 3 * SLH_N;
  u8 *pk = pks + (size_t)t * 2 * SLH_N, *sk = sks + (size_t)t * 4 * SLH_N;
  u32 v[NW];
  for (int i = 0; i < 3; ++i) {
    ld(s + i * SLH_N, v);
    st(sk + i * SLH_N, v);
  }
  ld(s + 2 * SLH_N, v);
  st(pk, v);
  st(pk + SLH_N, root);
  st(sk + 3 * SLH_N, root);
}

// One thread per (item, FORS tree, group of 2^FG leaves): the group's subtree. Its root goes
// to groots; the signed leaf's secret value and the auth nodes inside the group to the signature.
extern "C" __global__ void slh_fors_leaves(const u8 *jobs, const u8 *ctx, u8 *groots, u8 *sigs, u32 n) {
  u32 t = thread_id();
  if (t >= n * SLH_K * NG) return;
  u32 item = t / (SLH_K * NG), r = t % (SLH_K * NG);
  u32 i = r / NG, g = r % NG;
  Job j = load_job(jobs, item);
  Ctx c = load_ctx(ctx, j.key);
  u32 sk_seed[NW];
  ld(ctx + (size_t)j.key * CTX_BYTES + 128, sk_seed);
  u32 leaf = fors_index(j.md, i);
  u8 *sig = sigs + (size_t)item * SIG_BYTES + SLH_N + i * (SLH_A + 1) * SLH_N;
  u32 base = g << FG, tbase = i << SLH_A;
  u32 root[NW];
  subtree<FG>(
      base, 0, leaf,
      [&](u32 k, u32 *v) {
        u32 idx = base + k;
        u32 sk[NW];
        hash_f(c, adrs(0, j.tree, ADRS_FORS_PRF, j.leaf, 0, tbase + idx), sk_seed, sk);
        if (idx == leaf) st(sig, sk);
        hash_f(c, adrs(0, j.tree, ADRS_FORS_TREE, j.leaf, 0, tbase + idx), sk, v);
      },
      [&](int z, u32 idx, const u32 *l, const u32 *rr, u32 *v) {
        hash_h(c, adrs(0, j.tree, ADRS_FORS_TREE, j.leaf, z, (i << (SLH_A - z)) + idx), l, rr, v);
      },
      sig + SLH_N, root);
  st(groots + (size_t)t * SLH_N, root);
}

// One thread per (item, FORS tree): the tree above the groups, its auth nodes and its root.
extern "C" __global__ void slh_fors_top(const u8 *jobs, const u8 *ctx, const u8 *groots, u8 *roots, u8 *sigs, u32 n) {
  u32 t = thread_id();
  if (t >= n * SLH_K) return;
  u32 item = t / SLH_K, i = t % SLH_K;
  Job j = load_job(jobs, item);
  Ctx c = load_ctx(ctx, j.key);
  u32 leaf = fors_index(j.md, i);
  u8 *sig = sigs + (size_t)item * SIG_BYTES + SLH_N + i * (SLH_A + 1) * SLH_N;
  const u8 *gr = groots + (size_t)t * NG * SLH_N;
  u32 root[NW];
  subtree<SLH_A - FG>(
      0, FG, leaf >> FG, [&](u32 k, u32 *v) { ld(gr + (size_t)k * SLH_N, v); },
      [&](int z, u32 idx, const u32 *l, const u32 *rr, u32 *v) {
        hash_h(c, adrs(0, j.tree, ADRS_FORS_TREE, j.leaf, z, (i << (SLH_A - z)) + idx), l, rr, v);
      },
      sig + SLH_N, root);
  st(roots + (size_t)t * SLH_N, root);
}

// One thread per item: the FORS public key (the message layer 0 signs) into pkf, and R
// (from the job) into the signature.
extern "C" __global__ void slh_fors_pk(const u8 *jobs, const u8 *ctx, const u8 *roots, u8 *pkf, u8 *sigs, u32 n) {
  u32 t = thread_id();
  if (t >= n) return;
  Job j = load_job(jobs, t);
  Ctx c = load_ctx(ctx, j.key);
  u32 rs[SLH_K * NW];
  for (int i = 0; i < SLH_K; ++i) ld(roots + ((size_t)t * SLH_K + i) * SLH_N, rs + i * NW);
  u32 pk[NW];
  fors_roots_pk(c, j.tree, j.leaf, rs, pk);
  st(pkf + (size_t)t * SLH_N, pk);
  u32 r[NW];
  ld(jobs + (size_t)t * JOB_BYTES + JOB_R, r);
  st(sigs + (size_t)t * SIG_BYTES, r);
}

// One thread per (item, layer, leaf) for the layers below `layers` (d, or d - 1 when the top
// layer's leaves come from the key): the leaf's WOTS+ public key into leaves
// (item-major, d * 2^h' per item).
extern "C" __global__ void slh_ht_leaves(const u8 *jobs, const u8 *ctx, u8 *leaves, u32 layers, u32 n) {
  u32 t = thread_id();
  if (t >= (n * layers) << HP) return;
  u32 l = t & ((1u << HP) - 1), r = t >> HP;
  u32 item = r / layers, layer = r % layers;
  Job j = load_job(jobs, item);
  Ctx c = load_ctx(ctx, j.key);
  u32 sk[NW], v[NW];
  ld(ctx + (size_t)j.key * CTX_BYTES + 128, sk);
  wots_pk_gen(c, sk, layer, layer_tree(j.tree, layer), l, v);
  st(leaves + (((size_t)item * SLH_D + layer) << HP) * SLH_N + (size_t)l * SLH_N, v);
}

// One thread per (item, layer): the XMSS tree from its leaves (the top layer's from
// top_leaves, 2^h' per key, when not null), its auth path into the signature, its root
// into roots (d per item).
extern "C" __global__ void slh_ht_top(const u8 *jobs, const u8 *ctx, const u8 *leaves, const u8 *top_leaves, u8 *roots,
                                      u8 *sigs, u32 n) {
  u32 t = thread_id();
  if (t >= n * SLH_D) return;
  u32 item = t / SLH_D, layer = t % SLH_D;
  Job j = load_job(jobs, item);
  Ctx c = load_ctx(ctx, j.key);
  u64 tree = layer_tree(j.tree, layer);
  u32 leaf = layer_leaf(j.tree, j.leaf, layer);
  const u8 *lv = (top_leaves && layer == SLH_D - 1) ? top_leaves + ((size_t)j.key << HP) * SLH_N
                                                    : leaves + ((size_t)t << HP) * SLH_N;
  u8 *auth = sigs + (size_t)item * SIG_BYTES + SLH_N + FORS_SIG + layer * XMSS_SIG + WLEN * SLH_N;
  u32 root[NW];
  subtree<HP>(
      0, 0, leaf, [&](u32 i, u32 *v) { ld(lv + (size_t)i * SLH_N, v); },
      [&](int z, u32 idx, const u32 *l, const u32 *r, u32 *v) {
        hash_h(c, adrs(layer, tree, ADRS_TREE, 0, z, idx), l, r, v);
      },
      auth, root);
  st(roots + (size_t)t * SLH_N, root);
}

// One thread per (item, layer, chain): chain `chain` of layer's WOTS+ signature (Alg. 7) of
// the FORS public key (layer 0) or the root of the layer below.
extern "C" __global__ void slh_wots_sign(const u8 *jobs, const u8 *ctx, const u8 *pkf, const u8 *roots, u8 *sigs, u32 n) {
  u32 t = thread_id();
  if (t >= n * SLH_D * WLEN) return;
  u32 item = t / (SLH_D * WLEN), r = t % (SLH_D * WLEN);
  u32 layer = r / WLEN, i = r % WLEN;
  Job j = load_job(jobs, item);
  Ctx c = load_ctx(ctx, j.key);
  u32 m[NW];
  ld(layer == 0 ? pkf + (size_t)item * SLH_N : roots + ((size_t)item * SLH_D + layer - 1) * SLH_N, m);
  u8 d[WLEN];
  wots_digits(m, d);
  u64 tree = layer_tree(j.tree, layer);
  u32 kp = layer_leaf(j.tree, j.leaf, layer);
  u32 sk[NW], x[NW];
  ld(ctx + (size_t)j.key * CTX_BYTES + 128, sk);
  wots_sk(c, sk, layer, tree, kp, i, x);
  chain(c, adrs(layer, tree, ADRS_WOTS_HASH, kp, i, 0), x, 0, d[i]);
  st(sigs + (size_t)item * SIG_BYTES + SLH_N + FORS_SIG + layer * XMSS_SIG + i * SLH_N, x);
}

// One thread per item: slh_verify_internal's trees (Alg. 20 lines 9-15) on the job's digest
// split, pk rows (PK.seed || PK.root) and signature rows (sig_stride apart); ok[item] = 1
// when the hypertree leads to PK.root, else 0.
extern "C" __global__ void slh_verify(const u8 *jobs, const u8 *pks, const u8 *sigs, u32 sig_stride, u32 *ok, u32 n) {
  u32 t = thread_id();
  if (t >= n) return;
  Job j = load_job(jobs, t);
  const u8 *pk = pks + (size_t)t * 2 * SLH_N;
  const u8 *sig = sigs + (size_t)t * sig_stride;
  u32 seed[NW];
  ld(pk, seed);
  Ctx c;
  make_ctx(c, seed);
  // FORS: each tree's root from its revealed value and auth path, then the FORS key.
  u32 node[NW];
  {
    u32 rs[SLH_K * NW];
    for (int i = 0; i < SLH_K; ++i) {
      const u8 *ts = sig + SLH_N + i * (SLH_A + 1) * SLH_N;
      u32 leaf = fors_index(j.md, i);
      u32 index = ((u32)i << SLH_A) + leaf;
      u32 sk[NW], v[NW];
      ld(ts, sk);
      Adrs a = adrs(0, j.tree, ADRS_FORS_TREE, j.leaf, 0, index);
      hash_f(c, a, sk, v);
      climb<SLH_A>(c, a, leaf, index, ts + SLH_N, v);
      cp(rs + i * NW, v);
    }
    fors_roots_pk(c, j.tree, j.leaf, rs, node);
  }
  // The hypertree, layer by layer.
  for (int layer = 0; layer < SLH_D; ++layer) {
    u64 tree = layer_tree(j.tree, layer);
    u32 leaf = layer_leaf(j.tree, j.leaf, layer);
    const u8 *xs = sig + SLH_N + FORS_SIG + layer * XMSS_SIG;
    u32 pk[NW];
    wots_pk_from_sig(c, layer, tree, leaf, xs, node, pk);
    cp(node, pk);
    climb<HP>(c, adrs(layer, tree, ADRS_TREE, 0, 0, leaf), leaf, leaf, xs + WLEN * SLH_N, node);
  }
  u32 root[NW];
  ld(pk + SLH_N, root);
  u32 diff = 0;
#pragma unroll
  for (int i = 0; i < NW; ++i) diff |= root[i] ^ node[i];
  ok[t] = diff == 0;
}

// ---------------------------------------------------------------------------------------
// Ceilings: `iters` chained compressions (permutations) per thread, the state written out so
// nothing is optimised away.

extern "C" __global__ void slh_bench_sha256(u32 *out, u32 iters) {
  u32 t = thread_id();
  u32 s[8], w[16];
#pragma unroll
  for (int i = 0; i < 8; ++i) s[i] = SHA256_IV[i] ^ t;
  for (u32 k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < 16; ++i) w[i] = s[i & 7] + i;
    sha256_compress(s, w);
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) out[(size_t)t * 8 + i] = s[i];
}

extern "C" __global__ void slh_bench_keccak(u64 *out, u32 iters) {
  u32 t = thread_id();
  u64 A[25];
#pragma unroll
  for (int i = 0; i < 25; ++i) A[i] = (u64)t * 0x9E3779B97F4A7C15ULL + i;
  for (u32 k = 0; k < iters; ++k) keccak_f1600(A);
#pragma unroll
  for (int i = 0; i < 4; ++i) out[(size_t)t * 4 + i] = A[i];
}
