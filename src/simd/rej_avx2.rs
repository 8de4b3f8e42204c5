//! RejNTTPoly's CoeffFromThreeBytes (FIPS 204 Alg. 14) eight candidates at a time (AVX2): the
//! accepted values are packed to the front with a permutation chosen by the acceptance mask.
//! Works on public data (the matrix seed rho), so the table index may depend on it.

use super::Avx2;
use core::arch::x86_64::*;

const N: usize = 256;
const Q: i32 = 8_380_417;

/// For each 8-bit acceptance mask, the lanes to keep, in order (then don't-cares).
const fn compact_table() -> [[u32; 8]; 256] {
    let mut t = [[0u32; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let mut n = 0;
        let mut i = 0;
        while i < 8 {
            if m >> i & 1 == 1 {
                t[m][n] = i as u32;
                n += 1;
            }
            i += 1;
        }
        m += 1;
    }
    t
}
static COMPACT: [[u32; 8]; 256] = compact_table();

/// Appends the candidates of `buf` below q to `a[j..]` (at most N in all) and returns the new
/// count, as `mldsa::sampling::rej_uniform` does; entries past the returned count may differ
/// (they hold don't-cares until later calls fill them).
pub(crate) fn rej_uniform(_: Avx2, a: &mut [i32; N], j: usize, buf: &[u8]) -> usize {
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe { rej_uniform_avx2(a, j, buf) }
}

#[target_feature(enable = "avx2")]
fn rej_uniform_avx2(a: &mut [i32; N], mut j: usize, buf: &[u8]) -> usize {
    // Byte i of each 32-bit lane: bytes 0..12 of the low half, 4..16 of the high half (which
    // holds input bytes 8..24 after the 64-bit permute).
    let idx = _mm256_setr_epi8(
        0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, 4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12,
        -1, 13, 14, 15, -1,
    );
    let mask = _mm256_set1_epi32(0x7f_ffff);
    let q = _mm256_set1_epi32(Q);
    let mut pos = 0;
    // Vector steps read 32 bytes (use 24) and write 8 lanes at j <= N - 8.
    while j <= N - 8 && pos + 32 <= buf.len() {
        // SAFETY: buf[pos..pos + 32] is in bounds (loop condition); loadu is unaligned.
        let d = unsafe { _mm256_loadu_si256(buf.as_ptr().add(pos) as *const __m256i) };
        let d = _mm256_permute4x64_epi64::<0x94>(d);
        let d = _mm256_and_si256(_mm256_shuffle_epi8(d, idx), mask);
        let good = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(q, d))) as usize;
        // SAFETY: COMPACT[good] is 8 readable u32s.
        let perm = unsafe { _mm256_loadu_si256(COMPACT[good].as_ptr() as *const __m256i) };
        let packed = _mm256_permutevar8x32_epi32(d, perm);
        // SAFETY: j <= N - 8 (loop condition), so a[j..j + 8] is in bounds.
        unsafe { _mm256_storeu_si256(a.as_mut_ptr().add(j) as *mut __m256i, packed) };
        j += good.count_ones() as usize;
        pos += 24;
    }
    // The last few candidates one at a time, up to the N-th accepted one (the rest of `buf`,
    // often 20-odd candidates, is not looked at).
    for b in buf[pos..].chunks_exact(3) {
        if j == N {
            break;
        }
        let t = (b[0] as i32) | (b[1] as i32) << 8 | ((b[2] & 0x7f) as i32) << 16;
        if t < Q {
            a[j] = t;
            j += 1;
        }
    }
    j
}
