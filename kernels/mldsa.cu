// ML-DSA (FIPS 204) and Dilithium round 3 (v3.1) kernels. The parameter set comes in as
// -D defines (PARAM_K, PARAM_L, PARAM_ETA, PARAM_TAU, PARAM_GAMMA1_BITS, PARAM_GAMMA2,
// PARAM_OMEGA, PARAM_LAMBDA, and PARAM_ROUND3: see "scheme" below), with the sizes the host
// shares with the kernels: SIG_STRIDE (signature rows, padded to 8 bytes), HBUF_LEN
// (mu || w1Encode(w1), the input of H for c~), NT and ST (threads per block of the poly and
// stream kernels) and CM_WORDS (u64 words of a SampleInBall mask pair). All come from
// src/gpu/mldsa/kernels.rs (the one place they are written); keccak.cuh and hostio.cuh are
// prepended by the host.
//
// Two thread mappings:
//  * stream kernels: one thread per SHAKE stream (one Keccak state per thread,
//    the layout that reaches the H200's Keccak ceiling); 128 threads per block.
//  * poly kernels: one block of NT = 256 threads per task, one coefficient per
//    thread, polynomials in shared memory for the NTTs.
// Coefficients are canonical in [0, q) between steps; only inside a transform and a
// matrix-vector product do they grow (bounds written there), frozen back at the end.

#define K PARAM_K
#define L PARAM_L
#define ETA PARAM_ETA
#define TAU PARAM_TAU
#define GAMMA1_BITS PARAM_GAMMA1_BITS
#define GAMMA1 (1 << GAMMA1_BITS)
#define GAMMA2 PARAM_GAMMA2
#define OMEGA PARAM_OMEGA
#define LAMBDA PARAM_LAMBDA
#define BETA (TAU * ETA)
#define ETA_BITS (ETA == 2 ? 3 : 4)
#define W1_BITS (GAMMA2 == (Q - 1) / 88 ? 6 : 4)
#define Z_BITS (GAMMA1_BITS + 1)
#define D_BITS 13
#define N 256
#define Q 8380417
#define QINV 58728449
#define MONT2_256 41978 // mont^2 / 256 mod q: undoes the R^-1 of pointwise products

#define PK_LEN (32 + 320 * K)
#define SK_LEN (SK_S1_OFF + 32 * ((K + L) * ETA_BITS + D_BITS * K))
#define SIG_LEN (CTILDE + L * 32 * Z_BITS + OMEGA + K)
#define W1_BYTES (32 * W1_BITS)
#if !defined(SIG_STRIDE) || !defined(HBUF_LEN) || !defined(NT) || !defined(ST) || !defined(CM_WORDS)
#error "the host passes SIG_STRIDE, HBUF_LEN, NT, ST and CM_WORDS as -D definitions"
#endif

// Threads per block of the signing round's two poly kernels, sign_w and sign_z: NT (one
// coefficient per thread), or 128 (two each), which fits up to twice the attempts in an SM
// where shared memory allows. The host launches with the same numbers (gpu/mldsa/kernels.rs).
#ifndef SIGN_W_NT
#define SIGN_W_NT NT
#endif
#ifndef SIGN_Z_NT
#define SIGN_Z_NT NT
#endif
#if (SIGN_W_NT != 128 && SIGN_W_NT != 256) || (SIGN_Z_NT != 128 && SIGN_Z_NT != 256)
#error "SIGN_W_NT and SIGN_Z_NT are 128 or 256"
#endif
// Every coefficient index x of a polynomial that this thread handles, in a block of nt threads.
#define FOR_COEFF(x, nt) for (int x = threadIdx.x; x < N; x += (nt))

// ------------------------------------------------------------------------- scheme
// Every difference between ML-DSA (FIPS 204) and Dilithium round 3 (v3.1), chosen at
// compile time by -DPARAM_ROUND3=1 (src/mldsa/variant.rs lists the same for the CPU):
//  * c~ is 32 bytes at every level (FIPS 204: lambda/4);
//  * tr = H(pk) is 32 bytes (FIPS 204: 64), so sk is 32 bytes shorter; tr takes the last
//    TR_BYTES of a message region's 64-byte slot, so that tr || M' stays contiguous;
//  * (rho, rho', K) = H(xi, 128), without FIPS 204's (k, l) bytes;
//  * rho' = H(K || mu, 64) when rnd is zero (the reference's deterministic mode), otherwise
//    H(K || rnd || mu, 64) as in FIPS 204.
// M' without a domain separator or context is the host's part: it stages the message alone.
#ifndef PARAM_ROUND3
#define PARAM_ROUND3 0
#endif
#if PARAM_ROUND3
#define CTILDE 32
#define TR_BYTES 32
#else
#define CTILDE (LAMBDA / 4)
#define TR_BYTES 64
#endif
#define SK_S1_OFF (64 + TR_BYTES) // sk = rho || K || tr || s1 || s2 || t0
#define TR_SLOT ((64 - TR_BYTES) / 8) // tr's first lane in a message region

// Absorbs the keygen seed: xi || k || l (FIPS 204 Alg. 6 line 1) or xi alone (round 3).
__device__ __forceinline__ void absorb_keygen_seed(u64 A[25], const u64 *xi) {
#if PARAM_ROUND3
  shake_absorb<SHAKE256_RATE>(A, xi, 32);
#else
  shake_seed_u16<SHAKE256_RATE>(A, xi, 4, K | (L << 8));
#endif
}

// Absorbs the ExpandMask seed's input from kin = K || rnd || mu (128 bytes).
__device__ __forceinline__ void absorb_rho_prime(u64 A[25], const u64 *kin) {
#if PARAM_ROUND3
  if ((kin[4] | kin[5] | kin[6] | kin[7]) == 0) { // rnd = 0: H(K || mu)
    u64 km[12];
    for (int i = 0; i < 4; ++i) km[i] = kin[i];
    for (int i = 0; i < 8; ++i) km[4 + i] = kin[8 + i];
    shake_absorb<SHAKE256_RATE>(A, km, 96);
    return;
  }
#endif
  shake_absorb<SHAKE256_RATE>(A, kin, 128);
}
// Minimum resident blocks of the stream kernels per SM (0: let ptxas choose registers).
#ifndef ST_MIN_BLOCKS
#define ST_MIN_BLOCKS 0
#endif
#if ST_MIN_BLOCKS
#define ST_BOUNDS __launch_bounds__(ST, ST_MIN_BLOCKS)
#else
#define ST_BOUNDS __launch_bounds__(ST)
#endif
#define ATT_NONE 0xFFFFFFFFu // best attempt: still pending
#define ATT_SKIP 0xFFFFFFFEu // best attempt: never scheduled (bad key, gave up)
// Most signing attempts per task: FIPS 204 Appendix C (Table 3)'s minimum loop limits, the
// same table as max_attempts in src/mldsa/sign.rs, so a key that exhausts them is BadKey on
// both backends (and kappa = attempt * L stays far below 2^16).
#define MAX_ATTEMPTS (L == 4 ? 814u : L == 5 ? 585u : 421u)

#define ST_OK 0
#define ST_BADKEY 1
#define ST_GAVEUP 2

