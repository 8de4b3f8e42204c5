// Emulator driver for kernels/ctru.cu: reads KAT lines "seed e pk sk ct ss ss_dec [ct_bad
// ss_reject]" (hex) and runs keygen, encaps and decaps through the kernels with both product
// engines (CUDA-core mul_cc and Tensor-Core mul_tc), printing one verdict line per case.
#define CTRU_EMU
#include "ctru_shim.h"
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include "../../kernels/keccak.cuh"
#include "../../kernels/ctru.cu"

using Bytes = std::vector<u8>;
static Bytes unhex(const std::string &s) {
  Bytes b(s.size() / 2);
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::stoi(s.substr(2 * i, 2), nullptr, 16);
  return b;
}
template <class T> static std::vector<T> buf(size_t n) { return std::vector<T>(n + 64); }
static unsigned blocks(size_t n, unsigned b) { return (unsigned)((n + b - 1) / b); }

// Product for `items` rows with one key: engine 0 = mul_cc, 1 = mul_tc.
static void product(int engine, const i16 *keyvec, u32 key, const i8 *lo, const i8 *hi, u16 *out,
                    bool mod_q2) {
  if (engine == 0) {
    launch(1, 256, [&] { mul_cc(keyvec + key * NP, nullptr, lo, hi, out, mod_q2, 1); });
    return;
  }
  auto mh = buf<i8>(NP * NP), ml = buf<i8>(NP * NP);
  launch(blocks(NP * NP, 256), 256, [&] { expand_key(keyvec, key, mod_q2 ? 1 : 2, mh.data(), ml.data()); });
  // 128 item rows (1 real, 127 zero) x all coefficient tiles.
  auto xl = buf<i8>(128 * NP), xh = buf<i8>(128 * NP);
  for (u32 i = 0; i < NP; ++i) { xl[i] = lo[i]; xh[i] = hi ? hi[i] : 0; }
  auto o = buf<u16>(128 * NP);
  launch(NP / 32, 128, [&] { mul_tc(xl.data(), xh.data(), ml.data(), mh.data(), !mod_q2, o.data(), 128); });
  for (u32 i = 0; i < NP; ++i) out[i] = o[i];
}

// Reference c = a b in R_q: schoolbook, fold (spec 4.1), residues in [0, q).
static std::vector<u16> mul_ref(const u16 *a, const u16 *b) {
  std::vector<long long> d(2 * N - 1);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) d[i + j] += (long long)a[i] * b[j];
  std::vector<u16> c(NP);
  for (int i = 0; i < N; ++i) {
    long long v = d[i] + (i >= 1 ? d[N + i - 1] : 0) + (i <= N - 2 ? d[N + i] : 0);
    c[i] = (u16)(((v % Q) + Q) % Q);
  }
  return c;
}

// mul_full (through tree_up with m = 2) against mul_ref: random rows and the extreme ones.
static int check_mul_full() {
  std::mt19937 rng(1);
  int bad = 0;
  for (int t = 0; t < 40; ++t) {
    auto in = buf<u16>(2 * NP), out = buf<u16>(NP);
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < N; ++i) {
        u16 v = (u16)(rng() % Q);
        if (t == 0) v = Q - 1;                  // all q-1
        if (t == 1) v = k ? Q - 1 : (Q - 1) / 2; // extreme centred magnitudes
        if (t == 2) v = (i == N - 1) ? 1 + k : 0; // x^(n-1) products (the wrap terms)
        in[k * NP + i] = v;
      }
    std::fill(out.begin(), out.end(), 0xABCD);
    launch(1, MF_T, [&] { tree_up(in.data(), out.data(), 2); });
    auto want = mul_ref(in.data(), in.data() + NP);
    if (memcmp(out.data(), want.data(), NP * 2)) ++bad;
  }
  std::cout << "mul_full vs schoolbook: 40 products, " << bad << " wrong" << std::endl;
  return bad;
}

