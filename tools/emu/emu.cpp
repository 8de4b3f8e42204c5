// Emulator driver: reads "K xi", "S sk mu rnd", "R sk rnd M'", "V pk sig M'" or "U pk sig mu"
// lines (hex), runs each kind as one batch through the kernels, prints one result line per
// input. "R" signs M' as the GPU backend does, with mu hashed by `sign_mu` from sk's tr.
#include "shim.h"
#include "warp_shim.h"
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include "../../kernels/keccak.cuh"
#include "../../kernels/mldsa.cu"

using Bytes = std::vector<u8>;
static Bytes unhex(const std::string &s) {
  Bytes b(s.size() / 2);
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::stoi(s.substr(2 * i, 2), nullptr, 16);
  return b;
}
static std::string hex(const u8 *p, size_t n) {
  static const char *d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) { s += d[p[i] >> 4]; s += d[p[i] & 15]; }
  return s;
}
template <class T> static std::vector<T> buf(size_t n) { return std::vector<T>(n + 16); }
static unsigned blocks(size_t n, unsigned b) { return (unsigned)((n + b - 1) / b); }

int main() {
  std::vector<std::vector<std::string>> lines;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream ss(line);
    std::vector<std::string> f;
    std::string w;
    while (ss >> w) f.push_back(w);
    if (!f.empty()) lines.push_back(f);
  }
  std::map<size_t, std::string> out;
  // keygen
  {
    std::vector<size_t> ids;
    for (size_t i = 0; i < lines.size(); ++i) if (lines[i][0] == "K") ids.push_back(i);
    u32 n = ids.size();
    if (n) {
      auto xi = buf<u64>(n * 4); auto seeds = buf<u64>(n * 16);
      auto a = buf<u32>((size_t)n * K * L * N); auto s = buf<i32>((size_t)n * (K + L) * N);
      auto pk = buf<u64>(n * PK_LEN / 8); auto sk = buf<u64>(n * SK_LEN / 8);
      for (u32 i = 0; i < n; ++i) { auto b = unhex(lines[ids[i]][1]); memcpy((u8 *)xi.data() + 32 * i, b.data(), 32); }
      launch(blocks(n, ST), ST, [&] { keygen_seed((u8 *)xi.data(), (u8 *)seeds.data(), n); });
      launch(blocks(n * K * L, ST), ST, [&] { expand_a((u8 *)seeds.data(), 128, a.data(), n); });
      launch(blocks(n * (K + L), ST), ST, [&] { expand_s((u8 *)seeds.data(), s.data(), n); });
      launch(n, NT, [&] { keygen_main((u8 *)seeds.data(), a.data(), s.data(), (u8 *)pk.data(), (u8 *)sk.data(), n); });
      launch(blocks(n, ST), ST, [&] { keygen_tr((u8 *)pk.data(), (u8 *)sk.data(), n); });
      for (u32 i = 0; i < n; ++i)
        out[ids[i]] = hex((u8 *)pk.data() + i * PK_LEN, PK_LEN) + " " + hex((u8 *)sk.data() + i * SK_LEN, SK_LEN);
    }
  }
  // sign: "S" with mu given, then "R" with mu = H(tr || M') by sign_mu
  for (const std::string kind : {"S", "R"}) {
    std::vector<size_t> ids;
    for (size_t i = 0; i < lines.size(); ++i) if (lines[i][0] == kind) ids.push_back(i);
    u32 n = ids.size();
    if (n) {
      const u32 cap = std::max<u32>(n, 64);
      // Items with equal keys share one key row (the GPU backend shares a key handle's row).
      std::map<std::string, u32> key_of;
      std::vector<u32> kidx(n);
      for (u32 i = 0; i < n; ++i) kidx[i] = key_of.emplace(lines[ids[i]][1], (u32)key_of.size()).first->second;
      const u32 nk = key_of.size();
      auto sk = buf<u64>(nk * SK_LEN / 8); auto kin = buf<u64>(n * 16); auto rhopp = buf<u64>(n * 8);
      auto kbad = buf<u32>(nk);
      auto a = buf<u32>((size_t)nk * K * L * N);
      auto s1h = buf<i32>((size_t)nk * L * N), s2h = buf<i32>((size_t)nk * K * N), t0h = buf<i32>((size_t)nk * K * N);
      auto status = buf<u32>(n), best = buf<u32>(n), next = buf<u32>(n), ctr = buf<u32>(4);
      auto et = buf<u32>(cap), ea = buf<u32>(cap);
      auto y = buf<i32>((size_t)cap * L * N), w = buf<i32>((size_t)cap * K * N);
      auto hb = buf<u64>((size_t)cap * HBUF_LEN / 8), ct = buf<u64>((size_t)cap * 8);
      auto c = buf<u64>((size_t)cap * CM_WORDS); auto ok = buf<u8>(cap);
      auto slot = buf<u64>((size_t)cap * SIG_STRIDE / 8), sig = buf<u64>((size_t)n * SIG_STRIDE / 8);
      std::vector<u64> arena; std::vector<u64> off(n); std::vector<u32> mlen(n);
      for (u32 i = 0; i < n; ++i) {
        auto &f = lines[ids[i]];
        auto skb = unhex(f[1]);
        memcpy((u8 *)sk.data() + (size_t)kidx[i] * SK_LEN, skb.data(), SK_LEN);
        u8 *k = (u8 *)kin.data() + 128 * i;
        if (kind == "S") {
          auto mu = unhex(f[2]), rnd = unhex(f[3]);
          memcpy(k, skb.data() + 32, 32); memcpy(k + 32, rnd.data(), 32); memcpy(k + 64, mu.data(), 64);
        } else {
          auto rnd = unhex(f[2]), m = unhex(f.size() > 3 ? f[3] : "");
          memcpy(k + 32, rnd.data(), 32);
          off[i] = arena.size() * 8;
          size_t at = arena.size();
          arena.resize(at + (64 + m.size() + 7) / 8 + 1);
          memcpy((u8 *)(arena.data() + at) + 64, m.data(), m.size());
          mlen[i] = m.size();
        }
      }
      if (kind == "R")
        launch(blocks(n, ST), ST, [&] { sign_mu((u8 *)sk.data(), kidx.data(), (u8 *)arena.data(), off.data(), mlen.data(), (u8 *)kin.data(), n); });
      u32 *count = ctr.data(), *done = ctr.data() + 1, *nbad = ctr.data() + 2;
      launch(blocks(n, ST), ST, [&] { sign_rhopp((u8 *)kin.data(), (u8 *)rhopp.data(), n); });
      launch(blocks(nk * K * L, ST), ST, [&] { expand_a((u8 *)sk.data(), SK_LEN, a.data(), nk); });
      launch(nk, NT, [&] { sign_decode((u8 *)sk.data(), s1h.data(), s2h.data(), t0h.data(), kbad.data()); });
      launch(blocks(n, ST), ST, [&] { sign_init(kbad.data(), kidx.data(), status.data(), best.data(), next.data(), nbad, n); });
      u32 pending = n - *nbad, rounds = 0;
      while (pending > 0) {
        u32 spec = std::min<u32>(std::max<u32>(cap / pending, 1), 32);
        *count = 0; *done = 0;
        launch(blocks(n, ST), ST, [&] { sign_schedule(status.data(), best.data(), next.data(), et.data(), ea.data(), count, done, spec, n); });
        u32 m = pending * spec;
        launch(blocks(m * L, ST), ST, [&] { expand_mask((u8 *)rhopp.data(), et.data(), ea.data(), count, y.data()); });
        launch(m, NT, [&] { sign_w(a.data(), kidx.data(), (u8 *)kin.data(), y.data(), et.data(), count, w.data(), (u8 *)hb.data()); });
        launch(blocks(m, ST), ST, [&] { sign_challenge((u8 *)hb.data(), count, (u8 *)ct.data(), c.data()); });
        launch(m, NT, [&] { sign_z(kidx.data(), s1h.data(), s2h.data(), t0h.data(), y.data(), w.data(), (u8 *)ct.data(), c.data(), et.data(), ea.data(), count, best.data(), done, ok.data(), (u8 *)slot.data()); });
        launch(m, NT, [&] { sign_commit(et.data(), ea.data(), count, best.data(), ok.data(), (u8 *)slot.data(), (u8 *)sig.data()); });
        pending -= *done;
        ++rounds;
      }
      std::cerr << "sign rounds " << rounds << "\n";
      for (u32 i = 0; i < n; ++i)
        out[ids[i]] = status[i] == ST_OK ? hex((u8 *)sig.data() + i * SIG_STRIDE, SIG_LEN) + " " + std::to_string(best[i]) : "BADKEY";
    }
  }
  // verify
  {
    std::vector<size_t> ids;
    for (size_t i = 0; i < lines.size(); ++i) if (lines[i][0] == "V" || lines[i][0] == "U") ids.push_back(i);
    u32 n = ids.size();
    if (n) {
      std::map<std::string, u32> key_of;
      std::vector<u32> kidx(n);
      for (u32 i = 0; i < n; ++i) kidx[i] = key_of.emplace(lines[ids[i]][1], (u32)key_of.size()).first->second;
      const u32 nk = key_of.size();
      auto pk = buf<u64>(nk * PK_LEN / 8); auto sig = buf<u64>(n * SIG_STRIDE / 8);
      auto tr = buf<u64>(nk * 8);
      std::vector<u64> arena; std::vector<u64> off(n); std::vector<u32> mlen(n);
      for (u32 i = 0; i < n; ++i) {
        auto &f = lines[ids[i]];
        auto p = unhex(f[1]), s = unhex(f[2]), m = unhex(f.size() > 3 ? f[3] : "");
        memcpy((u8 *)pk.data() + (size_t)kidx[i] * PK_LEN, p.data(), PK_LEN);
        memcpy((u8 *)sig.data() + i * SIG_STRIDE, s.data(), SIG_LEN);
        off[i] = arena.size() * 8;
        size_t lanes = (64 + m.size() + 7) / 8;
        size_t at = arena.size();
        arena.resize(at + lanes + 1);
        if (f[0] == "U") { memcpy((u8 *)(arena.data() + at), m.data(), 64); mlen[i] = 0xFFFFFFFFu; }
        else { memcpy((u8 *)(arena.data() + at) + 64, m.data(), m.size()); mlen[i] = m.size(); }
      }
      auto hb = buf<u64>((size_t)n * HBUF_LEN / 8); auto c = buf<u64>((size_t)n * CM_WORDS);
      auto hint = buf<u32>((size_t)n * K * 8); auto vstat = buf<u32>(n), res = buf<u32>(n);
      auto a = buf<u32>((size_t)nk * K * L * N);
      // tr from the table when keys are shared (as the GPU backend does), else hashed per item.
      u8 *trp = nk < n ? (u8 *)tr.data() : nullptr;
      if (trp) launch(blocks(nk, ST), ST, [&] { verify_tr((u8 *)pk.data(), trp, nk); });
      launch(blocks(n, ST), ST, [&] { verify_prep((u8 *)pk.data(), trp, kidx.data(), (u8 *)sig.data(), (u8 *)arena.data(), off.data(), mlen.data(), (u8 *)hb.data(), c.data(), hint.data(), vstat.data(), n); });
      launch(blocks(nk * K * L, ST), ST, [&] { expand_a((u8 *)pk.data(), PK_LEN, a.data(), nk); });
      launch(n, NT, [&] { verify_w(a.data(), kidx.data(), (u8 *)pk.data(), (u8 *)sig.data(), c.data(), hint.data(), vstat.data(), (u8 *)hb.data(), n); });
      launch(blocks(n, ST), ST, [&] { verify_final((u8 *)hb.data(), (u8 *)sig.data(), vstat.data(), res.data(), n); });
      for (u32 i = 0; i < n; ++i) out[ids[i]] = std::to_string(res[i]);
    }
  }
  for (auto &[i, s] : out) std::cout << s << "\n";
}