__device__ const i32 ZETAS[256] = {4193792,25847,5771523,7861508,237124,7602457,7504169,466468,1826347,2353451,8021166,6288512,3119733,5495562,3111497,2680103,2725464,1024112,7300517,3585928,7830929,7260833,2619752,6271868,6262231,4520680,6980856,5102745,1757237,8360995,4010497,280005,2706023,95776,3077325,3530437,6718724,4788269,5842901,3915439,4519302,5336701,3574422,5512770,3539968,8079950,2348700,7841118,6681150,6736599,3505694,4558682,3507263,6239768,6779997,3699596,811944,531354,954230,3881043,3900724,5823537,2071892,5582638,4450022,6851714,4702672,5339162,6927966,3475950,2176455,6795196,7122806,1939314,4296819,7380215,5190273,5223087,4747489,126922,3412210,7396998,2147896,2715295,5412772,4686924,7969390,5903370,7709315,7151892,8357436,7072248,7998430,1349076,1852771,6949987,5037034,264944,508951,3097992,44288,7280319,904516,3958618,4656075,8371839,1653064,5130689,2389356,8169440,759969,7063561,189548,4827145,3159746,6529015,5971092,8202977,1315589,1341330,1285669,6795489,7567685,6940675,5361315,4499357,4751448,3839961,2091667,3407706,2316500,3817976,5037939,2244091,5933984,4817955,266997,2434439,7144689,3513181,4860065,4621053,7183191,5187039,900702,1859098,909542,819034,495491,6767243,8337157,7857917,7725090,5257975,2031748,3207046,4823422,7855319,7611795,4784579,342297,286988,5942594,4108315,3437287,5038140,1735879,203044,2842341,2691481,5790267,1265009,4055324,1247620,2486353,1595974,4613401,1250494,2635921,4832145,5386378,1869119,1903435,7329447,7047359,1237275,5062207,6950192,7929317,1312455,3306115,6417775,7100756,1917081,5834105,7005614,1500165,777191,2235880,3406031,7838005,5548557,6709241,6533464,5796124,4656147,594136,4603424,6366809,2432395,2454455,8215696,1957272,3369112,185531,7173032,5196991,162844,1616392,3014001,810149,1652634,4686184,6581310,5341501,3523897,3866901,269760,2213111,7404533,1717735,472078,7953734,1723600,6577327,1910376,6712985,7276084,8119771,4546524,5441381,6144432,7959518,6094090,183443,7403526,1612842,4834730,7826001,3919660,8332111,7018208,3937738,1400424,7534263,1976782};

// ---------------------------------------------------------------- arithmetic

// a * 2^-32 mod q in (-q, q), for |a| < 2^31 q.
__device__ __forceinline__ i32 mont_reduce(i64 a) {
  i32 t = (i32)((i64)(i32)a * QINV);
  return (i32)((a - (i64)t * Q) >> 32);
}
// a*b*R^-1 in (-q, q) for |a b| < 2^31 q: the lazy product inside transforms and sums.
__device__ __forceinline__ i32 mont_mul(i32 a, i32 b) { return mont_reduce((i64)a * b); }
// Canonical [0, q) for any |a| < 2^31 - 2^22 (a - round(a / 2^23) q lies in (-q, q)).
__device__ __forceinline__ i32 freeze(i32 a) {
  const i32 r = a - ((a + (1 << 22)) >> 23) * Q;
  return r < 0 ? r + Q : r;
}
__device__ __forceinline__ i32 fq_mul(i32 a, i32 b) { // a*b*R^-1, canonical in and out
  i32 r = mont_reduce((i64)a * b);
  return r < 0 ? r + Q : r;
}
__device__ __forceinline__ i32 fq_add(i32 a, i32 b) {
  i32 r = a + b;
  return r >= Q ? r - Q : r;
}
__device__ __forceinline__ i32 fq_sub(i32 a, i32 b) {
  i32 r = a - b;
  return r < 0 ? r + Q : r;
}
__device__ __forceinline__ i32 to_canon(i32 a) { return a < 0 ? a + Q : a; }
__device__ __forceinline__ i32 centered(i32 a) { return a > (Q - 1) / 2 ? a - Q : a; }
__device__ __forceinline__ i32 iabs(i32 a) { return a < 0 ? -a : a; }

// Decompose (Alg. 36) of a canonical r: returns r1, sets r0 (centered). Multiply-and-shift
// instead of the division by 2 gamma2, and masks instead of branches (the values are secret):
// r1 = round(r / 2 gamma2) from (r + 127) >> 7 times 2^24 / (2 gamma2 / 128) rounded, which is
// exact for every r < q; r1 = (q - 1) / (2 gamma2) wraps to 0 and r0 then takes the q - 1
// case's value r - q.
__device__ __forceinline__ i32 decompose(i32 r, i32 *r0) {
  i32 r1 = (r + 127) >> 7;
#if GAMMA2 == (Q - 1) / 32
  r1 = ((r1 * 1025 + (1 << 21)) >> 22) & 15;
#elif GAMMA2 == (Q - 1) / 88
  r1 = (r1 * 11275 + (1 << 23)) >> 24;
  r1 ^= ((43 - r1) >> 31) & r1;
#else
#error "gamma2 is (q - 1) / 32 or (q - 1) / 88"
#endif
  i32 lo = r - r1 * 2 * GAMMA2;
  lo -= (((Q - 1) / 2 - lo) >> 31) & Q;
  *r0 = lo;
  return r1;
}
__device__ __forceinline__ i32 high_bits(i32 r) {
  i32 r0;
  return decompose(r, &r0);
}
// UseHint (Alg. 40).
__device__ __forceinline__ i32 use_hint(bool h, i32 r) {
  const i32 m = (Q - 1) / (2 * GAMMA2);
  i32 r0;
  i32 r1 = decompose(r, &r0);
  if (!h) return r1;
  if (r0 > 0) return r1 + 1 == m ? 0 : r1 + 1;
  return r1 == 0 ? m - 1 : r1 - 1;
}

// ------------------------------------------------------------------------ NTT
//
// The 8-level NTT/INTT over cnt polynomials a[cnt][256] in shared memory (FIPS 204 Alg.
// 41/42), one warp per polynomial: 8 coefficients per thread in registers, three levels per
// pass (radix-8), two exchanges through a per-warp scratch (the paper's single-warp form; it
// beat the block form, one butterfly per thread per level, on the H200: BENCHMARKS.md).
// Options: NTT_PAD (exchanges through a padded scratch instead of in place, free of 8-way
// conflicts), INTT_FUSE (the final multiplication by mont^2/256 folded into the last INTT
// level). Defaults from the H200 measurements: in place, fused; the padding costs more
// shared memory than the conflicts.
#ifndef NTT_PAD
#define NTT_PAD 0
#endif
#ifndef INTT_FUSE
#define INTT_FUSE 1
#endif

__device__ __forceinline__ void load_zetas(i32 *z) {
  for (int i = threadIdx.x; i < N; i += blockDim.x) z[i] = ZETAS[i];
}

// The last INTT level's two factors with the final scaling folded in (INTT_FUSE), canonical.
__device__ __forceinline__ void intt_last(i32 &x, i32 &y, i32 zeta_scaled) {
  const i32 d = x - y;
  x = to_canon(mont_mul(MONT2_256, x + y));
  y = to_canon(mont_mul(zeta_scaled, d));
}


// Thread `lane` of a warp holds r[m] = coefficient pos(m) of one polynomial, in three
// arrangements: A: lane + 32m (levels with len 128..32), B: 32b + c + 4m with lane = 4b + c
// (len 16..4), C: 8 lane + m (len 2, 1). Moving between arrangements goes through shared
// memory; the scratch layouts pad 4 words per 32 (A <-> B) and 1 per 8 (B <-> C), which puts
// every access of a warp in its own bank.
#define SCRATCH_WORDS 288
#if NTT_PAD
__shared__ __align__(16) i32 ntt_scratch[(NT / 32) * SCRATCH_WORDS];
__device__ __forceinline__ int pad_ab(int j) { return j + 4 * (j >> 5); }
__device__ __forceinline__ int pad_bc(int j) { return j + (j >> 3); }
#else
__device__ __forceinline__ int pad_ab(int j) { return j; }
__device__ __forceinline__ int pad_bc(int j) { return j; }
#endif
// The memory a warp exchanges one polynomial's coefficients through.
__device__ __forceinline__ i32 *exchange_buf(i32 *poly, int warp) {
#if NTT_PAD
  return ntt_scratch + warp * SCRATCH_WORDS;
#else
  return poly;
#endif
}
__device__ __forceinline__ int pos_a(int lane, int m) { return lane + 32 * m; }
__device__ __forceinline__ int pos_b(int lane, int m) { return 32 * (lane >> 2) + (lane & 3) + 4 * m; }
__device__ __forceinline__ int pos_c(int lane, int m) { return 8 * lane + m; }

