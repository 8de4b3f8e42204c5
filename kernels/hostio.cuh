// Host I/O kernels: per-item rows moved between device buffers and the caller's registered
// host memory (page-locked, mapped into the device's address space; with unified addressing a
// registered host address is a device address). One gather kernel reads rows from wherever
// the caller keeps them, over PCIe, instead of the host copying each row into a staging buffer
// first; the scatter kernel writes results straight into the caller's rows.
//
// One warp per row. The host side of every access is 16-byte aligned whatever the row's
// address and length (a few head and tail bytes apart), so a warp's accesses coalesce into whole
// PCIe requests: callers' rows lie anywhere (a serving request's ciphertext at an odd address,
// a 952-byte row), and byte-wide PCIe writes took more of a serving chunk's GPU time than its
// arithmetic. The device side takes whatever alignment that leaves.

// A word at any byte address of device memory (two aligned loads and a funnel shift; the second
// load starts inside the 4 bytes asked for, so it stays inside the buffer).
__device__ __forceinline__ u32 hostio_load_u32(const u8 *p) {
  size_t a = (size_t)p;
  const u32 *w = (const u32 *)(a & ~(size_t)3);
  u32 sh = (u32)(a & 3) * 8;
  return sh ? __funnelshift_r(w[0], w[1], sh) : w[0];
}

// A word to any byte address of device memory.
__device__ __forceinline__ void hostio_store_u32(u8 *p, u32 v) {
  if (((size_t)p & 3) == 0) {
    *(u32 *)p = v;
  } else {
    p[0] = (u8)v;
    p[1] = (u8)(v >> 8);
    p[2] = (u8)(v >> 16);
    p[3] = (u8)(v >> 24);
  }
}

// Bytes before the first 16-byte boundary at or after `host` (at most `len`).
__device__ __forceinline__ u32 hostio_head(const void *host, u32 len) {
  u32 head = (u32)((16 - ((size_t)host & 15)) & 15);
  return head < len ? head : len;
}

// Bytes [from, to) one per lane: a row's unaligned ends, or a whole row of a warp's width (a
// shared secret, a message digest), which is one access already.
__device__ __forceinline__ void hostio_bytes(const u8 *src, u8 *dst, u32 from, u32 to, u32 lane) {
  for (u32 i = from + lane; i < to; i += 32) dst[i] = src[i];
}

// `len` bytes of device memory at `src` -> host memory at `dst`.
__device__ __forceinline__ void hostio_to_host(const u8 *src, u8 *dst, u32 len, u32 lane) {
  if (len <= 32) return hostio_bytes(src, dst, 0, len, lane);
  u32 head = hostio_head(dst, len), body = (len - head) / 16;
  hostio_bytes(src, dst, 0, head, lane);
  const u8 *s = src + head;
  uint4 *d = (uint4 *)(dst + head);
  for (u32 i = lane; i < body; i += 32) {
    const u8 *p = s + 16 * i;
    d[i] = make_uint4(hostio_load_u32(p), hostio_load_u32(p + 4), hostio_load_u32(p + 8),
                      hostio_load_u32(p + 12));
  }
  hostio_bytes(src, dst, head + 16 * body, len, lane);
}

// `len` bytes of host memory at `src` -> device memory at `dst`.
__device__ __forceinline__ void hostio_from_host(const u8 *src, u8 *dst, u32 len, u32 lane) {
  if (len <= 32) return hostio_bytes(src, dst, 0, len, lane);
  u32 head = hostio_head(src, len), body = (len - head) / 16;
  hostio_bytes(src, dst, 0, head, lane);
  const uint4 *s = (const uint4 *)(src + head);
  u8 *d = dst + head;
  for (u32 i = lane; i < body; i += 32) {
    uint4 v = s[i];
    u8 *p = d + 16 * i;
    hostio_store_u32(p, v.x);
    hostio_store_u32(p + 4, v.y);
    hostio_store_u32(p + 8, v.z);
    hostio_store_u32(p + 12, v.w);
  }
  hostio_bytes(src, dst, head + 16 * body, len, lane);
}

// Row i of `dst` (at i * stride) <- `len` bytes at host address src[i]; a 0 address skips row i.
extern "C" __global__ void __launch_bounds__(256) gather_rows(const u64 *src, u32 len, u8 *dst,
                                                              u32 stride, u32 n) {
  u32 row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (row >= n) return;
  const u8 *s = (const u8 *)src[row];
  if (s == 0) return;
  hostio_from_host(s, dst + (size_t)row * stride, len, threadIdx.x & 31);
}

// `len` bytes of row i of `src` (at i * stride) -> host address dst[i]; a 0 address skips row i.
extern "C" __global__ void __launch_bounds__(256) scatter_rows(const u8 *src, u32 stride, u32 len,
                                                               const u64 *dst, u32 n) {
  u32 row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (row >= n) return;
  u8 *d = (u8 *)dst[row];
  if (d == 0) return;
  hostio_to_host(src + (size_t)row * stride, d, len, threadIdx.x & 31);
}
