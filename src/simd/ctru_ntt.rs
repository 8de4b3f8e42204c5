//! CTRU-Prime's product in Z[x]/(x^n - x - 1) on AVX2 by number-theoretic transforms, reduced
//! mod q or mod 2^bits: the same values as `ctru::poly`'s portable product for the inputs of
//! every caller (one operand small, |.| <= 7).
//!
//! The exact integer product a * b (degree 2n - 2) is computed modulo the primes p1 = 7681 and
//! p2 = 10753 by cyclic convolutions of N = 1536 = 3 * 512 points (N divides p - 1), on sixteen
//! 16-bit lanes with Montgomery products (`vpmulhw`/`vpmullw`), then recovered exactly by CRT:
//! its coefficients are below n * (q/2) * 7 < 2^25.2 < p1 p2 / 2 (the big operand centered
//! mod q, or mod 2^bits). Up to n = 768 one transform holds the product; up to 1280 the operands
//! are split as a0 + x^640 a1 and the four quarter products (degree < 1279) are combined in
//! the transformed domain (seven transforms per prime). The reduction mod x^n - x - 1 and mod q
//! (or 2^bits) comes last, on the exact coefficients.
//!
//! Transform: one radix-3 level (x^1536 - 1 = product of x^512 - w^k, w a cube root of unity),
//! then nine radix-2 levels (x^2m - s^2 = (x^m - s)(x^m + s)). The levels 256..16 coefficients
//! apart work on whole vectors; then each group of 256 coefficients is transposed as a 16x16
//! matrix so that the levels 8..1 apart also pair whole vectors, with one twiddle per lane. The
//! transformed values stay in that permuted order: only lane-wise products happen there, and
//! the inverse transposes back.
//!
//! Ranges (|.| bounds; Montgomery products by a centered constant return < 0.75 p for any i16
//! input, Barrett reduction < 0.502 p): inputs <= 4096; forward outputs < 1.26 p; pointwise
//! products < 8200 (p2), summed pairs are reduced; inverse levels keep < 0.75 p; radix-3
//! inverse < 2.25 p < 2^15. Every loop bound and table index depends on n and positions only:
//! no branch or index depends on coefficient values.

use super::Avx2;
use core::arch::x86_64::*;
use std::sync::OnceLock;
use zeroize::Zeroizing;

/// Transform size (points).
const N: usize = 1536;
/// Vectors of sixteen lanes per transform.
const NV: usize = N / 16;
/// The primes: N divides p - 1, p < 2^14.
const P1: i16 = 7681;
const P2: i16 = 10753;
/// Largest n whose product (degree 2n - 2) one transform holds.
const ONE_MAX: usize = N / 2;
/// Larger operands are split as a0 + x^SPLIT a1.
const SPLIT: usize = 640;
/// Largest n this product supports.
pub(crate) const N_MAX: usize = 2 * SPLIT;
/// The moduli q of `mul_mod_q` (odd): Barrett's 2^26 / q must fit an i16.
pub(crate) const Q_RANGE: core::ops::Range<i32> = 1 << 11..1 << 13;

/// A constant c in Montgomery form for one modulus m: w = c * 2^16 mod m centered, and
/// wq = w * m^-1 mod 2^16.
#[derive(Clone, Copy, Default)]
struct Tw {
    w: i16,
    wq: i16,
}

/// One such constant per lane.
#[derive(Clone, Copy, Default)]
struct TwV {
    w: [i16; 16],
    wq: [i16; 16],
}

/// The transform tables of one prime.
struct Prime {
    p: i16,
    /// p^-1 mod 2^16.
    pinv: i16,
    /// round(2^26 / p), for Barrett reduction.
    barrett: i16,
    /// A primitive cube root of unity (psi^512).
    omega: Tw,
    /// The twiddles of the vector levels (256, 128, 64, 32, 16 apart), block by block, level
    /// after level (3 + 6 + 12 + 24 + 48 blocks), and their inverses.
    fwd: Vec<Tw>,
    inv: Vec<Tw>,
    /// The twiddles of the transposed levels (8, 4, 2, 1 apart), one vector per pair of vector
    /// blocks (6 + 12 + 24 + 48), and their inverses.
    fwd_lane: Vec<TwV>,
    inv_lane: Vec<TwV>,
}

/// Start of each vector level's twiddles in `fwd` / `inv`, by stride in vectors.
const fn vec_level_off(stride: usize) -> usize {
    match stride {
        16 => 0,
        8 => 3,
        4 => 9,
        2 => 21,
        _ => 45,
    }
}