// Forward (Cooley-Tukey) butterfly and inverse (Gentleman-Sande) butterfly, lazy: no
// reduction but the Montgomery product's. From canonical inputs the forward transform's
// values stay under 9q after its 8 levels (each adds at most q); the inverse's sums double
// per level, under 128q after 7 and 256q < 2^31 in the last: inside int32, as in the
// reference implementation. Both transforms freeze their outputs.
__device__ __forceinline__ void ct(i32 &x, i32 &y, i32 zeta) {
  const i32 t = mont_mul(zeta, y);
  y = x - t;
  x = x + t;
}
__device__ __forceinline__ void gs(i32 &x, i32 &y, i32 zeta) {
  const i32 d = x - y;
  x = x + y;
  y = mont_mul(zeta, d);
}

// Moves r from arrangement `from` to `to` through buf (layout pad); the warp's lanes
// exchange coefficients, so the warp synchronises around the shared accesses.
#define EXCHANGE(buf, pad, from, to)                                        \
  do {                                                                      \
    __syncwarp();                                                           \
    _Pragma("unroll") for (int m = 0; m < 8; ++m) buf[pad(from(lane, m))] = r[m]; \
    __syncwarp();                                                           \
    _Pragma("unroll") for (int m = 0; m < 8; ++m) r[m] = buf[pad(to(lane, m))];   \
  } while (0)

// Arrangement C is 8 consecutive words per lane: unpadded, it moves as two 16-byte accesses
// (2-way conflicts) instead of eight 8-way conflicting ones.
__device__ __forceinline__ void load_c(const i32 *poly, int lane, i32 *r) {
  const int4 *in = (const int4 *)(poly + pos_c(lane, 0));
  const int4 v0 = in[0], v1 = in[1];
  r[0] = v0.x, r[1] = v0.y, r[2] = v0.z, r[3] = v0.w;
  r[4] = v1.x, r[5] = v1.y, r[6] = v1.z, r[7] = v1.w;
}
// Arrangement A (lane + 32 m): each of the warp's eight loads is one coalesced row.
__device__ __forceinline__ void load_a(const i32 *poly, int lane, i32 *r) {
#pragma unroll
  for (int m = 0; m < 8; ++m) r[m] = poly[pos_a(lane, m)];
}
__device__ __forceinline__ void store_c(i32 *poly, int lane, const i32 *r) {
  int4 *out = (int4 *)(poly + pos_c(lane, 0));
  out[0] = make_int4(r[0], r[1], r[2], r[3]);
  out[1] = make_int4(r[4], r[5], r[6], r[7]);
}
#if NTT_PAD
#define EXCHANGE_B_TO_C(buf) EXCHANGE(buf, pad_bc, pos_b, pos_c)
#define EXCHANGE_C_TO_B(buf) EXCHANGE(buf, pad_bc, pos_c, pos_b)
#else
#define EXCHANGE_B_TO_C(buf)                                                \
  do {                                                                      \
    __syncwarp();                                                           \
    _Pragma("unroll") for (int m = 0; m < 8; ++m) buf[pos_b(lane, m)] = r[m]; \
    __syncwarp();                                                           \
    load_c(buf, lane, r);                                                   \
  } while (0)
#define EXCHANGE_C_TO_B(buf)                                                \
  do {                                                                      \
    __syncwarp();                                                           \
    store_c(buf, lane, r);                                                  \
    __syncwarp();                                                           \
    _Pragma("unroll") for (int m = 0; m < 8; ++m) r[m] = buf[pos_b(lane, m)]; \
  } while (0)
#endif

// Three forward levels on a lane's 8 coefficients r[m], wide to narrow: pairs 4 apart with
// zeta z[z4], 2 apart with z[z2 + m / 4], 1 apart with z[z1 + m / 2]; z4 < 0 skips the first.
__device__ __forceinline__ void ct_levels(i32 *r, const i32 *z, int z4, int z2, int z1) {
  if (z4 >= 0) {
#pragma unroll
    for (int m = 0; m < 4; ++m) ct(r[m], r[m + 4], z[z4]);
  }
#pragma unroll
  for (int m = 0; m < 8; m += 4) {
    ct(r[m], r[m + 2], z[z2 + (m >> 2)]);
    ct(r[m + 1], r[m + 3], z[z2 + (m >> 2)]);
  }
#pragma unroll
  for (int m = 0; m < 8; m += 2) ct(r[m], r[m + 1], z[z1 + (m >> 1)]);
}

// Three inverse levels, narrow to wide (Alg. 42 walks the zeta table backwards): pairs 1
// apart with q - z[z1 - m / 2], 2 apart with q - z[z2 - m / 4], 4 apart with q - z[z4];
// z4 < 0 skips the last.
__device__ __forceinline__ void gs_levels(i32 *r, const i32 *z, int z1, int z2, int z4) {
#pragma unroll
  for (int m = 0; m < 8; m += 2) gs(r[m], r[m + 1], Q - z[z1 - (m >> 1)]);
#pragma unroll
  for (int m = 0; m < 8; m += 4) {
    gs(r[m], r[m + 2], Q - z[z2 - (m >> 2)]);
    gs(r[m + 1], r[m + 3], Q - z[z2 - (m >> 2)]);
  }
  if (z4 >= 0) {
#pragma unroll
    for (int m = 0; m < 4; ++m) gs(r[m], r[m + 4], Q - z[z4]);
  }
}

// The transforms take their input and hand over their output through hooks, so that a kernel
// fuses the step before (a product, a load from device memory) and the step after (a check, a
// store elsewhere) into the transform's pass over its registers instead of passes of their own
// through shared memory. A hook gets the polynomial's index p, the lane and the lane's eight
// coefficients r: an input hook fills r with canonical values, an output hook takes the
// canonical results. The forward transform reads arrangement A (pos_a) and hands over C
// (pos_c); the inverse reads C and hands over A. Polynomial p's slot a + p N is the exchange
// space, and where the plain forms (ntt_polys, intt_polys) read and write.
template <class In, class Out> __device__ void ntt_polys_with(i32 *a, int cnt, const i32 *z, In in, Out out) {
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int b = lane >> 2;
  for (int p = warp; p < cnt; p += blockDim.x >> 5) {
    i32 *buf = exchange_buf(a + p * N, warp);
    i32 r[8];
    in(p, lane, r);
    ct_levels(r, z, 1, 2, 4); // len 128, 64, 32: groups depend on m only
    EXCHANGE(buf, pad_ab, pos_a, pos_b);
    ct_levels(r, z, 8 + b, 16 + 2 * b, 32 + 4 * b); // len 16, 8, 4 inside 32-word block b
    EXCHANGE_B_TO_C(buf);
    ct_levels(r, z, -1, 64 + 2 * lane, 128 + 4 * lane); // len 2, 1 inside this lane's 8
#pragma unroll
    for (int m = 0; m < 8; ++m) r[m] = freeze(r[m]);
    __syncwarp();
    out(p, lane, (const i32 *)r);
  }
  __syncthreads();
}

__device__ void ntt_polys(i32 *a, int cnt, const i32 *z) {
  ntt_polys_with(
      a, cnt, z, [&](int p, int lane, i32 *r) { load_a(a + p * N, lane, r); },
      [&](int p, int lane, const i32 *r) { store_c(a + p * N, lane, r); });
}

