//! Power2Round, Decompose, MakeHint and UseHint (`mldsa::rounding`) on eight 32-bit lanes (AVX2).
//! Each lane computes the portable formula for its coefficient with the same integer operations
//! (no operation here overflows), so the outputs are identical. No branch or index depends on a
//! coefficient: gamma2 is a public parameter and the only thing branched on.

use super::avx2::{load, store};
use super::params::{D, N, Q};
use crate::simd::Avx2;
use core::arch::x86_64::*;

const GAMMA2_32: i32 = (Q - 1) / 32;

/// `rounding::decompose` on eight lanes: (r1, r0) of each a in [0, q).
#[inline]
#[target_feature(enable = "avx2")]
fn decompose8(a: __m256i, gamma2: i32) -> (__m256i, __m256i) {
    let mut a1 = _mm256_srai_epi32::<7>(_mm256_add_epi32(a, _mm256_set1_epi32(127)));
    if gamma2 == GAMMA2_32 {
        a1 = _mm256_mullo_epi32(a1, _mm256_set1_epi32(1025));
        a1 = _mm256_srai_epi32::<22>(_mm256_add_epi32(a1, _mm256_set1_epi32(1 << 21)));
        a1 = _mm256_and_si256(a1, _mm256_set1_epi32(15));
    } else {
        a1 = _mm256_mullo_epi32(a1, _mm256_set1_epi32(11275));
        a1 = _mm256_srai_epi32::<24>(_mm256_add_epi32(a1, _mm256_set1_epi32(1 << 23)));
        // a1 ^= ((43 - a1) >> 31) & a1: 44 wraps to 0.
        let m = _mm256_srai_epi32::<31>(_mm256_sub_epi32(_mm256_set1_epi32(43), a1));
        a1 = _mm256_xor_si256(a1, _mm256_and_si256(m, a1));
    }
    let mut a0 = _mm256_sub_epi32(a, _mm256_mullo_epi32(a1, _mm256_set1_epi32(2 * gamma2)));
    // a0 -= (((q - 1) / 2 - a0) >> 31) & q
    let m = _mm256_srai_epi32::<31>(_mm256_sub_epi32(_mm256_set1_epi32((Q - 1) / 2), a0));
    a0 = _mm256_sub_epi32(a0, _mm256_and_si256(m, _mm256_set1_epi32(Q)));
    (a1, a0)
}

#[target_feature(enable = "avx2")]
fn decompose_avx2(a: &[i32; N], gamma2: i32, a1: &mut [i32; N], a0: &mut [i32; N]) {
    for i in (0..N).step_by(8) {
        let (r1, r0) = decompose8(load(a, i), gamma2);
        store(a1, i, r1);
        store(a0, i, r0);
    }
}

#[target_feature(enable = "avx2")]
fn power2round_avx2(a: &mut [i32; N], a1: &mut [i32; N]) {
    let round = _mm256_set1_epi32((1 << (D - 1)) - 1);
    for i in (0..N).step_by(8) {
        let x = load(a, i);
        let r1 = _mm256_srai_epi32::<{ D as i32 }>(_mm256_add_epi32(x, round));
        store(a1, i, r1);
        store(
            a,
            i,
            _mm256_sub_epi32(x, _mm256_slli_epi32::<{ D as i32 }>(r1)),
        );
    }
}

#[target_feature(enable = "avx2")]
fn make_hint_avx2(a0: &[i32; N], a1: &[i32; N], gamma2: i32, h: &mut [i32; N]) -> usize {
    let g = _mm256_set1_epi32(gamma2);
    let zero = _mm256_setzero_si256();
    let mut count = _mm256_setzero_si256();
    for i in (0..N).step_by(8) {
        let (x0, x1) = (load(a0, i), load(a1, i));
        // The portable expression, lane by lane (all masks are 0 or -1).
        let above = _mm256_srai_epi32::<31>(_mm256_sub_epi32(g, x0));
        let x = _mm256_add_epi32(x0, g);
        let below = _mm256_srai_epi32::<31>(x);
        let nonzero_x = _mm256_srai_epi32::<31>(_mm256_or_si256(x, _mm256_sub_epi32(zero, x)));
        let nonzero_a1 = _mm256_srai_epi32::<31>(_mm256_or_si256(x1, _mm256_sub_epi32(zero, x1)));
        let hint = _mm256_or_si256(
            _mm256_or_si256(above, below),
            _mm256_andnot_si256(nonzero_x, nonzero_a1),
        );
        count = _mm256_sub_epi32(count, hint);
        store(h, i, _mm256_and_si256(hint, _mm256_set1_epi32(1)));
    }
    // Horizontal sum of the eight counts (each at most 32).
    let s = _mm_add_epi32(
        _mm256_castsi256_si128(count),
        _mm256_extracti128_si256::<1>(count),
    );
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0x4e>(s));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0xb1>(s));
    _mm_cvtsi128_si32(s) as usize
}

#[target_feature(enable = "avx2")]
fn use_hint_avx2(a: &mut [i32; N], h: &[i32; N], gamma2: i32) {
    let zero = _mm256_setzero_si256();
    let one = _mm256_set1_epi32(1);
    for i in (0..N).step_by(8) {
        let (a1, a0) = decompose8(load(a, i), gamma2);
        // delta = 0 without a hint, else +1 if a0 > 0 and -1 otherwise.
        let hint = _mm256_xor_si256(_mm256_cmpeq_epi32(load(h, i), zero), _mm256_set1_epi32(-1));
        let pos = _mm256_cmpgt_epi32(a0, zero);
        let step = _mm256_sub_epi32(_mm256_and_si256(pos, _mm256_set1_epi32(2)), one);
        let delta = _mm256_and_si256(hint, step);
        let t = _mm256_add_epi32(a1, delta);
        let r = if gamma2 == GAMMA2_32 {
            _mm256_and_si256(t, _mm256_set1_epi32(15))
        } else {
            // t in [-1, 44]: 44 -> 0 and -1 -> 43.
            let t = _mm256_andnot_si256(_mm256_cmpeq_epi32(t, _mm256_set1_epi32(44)), t);
            _mm256_blendv_epi8(t, _mm256_set1_epi32(43), _mm256_cmpgt_epi32(zero, t))
        };
        store(a, i, r);
    }
}

/// `rounding::decompose` on every coefficient of `a` (each in [0, q)).
pub(crate) fn decompose(_: Avx2, a: &[i32; N], gamma2: i32, a1: &mut [i32; N], a0: &mut [i32; N]) {
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe { decompose_avx2(a, gamma2, a1, a0) }
}

/// `rounding::power2round` on every coefficient of `a` (each in [0, q)), in place: `a` ends
/// as a0.
pub(crate) fn power2round(_: Avx2, a: &mut [i32; N], a1: &mut [i32; N]) {
    // SAFETY: as in `decompose`.
    unsafe { power2round_avx2(a, a1) }
}

/// `rounding::make_hint` on every coefficient; returns the number of ones written to `h`.
pub(crate) fn make_hint(
    _: Avx2,
    a0: &[i32; N],
    a1: &[i32; N],
    gamma2: i32,
    h: &mut [i32; N],
) -> usize {
    // SAFETY: as in `decompose`.
    unsafe { make_hint_avx2(a0, a1, gamma2, h) }
}

/// `rounding::use_hint` on every coefficient of `a` (each in [0, q)), hint i set iff h[i] != 0.
pub(crate) fn use_hint(_: Avx2, a: &mut [i32; N], h: &[i32; N], gamma2: i32) {
    // SAFETY: as in `decompose`.
    unsafe { use_hint_avx2(a, h, gamma2) }
}
