// Runs kernels' per-thread code on the CPU for src/gpu/ctru/emulated.rs: `harness MODE` reads
// the inputs on stdin and writes the outputs to stdout (layouts in emulated.rs).
#include "shim.h"
#include "../keccak.cuh"
#include "../hostio.cuh"
#include "../chacha.cuh"
#ifdef CTRU_N
#include "../ctru.cu"
#endif
#ifdef SLH_N
#include "../sha2.cuh"
#include "../slhdsa.cu"
#endif
#include <cstdio>
#include <string>
#include <vector>
#include "stdin.h"

// Thread `b` of a one-dimensional launch.
static void at(u32 b) {
  blockIdx.x = 0;
  blockDim.x = 1u << 30;
  threadIdx.x = b;
}

#ifdef SLH_N
// SLH-DSA: the kernels of a whole batch, phase by phase, each thread in turn (layouts in
// src/gpu/slhdsa/emulated.rs). Input: n (u32), nkeys (u32), then the mode's rows.
static void slh_modes(const std::string &mode, const std::vector<u8> &in, std::vector<u8> &out) {
  if (in.size() < 8) return;
  u32 n, nkeys;
  memcpy(&n, &in[0], 4);
  memcpy(&nkeys, &in[4], 4);
  const u8 *p = in.data() + 8;
  auto put = [&](const void *d, size_t len) { out.insert(out.end(), (const u8 *)d, (const u8 *)d + len); };
  // Zeroed, 8-byte aligned device stand-ins.
  auto buf = [](size_t bytes) { return std::vector<u64>(bytes / 8 + 2, 0); };
  auto b8 = [](std::vector<u64> &v) { return (u8 *)v.data(); };
  const size_t NB = SLH_N;
  if (mode == "slh_keygen") {
    // n seed rows (SK.seed || SK.prf || PK.seed) -> n pk rows, n sk rows.
    auto seeds = buf(n * 3 * NB), ctx = buf((size_t)n * CTX_BYTES), leaves = buf(((size_t)n << HP) * NB);
    auto pk = buf(n * 2 * NB), sk = buf(n * 4 * NB);
    memcpy(b8(seeds), p, n * 3 * NB);
    for (u32 t = 0; t < n; ++t) at(t), slh_prep(b8(seeds), 3 * NB, 0, 2 * NB, b8(ctx), n);
    for (u32 t = 0; t < n << HP; ++t) at(t), slh_keygen_leaves(b8(ctx), b8(leaves), n);
    for (u32 t = 0; t < n; ++t) at(t), slh_keygen_top(b8(seeds), b8(ctx), b8(leaves), b8(pk), b8(sk), n);
    put(b8(pk), n * 2 * NB);
    put(b8(sk), n * 4 * NB);
  } else if (mode == "slh_sign") {
    // nkeys sk rows, n job rows, top (u32: the top layer's leaves built per key) -> n signatures.
    auto keys = buf(nkeys * 4 * NB), jobs = buf((size_t)n * JOB_BYTES), ctx = buf((size_t)nkeys * CTX_BYTES);
    memcpy(b8(keys), p, nkeys * 4 * NB);
    memcpy(b8(jobs), p + nkeys * 4 * NB, (size_t)n * JOB_BYTES);
    u32 top;
    memcpy(&top, p + nkeys * 4 * NB + (size_t)n * JOB_BYTES, 4);
    auto topl = buf(((size_t)nkeys << HP) * NB), groots = buf((size_t)n * SLH_K * NG * NB);
    auto roots = buf((size_t)n * SLH_K * NB), pkf = buf(n * NB), leaves = buf(((size_t)n * SLH_D << HP) * NB);
    auto htroots = buf((size_t)n * SLH_D * NB), sigs = buf((size_t)n * SIG_BYTES);
    u32 layers = top ? SLH_D - 1 : SLH_D;
    for (u32 t = 0; t < nkeys; ++t) at(t), slh_prep(b8(keys), 4 * NB, 0, 2 * NB, b8(ctx), nkeys);
    if (top)
      for (u32 t = 0; t < nkeys << HP; ++t) at(t), slh_keygen_leaves(b8(ctx), b8(topl), nkeys);
    for (u32 t = 0; t < n * SLH_K * NG; ++t) at(t), slh_fors_leaves(b8(jobs), b8(ctx), b8(groots), b8(sigs), n);
    for (u32 t = 0; t < n * SLH_K; ++t) at(t), slh_fors_top(b8(jobs), b8(ctx), b8(groots), b8(roots), b8(sigs), n);
    for (u32 t = 0; t < n; ++t) at(t), slh_fors_pk(b8(jobs), b8(ctx), b8(roots), b8(pkf), b8(sigs), n);
    for (u32 t = 0; t < (n * layers) << HP; ++t) at(t), slh_ht_leaves(b8(jobs), b8(ctx), b8(leaves), layers, n);
    for (u32 t = 0; t < n * SLH_D; ++t)
      at(t), slh_ht_top(b8(jobs), b8(ctx), b8(leaves), top ? b8(topl) : nullptr, b8(htroots), b8(sigs), n);
    for (u32 t = 0; t < n * SLH_D * WLEN; ++t) at(t), slh_wots_sign(b8(jobs), b8(ctx), b8(pkf), b8(htroots), b8(sigs), n);
    put(b8(sigs), (size_t)n * SIG_BYTES);
  } else if (mode == "slh_verify") {
    // n job rows, n pk rows, n signature rows -> n verdicts (u32).
    auto jobs = buf((size_t)n * JOB_BYTES), pks = buf(n * 2 * NB), sigs = buf((size_t)n * SIG_BYTES);
    std::vector<u32> ok(n, 7);
    memcpy(b8(jobs), p, (size_t)n * JOB_BYTES);
    memcpy(b8(pks), p + (size_t)n * JOB_BYTES, n * 2 * NB);
    memcpy(b8(sigs), p + (size_t)n * JOB_BYTES + n * 2 * NB, (size_t)n * SIG_BYTES);
    for (u32 t = 0; t < n; ++t) at(t), slh_verify(b8(jobs), b8(pks), b8(sigs), SIG_BYTES, ok.data(), n);
    put(ok.data(), n * 4);
  } else if (mode == "slh_wots_pk") {
    // n rows of PK.seed, the message, layer (u32), key pair (u32), tree (u64), the WOTS+
    // signature -> n public keys (wots_pk_from_sig).
    const size_t row = 2 * NB + 16 + WLEN * NB;
    auto rows = buf(n * row);
    memcpy(b8(rows), p, n * row);
    for (u32 t = 0; t < n; ++t) {
      const u8 *r = b8(rows) + t * row;
      u32 seed[NW], m[NW], pk[NW], layer, kp;
      u64 tree;
      ld(r, seed);
      ld(r + NB, m);
      memcpy(&layer, r + 2 * NB, 4);
      memcpy(&kp, r + 2 * NB + 4, 4);
      memcpy(&tree, r + 2 * NB + 8, 8);
      Ctx c;
      make_ctx(c, seed);
      wots_pk_from_sig(c, layer, tree, kp, r + 2 * NB + 16, m, pk);
      put(pk, NB);
    }
  }
}
#endif

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  std::string mode = argv[1];
  std::vector<u8> in = read_all(), out;
  if (mode == "rows") {
    // Records of (len u32, src offset u32, dst offset u32, src 4096 bytes, dst 4096 bytes):
    // the destination after hostio_to_host, then after hostio_from_host from the same source.
    const size_t rec = 12 + 2 * 4096;
    for (size_t o = 0; o + rec <= in.size(); o += rec) {
      u32 len, so, dof;
      memcpy(&len, &in[o], 4);
      memcpy(&so, &in[o + 4], 4);
      memcpy(&dof, &in[o + 8], 4);
      alignas(16) static u8 src[4096], dst[4096];
      for (int dir = 0; dir < 2; ++dir) {
        memcpy(src, &in[o + 12], 4096);
        memcpy(dst, &in[o + 12 + 4096], 4096);
        for (u32 lane = 0; lane < 32; ++lane) {
          if (dir == 0) hostio_to_host(src + so, dst + dof, len, lane);
          else hostio_from_host(src + so, dst + dof, len, lane);
        }
        out.insert(out.end(), dst, dst + 4096);
      }
    }
  }
