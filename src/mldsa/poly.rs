//! Polynomials of R_q = Z_q[X]/(X^256 + 1) as 256 signed coefficients.

use super::ntt;
use super::params::{D, N};
use super::reduce::{abs, caddq, reduce32};
use crate::simd;
use zeroize::Zeroize;

#[derive(Clone, Copy)]
pub struct Poly(pub [i32; N]);

/// Cleared 8 bytes per volatile store (the derived impl stores one coefficient at a time).
impl Zeroize for Poly {
    fn zeroize(&mut self) {
        simd::wipe::wipe_i32(&mut self.0);
    }
}

impl Default for Poly {
    fn default() -> Self {
        Poly([0; N])
    }
}

impl Poly {
    pub fn ntt(&mut self) {
        ntt::ntt(&mut self.0);
    }

    pub fn invntt_tomont(&mut self) {
        ntt::invntt_tomont(&mut self.0);
    }

    pub fn reduce(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = simd::level().avx2() {
            return super::avx2::reduce32(t, &mut self.0);
        }
        self.0.iter_mut().for_each(|c| *c = reduce32(*c));
    }

    pub fn caddq(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = simd::level().avx2() {
            return super::avx2::caddq(t, &mut self.0);
        }
        self.0.iter_mut().for_each(|c| *c = caddq(*c));
    }

    pub fn add_assign(&mut self, b: &Poly) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = simd::level().avx2() {
            return super::avx2::add_sub(t, &mut self.0, &b.0, false);
        }
        self.0.iter_mut().zip(b.0.iter()).for_each(|(a, b)| *a += b);
    }

    pub fn sub_assign(&mut self, b: &Poly) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = simd::level().avx2() {
            return super::avx2::add_sub(t, &mut self.0, &b.0, true);
        }
        self.0.iter_mut().zip(b.0.iter()).for_each(|(a, b)| *a -= b);
    }

    /// Multiplies by 2^d (t1 * 2^d in Alg. 8).
    pub fn shiftl(&mut self) {
        self.0.iter_mut().for_each(|c| *c <<= D);
    }

    /// self = a * b * 2^-32 in the NTT domain.
    pub fn pointwise_montgomery(&mut self, a: &Poly, b: &Poly) {
        ntt::pointwise_montgomery(&mut self.0, &a.0, &b.0);
    }

    /// True iff some coefficient (reduced, centred) has |c| >= bound. Every coefficient is
    /// examined without branching; only the combined verdict is returned.
    pub fn exceeds(&self, bound: i32) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = simd::level().avx2() {
            return super::avx2::exceeds(t, &self.0, bound);
        }
        let over = self
            .0
            .iter()
            .fold(0i32, |acc, &c| acc | ((bound - 1 - abs(c)) >> 31));
        over != 0
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::mldsa::avx2 as v;

    #[test]
    fn vector_poly_ops_match_portable() {
        let Some(t) = crate::simd::available().last().and_then(|l| l.avx2()) else {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let mut seed = 5u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 32) as u32 as i32
        };
        for round in 0..500 {
            // Full-range values for reduce32's documented domain and around the bounds.
            let a: [i32; N] = core::array::from_fn(|_| match round % 3 {
                0 => next().min(i32::MAX - (1 << 22) - 1),
                1 => next() >> 8,
                _ => next() % 600_000,
            });
            let b: [i32; N] = core::array::from_fn(|_| next() >> 2);
            let (mut x, mut y) = (a, a);
            x.iter_mut().for_each(|c| *c = reduce32(*c));
            v::reduce32(t, &mut y);
            assert_eq!(x, y, "reduce32");
            let (mut x, mut y) = (a, a);
            x.iter_mut().for_each(|c| *c = caddq(*c));
            v::caddq(t, &mut y);
            assert_eq!(x, y, "caddq");
            let (mut x, mut y) = (a, a);
            x.iter_mut()
                .zip(b.iter())
                .for_each(|(c, d)| *c = c.wrapping_add(*d));
            v::add_sub(t, &mut y, &b, false);
            assert_eq!(x, y, "add");
            let (mut x, mut y) = (a, a);
            x.iter_mut()
                .zip(b.iter())
                .for_each(|(c, d)| *c = c.wrapping_sub(*d));
            v::add_sub(t, &mut y, &b, true);
            assert_eq!(x, y, "sub");
            for bound in [1, 2, 95_232, 261_888, 1 << 17, 1 << 19, 600_000] {
                let want = a.iter().any(|&c| c.unsigned_abs() >= bound as u32);
                assert_eq!(v::exceeds(t, &a, bound), want, "exceeds {bound}");
            }
        }
    }
}
