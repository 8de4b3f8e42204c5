//! CTRU-Prime's inversion in R_q = Z_q[x]/(x^n - x - 1) on AVX2: the divstep recip of
//! `ctru::inverse` (same 2n-1 steps, same decisions, same public lengths), sixteen i16
//! coefficients per vector.
//!
//! Two changes against the portable loop, neither visible in the result:
//! * Each step is one pass over (f, g) and one over (v, r): the conditional swap is an xor under
//!   the swap mask and the update f0 g - g0 f is computed in the same pass, from the values
//!   before the swap (when it swaps, g and r carry a factor -1: see `step_avx2`). The shifts cost
//!   nothing: g / x moves g's start one word up and x v moves v's start one word down, so every
//!   update reads and writes the same index.
//! * The products use Shoup's multiplication by the scalars f0 and g0 instead of Montgomery's:
//!   with c' ~ c 2^16 / q, a c - q hi(a c') is a c mod q in (-0.2q, 1.2q) and is computed exactly
//!   in 16-bit wrapping lanes; f0 g - g0 f takes five multiplies (two `vpmullw`, two `vpmulhw`,
//!   one `vpmullw` by q) and carries no 2^-16 factor. Its value stays in (-1.4q, 1.4q), so
//!   g0 = 0 mod q still means g0 in {0, q, -q}, as in the portable test.
//!
//! The inverse is unique, so the output (reduced to [0, q)) is the portable one's for every
//! invertible input; a non-invertible input gives the portable verdict too (tested).
//! Every branch and index depends on n and the step number only.

use super::Avx2;
use crate::ctru::recip::{start, unreverse};
use crate::ctru::reduce::Zq;
use core::arch::x86_64::*;
use zeroize::Zeroizing;

/// i16 lanes per vector.
const W: usize = 16;

/// -1 if x != 0 else 0.
#[inline(always)]
fn nonzero_mask(x: i32) -> i32 {
    (x | x.wrapping_neg()) >> 31
}

/// The Shoup companion of c: about c 2^16 / q (within 1.04), for |c| <= (q - 1) / 2, so it fits
/// in an i16. `m` = round(2^32 / q).
#[inline(always)]
fn shoup(c: i32, m: i64) -> i16 {
    ((c as i64 * m) >> 16) as i16
}

/// f_in^-1 in R_q with coefficients in [0, q), and whether f_in was invertible (the final delta
/// is 0). Needs |f_in[i]| < q and q odd below 2^13.
pub(crate) fn invert(_: Avx2, f_in: &[i32], zq: &Zq) -> (Zeroizing<Vec<i32>>, bool) {
    let n = f_in.len();
    let q = zq.q;
    assert!(n >= 2 && q % 2 == 1 && (3..1 << 13).contains(&q));
    let m = ((1i64 << 32) + q as i64 / 2) / q as i64;
    let steps = 2 * n - 1;
    let chunks = |len: usize| len.div_ceil(W);
    let full = chunks(n + 1) * W;
    // f (the modulus, reversed) and r stay in place. g starts at word k of `g` in step k and v at
    // word steps - 1 - k of `v` (after the shift of step k). Words past the live lengths hold
    // zeros or values that never reach a live index (g only moves down, v only up).
    let mut f = Zeroizing::new(vec![0i16; full]);
    let mut g = Zeroizing::new(vec![0i16; steps + full]);
    let mut v = Zeroizing::new(vec![0i16; steps + full]);
    let mut r = Zeroizing::new(vec![0i16; full]);
    start(&mut f, &mut g, &mut r, f_in);
    let mut delta: i32 = 1;

    for k in 0..steps {
        // The portable loop's live lengths (public).
        let fg_len = n.min(2 * n - 1 - k) + 1;
        let vr_len = n.min(k) + 1;
        let vk = steps - 1 - k;

        // The swap decision reads f0 and g0 before the swap; so do the products (see below).
        let f0 = f[0] as i32;
        let g0 = g[k] as i32;
        let g0_nonzero = nonzero_mask(g0) & nonzero_mask(g0 - q) & nonzero_mask(g0 + q);
        let swap = ((-delta) >> 31) & g0_nonzero;
        delta ^= swap & (delta ^ -delta);
        delta += 1;
        // The multipliers, centered so that their Shoup companions fit in an i16.
        let (fc, gc) = (center(q, m, f0), center(q, m, g0));
        let c = Coeffs {
            f0: fc as i16,
            f0s: shoup(fc, m),
            g0: gc as i16,
            g0s: shoup(gc, m),
            q: q as i16,
            swap: swap as i16,
        };
        // SAFETY: an `Avx2` token exists only after the AVX2 check. f has `full` words and g
        // has k + chunks(fg_len) * W <= steps + full words from its start (k + fg_len <= 2n);
        // v has vk + chunks(vr_len) * W <= steps + full and r has `full`.
        unsafe {
            step_avx2(
                [f.as_mut_ptr(), g.as_mut_ptr().add(k)],
                chunks(fg_len),
                [v.as_mut_ptr().add(vk), r.as_mut_ptr()],
                chunks(vr_len),
                &c,
            );
        }
    }

    // Now f = f0 (a nonzero constant) and v * input = f0 in reversed form; v starts at word 0.
    (unreverse(zq, f[0], &v[..n]), delta == 0)
}

