// Host I/O kernels: per-item rows moved between device buffers and the caller's registered
// host memory (page-locked, mapped into the device's address space; with unified addressing a
// registered host address is a device address). One gather kernel reads rows from wherever
// the caller keeps them, over PCIe, instead of the host copying each row into a staging buffer
// first; the scatter kernel writes results straight into the caller's rows.
//
// One warp per row, the load width chosen from the alignment of both ends (16, 4 or 1 bytes),
// so a warp's accesses coalesce into whole PCIe requests.

__device__ __forceinline__ void hostio_copy_row(const u8 *src, u8 *dst, u32 len, u32 lane) {
  if ((((size_t)src | (size_t)dst | len) & 15) == 0) {
    const uint4 *s = (const uint4 *)src;
    uint4 *d = (uint4 *)dst;
    for (u32 i = lane; i < len / 16; i += 32) d[i] = s[i];
  } else if ((((size_t)src | (size_t)dst) & 3) == 0) {
    const u32 *s = (const u32 *)src;
    u32 *d = (u32 *)dst;
    u32 words = len / 4;
    for (u32 i = lane; i < words; i += 32) d[i] = s[i];
    for (u32 i = 4 * words + lane; i < len; i += 32) dst[i] = src[i];
  } else {
    for (u32 i = lane; i < len; i += 32) dst[i] = src[i];
  }
}

// Row i of `dst` (at i * stride) <- `len` bytes at host address src[i]; a 0 address skips row i.
extern "C" __global__ void __launch_bounds__(256) gather_rows(const u64 *src, u32 len, u8 *dst,
                                                              u32 stride, u32 n) {
  u32 row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (row >= n) return;
  const u8 *s = (const u8 *)src[row];
  if (s == 0) return;
  hostio_copy_row(s, dst + (size_t)row * stride, len, threadIdx.x & 31);
}

// `len` bytes of row i of `src` (at i * stride) -> host address dst[i]; a 0 address skips row i.
extern "C" __global__ void __launch_bounds__(256) scatter_rows(const u8 *src, u32 stride, u32 len,
                                                               const u64 *dst, u32 n) {
  u32 row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (row >= n) return;
  u8 *d = (u8 *)dst[row];
  if (d == 0) return;
  hostio_copy_row(src + (size_t)row * stride, d, len, threadIdx.x & 31);
}