// Inverse NTT times the Montgomery factor (see MONT2_256) of canonical inputs; the inverse
// levels run C, B, A.
template <class In, class Out> __device__ void intt_polys_with(i32 *a, int cnt, const i32 *z, In in, Out out) {
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int b = lane >> 2;
  const i32 last_zeta = fq_mul(Q - z[1], MONT2_256);
  for (int p = warp; p < cnt; p += blockDim.x >> 5) {
    i32 *buf = exchange_buf(a + p * N, warp);
    i32 r[8];
    in(p, lane, r);
    gs_levels(r, z, 255 - 4 * lane, 127 - 2 * lane, -1); // len 1, 2
    EXCHANGE_C_TO_B(buf);
    gs_levels(r, z, 63 - 4 * b, 31 - 2 * b, 15 - b); // len 4, 8, 16
    EXCHANGE(buf, pad_ab, pos_b, pos_a);
    gs_levels(r, z, 7, 3, -1); // len 32, 64; len 128 below, with the scaling
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      if (INTT_FUSE) {
        intt_last(r[m], r[m + 4], last_zeta);
      } else {
        gs(r[m], r[m + 4], Q - z[1]);
        r[m] = to_canon(mont_mul(MONT2_256, r[m]));
        r[m + 4] = to_canon(mont_mul(MONT2_256, r[m + 4]));
      }
    }
    __syncwarp();
    out(p, lane, (const i32 *)r);
  }
  __syncthreads();
}

__device__ void intt_polys(i32 *a, int cnt, const i32 *z) {
  intt_polys_with(
      a, cnt, z, [&](int p, int lane, i32 *r) { load_c(a + p * N, lane, r); },
      [&](int p, int lane, const i32 *r) {
#pragma unroll
        for (int m = 0; m < 8; ++m) a[p * N + pos_a(lane, m)] = r[m];
      });
}

// r = c^ o s^ at the lane's arrangement-C positions (8 lane .. 8 lane + 7): c^ from shared
// memory, s^ (16-byte aligned) from device memory, as 16-byte loads; an inverse transform's
// input in sign_z.
__device__ __forceinline__ void times_c(const i32 *ch, const i32 *s, int lane, i32 *r) {
  const int4 *cp = (const int4 *)(ch + pos_c(lane, 0)), *sp = (const int4 *)(s + pos_c(lane, 0));
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int4 cv = cp[h], sv = sp[h];
    r[4 * h] = fq_mul(cv.x, sv.x);
    r[4 * h + 1] = fq_mul(cv.y, sv.y);
    r[4 * h + 2] = fq_mul(cv.z, sv.z);
    r[4 * h + 3] = fq_mul(cv.w, sv.w);
  }
}

// ------------------------------------------------- matrix-vector product (NTT domain)

// Coefficient `tid` of A o v (A: K x L NTT-domain polynomials from ExpandA, row-major in
// global memory; v: L polynomials in shared memory), handed row by row, canonical, to
// store(i, value). Each row's L products are summed in 64 bits (one multiply-add each, under
// 7 q^2) and reduced once.
// Row-major: one accumulator, A read in memory order. Column-major (MATVEC_COL=1, the
// paper's choice for keygen and verify): each v[j] read once, K accumulators in registers.
#ifndef MATVEC_COL
#define MATVEC_COL 0
#endif
template <class Store> __device__ __forceinline__ void matvec(const u32 *a, const i32 *v, int tid, Store store) {
#if MATVEC_COL
  i64 acc[K];
#pragma unroll
  for (int i = 0; i < K; ++i) acc[i] = 0;
  for (int j = 0; j < L; ++j) {
    const i32 x = v[j * N + tid];
#pragma unroll
    for (int i = 0; i < K; ++i) acc[i] += (i64)(i32)a[(i * L + j) * N + tid] * x;
  }
#pragma unroll
  for (int i = 0; i < K; ++i) store(i, to_canon(mont_reduce(acc[i])));
#else
  for (int i = 0; i < K; ++i) {
    i64 acc = 0;
    for (int j = 0; j < L; ++j) acc += (i64)(i32)a[(i * L + j) * N + tid] * v[j * N + tid];
    store(i, to_canon(mont_reduce(acc)));
  }
#endif
}

// ------------------------------------------------------------ bit packing

// Packs 256 values of `bits` bits (little-endian bit order, FIPS 204 Alg. 16)
// into out; thread g packs coefficient group g, whose bytes no one else touches.
__device__ void pack_bits(u8 *out, const i32 *v, int bits) {
  const int G = (bits & 1) ? 8 : (bits & 2) ? 4 : (bits & 4) ? 2 : 1;
  const int bytes = bits * G / 8;
  for (int g = threadIdx.x; g < N / G; g += blockDim.x) {
    u64 acc = 0;
    int nb = 0, o = g * bytes;
    for (int c = 0; c < G; ++c) {
      acc |= (u64)(u32)v[g * G + c] << nb;
      nb += bits;
      while (nb >= 8) {
        out[o++] = (u8)acc;
        acc >>= 8;
        nb -= 8;
      }
    }
  }
}

// Inverse of pack_bits: v[i] = the i-th `bits`-bit field of in.
__device__ void unpack_bits(const u8 *in, i32 *v, int bits) {
  const int G = (bits & 1) ? 8 : (bits & 2) ? 4 : (bits & 4) ? 2 : 1;
  const int bytes = bits * G / 8;
  const u32 mask = (1u << bits) - 1;
  for (int g = threadIdx.x; g < N / G; g += blockDim.x) {
    u64 acc = 0;
    int nb = 0, o = g * bytes;
    for (int c = 0; c < G; ++c) {
      while (nb < bits) {
        acc |= (u64)in[o++] << nb;
        nb += 8;
      }
      v[g * G + c] = (i32)(acc & mask);
      acc >>= bits;
      nb -= bits;
    }
  }
}

// --------------------------------------------------- samplers (stream kernels)

// Samplers emit coefficients one at a time at a per-thread position; with STORE4 they
// are gathered in registers and written 16 bytes at a time. Each thread writes its own
// polynomial, so a warp's store touches 32 sectors: 4x fewer such stores doubled keygen
// and verify on the H200 (STORE4=0 restores plain stores). N is a multiple of 4, so the
// last group is always flushed.
#ifndef STORE4
#define STORE4 1
#endif
struct Pending3 {
  u32 b0, b1, b2;
};
__device__ __forceinline__ void emit(u32 *out, int ctr, u32 v, Pending3 &p) {
#if STORE4
  switch (ctr & 3) {
  case 0: p.b0 = v; break;
  case 1: p.b1 = v; break;
  case 2: p.b2 = v; break;
  default: *(uint4 *)(out + ctr - 3) = make_uint4(p.b0, p.b1, p.b2, v);
  }
#else
  out[ctr] = v;
#endif
}

// Byte b (compile-time) of the rate of a state.
#define SBYTE(A, b) ((u32)((A)[(b) >> 3] >> (8 * ((b) & 7))) & 0xFF)

// RejNTTPoly (Alg. 30): a[i] in NTT domain from rho || j || i.
extern "C" __global__ void ST_BOUNDS expand_a(const u8 *rho_base, u32 rho_stride, u32 *a_out, u32 n) {
  const u32 idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n * K * L) return;
  const u32 item = idx / (K * L), ij = idx % (K * L);
  const u32 i = ij / L, j = ij % L;
  u64 A[25];
  shake_seed_u16<SHAKE128_RATE>(A, (const u64 *)(rho_base + (u64)item * rho_stride), 4, j | (i << 8));
  u32 *out = a_out + (u64)idx * N;
  int ctr = 0;
  Pending3 pend;
  for (;;) {
#pragma unroll
    for (int t = 0; t < SHAKE128_RATE / 3; ++t) {
      const u32 v = SBYTE(A, 3 * t) | (SBYTE(A, 3 * t + 1) << 8) | ((SBYTE(A, 3 * t + 2) & 0x7F) << 16);
      if (v < Q && ctr < N) emit(out, ctr++, v, pend);
    }
    if (ctr >= N) break;
    keccak_f1600(A);
  }
}

__device__ __forceinline__ bool coeff_from_half_byte(u32 b, i32 *c) { // Alg. 15
  if (ETA == 2) {
    if (b >= 15) return false;
    *c = to_canon(2 - (i32)(b % 5));
    return true;
  }
  if (b >= 9) return false;
  *c = to_canon(4 - (i32)b);
  return true;
}

