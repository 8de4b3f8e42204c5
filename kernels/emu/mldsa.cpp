// Runs the ML-DSA kernels of kernels/mldsa.cu on the CPU for src/gpu/mldsa/emulated.rs: the
// NTT, the inverse NTT and the matrix-vector product as the poly kernels call them, and key
// generation, signing and verification launch by launch as src/gpu/mldsa/{keygen,sign,
// verify}.rs queue them; block kernels a block at a time, every thread a fiber (fibers.h).
// `mldsa MODE` reads the inputs on stdin (little-endian i32 coefficients) and writes the
// outputs to stdout:
//   ntt, intt: cnt (u32), then cnt polynomials; out: the cnt transformed polynomials.
//   matvec: A (K x L polynomials, row-major), then v (L polynomials); out: A o v (K).
//   decompose: no input; out: r1, r0 of Decompose(r) for every r in [0, q).
//   keygen: n (u32), n seeds xi (32 bytes); out: n pk rows, n sk rows.
//   verify: n, nkeys (u32 each), n key indices (u32), nkeys pk rows, n signature rows
//     (SIG_STRIDE), then the messages as for sign; out: n results (u32, 0 = valid).
//   sign: n, nkeys, fill (u32 each), n key indices (u32), nkeys sk rows, n kin rows (K || rnd
//     || mu, 128 bytes, rnd set), then the messages as Regions::write lays them out (n u64
//     offsets, n u32 lengths, the regions); out: n signature rows (SIG_STRIDE), n statuses.
#include "fibers.h"
#include "../keccak.cuh"
#include "../mldsa.cu"
#include <string>
#include "stdin.h"
#include "grid.h"

// Signs as sign::sign_chunk and sign::sign_dev do after staging: mu, rho'', ExpandA and the
// key decoding, then rounds of attempts (speculative ones when few tasks remain, `fill` at
// least per round) until every task has its smallest successful attempt or is done.
static bool sign(const std::vector<u8> &in, std::vector<u8> &out);
// Keygen as keygen::keygen_dev; verification as verify::verify_dev (tr hashed once per key
// when keys are shared, else per item).
static bool keygen(const std::vector<u8> &in, std::vector<u8> &out);
static bool verify(const std::vector<u8> &in, std::vector<u8> &out);

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const std::string mode = argv[1];
  const std::vector<u8> in = read_all();
  std::vector<i32> out;
  if (mode == "ntt" || mode == "intt") {
    u32 cnt;
    if (in.size() < 4) return 1;
    memcpy(&cnt, in.data(), 4);
    if (in.size() != 4 + (size_t)cnt * N * 4) return 1;
    out.resize((size_t)cnt * N);
    memcpy(out.data(), in.data() + 4, out.size() * 4);
    fib::run_block(0, NT, [&] {
      __shared__ i32 z[N];
      load_zetas(z);
      if (mode == "ntt") ntt_polys(out.data(), cnt, z);
      else intt_polys(out.data(), cnt, z);
    });
  } else if (mode == "matvec") {
    if (in.size() != (size_t)(K * L + L) * N * 4) return 1;
    const u32 *a = (const u32 *)in.data();
    std::vector<i32> v(L * N);
    memcpy(v.data(), in.data() + (size_t)K * L * N * 4, v.size() * 4);
    out.resize((size_t)K * N);
    fib::run_block(0, NT, [&] {
      const int tid = threadIdx.x;
      matvec(a, v.data(), tid, [&](int i, i32 s) { out[i * N + tid] = s; });
    });
  } else if (mode == "decompose") {
    out.resize(2 * (size_t)Q);
    for (i32 r = 0; r < Q; ++r) out[2 * r] = decompose(r, &out[2 * r + 1]);
  } else if (mode == "keygen" || mode == "sign" || mode == "verify") {
    std::vector<u8> bytes;
    const bool ok = mode == "keygen" ? keygen(in, bytes) : mode == "sign" ? sign(in, bytes) : verify(in, bytes);
    if (!ok) return 1;
    fwrite(bytes.data(), 1, bytes.size(), stdout);
    return 0;
  } else {
    return 2;
  }
  fwrite(out.data(), 4, out.size(), stdout);
  return 0;
}