/// Start of each transposed level's twiddles in `fwd_lane` / `inv_lane`, by distance.
const fn lane_level_off(d: usize) -> usize {
    match d {
        8 => 0,
        4 => 6,
        2 => 18,
        _ => 42,
    }
}

fn pow_mod(mut b: i64, mut e: i64, m: i64) -> i64 {
    let mut r = 1;
    b = b.rem_euclid(m);
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % m;
        }
        b = b * b % m;
        e >>= 1;
    }
    r
}

/// x mod m in (-m/2, m/2) (m odd).
fn centered(x: i64, m: i64) -> i16 {
    let r = x.rem_euclid(m);
    (if r > m / 2 { r - m } else { r }) as i16
}

/// m^-1 mod 2^16 (m odd), by Newton iteration.
fn inv_mod_2_16(m: i16) -> i16 {
    let m = m as u16;
    let mut x: u16 = 1;
    for _ in 0..5 {
        x = x.wrapping_mul(2u16.wrapping_sub(m.wrapping_mul(x)));
    }
    x as i16
}

/// c in Montgomery form for the odd modulus m.
fn tw(c: i64, m: i16) -> Tw {
    let w = centered(c * 65536, m as i64);
    Tw {
        w,
        wq: w.wrapping_mul(inv_mod_2_16(m)),
    }
}

impl Prime {
    fn new(p: i16) -> Prime {
        let pl = p as i64;
        // psi = g^((p-1)/N) for a generator g of Z_p^*.
        let mut factors = vec![];
        let mut rest = pl - 1;
        let mut f = 2;
        while rest > 1 {
            if rest % f == 0 {
                factors.push(f);
                while rest % f == 0 {
                    rest /= f;
                }
            }
            f += 1;
        }
        let g = (2..pl)
            .find(|&g| factors.iter().all(|&f| pow_mod(g, (pl - 1) / f, pl) != 1))
            .expect("Z_p^* is cyclic");
        assert_eq!((pl - 1) % N as i64, 0);
        let psi = pow_mod(g, (pl - 1) / N as i64, pl);
        let root = |e: usize| pow_mod(psi, e as i64, pl);
        let inv_root = |e: usize| pow_mod(psi, ((N - e) % N) as i64, pl);

        // Blocks in natural order, each x^m - psi^e; after the radix-3 level m = 512.
        let mut exps: Vec<usize> = vec![0, N / 3, 2 * N / 3];
        let (mut fwd, mut inv, mut fwd_lane, mut inv_lane) = (vec![], vec![], vec![], vec![]);
        let mut d = 256;
        while d >= 1 {
            // Splitting x^2d - psi^e: the twiddle s = psi^(e/2), children psi^(e/2), -psi^(e/2).
            let sig: Vec<usize> = exps
                .iter()
                .map(|&e| {
                    assert_eq!(e % 2, 0);
                    e / 2
                })
                .collect();
            if d >= 16 {
                fwd.extend(sig.iter().map(|&s| tw(root(s), p)));
                inv.extend(sig.iter().map(|&s| tw(inv_root(s), p)));
            } else {
                // Transposed group g: vector r, lane c holds coefficient 256g + 16c + r. The
                // vector block B = (16g + r) / 2d pairs r with r + d; lane c's block is
                // (256g + 16c) / 2d + (B mod 8/d).
                for b in 0..NV / (2 * d) {
                    let (g, k) = (b / (8 / d), b % (8 / d));
                    let (mut f, mut v) = (TwV::default(), TwV::default());
                    for c in 0..16 {
                        let s = sig[(256 * g + 16 * c) / (2 * d) + k];
                        let (a, i) = (tw(root(s), p), tw(inv_root(s), p));
                        (f.w[c], f.wq[c], v.w[c], v.wq[c]) = (a.w, a.wq, i.w, i.wq);
                    }
                    fwd_lane.push(f);
                    inv_lane.push(v);
                }
            }
            exps = sig.iter().flat_map(|&s| [s, (s + N / 2) % N]).collect();
            d /= 2;
        }
        assert_eq!(fwd.len(), 93);
        assert_eq!(fwd_lane.len(), 90);
        Prime {
            p,
            pinv: inv_mod_2_16(p),
            barrett: ((1i64 << 26) as f64 / pl as f64).round() as i16,
            omega: tw(root(N / 3), p),
            fwd,
            inv,
            fwd_lane,
            inv_lane,
        }
    }
}

