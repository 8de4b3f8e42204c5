//! RejBoundedPoly's CoeffFromHalfByte (FIPS 204 Alg. 15) 32 nibbles at a time (AVX2), on the
//! secret SHAKE256(rho' || r) stream of ExpandS. The accepted nibbles are moved to the front
//! without a table: each keeps the count of rejected nibbles before it, and four fixed byte
//! shifts (by 1, 2, 4 and 8) move every nibble whose count has that bit set, lowest bit first
//! (the moves never collide, and a nibble's stale copy is never moved onto a kept one). So no
//! branch and no load depends on the nibbles; as in the portable loop, only the write position
//! (the running count of accepted values) does, which tells no more than FIPS 204 allows.

use super::Avx2;
use core::arch::x86_64::*;

const N: usize = 256;

/// The nibbles of 16 bytes in order (low nibble first), 16 per 128-bit half, compacted per half:
/// the accepted ones first, as signed bytes eta - (t mod 5) or eta - t, then don't-cares.
/// Returns the bytes and the 32-bit rejection mask (bit i: nibble i rejected).
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn compact32(bytes: __m128i, eta: i32) -> (__m256i, u32) {
    // Word i = byte i; then its low nibble in byte 2i and its high nibble in byte 2i + 1.
    let w = _mm256_cvtepu8_epi16(bytes);
    let t = _mm256_and_si256(
        _mm256_or_si256(w, _mm256_slli_epi16::<4>(w)),
        _mm256_set1_epi16(0x0f0f),
    );
    // Rejected: t = 15 (eta = 2) or t > 8 (eta = 4); 0xff per rejected nibble.
    let rej = if eta == 2 {
        _mm256_cmpeq_epi8(t, _mm256_set1_epi8(15))
    } else {
        _mm256_cmpgt_epi8(t, _mm256_set1_epi8(8))
    };
    // Rejected nibbles up to and including each one, per half: for an accepted nibble the count
    // before it, at most 15, so shift << 4 stays in its byte (only byte 15 can count 16, and
    // it is then rejected).
    let mut s = _mm256_and_si256(rej, _mm256_set1_epi8(1));
    s = _mm256_add_epi8(s, _mm256_slli_si256::<1>(s));
    s = _mm256_add_epi8(s, _mm256_slli_si256::<2>(s));
    s = _mm256_add_epi8(s, _mm256_slli_si256::<4>(s));
    s = _mm256_add_epi8(s, _mm256_slli_si256::<8>(s));
    // Byte = nibble | shift << 4; rejected nibbles do not move (shift 0).
    let mut c = _mm256_or_si256(t, _mm256_andnot_si256(rej, _mm256_slli_epi16::<4>(s)));
    // Stage k moves by 2^k the bytes whose bit 4 + k is set (brought to bit 7 for the blend).
    c = stage::<1, 3>(c);
    c = stage::<2, 2>(c);
    c = stage::<4, 1>(c);
    c = stage::<8, 0>(c);
    let table = if eta == 2 {
        _mm256_setr_epi8(
            2, 1, 0, -1, -2, 2, 1, 0, -1, -2, 2, 1, 0, -1, -2, 0, 2, 1, 0, -1, -2, 2, 1, 0, -1, -2,
            2, 1, 0, -1, -2, 0,
        )
    } else {
        _mm256_setr_epi8(
            4, 3, 2, 1, 0, -1, -2, -3, -4, 0, 0, 0, 0, 0, 0, 0, 4, 3, 2, 1, 0, -1, -2, -3, -4, 0,
            0, 0, 0, 0, 0, 0,
        )
    };
    // A register shuffle by the nibble: no memory index.
    let v = _mm256_shuffle_epi8(table, _mm256_and_si256(c, _mm256_set1_epi8(0x0f)));
    (v, _mm256_movemask_epi8(rej) as u32)
}

/// One compaction stage: lane i takes lane i + S when that byte's bit `7 - SH` is set.
#[inline]
#[target_feature(enable = "avx2")]
fn stage<const S: i32, const SH: i32>(c: __m256i) -> __m256i {
    let from = _mm256_srli_si256::<S>(c);
    _mm256_blendv_epi8(c, from, _mm256_slli_epi16::<SH>(from))
}

/// The 16 signed bytes of `x` as i32s at a[j..j + 16].
#[inline]
#[target_feature(enable = "avx2")]
fn store16(a: &mut [i32; N], j: usize, x: __m128i) {
    assert!(j + 16 <= N);
    // SAFETY: a[j..j + 16] is in bounds (checked above); storeu is unaligned.
    unsafe {
        let p = a.as_mut_ptr().add(j) as *mut __m256i;
        _mm256_storeu_si256(p, _mm256_cvtepi8_epi32(x));
        _mm256_storeu_si256(p.add(1), _mm256_cvtepi8_epi32(_mm_srli_si128::<8>(x)));
    }
}

/// Appends accepted nibbles of a prefix of `buf` to `a[j..]`, as `mldsa::sampling::rej_eta`
/// does, while 16 more values fit; returns the new count and the bytes used (the caller takes
/// the rest on the scalar loop). Entries past the count may differ.
pub(crate) fn rej_eta(_: Avx2, a: &mut [i32; N], j: usize, buf: &[u8], eta: i32) -> (usize, usize) {
    assert!(eta == 2 || eta == 4);
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe { rej_eta_avx2(a, j, buf, eta) }
}

/// 16 bytes (32 nibbles, at most 32 values) per step while they fit in a, then 8 bytes.
#[target_feature(enable = "avx2")]
fn rej_eta_avx2(a: &mut [i32; N], mut j: usize, buf: &[u8], eta: i32) -> (usize, usize) {
    let mut pos = 0;
    while j + 32 <= N && pos + 16 <= buf.len() {
        // SAFETY: buf[pos..pos + 16] is in bounds (loop condition); loadu is unaligned.
        let x = unsafe { _mm_loadu_si128(buf.as_ptr().add(pos) as *const __m128i) };
        let (v, rej) = compact32(x, eta);
        store16(a, j, _mm256_castsi256_si128(v));
        j += 16 - (rej & 0xffff).count_ones() as usize;
        store16(a, j, _mm256_extracti128_si256::<1>(v));
        j += 16 - (rej >> 16).count_ones() as usize;
        pos += 16;
    }
    while j + 16 <= N && pos + 8 <= buf.len() {
        // SAFETY: buf[pos..pos + 8] is in bounds (loop condition); loadl reads 8 bytes.
        let x = unsafe { _mm_loadl_epi64(buf.as_ptr().add(pos) as *const __m128i) };
        let (v, rej) = compact32(x, eta);
        store16(a, j, _mm256_castsi256_si128(v));
        j += 16 - (rej & 0xffff).count_ones() as usize;
        pos += 8;
    }
    (j, pos)
}

/// `compact32` on 16 bytes, for the constant-time check (`ct_check_vector_kernels`).
#[cfg(test)]
pub(crate) fn compact_bytes(_: Avx2, b: &[u8; 16], eta: i32) -> ([u8; 32], u32) {
    #[target_feature(enable = "avx2")]
    fn run(b: &[u8; 16], eta: i32) -> ([u8; 32], u32) {
        let mut out = [0u8; 32];
        // SAFETY: b has 16 readable bytes and out 32 writable ones; both unaligned forms.
        let (v, rej) = compact32(
            unsafe { _mm_loadu_si128(b.as_ptr() as *const __m128i) },
            eta,
        );
        unsafe { _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, v) };
        (out, rej)
    }
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe { run(b, eta) }
}