#ifdef CTRU_N
  u32 n = 0;
  if (in.size() >= 4) memcpy(&n, &in[0], 4);
  const u8 *p = in.data() + 4;
  if (mode == "kbar") {
    // n keyinfo rows, n ciphertext rows -> n K-bar values.
    std::vector<u8> ki(p, p + (size_t)n * KEYINFO), ct(p + (size_t)n * KEYINFO, p + (size_t)n * (KEYINFO + CT_STRIDE));
    out.resize((size_t)n * 32);
    for (u32 b = 0; b < n; ++b) at(b), decaps_kbar(ct.data(), ki.data(), nullptr, out.data(), n);
  } else if (mode == "enc") {
    // n seeds e (32 bytes), n keyinfo rows -> m rows (MSG_STRIDE), K (32), r rows (NP).
    std::vector<u8> e(p, p + (size_t)n * 32), ki(p + (size_t)n * 32, p + (size_t)n * (32 + KEYINFO));
    std::vector<u8> msg((size_t)n * MSG_STRIDE), k((size_t)n * 32);
    std::vector<i8> r((size_t)n * NP);
    for (u32 b = 0; b < n; ++b) at(b), encaps_hash(e.data(), 0, ki.data(), nullptr, msg.data(), k.data(), r.data(), n);
    out.insert(out.end(), msg.begin(), msg.end());
    out.insert(out.end(), k.begin(), k.end());
    out.insert(out.end(), (u8 *)r.data(), (u8 *)r.data() + r.size());
  } else if (mode == "coins") {
    // A 32-byte key -> n seeds e (32 bytes each); nothing is written past them (guard bytes).
    std::vector<u8> key(p, p + 32);
    out.assign((size_t)n * 32 + 64, 0xA5);
    for (u32 t = 0; t < (n + 1) / 2; ++t) at(t), encaps_coins(key.data(), out.data(), n * 32);
    bool guard = true;
    for (size_t i = (size_t)n * 32; i < out.size(); ++i) guard = guard && out[i] == 0xA5;
    out.resize(guard ? (size_t)n * 32 : 0);
  } else if (mode == "kg") {
    // n seeds (64 bytes) -> f rows, g rows (NP each).
    std::vector<u8> seeds(p, p + (size_t)n * 64);
    std::vector<i8> f((size_t)n * NP), g((size_t)n * NP);
    for (u32 b = 0; b < n; ++b) at(b), keygen_sample(seeds.data(), f.data(), g.data(), n);
    out.insert(out.end(), (u8 *)f.data(), (u8 *)f.data() + f.size());
    out.insert(out.end(), (u8 *)g.data(), (u8 *)g.data() + g.size());
  }
#endif
#ifdef SLH_N
  slh_modes(mode, in, out);
#endif
  fwrite(out.data(), 1, out.size(), stdout);
  return out.empty() && !in.empty() ? 1 : 0;
}