fn primes() -> &'static [Prime; 2] {
    static T: OnceLock<[Prime; 2]> = OnceLock::new();
    T.get_or_init(|| [Prime::new(P1), Prime::new(P2)])
}

/// Broadcast modulus constants.
#[derive(Clone, Copy)]
struct K {
    p: __m256i,
    pinv: __m256i,
    barrett: __m256i,
}

#[inline]
#[target_feature(enable = "avx2")]
fn consts(p: i16, pinv: i16, barrett: i16) -> K {
    K {
        p: _mm256_set1_epi16(p),
        pinv: _mm256_set1_epi16(pinv),
        barrett: _mm256_set1_epi16(barrett),
    }
}

/// a * w * 2^-16 mod p, |result| <= |a| |w| / 2^16 + p/2 (exact: the low halves of a*w and
/// t*p agree). `wq` = w * p^-1 mod 2^16.
#[inline]
#[target_feature(enable = "avx2")]
fn mont(a: __m256i, w: __m256i, wq: __m256i, k: &K) -> __m256i {
    let t = _mm256_mullo_epi16(a, wq);
    _mm256_sub_epi16(_mm256_mulhi_epi16(a, w), _mm256_mulhi_epi16(t, k.p))
}

/// a * b * 2^-16 mod p for two variable operands.
#[inline]
#[target_feature(enable = "avx2")]
fn mont_var(a: __m256i, b: __m256i, k: &K) -> __m256i {
    mont(a, b, _mm256_mullo_epi16(b, k.pinv), k)
}

/// a - round(a / p) p, |result| <= 0.502 p: the quotient is round(floor(a * v / 2^16) / 2^10)
/// with v = round(2^26 / p), within 0.002 of a / p for |a| < 2^15.
#[inline]
#[target_feature(enable = "avx2")]
fn barrett(a: __m256i, k: &K) -> __m256i {
    let t = _mm256_mulhi_epi16(a, k.barrett);
    let t = _mm256_mulhrs_epi16(t, _mm256_set1_epi16(1 << 5));
    _mm256_sub_epi16(a, _mm256_mullo_epi16(t, k.p))
}

/// The representative in [-(p-1)/2, (p-1)/2] of a with |a| < p.
#[inline]
#[target_feature(enable = "avx2")]
fn center(a: __m256i, k: &K) -> __m256i {
    let half = _mm256_srai_epi16::<1>(k.p);
    let hi = _mm256_cmpgt_epi16(a, half);
    let a = _mm256_sub_epi16(a, _mm256_and_si256(hi, k.p));
    let lo = _mm256_cmpgt_epi16(_mm256_sub_epi16(_mm256_setzero_si256(), half), a);
    _mm256_add_epi16(a, _mm256_and_si256(lo, k.p))
}

#[inline]
#[target_feature(enable = "avx2")]
fn bcast(t: Tw) -> (__m256i, __m256i) {
    (_mm256_set1_epi16(t.w), _mm256_set1_epi16(t.wq))
}

#[inline]
#[target_feature(enable = "avx2")]
fn lanes(t: &TwV) -> (__m256i, __m256i) {
    // SAFETY: each array is 16 i16 = 32 bytes; unaligned loads.
    unsafe {
        (
            _mm256_loadu_si256(t.w.as_ptr().cast()),
            _mm256_loadu_si256(t.wq.as_ptr().cast()),
        )
    }
}

/// The 16 lanes at a[i..i + 16] (bounds-checked). Macros, not functions: LLVM would not inline
/// the bounds checks' panic paths, and every call would pass vectors through memory.
macro_rules! ld {
    ($a:expr, $i:expr) => {{
        let s: &[i16] = &$a[$i..$i + 16];
        // SAFETY: s has 16 i16 = 32 bytes; unaligned load (AVX: the caller has AVX2).
        unsafe { _mm256_loadu_si256(s.as_ptr().cast()) }
    }};
}

macro_rules! st {
    ($a:expr, $i:expr, $x:expr) => {{
        let x: __m256i = $x;
        let s: &mut [i16] = &mut $a[$i..$i + 16];
        // SAFETY: s has 16 i16 = 32 bytes; unaligned store (AVX: the caller has AVX2).
        unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), x) }
    }};
}

/// Cooley-Tukey butterfly: (x, y) <- (x + w y, x - w y).
#[inline]
#[target_feature(enable = "avx2")]
fn ct(x: &mut __m256i, y: &mut __m256i, (w, wq): (__m256i, __m256i), k: &K) {
    let t = mont(*y, w, wq, k);
    *y = _mm256_sub_epi16(*x, t);
    *x = _mm256_add_epi16(*x, t);
}