// RejBoundedPoly (Alg. 31) for ExpandS (Alg. 33): polys s1 (r < L) then s2, from rho' || r.
extern "C" __global__ void ST_BOUNDS expand_s(const u8 *seeds, i32 *s_out, u32 n) {
  const u32 idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n * (K + L)) return;
  const u32 item = idx / (K + L), r = idx % (K + L);
  u64 A[25];
  shake_seed_u16<SHAKE256_RATE>(A, (const u64 *)(seeds + (u64)item * 128 + 32), 8, r);
  u32 *out = (u32 *)(s_out + (u64)idx * N);
  int ctr = 0;
  Pending3 pend;
  for (;;) {
#pragma unroll
    for (int b = 0; b < SHAKE256_RATE; ++b) {
      const u32 z = SBYTE(A, b);
      i32 c;
      if (ctr < N && coeff_from_half_byte(z & 15, &c)) emit(out, ctr++, (u32)c, pend);
      if (ctr < N && coeff_from_half_byte(z >> 4, &c)) emit(out, ctr++, (u32)c, pend);
    }
    if (ctr >= N) break;
    keccak_f1600(A);
  }
}

// SampleInBall (Alg. 29) on one thread, into the masks below.
// SampleInBall's c (coefficients 0, 1 or -1) as two 256-bit masks per item: nonzero
// positions (words 0-3) and negative ones (words 4-7). Building c bytewise cost 256 scattered
// byte stores per item, the largest part of sign_challenge.

__device__ __forceinline__ u32 mask_bit(const u64 m[4], u32 idx) {
  u64 w = 0;
#pragma unroll
  for (u32 k = 0; k < 4; ++k)
    if (k == (idx >> 6)) w = m[k];
  return (u32)(w >> (idx & 63)) & 1;
}
__device__ __forceinline__ void mask_set(u64 m[4], u32 idx, u32 v) {
#pragma unroll
  for (u32 k = 0; k < 4; ++k)
    if (k == (idx >> 6)) m[k] = (m[k] & ~(1ULL << (idx & 63))) | ((u64)v << (idx & 63));
}

// Coefficient i of c, canonical: 0, 1 or q - 1.
__device__ __forceinline__ i32 ball_coeff(const u64 *cm, int i) {
  const u64 nz = cm[i >> 6] >> (i & 63), neg = cm[4 + (i >> 6)] >> (i & 63);
  return (nz & 1) ? ((neg & 1) ? Q - 1 : 1) : 0;
}

__device__ void sample_in_ball(const u64 *ctilde, u64 *cm) {
  u64 A[25];
  keccak_zero(A);
#pragma unroll
  for (int i = 0; i < CTILDE / 8; ++i) A[i] = ctilde[i];
  A[CTILDE / 8] = 0x1F;
  A[SHAKE256_RATE / 8 - 1] ^= 0x80ULL << 56;
  keccak_f1600(A);
  u64 buf[SHAKE256_RATE / 8];
#pragma unroll
  for (int i = 0; i < SHAKE256_RATE / 8; ++i) buf[i] = A[i];
  u64 nz[4] = {0, 0, 0, 0}, neg[4] = {0, 0, 0, 0};
  const u64 signs = buf[0];
  int pos = 8;
  for (int i = N - TAU; i < N; ++i) {
    u32 j;
    do {
      if (pos == SHAKE256_RATE) {
        keccak_f1600(A);
#pragma unroll
        for (int t = 0; t < SHAKE256_RATE / 8; ++t) buf[t] = A[t];
        pos = 0;
      }
      j = (u32)(buf[pos >> 3] >> (8 * (pos & 7))) & 0xFF;
      ++pos;
    } while (j > (u32)i);
    // c[i] = c[j]; c[j] = (-1)^(sign bit).
    mask_set(nz, i, mask_bit(nz, j));
    mask_set(neg, i, mask_bit(neg, j));
    mask_set(nz, j, 1);
    mask_set(neg, j, (u32)(signs >> (i + TAU - N)) & 1);
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    cm[k] = nz[k];
    cm[4 + k] = neg[k];
  }
}

// --------------------------------------------------------------------- keygen

// (rho, rho', K) = H(xi || k || l, 128) (Alg. 6 line 1; round 3: H(xi, 128)).
extern "C" __global__ void ST_BOUNDS keygen_seed(const u8 *xi, u8 *seeds, u32 n) {
  const u32 item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= n) return;
  u64 A[25];
  absorb_keygen_seed(A, (const u64 *)(xi + (u64)item * 32));
  squeeze_lanes(A, (u64 *)(seeds + (u64)item * 128), 16);
}

// t = NTT^-1(A o NTT(s1)) + s2, Power2Round, pkEncode and skEncode without tr.
// Eight blocks per SM, so at most 32 registers: left to itself ptxas gives it 39 and the
// ML-DSA-44 kernel ran 10 % slower at 70 % occupancy (H200, Nsight Compute).
extern "C" __global__ void __launch_bounds__(NT, 2048 / NT) keygen_main(const u8 *seeds, const u32 *a, const i32 *s, u8 *pk, u8 *sk, u32 n) {
  __shared__ __align__(16) i32 z[N], s1h[L * N], t[K * N], v0[N], v1[N];
  const u32 item = blockIdx.x;
  const int tid = threadIdx.x;
  load_zetas(z);
  const i32 *s_item = s + (u64)item * (K + L) * N;
  for (int i = tid; i < L * N; i += NT) s1h[i] = s_item[i];
  ntt_polys(s1h, L, z);
  const u32 *a_item = a + (u64)item * K * L * N;
  matvec(a_item, s1h, tid, [&](int i, i32 acc) { t[i * N + tid] = acc; });
  intt_polys(t, K, z);
  u8 *pk_item = pk + (u64)item * PK_LEN;
  u8 *sk_item = sk + (u64)item * SK_LEN;
  const u8 *seed = seeds + (u64)item * 128;
  if (tid < 32) {
    pk_item[tid] = seed[tid];     // rho
    sk_item[tid] = seed[tid];     // rho
    sk_item[32 + tid] = seed[96 + tid]; // K
  }
  const int s_bytes = 32 * ETA_BITS;
  for (int i = 0; i < K + L; ++i) { // s1 then s2: BitPack(s, eta, eta) stores eta - s
    __syncthreads();
    v0[tid] = ETA - centered(s_item[i * N + tid]);
    __syncthreads();
    pack_bits(sk_item + SK_S1_OFF + i * s_bytes, v0, ETA_BITS);
  }
  u8 *t0_out = sk_item + SK_S1_OFF + (K + L) * s_bytes;
  for (int i = 0; i < K; ++i) {
    __syncthreads();
    const i32 r = fq_add(t[i * N + tid], s_item[(L + i) * N + tid]);
    i32 r0 = r & ((1 << D_BITS) - 1);
    if (r0 > (1 << (D_BITS - 1))) r0 -= 1 << D_BITS;
    v0[tid] = (r - r0) >> D_BITS;
    v1[tid] = (1 << (D_BITS - 1)) - r0;
    __syncthreads();
    pack_bits(pk_item + 32 + i * 320, v0, 10);
    pack_bits(t0_out + i * 32 * D_BITS, v1, D_BITS);
  }
}

// tr = H(pk, TR_BYTES) into sk[64..SK_S1_OFF] (keygen) — one thread per item.
extern "C" __global__ void ST_BOUNDS keygen_tr(const u8 *pk, u8 *sk, u32 n) {
  const u32 item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= n) return;
  u64 A[25];
  shake_absorb<SHAKE256_RATE>(A, (const u64 *)(pk + (u64)item * PK_LEN), PK_LEN);
  squeeze_lanes(A, (u64 *)(sk + (u64)item * SK_LEN + 64), TR_BYTES / 8);
}

// ----------------------------------------------------------------------- sign

