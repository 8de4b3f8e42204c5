// Emulator driver for kernels/ctru.cu: reads KAT lines "seed e pk sk ct ss ss_dec [ct_bad
// ss_reject]" (hex) and runs keygen, encaps and decaps through the kernels with both product
// engines (CUDA-core mul_cc and Tensor-Core mul_tc), printing one verdict line per case.
#define CTRU_EMU
#include "ctru_shim.h"
#include <iostream>
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

int main(int argc, char **argv) {
  int engine = argc > 1 ? atoi(argv[1]) : 0;
  std::string line;
  int bad = 0, cases = 0;
  while (std::getline(std::cin, line)) {
    std::istringstream ss(line);
    std::vector<std::string> f;
    std::string w;
    while (ss >> w) f.push_back(w);
    if (f.size() < 7) continue;
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
    launch(1, 1, [&] { encaps_finish(sigma.data(), msg.data(), oct.data(), 1); });
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