/// Gentleman-Sande butterfly: (x, y) <- (x + y reduced, (x - y) w). Inputs < 2^14, outputs
/// < 0.75 p.
#[inline]
#[target_feature(enable = "avx2")]
fn gs(x: &mut __m256i, y: &mut __m256i, (w, wq): (__m256i, __m256i), k: &K) {
    let d = _mm256_sub_epi16(*x, *y);
    *x = barrett(_mm256_add_epi16(*x, *y), k);
    *y = mont(d, w, wq, k);
}

/// 16x16 transpose of 16-bit lanes (its own inverse): 8x8 transposes inside the 128-bit
/// halves of rows 0-7 and of rows 8-15, then the quarter blocks exchanged.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose(r: &mut [__m256i; 16]) {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn t8(x: &[__m256i]) -> [__m256i; 8] {
        {
            let a0 = _mm256_unpacklo_epi16(x[0], x[1]);
            let a1 = _mm256_unpackhi_epi16(x[0], x[1]);
            let a2 = _mm256_unpacklo_epi16(x[2], x[3]);
            let a3 = _mm256_unpackhi_epi16(x[2], x[3]);
            let a4 = _mm256_unpacklo_epi16(x[4], x[5]);
            let a5 = _mm256_unpackhi_epi16(x[4], x[5]);
            let a6 = _mm256_unpacklo_epi16(x[6], x[7]);
            let a7 = _mm256_unpackhi_epi16(x[6], x[7]);
            let b0 = _mm256_unpacklo_epi32(a0, a2);
            let b1 = _mm256_unpackhi_epi32(a0, a2);
            let b2 = _mm256_unpacklo_epi32(a1, a3);
            let b3 = _mm256_unpackhi_epi32(a1, a3);
            let b4 = _mm256_unpacklo_epi32(a4, a6);
            let b5 = _mm256_unpackhi_epi32(a4, a6);
            let b6 = _mm256_unpacklo_epi32(a5, a7);
            let b7 = _mm256_unpackhi_epi32(a5, a7);
            [
                _mm256_unpacklo_epi64(b0, b4),
                _mm256_unpackhi_epi64(b0, b4),
                _mm256_unpacklo_epi64(b1, b5),
                _mm256_unpackhi_epi64(b1, b5),
                _mm256_unpacklo_epi64(b2, b6),
                _mm256_unpackhi_epi64(b2, b6),
                _mm256_unpacklo_epi64(b3, b7),
                _mm256_unpackhi_epi64(b3, b7),
            ]
        }
    }
    let s = t8(&r[..8]);
    let t = t8(&r[8..]);
    for i in 0..8 {
        r[i] = _mm256_permute2x128_si256::<0x20>(s[i], t[i]);
        r[8 + i] = _mm256_permute2x128_si256::<0x31>(s[i], t[i]);
    }
}

/// One vector level: blocks of 2 * stride vectors, twiddles tw[b] for block b.
#[inline]
#[target_feature(enable = "avx2")]
fn vec_level<const STRIDE: usize, const FWD: bool, const REDUCE: bool>(
    a: &mut [i16; N],
    tw: &[Tw],
    k: &K,
) {
    for b in 0..NV / (2 * STRIDE) {
        let w = bcast(tw[vec_level_off(STRIDE) + b]);
        for j in 0..STRIDE {
            let i = 16 * (2 * STRIDE * b + j);
            let (mut x, mut y) = (ld!(a, i), ld!(a, i + 16 * STRIDE));
            if FWD {
                ct(&mut x, &mut y, w, k);
            } else {
                gs(&mut x, &mut y, w, k);
            }
            if REDUCE {
                (x, y) = (barrett(x, k), barrett(y, k));
            }
            st!(a, i, x);
            st!(a, i + 16 * STRIDE, y);
        }
    }
}