static bool sign(const std::vector<u8> &in, std::vector<u8> &out) {
  if (in.size() < 12) return false;
  u32 n, nkeys, fill;
  memcpy(&n, &in[0], 4);
  memcpy(&nkeys, &in[4], 4);
  memcpy(&fill, &in[8], 4);
  const size_t head = 12 + (size_t)n * 4 + (size_t)nkeys * SK_LEN + (size_t)n * 128 + (size_t)n * 12;
  if (n == 0 || in.size() < head) return false;
  const u8 *p = in.data() + 12;
  auto take = [&](std::vector<u64> &b, size_t len) { memcpy(b8(b), p, len); p += len; };
  const u32 cap = n > fill ? n : fill;
  auto kidx = buf((size_t)n * 4), sk = buf((size_t)nkeys * SK_LEN), kin = buf((size_t)n * 128);
  auto off = buf((size_t)n * 8), len = buf((size_t)n * 4), arena = buf(in.size() - head);
  take(kidx, (size_t)n * 4);
  take(sk, (size_t)nkeys * SK_LEN);
  take(kin, (size_t)n * 128);
  take(off, (size_t)n * 8);
  take(len, (size_t)n * 4);
  take(arena, in.size() - head);
  auto rhopp = buf((size_t)n * 64), a = buf((size_t)nkeys * K * L * N * 4);
  auto s1h = buf((size_t)nkeys * L * N * 4), s2h = buf((size_t)nkeys * K * N * 4), t0h = buf((size_t)nkeys * K * N * 4);
  auto kbad = buf((size_t)nkeys * 4), status = buf((size_t)n * 4), best = buf((size_t)n * 4), next = buf((size_t)n * 4);
  auto sig = buf((size_t)n * SIG_STRIDE);
  auto et = buf((size_t)cap * 4), ea = buf((size_t)cap * 4), y = buf((size_t)cap * L * N * 4), w = buf((size_t)cap * K * N * 4);
  auto hbuf = buf((size_t)cap * HBUF_LEN), ctilde = buf((size_t)cap * 64), c = buf((size_t)cap * CM_WORDS * 8);
  auto ok = buf(cap), slot = buf((size_t)cap * SIG_STRIDE);
  u32 ctr[4] = {0, 0, 0, 0}; // entries this round, tasks done this round, bad keys
  const u32 *ki = (const u32 *)b8(kidx);
  u32 *st = (u32 *)b8(status), *bs = (u32 *)b8(best), *nx = (u32 *)b8(next), *et32 = (u32 *)b8(et), *ea32 = (u32 *)b8(ea);
  each_thread(n, [&] { sign_mu(b8(sk), ki, b8(arena), off.data(), (const u32 *)b8(len), b8(kin), n); });
  each_thread(n, [&] { sign_rhopp(b8(kin), b8(rhopp), n); });
  each_thread(nkeys * K * L, [&] { expand_a(b8(sk), SK_LEN, (u32 *)b8(a), nkeys); });
  each_block(nkeys, NT, [&] { sign_decode(b8(sk), (i32 *)b8(s1h), (i32 *)b8(s2h), (i32 *)b8(t0h), (u32 *)b8(kbad)); });
  each_thread(n, [&] { sign_init((const u32 *)b8(kbad), ki, st, bs, nx, &ctr[2], n); });
  u32 pending = n - ctr[2];
  const u32 max_rounds = MAX_ATTEMPTS + 1;
  for (u32 rounds = 1; pending > 0; ++rounds) {
    // As the host: (cap / pending) clamped to [1, MAX_SPEC = 32]; 0 past the bound.
    u32 spec = 0;
    if (rounds <= max_rounds) spec = cap / pending < 1 ? 1 : cap / pending > 32 ? 32 : cap / pending;
    const u32 m = pending * spec;
    ctr[0] = ctr[1] = 0;
    each_thread(n, [&] { sign_schedule(st, bs, nx, et32, ea32, &ctr[0], &ctr[1], spec, n); });
    if (spec == 0) break;
    each_thread(m * L, [&] { expand_mask(b8(rhopp), et32, ea32, &ctr[0], (i32 *)b8(y)); });
    each_block(m, SIGN_W_NT, [&] { sign_w((const u32 *)b8(a), ki, b8(kin), (const i32 *)b8(y), et32, &ctr[0], (i32 *)b8(w), b8(hbuf)); });
    each_thread(m, [&] { sign_challenge(b8(hbuf), &ctr[0], b8(ctilde), c.data()); });
    each_block(m, SIGN_Z_NT, [&] {
      sign_z(ki, (const i32 *)b8(s1h), (const i32 *)b8(s2h), (const i32 *)b8(t0h), (const i32 *)b8(y), (const i32 *)b8(w), b8(ctilde), c.data(), et32, ea32, &ctr[0], bs, &ctr[1], b8(ok), b8(slot));
    });
    each_block(m, NT, [&] { sign_commit(et32, ea32, &ctr[0], bs, b8(ok), b8(slot), b8(sig)); });
    pending -= ctr[1];
  }
  out.assign(b8(sig), b8(sig) + (size_t)n * SIG_STRIDE);
  out.insert(out.end(), b8(status), b8(status) + (size_t)n * 4);
  return true;
}

