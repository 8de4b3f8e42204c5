//! ML-DSA arithmetic mod q = 8380417 on eight 32-bit lanes (AVX2): NTT, NTT^-1 and the pointwise
//! Montgomery products. Every lane computes exactly what `mldsa::ntt` computes for that
//! coefficient (the same Montgomery reduction, the same lazy ranges), so outputs are identical.
//! No branch or index depends on coefficient values (constant time).
//!
//! Layout: the levels with butterflies 8 or more coefficients apart work on whole vectors; the
//! last three (4, 2, 1 apart) work on 8x8 transposed blocks, so that each register again holds
//! eight independent butterfly halves, with one twiddle per lane. Eight levels take two passes
//! over memory, three or five levels in registers each. Where a transpose meets memory (NTT's
//! second, NTT^-1's first), its cross-lane stage is done by the 128-bit loads or stores.

use super::zetas::{INV_F, INV_F_ZETA1, ZETAS};
use crate::simd::Avx2;
use core::arch::x86_64::*;

const N: usize = 256;
const Q: i32 = 8_380_417;
/// q^-1 mod 2^32.
const QINV: i32 = 58_728_449;

/// A vector of eight twiddles in the form `montmul_z` uses, computed at build time: the
/// twiddles, their products with q^-1 mod 2^32, and both with the odd lanes moved down (as
/// `odd` would), so that NTT and NTT^-1 load them instead of multiplying per call.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Tw([[i32; 8]; 4]);

const fn tw(z: [i32; 8]) -> Tw {
    let mut t = [[0i32; 8]; 4];
    let mut i = 0;
    while i < 8 {
        let o = i | 1;
        t[0][i] = z[i];
        t[1][i] = z[i].wrapping_mul(QINV);
        t[2][i] = z[o];
        t[3][i] = z[o].wrapping_mul(QINV);
        i += 1;
    }
    Tw(t)
}

/// ZETAS[k] * q^-1 mod 2^32, for the twiddles broadcast to all lanes.
const fn zetas_qinv() -> [i32; N] {
    let mut t = [0i32; N];
    let mut k = 0;
    while k < N {
        t[k] = ZETAS[k].wrapping_mul(QINV);
        k += 1;
    }
    t
}
static ZETAS_QINV: [i32; N] = zetas_qinv();

/// -ZETAS[k] and -ZETAS[k] * q^-1 mod 2^32, for NTT^-1's broadcast twiddles (a broadcast load,
/// not a load, a negation and a move into a vector register per twiddle).
const fn neg_zetas() -> [[i32; 2]; N] {
    let mut t = [[0i32; 2]; N];
    let mut k = 0;
    while k < N {
        t[k] = [-ZETAS[k], ZETAS[k].wrapping_mul(QINV).wrapping_neg()];
        k += 1;
    }
    t
}
static NEG_ZETAS: [[i32; 2]; N] = neg_zetas();

/// Twiddles of the three transposed levels, per group g of 64 coefficients, one per lane i
/// (the lane holds the 8 coefficients 64g + 8i .. 64g + 8i + 8):
/// level 4 apart: ZETAS[32 + 8g + i]; 2 apart: ZETAS[64 + 16g + 2i + h] for half h;
/// 1 apart: ZETAS[128 + 32g + 4i + m] for pair m.
const fn fwd_tables() -> [[Tw; 7]; 4] {
    let mut t = [[tw([0; 8]); 7]; 4];
    let mut g = 0;
    while g < 4 {
        let mut z = [[0i32; 8]; 7];
        let mut i = 0;
        while i < 8 {
            z[0][i] = ZETAS[32 + 8 * g + i];
            z[1][i] = ZETAS[64 + 16 * g + 2 * i];
            z[2][i] = ZETAS[64 + 16 * g + 2 * i + 1];
            let mut m = 0;
            while m < 4 {
                z[3 + m][i] = ZETAS[128 + 32 * g + 4 * i + m];
                m += 1;
            }
            i += 1;
        }
        let mut j = 0;
        while j < 7 {
            t[g][j] = tw(z[j]);
            j += 1;
        }
        g += 1;
    }
    t
}
static FWD: [[Tw; 7]; 4] = fwd_tables();