// kin = K || rnd || mu per item, rnd already there: K from the item's key (row kidx[item] of
// sk), mu = H(tr || M', 64) (Alg. 7 line 6) with tr from sk written into the end of the
// region's 64-byte slot (or the region holds mu).
extern "C" __global__ void ST_BOUNDS sign_mu(const u8 *sk, const u32 *kidx, u8 *arena, const u64 *msg_off, const u32 *msg_len, u8 *kin, u32 n) {
  const u32 item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= n) return;
  const u64 *skw = (const u64 *)(sk + (u64)kidx[item] * SK_LEN);
  u64 *kw = (u64 *)(kin + (u64)item * 128);
  u64 *region = (u64 *)(arena + msg_off[item]);
  for (int i = 0; i < 4; ++i) kw[i] = skw[4 + i];
  const u32 mlen = msg_len[item];
  if (mlen == 0xFFFFFFFFu) {
    for (int i = 0; i < 8; ++i) kw[8 + i] = region[i];
    return;
  }
  for (int i = 0; i < TR_BYTES / 8; ++i) region[TR_SLOT + i] = skw[8 + i];
  u64 A[25];
  shake_absorb<SHAKE256_RATE>(A, region + TR_SLOT, TR_BYTES + mlen);
  squeeze_lanes(A, kw + 8, 8);
}

// rho'' = H(K || rnd || mu, 64) (round 3 with rnd = 0: H(K || mu)); kin holds K || rnd || mu.
extern "C" __global__ void ST_BOUNDS sign_rhopp(const u8 *kin, u8 *rhopp, u32 n) {
  const u32 item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= n) return;
  u64 A[25];
  absorb_rho_prime(A, (const u64 *)(kin + (u64)item * 128));
  squeeze_lanes(A, (u64 *)(rhopp + (u64)item * 64), 8);
}

// Field x of `bits` bits (FIPS 204's little-endian bit order) of a packed polynomial in device
// memory, reading only the bytes the field spans.
__device__ __forceinline__ i32 field_at(const u8 *in, int x, int bits) {
  const int bit = x * bits, byte = bit >> 3, sh = bit & 7;
  u32 w = in[byte];
  if (sh + bits > 8) w |= (u32)in[byte + 1] << 8;
  if (sh + bits > 16) w |= (u32)in[byte + 2] << 16;
  return (i32)((w >> sh) & ((1u << bits) - 1));
}

// skDecode (Alg. 25) and NTTs of s1, s2, t0, once per distinct key of the chunk; kbad[key]
// = 1 for keys whose s1/s2 fields are out of [-eta, eta] (BadKey). Each transform unpacks its
// polynomial's fields from sk into its registers and writes its result to device memory.
// Eight blocks per SM: ptxas alone takes 48 registers (five blocks), capped it needs 32 with
// no spill (ptxas 12.9).
extern "C" __global__ void __launch_bounds__(NT, 2048 / NT) sign_decode(const u8 *sk, i32 *s1h, i32 *s2h, i32 *t0h, u32 *kbad) {
  __shared__ __align__(16) i32 z[N], p[(L + 2 * K) * N];
  const u32 item = blockIdx.x;
  const int tid = threadIdx.x;
  load_zetas(z);
  const u8 *s_in = sk + (u64)item * SK_LEN + SK_S1_OFF;
  const u8 *t0_in = s_in + (K + L) * 32 * ETA_BITS;
  int bad = 0;
  ntt_polys_with(
      p, L + 2 * K, z,
      [&](int i, int lane, i32 *r) {
        if (i < K + L) { // s1, s2: BitPack(s, eta, eta) holds eta - s
#pragma unroll
          for (int m = 0; m < 8; ++m) {
            const i32 v = field_at(s_in + i * 32 * ETA_BITS, pos_a(lane, m), ETA_BITS);
            bad |= v > 2 * ETA;
            r[m] = to_canon(ETA - v);
          }
        } else { // t0: BitPack(t0, 2^(d-1) - 1, 2^(d-1))
#pragma unroll
          for (int m = 0; m < 8; ++m)
            r[m] = to_canon((1 << (D_BITS - 1)) - field_at(t0_in + (i - K - L) * 32 * D_BITS, pos_a(lane, m), D_BITS));
        }
      },
      [&](int i, int lane, const i32 *r) {
        i32 *o = i < L ? s1h + ((u64)item * L + i) * N : i < L + K ? s2h + ((u64)item * K + i - L) * N : t0h + ((u64)item * K + i - L - K) * N;
        store_c(o, lane, r);
      });
  bad = __syncthreads_or(bad);
  if (tid == 0) kbad[item] = bad;
}

// Each task's loop state from its key's check: bad keys are done (BadKey) before any attempt.
extern "C" __global__ void ST_BOUNDS sign_init(const u32 *kbad, const u32 *kidx, u32 *status, u32 *best, u32 *next, u32 *n_bad, u32 n) {
  const u32 item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= n) return;
  const u32 bad = kbad[kidx[item]];
  status[item] = bad ? ST_BADKEY : ST_OK;
  best[item] = bad ? ATT_SKIP : ATT_NONE;
  next[item] = 0;
  if (bad) atomicAdd(n_bad, 1u);
}

// Dynamic scheduling: every pending task gets `spec` consecutive attempts this
// round (spec > 1 only when few tasks remain, so idle units try later kappas);
// the smallest successful attempt wins, which keeps the FIPS 204 result.
extern "C" __global__ void ST_BOUNDS sign_schedule(u32 *status, u32 *best, u32 *next, u32 *ent_task, u32 *ent_att, u32 *count, u32 *done, u32 spec, u32 n) {
  const u32 item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= n || best[item] != ATT_NONE) return;
  const u32 base = next[item];
  // Bound reached (an honest key: p < 2^-256), or spec 0: the host ends the loop.
  if (base >= MAX_ATTEMPTS || spec == 0) {
    status[item] = ST_GAVEUP;
    best[item] = ATT_SKIP;
    atomicAdd(done, 1u);
    return;
  }
  const u32 s = spec < MAX_ATTEMPTS - base ? spec : MAX_ATTEMPTS - base; // never past the bound
  next[item] = base + s;
  const u32 pos = atomicAdd(count, s);
  for (u32 q = 0; q < s; ++q) {
    ent_task[pos + q] = item;
    ent_att[pos + q] = base + q;
  }
}

// ExpandMask (Alg. 34): y[r] = BitUnpack(H(rho'' || kappa + r, 32c), gamma1 - 1, gamma1).
extern "C" __global__ void ST_BOUNDS expand_mask(const u8 *rhopp, const u32 *ent_task, const u32 *ent_att, const u32 *count, i32 *y) {
  const u32 idx = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 e = idx / L, r = idx % L;
  if (e >= *count) return;
  const u32 kappa = ent_att[e] * L + r;
  u64 A[25];
  shake_seed_u16<SHAKE256_RATE>(A, (const u64 *)(rhopp + (u64)ent_task[e] * 64), 8, kappa);
  u32 *out = (u32 *)(y + (u64)idx * N);
  u64 acc = 0;
  int nb = 0, ctr = 0;
  Pending3 pend;
  const u64 mask = (1ULL << Z_BITS) - 1;
  for (;;) {
#pragma unroll
    for (int h = 0; h < 2 * (SHAKE256_RATE / 8); ++h) {
      acc |= (u64)(u32)(A[h >> 1] >> (32 * (h & 1))) << nb;
      nb += 32;
      while (nb >= Z_BITS) {
        if (ctr < N) emit(out, ctr, (u32)to_canon(GAMMA1 - (i32)(acc & mask)), pend);
        ++ctr;
        acc >>= Z_BITS;
        nb -= Z_BITS;
      }
    }
    if (ctr >= N) break;
    keccak_f1600(A);
  }
}

