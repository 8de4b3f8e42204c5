//! NTT and NTT^-1 (FIPS 204 Alg. 41 and 42) on Montgomery-form twiddles, and the pointwise product
//! (Alg. 45, MultiplyNTT). Coefficients are not reduced between layers; callers keep inputs below q
//! in absolute value (NTT) or reduce first (NTT^-1), as the pq-crystals reference does.

use super::params::N;
use super::reduce::montgomery_reduce;
use super::zetas::{INV_F, INV_F_ZETA1, ZETAS};
use crate::simd::{self, Level};

/// NTT (Alg. 41), in place. Output coefficients are bounded by 9q in absolute value when the input is below q.
pub fn ntt(a: &mut [i32; N]) {
    ntt_with(simd::level(), a)
}

/// `ntt` on the given vector level (the AVX2 code computes the same values).
pub(crate) fn ntt_with(level: Level, a: &mut [i32; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = level.avx2() {
        return super::avx2::ntt(t, a);
    }
    let _ = level;
    let mut k = 0;
    let mut len = 128;
    while len > 0 {
        let mut start = 0;
        while start < N {
            k += 1;
            let zeta = ZETAS[k] as i64;
            for j in start..start + len {
                let t = montgomery_reduce(zeta * a[j + len] as i64);
                a[j + len] = a[j] - t;
                a[j] += t;
            }
            start += 2 * len;
        }
        len >>= 1;
    }
}

/// NTT^-1 (Alg. 42) followed by multiplication with the Montgomery factor 2^32, in place. The
/// final factor is merged into the last level, as the pq-crystals reference does (outputs are
/// the same mod q, and still below q in absolute value).
/// Input coefficients must be below q in absolute value; outputs are again below q.
pub fn invntt_tomont(a: &mut [i32; N]) {
    invntt_tomont_with(simd::level(), a)
}

/// `invntt_tomont` on the given vector level.
pub(crate) fn invntt_tomont_with(level: Level, a: &mut [i32; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = level.avx2() {
        return super::avx2::invntt_tomont(t, a);
    }
    let _ = level;
    let mut k = N;
    let mut len = 1;
    while len < N / 2 {
        let mut start = 0;
        while start < N {
            k -= 1;
            let zeta = -(ZETAS[k] as i64);
            for j in start..start + len {
                let t = a[j];
                a[j] = t + a[j + len];
                a[j + len] = montgomery_reduce(zeta * (t - a[j + len]) as i64);
            }
            start += 2 * len;
        }
        len <<= 1;
    }
    // The last level (128 apart, twiddle -ZETAS[1]) with the final factor merged into it.
    for j in 0..N / 2 {
        let (t, u) = (a[j] as i64, a[j + N / 2] as i64);
        a[j] = montgomery_reduce(INV_F * (t + u));
        a[j + N / 2] = montgomery_reduce(INV_F_ZETA1 * (t - u));
    }
}

/// c = a * b * 2^-32 coefficient-wise (MultiplyNTT with one Montgomery factor absorbed).
#[inline]
pub fn pointwise_montgomery(c: &mut [i32; N], a: &[i32; N], b: &[i32; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = simd::level().avx2() {
        return super::avx2::pointwise(t, c, a, b);
    }
    for i in 0..N {
        c[i] = montgomery_reduce(a[i] as i64 * b[i] as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mldsa::params::Q;

    fn lcg(seed: &mut u64) -> u32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 32) as u32
    }

    /// Random coefficients with |c| < bound.
    fn random_poly(seed: &mut u64, bound: i32) -> [i32; N] {
        core::array::from_fn(|_| (lcg(seed) % (2 * bound as u32 - 1)) as i32 - (bound - 1))
    }

    #[test]
    fn vector_levels_match_portable() {
        let mut seed = 3;
        for round in 0..2000 {
            // Inputs at the documented limits: |a| < q for both transforms, and NTT outputs
            // (|c| < 9q) for the pointwise products, as ML-DSA feeds them.
            let bound = if round % 2 == 0 {
                Q
            } else {
                1 << (round % 23).max(1)
            };
            let a = random_poly(&mut seed, bound);
            let b = random_poly(&mut seed, 9 * Q);
            let c = random_poly(&mut seed, 9 * Q);
            let mut f0 = a;
            ntt_with(Level::Portable, &mut f0);
            let mut i0 = a;
            invntt_tomont_with(Level::Portable, &mut i0);
            let mut p0 = [0; N];
            for j in 0..N {
                p0[j] = montgomery_reduce(b[j] as i64 * c[j] as i64);
            }
            for level in simd::available() {
                let mut f = a;
                ntt_with(level, &mut f);
                assert_eq!(f, f0, "ntt {level:?}");
                let mut i = a;
                invntt_tomont_with(level, &mut i);
                assert_eq!(i, i0, "invntt {level:?}");
                #[cfg(target_arch = "x86_64")]
                if let Some(t) = level.avx2() {
                    let mut p = [0; N];
                    crate::mldsa::avx2::pointwise(t, &mut p, &b, &c);
                    assert_eq!(p, p0, "pointwise");
                    // A row of A-hat (|a| < q) times NTT outputs (|b| < 9q), as in ExpandA's
                    // products for l = 4, 5, 7 (and 1).
                    fn dot<const L: usize>(t: crate::simd::Avx2, seed: &mut u64) {
                        let rows: [[i32; N]; L] = core::array::from_fn(|_| random_poly(seed, Q));
                        let cols: [[i32; N]; L] =
                            core::array::from_fn(|_| random_poly(seed, 9 * Q));
                        let mut d0 = [0; N];
                        for j in 0..N {
                            d0[j] = montgomery_reduce(
                                (0..L).map(|m| rows[m][j] as i64 * cols[m][j] as i64).sum(),
                            );
                        }
                        let mut d = [0; N];
                        let (ra, ca) = (rows.each_ref(), cols.each_ref());
                        crate::mldsa::avx2::pointwise_dot(t, &mut d, &ra, &ca);
                        assert_eq!(d, d0, "pointwise dot, {L} pairs");
                    }
                    match round % 4 {
                        0 => dot::<1>(t, &mut seed),
                        1 => dot::<4>(t, &mut seed),
                        2 => dot::<5>(t, &mut seed),
                        _ => dot::<7>(t, &mut seed),
                    }
                }
            }
        }
    }

    #[test]
    fn zetas_match_reference_table_start() {
        // First entries of the pq-crystals table (Montgomery form, centred).
        assert_eq!(&ZETAS[..6], &[0, 25847, -2608894, -518909, 237124, -777960]);
        assert_eq!(ZETAS[255], 1_976_782);
    }

    #[test]
    fn ntt_round_trip_and_product() {
        let mut a = [0i32; N];
        let mut b = [0i32; N];
        for i in 0..N {
            a[i] = ((i as i64 * 7919 + 13) % Q as i64) as i32 - Q / 2;
            b[i] = (i as i32 % 5) - 2;
        }
        // Round trip: invntt_tomont(ntt(a)) = a * 2^32; one Montgomery reduction removes it.
        let mut t = a;
        ntt(&mut t);
        for c in t.iter_mut() {
            *c = super::super::reduce::reduce32(*c);
        }
        invntt_tomont(&mut t);
        for i in 0..N {
            let back = montgomery_reduce(t[i] as i64);
            assert_eq!((back - a[i]).rem_euclid(Q), 0, "coefficient {i}");
        }
        // Product in Z_q[X]/(X^256+1) against schoolbook.
        let (mut ah, mut bh) = (a, b);
        ntt(&mut ah);
        ntt(&mut bh);
        let mut c = [0i32; N];
        pointwise_montgomery(&mut c, &ah, &bh);
        invntt_tomont(&mut c);
        let mut school = [0i64; N];
        for i in 0..N {
            for j in 0..N {
                let p = a[i] as i64 * b[j] as i64;
                if i + j < N {
                    school[i + j] += p;
                } else {
                    school[i + j - N] -= p;
                }
            }
        }
        for i in 0..N {
            assert_eq!(
                (c[i] as i64 - school[i]).rem_euclid(Q as i64),
                0,
                "coefficient {i}"
            );
        }
    }
}