/// The same for NTT^-1, negated and in its order: block b of the level 1 apart uses
/// -ZETAS[255 - b], 2 apart -ZETAS[127 - b], 4 apart -ZETAS[63 - b].
const fn inv_tables() -> [[Tw; 7]; 4] {
    let mut t = [[tw([0; 8]); 7]; 4];
    let mut g = 0;
    while g < 4 {
        let mut z = [[0i32; 8]; 7];
        let mut i = 0;
        while i < 8 {
            let mut m = 0;
            while m < 4 {
                z[m][i] = -ZETAS[255 - (32 * g + 4 * i + m)];
                m += 1;
            }
            z[4][i] = -ZETAS[127 - (16 * g + 2 * i)];
            z[5][i] = -ZETAS[127 - (16 * g + 2 * i + 1)];
            z[6][i] = -ZETAS[63 - (8 * g + i)];
            i += 1;
        }
        let mut j = 0;
        while j < 7 {
            t[g][j] = tw(z[j]);
            j += 1;
        }
        g += 1;
    }
    t
}
static INV: [[Tw; 7]; 4] = inv_tables();

/// The odd lanes moved down to the even ones (their upper copy stays): the 32-bit operands of
/// `_mm256_mul_epi32` for lanes 1, 3, 5, 7. A shuffle, so it does not compete with the
/// multiplies for their ports as a shift would.
#[inline]
#[target_feature(enable = "avx2")]
fn odd(x: __m256i) -> __m256i {
    _mm256_castps_si256(_mm256_movehdup_ps(_mm256_castsi256_ps(x)))
}

/// Montgomery reduction of even- and odd-lane 64-bit products p: (p - t*q) >> 32, with t the
/// low 32 bits of `t_e`/`t_o` (= p * q^-1 mod 2^32, signed). The low halves of p and t*q agree,
/// so the difference of the high halves is the exact result (that of `reduce::montgomery_reduce`).
#[inline]
#[target_feature(enable = "avx2")]
fn reduce_halves(p_e: __m256i, p_o: __m256i, t_e: __m256i, t_o: __m256i) -> __m256i {
    let q = _mm256_set1_epi32(Q);
    let r_e = _mm256_sub_epi32(p_e, _mm256_mul_epi32(t_e, q));
    let r_o = _mm256_sub_epi32(p_o, _mm256_mul_epi32(t_o, q));
    // Results sit in the high 32 bits of each 64-bit lane.
    _mm256_blend_epi32::<0xAA>(odd(r_e), r_o)
}

/// montgomery_reduce(a * z) on each lane for a twiddle `z` with its products precomputed:
/// t = a * (z q^-1) mod 2^32 is the low half of one more product, no 32-bit `mullo` needed.
#[inline]
#[target_feature(enable = "avx2")]
fn montmul_z(a: __m256i, z: Z) -> __m256i {
    let a_o = odd(a);
    let p_e = _mm256_mul_epi32(a, z.0);
    let p_o = _mm256_mul_epi32(a_o, z.2);
    let t_e = _mm256_mul_epi32(a, z.1);
    let t_o = _mm256_mul_epi32(a_o, z.3);
    reduce_halves(p_e, p_o, t_e, t_o)
}

/// montgomery_reduce(a * b) on each lane.
#[inline]
#[target_feature(enable = "avx2")]
fn montmul(a: __m256i, b: __m256i) -> __m256i {
    let qinv = _mm256_set1_epi32(QINV);
    let p_e = _mm256_mul_epi32(a, b);
    let p_o = _mm256_mul_epi32(odd(a), odd(b));
    reduce_halves(
        p_e,
        p_o,
        _mm256_mul_epi32(p_e, qinv),
        _mm256_mul_epi32(p_o, qinv),
    )
}