// w = NTT^-1(A o NTT(y)); hbuf = mu || w1Encode(HighBits(w)). SIGN_W_NT threads per block.
extern "C" __global__ void __launch_bounds__(SIGN_W_NT) sign_w(const u32 *a, const u32 *kidx, const u8 *kin, const i32 *y, const u32 *ent_task, const u32 *count, i32 *w, u8 *hbuf) {
  __shared__ __align__(16) i32 z[N], yh[L * N], acc[K * N];
  const u32 e = blockIdx.x;
  if (e >= *count) return;
  const int tid = threadIdx.x;
  const u32 task = ent_task[e];
  load_zetas(z);
  // y^ = NTT(y), y read from device memory straight into the transform.
  const i32 *y_e = y + (u64)e * L * N;
  ntt_polys_with(
      yh, L, z, [&](int j, int lane, i32 *r) { load_a(y_e + j * N, lane, r); },
      [&](int j, int lane, const i32 *r) { store_c(yh + j * N, lane, r); });
  const u32 *a_t = a + (u64)kidx[task] * K * L * N;
  FOR_COEFF(x, SIGN_W_NT) matvec(a_t, yh, x, [&](int i, i32 s) { acc[i * N + x] = s; });
  // w = NTT^-1(A o y^) from the transform's registers to device memory, HighBits(w) to acc.
  i32 *w_e = w + (u64)e * K * N;
  intt_polys_with(
      acc, K, z, [&](int i, int lane, i32 *r) { load_c(acc + i * N, lane, r); },
      [&](int i, int lane, const i32 *r) {
#pragma unroll
        for (int m = 0; m < 8; ++m) {
          const int x = i * N + pos_a(lane, m);
          w_e[x] = r[m];
          acc[x] = high_bits(r[m]);
        }
      });
  u8 *h = hbuf + (u64)e * HBUF_LEN;
  if (tid < 64) h[tid] = kin[(u64)task * 128 + 64 + tid];
  __syncthreads();
  for (int i = 0; i < K; ++i) pack_bits(h + 64 + i * W1_BYTES, acc + i * N, W1_BITS);
}

// c~ = H(mu || w1Encode(w1), CTILDE); c = SampleInBall(c~).
extern "C" __global__ void ST_BOUNDS sign_challenge(const u8 *hbuf, const u32 *count, u8 *ctilde, u64 *c) {
  const u32 e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= *count) return;
  u64 A[25];
  shake_absorb<SHAKE256_RATE>(A, (const u64 *)(hbuf + (u64)e * HBUF_LEN), HBUF_LEN);
  u64 *ct = (u64 *)(ctilde + (u64)e * 64);
  squeeze_lanes(A, ct, CTILDE / 8);
  sample_in_ball(ct, c + (u64)e * CM_WORDS);
}

// z = y + NTT^-1(c^ o s1^), the norm checks, MakeHint and sigEncode (Alg. 7
// lines 16-30, Alg. 26) into this attempt's slot; the earliest success wins. SIGN_Z_NT threads
// per block. Eight blocks of 256 per SM (at most 32 registers; ptxas alone takes 40, six
// blocks): 9 % more ML-DSA-44 signatures kernel-only, 4-6 % for -65 and -87 (H200, two rounds
// in one call).
extern "C" __global__ void __launch_bounds__(SIGN_Z_NT, 2048 / SIGN_Z_NT) sign_z(const u32 *kidx, const i32 *s1h, const i32 *s2h, const i32 *t0h, const i32 *y, const i32 *w, const u8 *ctilde, const u64 *c, const u32 *ent_task, const u32 *ent_att, const u32 *count, u32 *best, u32 *done, u8 *ok, u8 *slot) {
  __shared__ __align__(16) i32 z[N], ch[N], zs[L * N], rr[2 * K * N];
  __shared__ u8 hs[K * N];
  __shared__ int hcount[K];
  const u32 e = blockIdx.x;
  if (e >= *count) return;
  const int tid = threadIdx.x;
  const u32 task = ent_task[e];
  if (tid == 0) ok[e] = 0;
  if (tid < K) hcount[tid] = 0;
  load_zetas(z);
  // c^ = NTT(c), c expanded from its masks straight into the transform.
  const u64 *cm = c + (u64)e * CM_WORDS;
  ntt_polys_with(
      ch, 1, z,
      [&](int, int lane, i32 *r) {
#pragma unroll
        for (int m = 0; m < 8; ++m) r[m] = ball_coeff(cm, pos_a(lane, m));
      },
      [&](int, int lane, const i32 *r) { store_c(ch, lane, r); });
  const u64 key = kidx[task];
  const i32 *s1 = s1h + key * L * N, *s2 = s2h + key * K * N, *t0 = t0h + key * K * N;
  // The three checks in order of rejection rate per polynomial transformed (the r0 check
  // rejects most): any failure rejects, so the order does not change the signature. Each
  // inverse transform reads c^ o s^ as its input and checks its results as it hands them over.
  // 1. r0 = LowBits(w - cs2); rr[0..K) keeps w - cs2 for the hint.
  const i32 *w_e = w + (u64)e * K * N;
  int bad = 0;
  intt_polys_with(
      rr, K, z, [&](int i, int lane, i32 *r) { times_c(ch, s2 + i * N, lane, r); },
      [&](int i, int lane, const i32 *r) {
#pragma unroll
        for (int m = 0; m < 8; ++m) {
          const int x = i * N + pos_a(lane, m);
          const i32 wcs2 = fq_sub(w_e[x], r[m]);
          i32 r0;
          decompose(wcs2, &r0);
          bad |= iabs(r0) >= GAMMA2 - BETA;
          rr[x] = wcs2;
        }
      });
  if (__syncthreads_or(bad)) return;
  // 2. z = y + cs1.
  const i32 *y_e = y + (u64)e * L * N;
  intt_polys_with(
      zs, L, z, [&](int j, int lane, i32 *r) { times_c(ch, s1 + j * N, lane, r); },
      [&](int j, int lane, const i32 *r) {
#pragma unroll
        for (int m = 0; m < 8; ++m) {
          const int x = j * N + pos_a(lane, m);
          const i32 v = centered(fq_add(y_e[x], r[m]));
          bad |= iabs(v) >= GAMMA1 - BETA;
          zs[x] = GAMMA1 - v; // BitPack(z, gamma1 - 1, gamma1)
        }
      });
  if (__syncthreads_or(bad)) return;
  // 3. ct0, and the hint h = MakeHint(-ct0, w - cs2 + ct0); rr[K..2K) is only the transform's
  // exchange space.
  intt_polys_with(
      rr + K * N, K, z, [&](int i, int lane, i32 *r) { times_c(ch, t0 + i * N, lane, r); },
      [&](int i, int lane, const i32 *r) {
#pragma unroll
        for (int m = 0; m < 8; ++m) {
          const int x = i * N + pos_a(lane, m);
          const i32 wcs2 = rr[x], ct0 = r[m];
          bad |= iabs(centered(ct0)) >= GAMMA2;
          const u8 hint = high_bits(fq_add(wcs2, ct0)) != high_bits(wcs2);
          hs[x] = hint;
          if (hint) atomicAdd(&hcount[i], 1);
        }
      });
  if (__syncthreads_or(bad)) return;
  int total = 0;
  for (int i = 0; i < K; ++i) total += hcount[i];
  if (total > OMEGA) return;
  // Accepted: sigEncode (Alg. 26) into the slot.
  u8 *sig = slot + (u64)e * SIG_STRIDE;
  if (tid < CTILDE) sig[tid] = ctilde[(u64)e * 64 + tid];
  for (int j = 0; j < L; ++j) pack_bits(sig + CTILDE + j * 32 * Z_BITS, zs + j * N, Z_BITS);
  u8 *hp = sig + CTILDE + L * 32 * Z_BITS;
  if (tid < K) { // HintBitPack: poly tid's indices after those of polys < tid
    int idx = 0;
    for (int i = 0; i < tid; ++i) idx += hcount[i];
    for (int j = 0; j < N; ++j)
      if (hs[tid * N + j]) hp[idx++] = (u8)j;
    hp[OMEGA + tid] = (u8)idx;
  }
  for (int i = total + tid; i < OMEGA; i += SIGN_Z_NT) hp[i] = 0;
  __syncthreads();
  if (tid == 0) {
    __threadfence();
    ok[e] = 1;
    const u32 old = atomicMin(&best[task], ent_att[e]);
    if (old == ATT_NONE) atomicAdd(done, 1u);
  }
}