/// c mod q in [-(q-1)/2, (q-1)/2], for |c| < 2q, as c - round(c / q) q. `m` = round(2^32 / q).
/// Only multiplies and shifts: a mask-and-add form was compiled into branches.
#[inline(always)]
fn center(q: i32, m: i64, c: i32) -> i32 {
    // c m / 2^32 is within 2^-19 of c / q, whose distance to a half-integer is >= 1 / (2q) > 2^-14.
    let k = ((c as i64 * m + (1 << 31)) >> 32) as i32;
    c - k * q
}

/// The scalars of one step: f0 and g0 before the swap, centered, with their Shoup companions.
struct Coeffs {
    f0: i16,
    f0s: i16,
    g0: i16,
    g0s: i16,
    q: i16,
    /// -1 to swap, 0 to keep.
    swap: i16,
}

/// One divstep on the pairs (a, b) = (f, g) (`fg` vectors) and (v, r) (`vr` vectors): a[i]
/// takes b[i] under the swap mask, and b[i] = f0 b[i] - g0 a[i] mod q with the values before
/// the swap.
///
/// The portable step computes f0' b' - g0' a' after the swap; when it swaps, that is
/// g0 a - f0 b, the negation of this one. Both g and r then carry the factor -1, which changes
/// no decision and cancels in the result, like the portable code's Montgomery factors.
///
/// # Safety
/// AVX2 must be present; fg[0] and fg[1] must be valid for `fg` * 16 words and vr[0] and vr[1]
/// for `vr` * 16 words.
#[target_feature(enable = "avx2")]
unsafe fn step_avx2(
    fg: [*mut i16; 2],
    fg_chunks: usize,
    vr: [*mut i16; 2],
    vr_chunks: usize,
    c: &Coeffs,
) {
    let f0 = _mm256_set1_epi16(c.f0);
    let f0s = _mm256_set1_epi16(c.f0s);
    let g0 = _mm256_set1_epi16(c.g0);
    let g0s = _mm256_set1_epi16(c.g0s);
    let q = _mm256_set1_epi16(c.q);
    let swap = _mm256_set1_epi16(c.swap);
    for ([a, b], chunks) in [(fg, fg_chunks), (vr, vr_chunks)] {
        for j in 0..chunks {
            let pa = a.add(j * W) as *mut __m256i;
            let pb = b.add(j * W) as *mut __m256i;
            let x = _mm256_loadu_si256(pa);
            let y = _mm256_loadu_si256(pb);
            let t = _mm256_and_si256(swap, _mm256_xor_si256(x, y));
            _mm256_storeu_si256(pa, _mm256_xor_si256(x, t));
            // f0 y - g0 x - q (hi(y f0s) - hi(x g0s)), exact in i16 (its value is in
            // (-1.4q, 1.4q)).
            let quot = _mm256_sub_epi16(_mm256_mulhi_epi16(y, f0s), _mm256_mulhi_epi16(x, g0s));
            let prod = _mm256_sub_epi16(_mm256_mullo_epi16(y, f0), _mm256_mullo_epi16(x, g0));
            _mm256_storeu_si256(pb, _mm256_sub_epi16(prod, _mm256_mullo_epi16(quot, q)));
        }
    }
}