/// A twiddle, its product with q^-1 mod 2^32, and both again with the odd lanes moved down
/// (see `odd`).
#[derive(Clone, Copy)]
struct Z(__m256i, __m256i, __m256i, __m256i);

/// 8x8 transpose of 32-bit lanes (its own inverse): `unpack_stages`, then the 128-bit halves
/// exchanged. The transpose swaps each bit of the register index with that bit of the lane
/// index; the unpacks swap bits 0 and 1, the last stage bit 2, so the two commute, and the
/// halves can be exchanged on the way in or out of memory instead (`load8_halves`,
/// `store8_halves`), with loads and stores instead of cross-lane shuffles.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose(r: &mut [__m256i; 8]) {
    unpack_stages(r);
    let u = *r;
    for m in 0..4 {
        r[m] = _mm256_permute2x128_si256::<0x20>(u[m], u[m + 4]);
        r[m + 4] = _mm256_permute2x128_si256::<0x31>(u[m], u[m + 4]);
    }
}

/// The first two stages of `transpose`: bits 0 and 1 of register and lane index swapped.
#[inline]
#[target_feature(enable = "avx2")]
fn unpack_stages(r: &mut [__m256i; 8]) {
    let t0 = _mm256_unpacklo_epi32(r[0], r[1]);
    let t1 = _mm256_unpackhi_epi32(r[0], r[1]);
    let t2 = _mm256_unpacklo_epi32(r[2], r[3]);
    let t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    let t4 = _mm256_unpacklo_epi32(r[4], r[5]);
    let t5 = _mm256_unpackhi_epi32(r[4], r[5]);
    let t6 = _mm256_unpacklo_epi32(r[6], r[7]);
    let t7 = _mm256_unpackhi_epi32(r[6], r[7]);
    r[0] = _mm256_unpacklo_epi64(t0, t2);
    r[1] = _mm256_unpackhi_epi64(t0, t2);
    r[2] = _mm256_unpacklo_epi64(t1, t3);
    r[3] = _mm256_unpackhi_epi64(t1, t3);
    r[4] = _mm256_unpacklo_epi64(t4, t6);
    r[5] = _mm256_unpackhi_epi64(t4, t6);
    r[6] = _mm256_unpacklo_epi64(t5, t7);
    r[7] = _mm256_unpackhi_epi64(t5, t7);
}

/// The eight rows a[base + 8m..] (m = 0..8) with their 128-bit halves exchanged as the last
/// stage of `transpose` does: register m gets the low halves of rows m and m + 4, register
/// m + 4 their high halves.
#[inline]
#[target_feature(enable = "avx2")]
fn load8_halves(a: &[i32; N], base: usize) -> [__m256i; 8] {
    assert!(base <= N - 64);
    let p = a.as_ptr();
    // SAFETY: every 4-lane half read lies in a[base..base + 64] (checked above); the loads
    // are unaligned forms.
    let h = |i: usize| unsafe { _mm_loadu_si128(p.add(base + i) as *const __m128i) };
    core::array::from_fn(|m| {
        let (row, off) = (m % 4, 4 * (m / 4));
        _mm256_inserti128_si256::<1>(
            _mm256_castsi128_si256(h(8 * row + off)),
            h(8 * (row + 4) + off),
        )
    })
}

/// The inverse of `load8_halves`: rows m and m + 4 from registers m and m + 4.
#[inline]
#[target_feature(enable = "avx2")]
fn store8_halves(a: &mut [i32; N], base: usize, r: &[__m256i; 8]) {
    assert!(base <= N - 64);
    let p = a.as_mut_ptr();
    for (m, v) in r.iter().enumerate() {
        let (row, off) = (m % 4, 4 * (m / 4));
        // SAFETY: both 4-lane halves written lie in a[base..base + 64] (checked above); the
        // stores are unaligned forms.
        unsafe {
            _mm_storeu_si128(
                p.add(base + 8 * row + off) as *mut __m128i,
                _mm256_castsi256_si128(*v),
            );
            _mm_storeu_si128(
                p.add(base + 8 * (row + 4) + off) as *mut __m128i,
                _mm256_extracti128_si256::<1>(*v),
            );
        }
    }
}

