// Runs the ML-KEM kernels of kernels/mlkem.cu on the CPU for src/gpu/mlkem/emulated.rs, phase
// by phase as src/gpu/mlkem/*.rs launches them: the one-thread kernels a thread at a time, the
// block kernels a block at a time with every thread a fiber (fibers.h: real barriers).
// `mlkem MODE` reads the inputs on stdin and writes the outputs to stdout. Input: n (u32),
// one_key (u32: 1, every item uses key 0; 2, a key index array follows), then the mode's rows
// (layouts in emulated.rs).
#include "fibers.h"
#include "../keccak.cuh"
#include "../chacha.cuh"
#include "../mlkem.cu"
#include <string>
#include "stdin.h"
#include "grid.h"


int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const std::string mode = argv[1];
  const std::vector<u8> in = read_all();
  std::vector<u8> out;
  auto put = [&](const void *d, size_t len) { out.insert(out.end(), (const u8 *)d, (const u8 *)d + len); };
  if (in.size() < 8) return 1;
  u32 n, one_key;
  memcpy(&n, &in[0], 4);
  memcpy(&one_key, &in[4], 4);
  const u8 *p = in.data() + 8;
  u32 nkeys = one_key ? 1 : n;
  std::vector<u32> idx(n, 0);
  const u32 *key_idx = one_key ? idx.data() : nullptr;
  // one_key 2: a key index array, as the engine sends for repeated keys: nkeys (u32), then
  // n indices (u32), then nkeys key rows.
  if (one_key == 2) {
    if (in.size() < 12 + (size_t)n * 4) return 1;
    memcpy(&nkeys, p, 4);
    memcpy(idx.data(), p + 4, (size_t)n * 4);
    p += 4 + (size_t)n * 4;
  }
  auto amat = std::vector<u16>((size_t)nkeys * K * K * 256);
  auto coins = buf((size_t)n * 32), noise = buf((size_t)n * (2 * K + 1) * NOISE_SLOT);
  if (mode == "mlkem_keygen") {
    // n seeds d || z -> n ek rows, n dk rows.
    auto seeds = buf((size_t)n * 64), rs = buf((size_t)n * 64), ek = buf((size_t)n * EK_LEN), dk = buf((size_t)n * DK_LEN);
    memcpy(b8(seeds), p, (size_t)n * 64);
    each_thread(n, [&] { mlkem_keygen_g(b8(seeds), b8(rs), n); });
    each_thread(n * K * K, [&] { mlkem_expand_a(b8(rs), 64, n, amat.data()); });
    each_thread(n * 2 * K, [&] { mlkem_prf(b8(rs) + 32, 64, 2 * K, 2 * K, b8(noise), n); });
    each_block(n, NT, [&] { mlkem_keygen_main(b8(rs), amat.data(), b8(noise), b8(ek), b8(dk)); });
    each_thread(n, [&] { mlkem_keygen_finish(b8(seeds), b8(ek), b8(dk), n); });
    put(b8(ek), (size_t)n * EK_LEN);
    put(b8(dk), (size_t)n * DK_LEN);
  } else if (mode == "mlkem_encaps") {
    // nkeys ek rows, n messages m -> nkeys check results (u32), n ciphertexts, n shared secrets.
    auto ek = buf((size_t)nkeys * EK_LEN), msg = buf((size_t)n * 32), hek = buf((size_t)nkeys * 32);
    auto ct = buf((size_t)n * CT_LEN), ss = buf((size_t)n * 32);
    std::vector<u32> ok(nkeys);
    memcpy(b8(ek), p, (size_t)nkeys * EK_LEN);
    memcpy(b8(msg), p + (size_t)nkeys * EK_LEN, (size_t)n * 32);
    each_thread(nkeys, [&] { mlkem_ek_prep(b8(ek), nkeys, b8(hek), ok.data()); });
    each_thread(nkeys * K * K, [&] { mlkem_expand_a(b8(ek) + POLY_BYTES * K, EK_LEN, nkeys, amat.data()); });
    each_thread(n, [&] { mlkem_encaps_g(b8(msg), key_idx, b8(hek), b8(ss), b8(coins), n); });
    each_thread(n * (2 * K + 1), [&] { mlkem_prf(b8(coins), 32, 2 * K + 1, K, b8(noise), n); });
    each_block(n, NT, [&] { mlkem_encaps_encrypt(b8(msg), key_idx, b8(ek), amat.data(), b8(noise), b8(ct)); });
    put(ok.data(), (size_t)nkeys * 4);
    put(b8(ct), (size_t)n * CT_LEN);
    put(b8(ss), (size_t)n * 32);
  } else if (mode == "mlkem_decaps") {
    // nkeys dk rows, n ciphertexts -> nkeys check results (u32), n shared secrets.
    auto dk = buf((size_t)nkeys * DK_LEN), ct = buf((size_t)n * CT_LEN), ss = buf((size_t)n * 32);
    auto msg = buf((size_t)n * 32), kk = buf((size_t)n * 64);
    std::vector<u32> ok(nkeys);
    memcpy(b8(dk), p, (size_t)nkeys * DK_LEN);
    memcpy(b8(ct), p + (size_t)nkeys * DK_LEN, (size_t)n * CT_LEN);
    each_thread(nkeys, [&] { mlkem_dk_prep(b8(dk), nkeys, ok.data()); });
    each_thread(nkeys * K * K, [&] { mlkem_expand_a(b8(dk) + 2 * POLY_BYTES * K, DK_LEN, nkeys, amat.data()); });
    each_block(n, NT, [&] { mlkem_decrypt(b8(ct), key_idx, b8(dk), b8(msg)); });
    each_thread(n, [&] { mlkem_decaps_g(b8(ct), key_idx, b8(dk), b8(msg), b8(kk), b8(coins), n); });
    each_thread(n * (2 * K + 1), [&] { mlkem_prf(b8(coins), 32, 2 * K + 1, K, b8(noise), n); });
    each_block(n, NT, [&] { mlkem_decaps_check(b8(ct), key_idx, b8(dk), amat.data(), b8(msg), b8(noise), b8(kk), ok.data(), b8(ss)); });
    put(ok.data(), (size_t)nkeys * 4);
    put(b8(ss), (size_t)n * 32);
  } else if (mode == "mlkem_coins") {
    // A 32-byte key -> n messages (32 bytes each), as mlkem_coins writes them.
    std::vector<u8> m((size_t)n * 32 + 64, 0);
    each_thread((n + 1) / 2, [&] { mlkem_coins(p, m.data(), n * 32); });
    put(m.data(), (size_t)n * 32);
  }
  fwrite(out.data(), 1, out.size(), stdout);
  return out.empty() ? 1 : 0;
}
