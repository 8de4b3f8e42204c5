// ChaCha20 on the GPU, for randomness drawn there from a key of OS randomness (so per-item
// coins never exist on the host). D. J. Bernstein's original layout: constants, the 8-word
// key, a 64-bit block counter in words 12-13 and a 64-bit stream number in words 14-15, the
// layout of rand_chacha's ChaCha20Rng (which crate::rng::fill_bulk uses on the host).

__device__ __forceinline__ u32 chacha_rotl(u32 x, u32 r) { return (x << r) | (x >> (32 - r)); }

__device__ __forceinline__ void chacha_qr(u32 &a, u32 &b, u32 &c, u32 &d) {
  a += b; d = chacha_rotl(d ^ a, 16);
  c += d; b = chacha_rotl(b ^ c, 12);
  a += b; d = chacha_rotl(d ^ a, 8);
  c += d; b = chacha_rotl(b ^ c, 7);
}

// Block `counter` of stream `stream` under `key` (32 bytes, little-endian words): 16 words.
__device__ void chacha20_block(const u8 *key, u64 stream, u64 counter, u32 out[16]) {
  u32 in[16];
  in[0] = 0x61707865u; in[1] = 0x3320646eu; in[2] = 0x79622d32u; in[3] = 0x6b206574u;
#pragma unroll
  for (u32 i = 0; i < 8; ++i)
    in[4 + i] = (u32)key[4 * i] | (u32)key[4 * i + 1] << 8 | (u32)key[4 * i + 2] << 16 |
                (u32)key[4 * i + 3] << 24;
  in[12] = (u32)counter; in[13] = (u32)(counter >> 32);
  in[14] = (u32)stream; in[15] = (u32)(stream >> 32);
#pragma unroll
  for (u32 i = 0; i < 16; ++i) out[i] = in[i];
#pragma unroll
  for (u32 round = 0; round < 10; ++round) {
    chacha_qr(out[0], out[4], out[8], out[12]);
    chacha_qr(out[1], out[5], out[9], out[13]);
    chacha_qr(out[2], out[6], out[10], out[14]);
    chacha_qr(out[3], out[7], out[11], out[15]);
    chacha_qr(out[0], out[5], out[10], out[15]);
    chacha_qr(out[1], out[6], out[11], out[12]);
    chacha_qr(out[2], out[7], out[8], out[13]);
    chacha_qr(out[3], out[4], out[9], out[14]);
  }
#pragma unroll
  for (u32 i = 0; i < 16; ++i) out[i] += in[i];
}