/// Eight coefficients from `a[i..]` (also used by `rounding_avx2`).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn load(a: &[i32; N], i: usize) -> __m256i {
    assert!(i <= N - 8);
    // SAFETY: a[i..i + 8] is in bounds (checked above; the check folds away for the loop
    // indices used here); loadu has no alignment requirement.
    unsafe { _mm256_loadu_si256(a.as_ptr().add(i) as *const __m256i) }
}

/// Eight coefficients into `a[i..]`.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn store(a: &mut [i32; N], i: usize, x: __m256i) {
    assert!(i <= N - 8);
    // SAFETY: a[i..i + 8] is in bounds (checked above); storeu has no alignment requirement.
    unsafe { _mm256_storeu_si256(a.as_mut_ptr().add(i) as *mut __m256i, x) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn table(t: &Tw) -> Z {
    // SAFETY: each row of `t` is 8 readable i32s.
    let v = |r: &[i32; 8]| unsafe { _mm256_loadu_si256(r.as_ptr() as *const __m256i) };
    Z(v(&t.0[0]), v(&t.0[1]), v(&t.0[2]), v(&t.0[3]))
}

/// Cooley-Tukey butterfly: (x, y) -> (x + z*y, x - z*y).
#[inline]
#[target_feature(enable = "avx2")]
fn ct(x: &mut __m256i, y: &mut __m256i, z: Z) {
    let t = montmul_z(*y, z);
    *y = _mm256_sub_epi32(*x, t);
    *x = _mm256_add_epi32(*x, t);
}

/// Gentleman-Sande butterfly: (x, y) -> (x + y, z*(x - y)).
#[inline]
#[target_feature(enable = "avx2")]
fn gs(x: &mut __m256i, y: &mut __m256i, z: Z) {
    let t = *x;
    *x = _mm256_add_epi32(t, *y);
    *y = montmul_z(_mm256_sub_epi32(t, *y), z);
}

/// NTT^-1's last butterfly with the final factor merged: (x, y) -> (f (x + y), fz (x - y)).
#[inline]
#[target_feature(enable = "avx2")]
fn last(x: &mut __m256i, y: &mut __m256i, f: Z, fz: Z) {
    let t = *x;
    *x = montmul_z(_mm256_add_epi32(t, *y), f);
    *y = montmul_z(_mm256_sub_epi32(t, *y), fz);
}

/// Loads the eight vectors a[base + stride * m], m = 0..8.
#[inline]
#[target_feature(enable = "avx2")]
fn load8(a: &[i32; N], base: usize, stride: usize) -> [__m256i; 8] {
    core::array::from_fn(|m| load(a, base + stride * m))
}

#[inline]
#[target_feature(enable = "avx2")]
fn store8(a: &mut [i32; N], base: usize, stride: usize, r: &[__m256i; 8]) {
    for (m, v) in r.iter().enumerate() {
        store(a, base + stride * m, *v);
    }
}

/// ZETAS[k] on every lane (its odd lanes are its even ones).
#[inline]
#[target_feature(enable = "avx2")]
fn zk(k: usize) -> Z {
    let (z, zq) = (
        _mm256_set1_epi32(ZETAS[k]),
        _mm256_set1_epi32(ZETAS_QINV[k]),
    );
    Z(z, zq, z, zq)
}

/// The constant `c` on every lane.
#[inline]
#[target_feature(enable = "avx2")]
fn zc(c: i32) -> Z {
    let (z, zq) = (
        _mm256_set1_epi32(c),
        _mm256_set1_epi32(c.wrapping_mul(QINV)),
    );
    Z(z, zq, z, zq)
}

/// -ZETAS[k] on every lane ((-z) q^-1 = -(z q^-1) mod 2^32).
#[inline]
#[target_feature(enable = "avx2")]
fn zk_inv(k: usize) -> Z {
    let (z, zq) = (
        _mm256_set1_epi32(NEG_ZETAS[k][0]),
        _mm256_set1_epi32(NEG_ZETAS[k][1]),
    );
    Z(z, zq, z, zq)
}

/// Two passes over memory: levels 128, 64, 32 apart on the columns a[8c + 32m] (m = 0..8), then
/// levels 16 and 8 apart and the three transposed levels on each 64-coefficient group. Each
/// butterfly is the one of `mldsa::ntt::ntt` with the same twiddle (k as there).
#[target_feature(enable = "avx2")]
fn ntt_avx2(a: &mut [i32; N]) {
    for c in 0..4 {
        let mut r = load8(a, 8 * c, 32);
        let [r0, r1, r2, r3, r4, r5, r6, r7] = &mut r;
        let z = zk(1);
        ct(r0, r4, z);
        ct(r1, r5, z);
        ct(r2, r6, z);
        ct(r3, r7, z);
        let (z0, z1) = (zk(2), zk(3));
        ct(r0, r2, z0);
        ct(r1, r3, z0);
        ct(r4, r6, z1);
        ct(r5, r7, z1);
        ct(r0, r1, zk(4));
        ct(r2, r3, zk(5));
        ct(r4, r5, zk(6));
        ct(r6, r7, zk(7));
        store8(a, 8 * c, 32, &r);
    }
    for (g, zt) in FWD.iter().enumerate() {
        let mut r = load8(a, 64 * g, 8);
        {
            let [r0, r1, r2, r3, r4, r5, r6, r7] = &mut r;
            let (z0, z1) = (zk(8 + 2 * g), zk(9 + 2 * g));
            ct(r0, r2, z0);
            ct(r1, r3, z0);
            ct(r4, r6, z1);
            ct(r5, r7, z1);
            ct(r0, r1, zk(16 + 4 * g));
            ct(r2, r3, zk(17 + 4 * g));
            ct(r4, r5, zk(18 + 4 * g));
            ct(r6, r7, zk(19 + 4 * g));
        }
        transpose(&mut r);
        // r[j] now holds coefficient j of each 8-block; pairs 4, 2 and 1 apart.
        let [r0, r1, r2, r3, r4, r5, r6, r7] = &mut r;
        let z = table(&zt[0]);
        ct(r0, r4, z);
        ct(r1, r5, z);
        ct(r2, r6, z);
        ct(r3, r7, z);
        let (z0, z1) = (table(&zt[1]), table(&zt[2]));
        ct(r0, r2, z0);
        ct(r1, r3, z0);
        ct(r4, r6, z1);
        ct(r5, r7, z1);
        ct(r0, r1, table(&zt[3]));
        ct(r2, r3, table(&zt[4]));
        ct(r4, r5, table(&zt[5]));
        ct(r6, r7, table(&zt[6]));
        // The transpose back, its last stage in the stores.
        unpack_stages(&mut r);
        store8_halves(a, 64 * g, &r);
    }
}

/// The mirror of `ntt_avx2`, with the twiddles of `mldsa::ntt::invntt_tomont` and its final
/// factor merged into the last level, as there.
#[target_feature(enable = "avx2")]
fn invntt_avx2(a: &mut [i32; N]) {
    for (g, zt) in INV.iter().enumerate() {
        // The transpose, its last stage in the loads.
        let mut r = load8_halves(a, 64 * g);
        unpack_stages(&mut r);
        {
            let [r0, r1, r2, r3, r4, r5, r6, r7] = &mut r;
            gs(r0, r1, table(&zt[0]));
            gs(r2, r3, table(&zt[1]));
            gs(r4, r5, table(&zt[2]));
            gs(r6, r7, table(&zt[3]));
            let (z0, z1) = (table(&zt[4]), table(&zt[5]));
            gs(r0, r2, z0);
            gs(r1, r3, z0);
            gs(r4, r6, z1);
            gs(r5, r7, z1);
            let z = table(&zt[6]);
            gs(r0, r4, z);
            gs(r1, r5, z);
            gs(r2, r6, z);
            gs(r3, r7, z);
        }
        transpose(&mut r);
        let [r0, r1, r2, r3, r4, r5, r6, r7] = &mut r;
        // 8 apart: block 4g + h uses k = 31 - (4g + h); 16 apart: block 2g + h, k = 15 - (2g + h).
        gs(r0, r1, zk_inv(31 - 4 * g));
        gs(r2, r3, zk_inv(30 - 4 * g));
        gs(r4, r5, zk_inv(29 - 4 * g));
        gs(r6, r7, zk_inv(28 - 4 * g));
        let (z0, z1) = (zk_inv(15 - 2 * g), zk_inv(14 - 2 * g));
        gs(r0, r2, z0);
        gs(r1, r3, z0);
        gs(r4, r6, z1);
        gs(r5, r7, z1);
        store8(a, 64 * g, 8, &r);
    }
    // The last level merges the final factor, as `mldsa::ntt::invntt_tomont` does.
    let f = zc(INV_F as i32);
    let fz = zc(INV_F_ZETA1 as i32);
    for c in 0..4 {
        let mut r = load8(a, 8 * c, 32);
        {
            let [r0, r1, r2, r3, r4, r5, r6, r7] = &mut r;
            gs(r0, r1, zk_inv(7));
            gs(r2, r3, zk_inv(6));
            gs(r4, r5, zk_inv(5));
            gs(r6, r7, zk_inv(4));
            let (z0, z1) = (zk_inv(3), zk_inv(2));
            gs(r0, r2, z0);
            gs(r1, r3, z0);
            gs(r4, r6, z1);
            gs(r5, r7, z1);
            // Written out, not a loop over pairs of references: that loop kept r in memory.
            last(r0, r4, f, fz);
            last(r1, r5, f, fz);
            last(r2, r6, f, fz);
            last(r3, r7, f, fz);
        }
        store8(a, 8 * c, 32, &r);
    }
}

#[target_feature(enable = "avx2")]
fn pointwise_avx2(c: &mut [i32; N], a: &[i32; N], b: &[i32; N]) {
    for i in (0..N).step_by(8) {
        store(c, i, montmul(load(a, i), load(b, i)));
    }
}

#[target_feature(enable = "avx2")]
fn pointwise_dot_avx2<const L: usize>(c: &mut [i32; N], a: &[&[i32; N]; L], b: &[&[i32; N]; L]) {
    let qinv = _mm256_set1_epi32(QINV);
    for i in (0..N).step_by(8) {
        // The 64-bit products of even and odd lanes, summed; one reduction at the end.
        let (mut p_e, mut p_o) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        for j in 0..L {
            let (x, y) = (load(a[j], i), load(b[j], i));
            p_e = _mm256_add_epi64(p_e, _mm256_mul_epi32(x, y));
            p_o = _mm256_add_epi64(p_o, _mm256_mul_epi32(odd(x), odd(y)));
        }
        let t_e = _mm256_mul_epi32(p_e, qinv);
        let t_o = _mm256_mul_epi32(p_o, qinv);
        store(c, i, reduce_halves(p_e, p_o, t_e, t_o));
    }
}

/// `mldsa::ntt::ntt` on AVX2.
pub(crate) fn ntt(_: Avx2, a: &mut [i32; N]) {
    // SAFETY: an `Avx2` token exists only after std::is_x86_feature_detected!("avx2").
    unsafe { ntt_avx2(a) }
}

/// `mldsa::ntt::invntt_tomont` on AVX2.
pub(crate) fn invntt_tomont(_: Avx2, a: &mut [i32; N]) {
    // SAFETY: as in `ntt`.
    unsafe { invntt_avx2(a) }
}

/// `mldsa::ntt::pointwise_montgomery`.
pub(crate) fn pointwise(_: Avx2, c: &mut [i32; N], a: &[i32; N], b: &[i32; N]) {
    // SAFETY: as in `ntt`.
    unsafe { pointwise_avx2(c, a, b) }
}

/// c = montgomery_reduce(sum over j of a[j] * b[j]) coefficient-wise (`polyvec::row_product`),
/// L >= 1 pairs.
pub(crate) fn pointwise_dot<const L: usize>(
    _: Avx2,
    c: &mut [i32; N],
    a: &[&[i32; N]; L],
    b: &[&[i32; N]; L],
) {
    const { assert!(L >= 1) };
    // SAFETY: as in `ntt`.
    unsafe { pointwise_dot_avx2(c, a, b) }
}

/// Applies `f` to each vector of `a` in place.
#[inline]
#[target_feature(enable = "avx2")]
fn map(a: &mut [i32; N], f: impl Fn(__m256i) -> __m256i) {
    for i in (0..N).step_by(8) {
        store(a, i, f(load(a, i)));
    }
}

#[target_feature(enable = "avx2")]
fn reduce32_avx2(a: &mut [i32; N]) {
    let q = _mm256_set1_epi32(Q);
    let half = _mm256_set1_epi32(1 << 22);
    map(a, |x| {
        let t = _mm256_srai_epi32::<23>(_mm256_add_epi32(x, half));
        _mm256_sub_epi32(x, _mm256_mullo_epi32(t, q))
    });
}

#[target_feature(enable = "avx2")]
fn caddq_avx2(a: &mut [i32; N]) {
    let q = _mm256_set1_epi32(Q);
    map(a, |x| {
        _mm256_add_epi32(x, _mm256_and_si256(_mm256_srai_epi32::<31>(x), q))
    });
}

#[target_feature(enable = "avx2")]
fn add_sub_avx2(a: &mut [i32; N], b: &[i32; N], sub: bool) {
    for i in (0..N).step_by(8) {
        let (x, y) = (load(a, i), load(b, i));
        let r = if sub {
            _mm256_sub_epi32(x, y)
        } else {
            _mm256_add_epi32(x, y)
        };
        store(a, i, r);
    }
}

#[target_feature(enable = "avx2")]
fn exceeds_avx2(a: &[i32; N], bound: i32) -> bool {
    let lim = _mm256_set1_epi32(bound.wrapping_sub(1));
    let mut over = _mm256_setzero_si256();
    for i in (0..N).step_by(8) {
        // (bound - 1 - |c|) < 0 for some lane; sign bits are OR-ed, no early exit.
        let d = _mm256_sub_epi32(lim, _mm256_abs_epi32(load(a, i)));
        over = _mm256_or_si256(over, d);
    }
    _mm256_movemask_ps(_mm256_castsi256_ps(over)) != 0
}

/// `reduce32` on every coefficient.
pub(crate) fn reduce32(_: Avx2, a: &mut [i32; N]) {
    // SAFETY: as in `ntt`.
    unsafe { reduce32_avx2(a) }
}

/// `caddq` on every coefficient.
pub(crate) fn caddq(_: Avx2, a: &mut [i32; N]) {
    // SAFETY: as in `ntt`.
    unsafe { caddq_avx2(a) }
}

/// a += b (sub = false) or a -= b (sub = true), wrapping like the portable i32 arithmetic in
/// release builds (the operands stay far from overflow).
pub(crate) fn add_sub(_: Avx2, a: &mut [i32; N], b: &[i32; N], sub: bool) {
    // SAFETY: as in `ntt`.
    unsafe { add_sub_avx2(a, b, sub) }
}

/// `Poly::exceeds`: some |c| >= bound, every coefficient examined.
pub(crate) fn exceeds(_: Avx2, a: &[i32; N], bound: i32) -> bool {
    // SAFETY: as in `ntt`.
    unsafe { exceeds_avx2(a, bound) }
}