/// One transposed level on the group g held in r: pairs (i, i + d), lane twiddles per block.
#[inline]
#[target_feature(enable = "avx2")]
fn lane_level<const D: usize, const FWD: bool>(r: &mut [__m256i; 16], g: usize, tw: &[TwV], k: &K) {
    for i in 0..16 {
        if i % (2 * D) < D {
            let w = lanes(&tw[lane_level_off(D) + (16 * g + i) / (2 * D)]);
            let (mut x, mut y) = (r[i], r[i + D]);
            if FWD {
                ct(&mut x, &mut y, w, k);
            } else {
                gs(&mut x, &mut y, w, k);
            }
            (r[i], r[i + D]) = (x, y);
        }
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn reduce_regs(r: &mut [__m256i; 16], k: &K) {
    for x in r.iter_mut() {
        *x = barrett(*x, k);
    }
}

/// Forward transform of a (|a_i| <= 4096) in place; outputs < 1.26 p, in permuted order.
#[target_feature(enable = "avx2")]
fn ntt(a: &mut [i16; N], t: &Prime) {
    let k = consts(t.p, t.pinv, t.barrett);
    let om = bcast(t.omega);
    // Radix 3: y_k = a0 + w^k a1 + w^2k a2 with w^2 = -1 - w; outputs reduced.
    for v in 0..NV / 3 {
        let (x0, x1, x2) = (ld!(a, 16 * v), ld!(a, 16 * (v + 32)), ld!(a, 16 * (v + 64)));
        let d = mont(_mm256_sub_epi16(x1, x2), om.0, om.1, &k);
        let y0 = _mm256_add_epi16(_mm256_add_epi16(x0, x1), x2);
        let y1 = _mm256_add_epi16(_mm256_sub_epi16(x0, x2), d);
        let y2 = _mm256_sub_epi16(_mm256_sub_epi16(x0, x1), d);
        st!(a, 16 * v, barrett(y0, &k));
        st!(a, 16 * (v + 32), barrett(y1, &k));
        st!(a, 16 * (v + 64), barrett(y2, &k));
    }
    // Each level adds < 0.75 p: reduce after three (at most 0.502 p + 2.25 p < 2^15).
    vec_level::<16, true, false>(a, &t.fwd, &k);
    vec_level::<8, true, false>(a, &t.fwd, &k);
    vec_level::<4, true, true>(a, &t.fwd, &k);
    vec_level::<2, true, false>(a, &t.fwd, &k);
    vec_level::<1, true, false>(a, &t.fwd, &k);
    for g in 0..NV / 16 {
        let mut r = [_mm256_setzero_si256(); 16];
        for (i, x) in r.iter_mut().enumerate() {
            *x = ld!(a, 256 * g + 16 * i);
        }
        transpose(&mut r);
        lane_level::<8, true>(&mut r, g, &t.fwd_lane, &k);
        reduce_regs(&mut r, &k);
        lane_level::<4, true>(&mut r, g, &t.fwd_lane, &k);
        lane_level::<2, true>(&mut r, g, &t.fwd_lane, &k);
        reduce_regs(&mut r, &k);
        lane_level::<1, true>(&mut r, g, &t.fwd_lane, &k);
        for (i, x) in r.iter().enumerate() {
            st!(a, 256 * g + 16 * i, *x);
        }
    }
}

/// Inverse transform (inputs < 2^14, in the forward's order) in place, times 1536: outputs
/// < 2.25 p.
#[target_feature(enable = "avx2")]
fn intt(a: &mut [i16; N], t: &Prime) {
    let k = consts(t.p, t.pinv, t.barrett);
    for g in 0..NV / 16 {
        let mut r = [_mm256_setzero_si256(); 16];
        for (i, x) in r.iter_mut().enumerate() {
            *x = ld!(a, 256 * g + 16 * i);
        }
        lane_level::<1, false>(&mut r, g, &t.inv_lane, &k);
        lane_level::<2, false>(&mut r, g, &t.inv_lane, &k);
        lane_level::<4, false>(&mut r, g, &t.inv_lane, &k);
        lane_level::<8, false>(&mut r, g, &t.inv_lane, &k);
        transpose(&mut r);
        for (i, x) in r.iter().enumerate() {
            st!(a, 256 * g + 16 * i, *x);
        }
    }
    vec_level::<1, false, false>(a, &t.inv, &k);
    vec_level::<2, false, false>(a, &t.inv, &k);
    vec_level::<4, false, false>(a, &t.inv, &k);
    vec_level::<8, false, false>(a, &t.inv, &k);
    vec_level::<16, false, false>(a, &t.inv, &k);
    // Inverse radix 3 (times 3): a0 = y0 + y1 + y2, a1 = y0 - y1 - d, a2 = y0 - y2 + d with
    // d = w (y1 - y2).
    let om = bcast(t.omega);
    for v in 0..NV / 3 {
        let (y0, y1, y2) = (ld!(a, 16 * v), ld!(a, 16 * (v + 32)), ld!(a, 16 * (v + 64)));
        let d = mont(_mm256_sub_epi16(y1, y2), om.0, om.1, &k);
        st!(a, 16 * v, _mm256_add_epi16(_mm256_add_epi16(y0, y1), y2));
        st!(
            a,
            16 * (v + 32),
            _mm256_sub_epi16(_mm256_sub_epi16(y0, y1), d)
        );
        st!(
            a,
            16 * (v + 64),
            _mm256_add_epi16(_mm256_sub_epi16(y0, y2), d)
        );
    }
}

/// a <- a * b * 2^-16, lane-wise.
#[target_feature(enable = "avx2")]
fn pointwise(a: &mut [i16; N], b: &[i16; N], t: &Prime) {
    let k = consts(t.p, t.pinv, t.barrett);
    for i in (0..N).step_by(16) {
        let c = mont_var(ld!(a, i), ld!(b, i), &k);
        st!(a, i, c);
    }
}

/// The quarter products of a0 + x^SPLIT a1 and b0 + x^SPLIT b1, lane-wise (times 2^-16):
/// a0 <- a0 b0, a1 <- a0 b1 + a1 b0 (reduced), b0 <- a1 b1.
#[target_feature(enable = "avx2")]
fn pointwise_split(
    a0: &mut [i16; N],
    a1: &mut [i16; N],
    b0: &mut [i16; N],
    b1: &[i16; N],
    t: &Prime,
) {
    let k = consts(t.p, t.pinv, t.barrett);
    for i in (0..N).step_by(16) {
        let (x0, x1, y0, y1) = (ld!(a0, i), ld!(a1, i), ld!(b0, i), ld!(b1, i));
        let mid = _mm256_add_epi16(mont_var(x0, y1, &k), mont_var(x1, y0, &k));
        st!(a0, i, mont_var(x0, y0, &k));
        st!(a1, i, barrett(mid, &k));
        st!(b0, i, mont_var(x1, y1, &k));
    }
}

/// t <- the values center(x) of x, zero-padded.
fn load(t: &mut [i16; N], x: &[i32], center: &impl Fn(i32) -> i16) {
    t.fill(0);
    for (t, &x) in t.iter_mut().zip(x) {
        *t = center(x);
    }
}

/// The i16 lanes of whole vectors.
fn words(v: &mut [__m256i]) -> &mut [i16] {
    // SAFETY: the slice holds 16 initialised i16 per vector (any bits are a valid i16), i16's
    // alignment divides __m256i's, and the result borrows v.
    unsafe { core::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<i16>(), 16 * v.len()) }
}

/// The full product a * b modulo each prime, times 1536 * 2^-16 (|.| < 2^15), zero beyond
/// degree 2n - 2, into d1 and d2 (length `prod_len(n)`), with `t` (4 N) as transform scratch.
#[target_feature(enable = "avx2")]
fn full_product(
    a: &[i32],
    b: &[i32],
    center: &impl Fn(i32) -> i16,
    t: &mut [i16],
    d: [&mut [i16]; 2],
) {
    let n = a.len();
    let (t0, t) = t.split_first_chunk_mut::<N>().expect("4 N");
    let (t1, t) = t.split_first_chunk_mut::<N>().expect("4 N");
    let (t2, t) = t.split_first_chunk_mut::<N>().expect("4 N");
    let (t3, _) = t.split_first_chunk_mut::<N>().expect("4 N");
    for (pr, d) in primes().iter().zip(d) {
        if n <= ONE_MAX {
            load(t0, a, center);
            load(t1, b, center);
            ntt(t0, pr);
            ntt(t1, pr);
            pointwise(t0, t1, pr);
            intt(t0, pr);
            d[..N].copy_from_slice(&t0[..]);
        } else {
            load(t0, &a[..SPLIT], center);
            load(t1, &a[SPLIT..], center);
            load(t2, &b[..SPLIT], center);
            load(t3, &b[SPLIT..], center);
            for x in [&mut *t0, &mut *t1, &mut *t2, &mut *t3] {
                ntt(x, pr);
            }
            // a b = a0 b0 + x^SPLIT (a0 b1 + a1 b0) + x^2SPLIT a1 b1; the outer terms do not
            // overlap (degrees < 2 SPLIT - 1), so at most two reduced terms meet anywhere.
            pointwise_split(t0, t1, t2, t3, pr);
            let k = consts(pr.p, pr.pinv, pr.barrett);
            for (j, c) in [&mut *t0, &mut *t1, &mut *t2].into_iter().enumerate() {
                intt(c, pr);
                for i in (0..N).step_by(16) {
                    let o = j * SPLIT + i;
                    let v = _mm256_add_epi16(ld!(d, o), barrett(ld!(c, i), &k));
                    st!(d, o, v);
                }
            }
        }
    }
}

/// Length of `full_product`'s arrays: the product, padded for the loads of the reduction.
fn prod_len(n: usize) -> usize {
    if n <= ONE_MAX {
        N + 32
    } else {
        2 * SPLIT + N
    }
}

/// The CRT constants and the exact coefficient as x1 + p1 u (x1, u centered).
struct Crt {
    k1: K,
    k2: K,
    /// 2^16 / 1536 mod p1: undoes the transforms' scale.
    f1: Tw,
    /// 2^16 / 1536 / p1 mod p2.
    f2: Tw,
    /// 1 / p1 mod p2.
    g2: Tw,
}

impl Crt {
    #[target_feature(enable = "avx2")]
    fn new() -> Crt {
        let [t1, t2] = primes();
        let (p1, p2) = (P1 as i64, P2 as i64);
        let inv = |x: i64, m: i64| pow_mod(x, m - 2, m);
        Crt {
            k1: consts(t1.p, t1.pinv, t1.barrett),
            k2: consts(t2.p, t2.pinv, t2.barrett),
            f1: tw(65536 * inv(1536, p1) % p1, P1),
            f2: tw(65536 * inv(1536, p2) % p2 * inv(p1, p2) % p2, P2),
            g2: tw(inv(p1, p2), P2),
        }
    }

    /// (x1, u) from the raw residues d1, d2 (|.| < 2^15).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn split(&self, d1: __m256i, d2: __m256i) -> (__m256i, __m256i) {
        let (f1, f2, g2) = (bcast(self.f1), bcast(self.f2), bcast(self.g2));
        let x1 = center(mont(d1, f1.0, f1.1, &self.k1), &self.k1);
        let u = _mm256_sub_epi16(
            mont(d2, f2.0, f2.1, &self.k2),
            mont(x1, g2.0, g2.1, &self.k2),
        );
        (x1, center(barrett(u, &self.k2), &self.k2))
    }
}