static bool keygen(const std::vector<u8> &in, std::vector<u8> &out) {
  if (in.size() < 4) return false;
  u32 n;
  memcpy(&n, &in[0], 4);
  if (n == 0 || in.size() != 4 + (size_t)n * 32) return false;
  auto xi = buf((size_t)n * 32), seeds = buf((size_t)n * 128), a = buf((size_t)n * K * L * N * 4);
  auto s = buf((size_t)n * (K + L) * N * 4), pk = buf((size_t)n * PK_LEN), sk = buf((size_t)n * SK_LEN);
  memcpy(b8(xi), &in[4], (size_t)n * 32);
  each_thread(n, [&] { keygen_seed(b8(xi), b8(seeds), n); });
  each_thread(n * K * L, [&] { expand_a(b8(seeds), 128, (u32 *)b8(a), n); });
  each_thread(n * (K + L), [&] { expand_s(b8(seeds), (i32 *)b8(s), n); });
  each_block(n, NT, [&] { keygen_main(b8(seeds), (const u32 *)b8(a), (const i32 *)b8(s), b8(pk), b8(sk), n); });
  each_thread(n, [&] { keygen_tr(b8(pk), b8(sk), n); });
  out.assign(b8(pk), b8(pk) + (size_t)n * PK_LEN);
  out.insert(out.end(), b8(sk), b8(sk) + (size_t)n * SK_LEN);
  return true;
}

static bool verify(const std::vector<u8> &in, std::vector<u8> &out) {
  if (in.size() < 8) return false;
  u32 n, nkeys;
  memcpy(&n, &in[0], 4);
  memcpy(&nkeys, &in[4], 4);
  const size_t head = 8 + (size_t)n * 4 + (size_t)nkeys * PK_LEN + (size_t)n * SIG_STRIDE + (size_t)n * 12;
  if (n == 0 || nkeys == 0 || in.size() < head) return false;
  const u8 *p = in.data() + 8;
  auto take = [&](std::vector<u64> &b, size_t len) { memcpy(b8(b), p, len); p += len; };
  auto kidx = buf((size_t)n * 4), pk = buf((size_t)nkeys * PK_LEN), sig = buf((size_t)n * SIG_STRIDE);
  auto off = buf((size_t)n * 8), len = buf((size_t)n * 4), arena = buf(in.size() - head);
  take(kidx, (size_t)n * 4);
  take(pk, (size_t)nkeys * PK_LEN);
  take(sig, (size_t)n * SIG_STRIDE);
  take(off, (size_t)n * 8);
  take(len, (size_t)n * 4);
  take(arena, in.size() - head);
  auto hbuf = buf((size_t)n * HBUF_LEN), c = buf((size_t)n * CM_WORDS * 8), hint = buf((size_t)n * K * 8 * 4);
  auto vstat = buf((size_t)n * 4), a = buf((size_t)nkeys * K * L * N * 4), result = buf((size_t)n * 4), trs = buf((size_t)nkeys * 64);
  const u32 *ki = (const u32 *)b8(kidx);
  u8 *tr = nullptr;
  if (nkeys < n) {
    tr = b8(trs);
    each_thread(nkeys, [&] { verify_tr(b8(pk), tr, nkeys); });
  }
  each_thread(n, [&] {
    verify_prep(b8(pk), tr, ki, b8(sig), b8(arena), off.data(), (const u32 *)b8(len), b8(hbuf), c.data(), (u32 *)b8(hint), (u32 *)b8(vstat), n);
  });
  each_thread(nkeys * K * L, [&] { expand_a(b8(pk), PK_LEN, (u32 *)b8(a), nkeys); });
  each_block(n, NT, [&] { verify_w((const u32 *)b8(a), ki, b8(pk), b8(sig), c.data(), (const u32 *)b8(hint), (u32 *)b8(vstat), b8(hbuf), n); });
  each_thread(n, [&] { verify_final(b8(hbuf), b8(sig), (const u32 *)b8(vstat), (u32 *)b8(result), n); });
  out.assign(b8(result), b8(result) + (size_t)n * 4);
  return true;
}