// KeyGen of the m keys seeds[0..m) as the host runs it: sample, batch inversion over the
// product tree (tree_leaves, tree_up per level, tree_invert, tree_down per level), h = g f^-1
// (mul_cc), pack. Scratch rows start as garbage: the kernels must write every coefficient.
static void keygen_tree(const Bytes &seeds, u32 m, u8 *pk, u8 *sk) {
  std::vector<u32> size{m}, off{0};
  while (size.back() > 1) {
    off.push_back(off.back() + size.back());
    size.push_back((size.back() + 1) / 2);
  }
  u32 levels = size.size() - 1, rows = off.back() + size.back();
  auto fr = buf<i8>(m * NP), gr = buf<i8>(m * NP);
  launch(blocks(m, 32), 32, [&] { keygen_sample(seeds.data(), fr.data(), gr.data(), m); });
  auto tree = buf<u16>(rows * NP), inv = buf<u16>(rows * NP), finv = buf<u16>(m * NP);
  std::fill(tree.begin(), tree.end(), 0x5A5A);
  std::fill(inv.begin(), inv.end(), 0x5A5A);
  std::fill(finv.begin(), finv.end(), 0x5A5A);
  auto node = [&](u32 l) { return tree.data() + off[l] * NP; };
  auto inode = [&](u32 l) { return l ? inv.data() + off[l] * NP : finv.data(); };
  launch(blocks(m * NP, 256), 256, [&] { tree_leaves(fr.data(), node(0), m); });
  for (u32 l = 0; l < levels; ++l)
    launch(size[l + 1], MF_T, [&] { tree_up(node(l), node(l + 1), size[l]); });
  launch(1, 32, [&] { tree_invert(node(levels), (i16 *)inode(levels)); });
  for (u32 l = levels; l-- > 0;)
    launch(size[l], MF_T, [&] { tree_down(inode(l + 1), node(l), inode(l), size[l]); });
  auto h = buf<u16>(m * NP);
  launch(m, 256, [&] { mul_cc((const i16 *)finv.data(), nullptr, gr.data(), nullptr, h.data(), 0, m); });
  launch(blocks(m, 32), 32, [&] { keygen_pack(h.data(), fr.data(), seeds.data(), pk, sk, m); });
}

// Batch keygen through the tree for each chunk size in `ms` (comma separated): key i of a
// chunk is KAT case i mod cases, checked against that case's pk and sk.
static int tree_main(const std::vector<std::vector<std::string>> &cases, const char *ms) {
  int bad = check_mul_full();
  std::istringstream list(ms);
  std::string tok;
  while (std::getline(list, tok, ',')) {
    u32 m = std::stoul(tok), wrong = 0;
    Bytes seeds(m * 64);
    for (u32 i = 0; i < m; ++i) memcpy(&seeds[i * 64], unhex(cases[i % cases.size()][0]).data(), 64);
    auto pk = buf<u8>(m * PK_LEN), sk = buf<u8>(m * SK_LEN);
    keygen_tree(seeds, m, pk.data(), sk.data());
    for (u32 i = 0; i < m; ++i) {
      const auto &c = cases[i % cases.size()];
      wrong += memcmp(&pk[i * PK_LEN], unhex(c[2]).data(), PK_LEN) ||
               memcmp(&sk[i * SK_LEN], unhex(c[3]).data(), SK_LEN);
    }
    std::cout << "tree keygen m=" << m << ": " << m - wrong << "/" << m << " keys match pk and sk"
              << std::endl;
    bad += wrong;
  }
  return bad != 0;
}