/// c_j = s_j + s_(n+j) + s_(n+j-1) (the last for j >= 1): x^(n+k) = x^(k+1) + x^k. Wrapping
/// 16-bit sums, then `MOD_Q`: reduced to [0, q) (sums < 2^15); else masked with `mask`.
#[inline]
#[target_feature(enable = "avx2")]
fn fold<const MOD_Q: bool>(s: &[i16], n: usize, kq: &K, mask: __m256i) -> Zeroizing<Vec<i32>> {
    let mut out = Zeroizing::new(vec![0i32; n.next_multiple_of(16)]);
    // Lane 0 of the first shifted load is s_(n-1), a low coefficient: masked off.
    let not_first = _mm256_insert_epi16::<0>(_mm256_set1_epi16(-1), 0);
    for j in (0..n).step_by(16) {
        let mut e = ld!(s, n + j - 1);
        if j == 0 {
            e = _mm256_and_si256(e, not_first);
        }
        let c = _mm256_add_epi16(_mm256_add_epi16(ld!(s, j), ld!(s, n + j)), e);
        let c = if MOD_Q {
            let c = barrett(c, kq);
            let neg = _mm256_cmpgt_epi16(_mm256_setzero_si256(), c);
            _mm256_add_epi16(c, _mm256_and_si256(neg, kq.p))
        } else {
            _mm256_and_si256(c, mask)
        };
        let o = &mut out[j..j + 16];
        // SAFETY: o has 16 i32 = 64 bytes: two unaligned 32-byte stores.
        unsafe {
            _mm256_storeu_si256(
                o.as_mut_ptr().cast(),
                _mm256_cvtepi16_epi32(_mm256_castsi256_si128(c)),
            );
            _mm256_storeu_si256(
                o.as_mut_ptr().add(8).cast(),
                _mm256_cvtepi16_epi32(_mm256_extracti128_si256::<1>(c)),
            );
        }
    }
    out.truncate(n);
    out
}

