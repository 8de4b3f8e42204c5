//! CTRU-Prime's polynomial product on AVX2: a * b in Z[x]/(x^n - x - 1), modulo 2^32, for
//! coefficients that fit in an i16.
//!
//! `vpmaddwd` multiplies sixteen pairs of 16-bit lanes and adds neighbouring products into eight
//! exact 32-bit sums, so one instruction does sixteen multiply-adds of the schoolbook product.
//! Eight outputs d[m..m+8] take, for each pair (a[2p], a[2p+1]), the sums
//! a[2p] * b[t] + a[2p+1] * b[t-1] with t = m + k - 2p: the pair is broadcast and b is stored
//! once as words (b[t], b[t-1]), so the eight operands are one unaligned load.
//!
//! The sums are exact in i32 wrapping arithmetic, the ring of the portable Karatsuba in
//! `ctru::poly`; so the result is the portable one's bit for bit for every input whose
//! coefficients fit in an i16 (all of CTRU-Prime's: one operand small, the other below 2^13),
//! and its low 16 bits are the portable mod-2^16 product's for any input.
//! Loop bounds depend on n only: no branch or index depends on coefficient values.

use super::Avx2;
use core::arch::x86_64::*;
use zeroize::Zeroizing;

/// Outputs per register group (eight ymm accumulators): one broadcast of a pair serves all of
/// them.
const GROUP: usize = 64;
/// Zero words before b's words, so that the loads of the first outputs stay in the buffer.
const PAD: usize = GROUP;

/// a * b mod (x^n - x - 1), coefficients mod 2^32, inputs truncated to i16.
pub(crate) fn mul_ring(_: Avx2, a: &[i32], b: &[i32]) -> Zeroizing<Vec<i32>> {
    let n = a.len();
    assert_eq!(b.len(), n);
    let pairs = n.div_ceil(2);
    // The pairs of a, as one 32-bit word each: low half a[2p], high half a[2p+1].
    let mut ap = Zeroizing::new(vec![0i32; pairs]);
    for (p, w) in ap.iter_mut().enumerate() {
        let lo = a[2 * p] as u16 as u32;
        let hi = a.get(2 * p + 1).map_or(0, |&x| x as u16 as u32);
        *w = (lo | hi << 16) as i32;
    }
    // Word PAD + t holds (b[t], b[t-1]); nonzero only for t in [0, n].
    let mut bw = Zeroizing::new(vec![0i32; PAD + n + 1 + 2 * GROUP]);
    for t in 0..=n {
        let lo = b.get(t).map_or(0, |&x| x as u16 as u32);
        let hi = if t > 0 { b[t - 1] as u16 as u32 } else { 0 };
        bw[PAD + t] = (lo | hi << 16) as i32;
    }
    // The full product d (degree 2n - 2; the words beyond it come out zero).
    let groups = (2 * n - 1).div_ceil(GROUP);
    let mut d = Zeroizing::new(vec![0i32; groups * GROUP]);
    for (g, out) in d.chunks_exact_mut(GROUP).enumerate() {
        let m0 = g * GROUP;
        // The pairs that reach these outputs: t = m - 2p must meet [0, n] for some m here.
        let p_lo = m0.saturating_sub(n).div_ceil(2);
        let p_hi = pairs.min((m0 + GROUP - 1) / 2 + 1).max(p_lo);
        // The window of b's words for pair p_lo starts at word PAD + m0 - 2 p_lo, and each
        // further pair moves it two words down; PAD + m0 - 2 (p_hi - 1) >= PAD - GROUP + 1 >= 1
        // and PAD + m0 - 2 p_lo + GROUP <= PAD + n + GROUP + 1 <= bw.len().
        let first = PAD + m0 - 2 * p_lo;
        let out: &mut [i32; GROUP] = out.try_into().expect("GROUP words");
        // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2"); the
        // bounds are those above.
        unsafe { group_avx2(&ap[p_lo..p_hi], &bw[..first + GROUP], out) };
    }

    // x^(n+k) = x^(k+1) + x^k: c[j] = d[j] + d[n+j] + d[n+j-1] (the last only for j >= 1).
    let mut c = Zeroizing::new(d[..n].to_vec());
    for j in 0..n {
        let mut s = c[j].wrapping_add(d[n + j]);
        if j > 0 {
            s = s.wrapping_add(d[n + j - 1]);
        }
        c[j] = s;
    }
    c
}

/// out[k] = sum over i of the pair products of ap[i] with the window of GROUP words that
/// ends `bw` (for ap[0]) moved 2i words down. Needs bw.len() >= GROUP + 2 (ap.len() - 1).
#[target_feature(enable = "avx2")]
unsafe fn group_avx2(ap: &[i32], bw: &[i32], out: &mut [i32; GROUP]) {
    assert!(ap.is_empty() || bw.len() >= GROUP + 2 * (ap.len() - 1));
    let mut acc = [_mm256_setzero_si256(); GROUP / 8];
    let mut src = bw.as_ptr().add(bw.len() - GROUP);
    for &w in ap {
        let a2 = _mm256_set1_epi32(w);
        for (v, acc) in acc.iter_mut().enumerate() {
            // SAFETY: src + 8v + 8 <= src + GROUP, inside bw (asserted above).
            let x = _mm256_loadu_si256(src.add(8 * v) as *const __m256i);
            *acc = _mm256_add_epi32(*acc, _mm256_madd_epi16(a2, x));
        }
        src = src.wrapping_sub(2);
    }
    for (v, acc) in acc.iter().enumerate() {
        // SAFETY: out has GROUP words; 8v + 8 <= GROUP.
        _mm256_storeu_si256(out.as_mut_ptr().add(8 * v) as *mut __m256i, *acc);
    }
}