int main(int argc, char **argv) {
  std::vector<std::vector<std::string>> all;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream ss(line);
    std::vector<std::string> f;
    std::string w;
    while (ss >> w) f.push_back(w);
    if (f.size() >= 7) all.push_back(f);
  }
  if (argc > 2 && std::string(argv[1]) == "tree") return tree_main(all, argv[2]);
  int engine = argc > 1 ? atoi(argv[1]) : 0;
  int bad = 0, cases = 0;
  for (const auto &f : all) {
    Bytes seed = unhex(f[0]), e = unhex(f[1]), pk = unhex(f[2]), sk = unhex(f[3]), ct = unhex(f[4]);
    Bytes kss = unhex(f[5]), ssdec = unhex(f[6]);
    std::string verdict;
    // KeyGen
    auto fr = buf<i8>(NP), gr = buf<i8>(NP);
    launch(1, 1, [&] { keygen_sample(seed.data(), fr.data(), gr.data(), 1); });
    auto finv = buf<i16>(NP);
    launch(1, 32, [&] { keygen_invert(fr.data(), finv.data(), 1); });
    auto h = buf<u16>(NP);
    product(0, finv.data(), 0, gr.data(), nullptr, h.data(), false);
    auto opk = buf<u8>(PK_LEN), osk = buf<u8>(SK_LEN);
    launch(1, 1, [&] { keygen_pack(h.data(), fr.data(), seed.data(), opk.data(), osk.data(), 1); });
    if (memcmp(opk.data(), pk.data(), PK_LEN)) verdict += " pk";
    if (memcmp(osk.data(), sk.data(), SK_LEN)) verdict += " sk";
    // Key data as the host prepares it.
    auto kh = buf<i16>(NP), kf = buf<i16>(NP);
    for (u32 i = 0; i < NP; ++i) { kh[i] = (i16)h[i]; kf[i] = fr[i]; }
    auto keyinfo = buf<u8>(KEYINFO);
    memcpy(keyinfo.data(), pk.data(), 33);
    memcpy(keyinfo.data() + 64, sk.data() + SK_LEN - 32, 32);
    // Encaps
    auto msg = buf<u8>(MSG_STRIDE), kout = buf<u8>(32);
    auto r = buf<i8>(NP);
    launch(1, 1, [&] { encaps_hash(e.data(), 0, keyinfo.data(), nullptr, msg.data(), kout.data(), r.data(), 1); });
    auto sigma = buf<u16>(NP);
    product(engine, kh.data(), 0, r.data(), nullptr, sigma.data(), false);
    auto oct = buf<u8>(CT_STRIDE);
    launch(1, 32, [&] { encaps_finish(sigma.data(), msg.data(), oct.data(), 1); });
    if (memcmp(oct.data(), ct.data(), CT_LEN)) verdict += " ct";
    if (memcmp(kout.data(), kss.data(), 32)) verdict += " ss";
    // Decaps (honest, then tampered)
    auto decaps = [&](const Bytes &c, const Bytes &want, const char *what) {
      auto cin = buf<u8>(CT_STRIDE);
      std::fill(cin.begin(), cin.end(), 0);
      memcpy(cin.data(), c.data(), CT_LEN);
      auto lo = buf<i8>(NP), hi = buf<i8>(NP);
      launch(1, 1, [&] { decaps_unpack(cin.data(), lo.data(), hi.data(), 1); });
      auto v = buf<u16>(NP);
      product(engine, kf.data(), 0, lo.data(), hi.data(), v.data(), true);
      auto m2 = buf<u8>(MSG_STRIDE), k2 = buf<u8>(32), kb = buf<u8>(32), out = buf<u8>(32);
      auto r2 = buf<i8>(NP);
      launch(1, 1, [&] { decaps_decode(v.data(), m2.data(), 1); });
      launch(1, 1, [&] { encaps_hash(nullptr, 1, keyinfo.data(), nullptr, m2.data(), k2.data(), r2.data(), 1); });
      auto s2 = buf<u16>(NP);
      product(engine, kh.data(), 0, r2.data(), nullptr, s2.data(), false);
      launch(1, 1, [&] { decaps_kbar(cin.data(), keyinfo.data(), nullptr, kb.data(), 1); });
      launch(1, 1, [&] { decaps_finish(s2.data(), m2.data(), cin.data(), k2.data(), kb.data(), out.data(), 1); });
      if (memcmp(out.data(), want.data(), 32)) verdict += what;
    };
    decaps(ct, ssdec, " ss_dec");
    if (f.size() >= 9) decaps(unhex(f[7]), unhex(f[8]), " ss_reject");
    ++cases;
    if (!verdict.empty()) ++bad;
    std::cout << "case " << cases - 1 << (verdict.empty() ? " OK" : " FAIL:" + verdict) << std::endl;
  }
  std::cout << cases << " cases, " << bad << " failed" << std::endl;
  return bad != 0;
}