/// a * b mod (x^n - x - 1) with coefficients in [0, q). Needs q odd in Q_RANGE, |a_i|, |b_i|
/// < q, one of them <= 7 in absolute value, and n <= N_MAX (the product's coefficients then
/// stay below n * (q/2) * 7 < p1 p2 / 2).
pub(crate) fn mul_mod_q(_: Avx2, a: &[i32], b: &[i32], q: i32) -> Zeroizing<Vec<i32>> {
    assert!(b.len() == a.len() && a.len() <= N_MAX && Q_RANGE.contains(&q) && q % 2 == 1);
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe { product::<true>(a, b, q, 0) }
}

/// a * b mod (x^n - x - 1) with coefficients in [0, 2^bits). Needs 1 <= bits <= 11, one
/// operand with |.| <= 15 (taken mod 2^16) and n <= N_MAX: the other is centered mod 2^bits,
/// so the product's coefficients stay below n * 2^10 * 15 < p1 p2 / 2.
pub(crate) fn mul_mod_pow2(_: Avx2, a: &[i32], b: &[i32], bits: u32) -> Zeroizing<Vec<i32>> {
    assert!(b.len() == a.len() && a.len() <= N_MAX && (1..=11).contains(&bits));
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe { product::<false>(a, b, 0, bits) }
}