// Copies each task's winning slot (smallest successful attempt) to its output.
extern "C" __global__ void __launch_bounds__(NT) sign_commit(const u32 *ent_task, const u32 *ent_att, const u32 *count, const u32 *best, const u8 *ok, const u8 *slot, u8 *sig_out) {
  const u32 e = blockIdx.x;
  if (e >= *count || !ok[e]) return;
  const u32 task = ent_task[e];
  if (best[task] != ent_att[e]) return;
  const u64 *src = (const u64 *)(slot + (u64)e * SIG_STRIDE);
  u64 *dst = (u64 *)(sig_out + (u64)task * SIG_STRIDE);
  for (int i = threadIdx.x; i < SIG_STRIDE / 8; i += NT) dst[i] = src[i];
}

// --------------------------------------------------------------------- verify

// tr = H(pk, TR_BYTES) once per distinct key of the chunk, into a 64-byte row.
extern "C" __global__ void ST_BOUNDS verify_tr(const u8 *pk, u8 *tr, u32 n_keys) {
  const u32 key = blockIdx.x * blockDim.x + threadIdx.x;
  if (key >= n_keys) return;
  u64 A[25];
  shake_absorb<SHAKE256_RATE>(A, (const u64 *)(pk + (u64)key * PK_LEN), PK_LEN);
  squeeze_lanes(A, (u64 *)(tr + (u64)key * 64), TR_BYTES / 8);
}

// Per item: its key's tr into the end of the message region's 64-byte slot (from the table
// `tr` of shared keys, or hashed here from pk when every item has its own key and `tr` is
// null: one pass instead of two), mu = H(tr || M', 64) (or the given mu), HintBitUnpack
// (Alg. 21), c = SampleInBall(c~). msg_off[i]: region offset in arena; msg_len[i]: |M'|, or
// ~0 for external mu.
extern "C" __global__ void ST_BOUNDS verify_prep(const u8 *pk, const u8 *tr, const u32 *kidx, const u8 *sig, u8 *arena, const u64 *msg_off, const u32 *msg_len, u8 *hbuf, u64 *c, u32 *hint, u32 *vstat, u32 n) {
  const u32 item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= n) return;
  u64 A[25];
  u8 *region = arena + msg_off[item];
  const u32 mlen = msg_len[item];
  u64 *mu = (u64 *)(hbuf + (u64)item * HBUF_LEN);
  if (mlen == 0xFFFFFFFFu) {
    for (int i = 0; i < 8; ++i) mu[i] = ((const u64 *)region)[i];
  } else {
    if (tr) {
      const u64 *tr_key = (const u64 *)(tr + (u64)kidx[item] * 64);
      for (int i = 0; i < TR_BYTES / 8; ++i) ((u64 *)region)[TR_SLOT + i] = tr_key[i];
    } else {
      shake_absorb<SHAKE256_RATE>(A, (const u64 *)(pk + (u64)kidx[item] * PK_LEN), PK_LEN);
      squeeze_lanes(A, (u64 *)region + TR_SLOT, TR_BYTES / 8);
    }
    shake_absorb<SHAKE256_RATE>(A, (const u64 *)region + TR_SLOT, TR_BYTES + mlen);
    squeeze_lanes(A, mu, 8);
  }
  const u8 *s = sig + (u64)item * SIG_STRIDE;
  const u8 *y = s + CTILDE + L * 32 * Z_BITS;
  u32 *h = hint + (u64)item * K * 8;
  for (int i = 0; i < K * 8; ++i) h[i] = 0;
  u32 bad = 0, index = 0;
  for (int i = 0; i < K && !bad; ++i) {
    const u32 end = y[OMEGA + i];
    if (end < index || end > OMEGA) {
      bad = 1;
      break;
    }
    const u32 first = index;
    while (index < end) {
      if (index > first && y[index - 1] >= y[index]) {
        bad = 1;
        break;
      }
      const u32 j = y[index];
      h[i * 8 + (j >> 5)] |= 1u << (j & 31);
      ++index;
    }
  }
  for (u32 i = index; i < OMEGA && !bad; ++i)
    if (y[i] != 0) bad = 1;
  vstat[item] = bad;
  sample_in_ball((const u64 *)s, c + (u64)item * CM_WORDS);
}

// w'_approx = NTT^-1(A o NTT(z) - NTT(c) o NTT(t1 * 2^d)), w1' = UseHint(h, w'),
// hbuf = mu || w1Encode(w1'); also the ||z|| check.
extern "C" __global__ void __launch_bounds__(NT) verify_w(const u32 *a, const u32 *kidx, const u8 *pk, const u8 *sig, const u64 *c, const u32 *hint, u32 *vstat, u8 *hbuf, u32 n) {
  __shared__ __align__(16) i32 z[N], zh[L * N], ch[N], th[K * N];
  const u32 item = blockIdx.x;
  const int tid = threadIdx.x;
  load_zetas(z);
  const u8 *s = sig + (u64)item * SIG_STRIDE;
  for (int j = 0; j < L; ++j) unpack_bits(s + CTILDE + j * 32 * Z_BITS, zh + j * N, Z_BITS);
  const u64 key = kidx[item];
  const u8 *pk_item = pk + key * PK_LEN;
  for (int i = 0; i < K; ++i) unpack_bits(pk_item + 32 + i * 320, th + i * N, 10);
  __syncthreads();
  int bad = 0;
  for (int j = 0; j < L; ++j) {
    const i32 v = GAMMA1 - zh[j * N + tid];
    bad |= iabs(v) >= GAMMA1 - BETA;
    zh[j * N + tid] = to_canon(v);
  }
  for (int i = 0; i < K; ++i) th[i * N + tid] <<= D_BITS;
  ch[tid] = ball_coeff(c + (u64)item * CM_WORDS, tid);
  bad = __syncthreads_or(bad);
  if (bad) {
    if (tid == 0) vstat[item] = 1;
    return;
  }
  ntt_polys(zh, L, z);
  ntt_polys(ch, 1, z);
  ntt_polys(th, K, z);
  const u32 *a_t = a + key * K * L * N;
  matvec(a_t, zh, tid, [&](int i, i32 acc) { th[i * N + tid] = fq_sub(acc, fq_mul(ch[tid], th[i * N + tid])); });
  intt_polys(th, K, z);
  const u32 *h = hint + (u64)item * K * 8;
  for (int i = 0; i < K; ++i) th[i * N + tid] = use_hint((h[i * 8 + (tid >> 5)] >> (tid & 31)) & 1, th[i * N + tid]);
  __syncthreads();
  u8 *hb = hbuf + (u64)item * HBUF_LEN;
  for (int i = 0; i < K; ++i) pack_bits(hb + 64 + i * W1_BYTES, th + i * N, W1_BITS);
}

// c~' = H(mu || w1Encode(w1'), CTILDE); result 0 when valid, 1 otherwise.
extern "C" __global__ void ST_BOUNDS verify_final(const u8 *hbuf, const u8 *sig, const u32 *vstat, u32 *result, u32 n) {
  const u32 item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= n) return;
  u64 A[25];
  shake_absorb<SHAKE256_RATE>(A, (const u64 *)(hbuf + (u64)item * HBUF_LEN), HBUF_LEN);
  const u64 *ct = (const u64 *)(sig + (u64)item * SIG_STRIDE);
  u64 diff = 0;
#pragma unroll
  for (int i = 0; i < CTILDE / 8; ++i) diff |= A[i] ^ ct[i];
  result[item] = (vstat[item] != 0 || diff != 0) ? 1u : 0u;
}