/// `MOD_Q`: a * b mod (x^n - x - 1, q); else mod (x^n - x - 1, 2^bits).
#[target_feature(enable = "avx2")]
fn product<const MOD_Q: bool>(a: &[i32], b: &[i32], q: i32, bits: u32) -> Zeroizing<Vec<i32>> {
    let n = a.len();
    let (half, q16, sh) = ((q / 2) as i16, q as i16, 16 - bits);
    // Centered representatives, without branches: mod q from (-q, q) (x - q if x > q/2, x + q
    // if x < -q/2); mod 2^bits by sign extension from bit `bits`.
    let center = |x: i32| {
        let x = x as i16;
        if MOD_Q {
            let x = x - (q16 & ((half - x) >> 15));
            x + (q16 & ((x + half) >> 15))
        } else {
            (x << sh) >> sh
        }
    };
    // All scratch in whole vectors: wiping it on drop takes one 32-byte store per vector.
    let l = prod_len(n);
    let mut ws = Zeroizing::new(vec![_mm256_setzero_si256(); (4 * N + 3 * l) / 16]);
    let w = words(&mut ws);
    let (t, w) = w.split_at_mut(4 * N);
    let (d1, w) = w.split_at_mut(l);
    let (d2, s) = w.split_at_mut(l);
    full_product(a, b, &center, t, [&mut *d1, &mut *d2]);

    let crt = Crt::new();
    let barrett_q = ((1i64 << 26) + (q / 2) as i64) / q.max(1) as i64;
    let kq = consts(q as i16, inv_mod_2_16(q as i16 | 1), barrett_q as i16);
    // p1 mod q as a Montgomery constant for q.
    let h = bcast(if MOD_Q {
        tw(P1 as i64, q as i16)
    } else {
        Tw::default()
    });
    let p1 = _mm256_set1_epi16(P1);
    for i in (0..l).step_by(16) {
        let (x1, u) = crt.split(ld!(d1, i), ld!(d2, i));
        // mod q: s = x1 + (p1 u mod q), |s| < 3841 + 4432, so three of them fit an i16; mod
        // 2^bits: s = x1 + p1 u mod 2^16.
        let pu = if MOD_Q {
            mont(u, h.0, h.1, &kq)
        } else {
            _mm256_mullo_epi16(u, p1)
        };
        st!(s, i, _mm256_add_epi16(x1, pu));
    }
    let mask = _mm256_set1_epi16(((1u32 << bits) - 1) as i16);
    fold::<MOD_Q>(s, n, &kq, mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_is_a_transpose() {
        if !std::is_x86_feature_detected!("avx2") {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        }
        let mut a = [0i16; 256];
        for (i, x) in a.iter_mut().enumerate() {
            *x = i as i16;
        }
        let mut r = [[0i16; 16]; 16];
        for (i, row) in r.iter_mut().enumerate() {
            row.copy_from_slice(&a[16 * i..16 * i + 16]);
        }
        // SAFETY: AVX2 detected above; [i16; 16] and __m256i have the same size.
        let mut v: [__m256i; 16] = unsafe { core::mem::transmute(r) };
        // SAFETY: AVX2 detected above.
        unsafe { transpose(&mut v) };
        // SAFETY: as above.
        let r: [[i16; 16]; 16] = unsafe { core::mem::transmute(v) };
        for (i, row) in r.iter().enumerate() {
            a[16 * i..16 * i + 16].copy_from_slice(row);
        }
        for r in 0..16 {
            for c in 0..16 {
                assert_eq!(a[16 * r + c], (16 * c + r) as i16);
            }
        }
    }
}
