//! Vectors of polynomials (length k or l) and the matrix-vector product with A-hat.

use super::poly::Poly;
use zeroize::Zeroize;

#[derive(Clone, Copy, Zeroize)]
pub struct PolyVec<const M: usize>(pub [Poly; M]);

/// A-hat, k rows of l polynomials in the NTT domain.
pub type Matrix<const K: usize, const L: usize> = [PolyVec<L>; K];

impl<const M: usize> Default for PolyVec<M> {
    fn default() -> Self {
        PolyVec([Poly::default(); M])
    }
}

impl<const M: usize> PolyVec<M> {
    pub fn ntt(&mut self) {
        self.0.iter_mut().for_each(Poly::ntt);
    }

    pub fn invntt_tomont(&mut self) {
        self.0.iter_mut().for_each(Poly::invntt_tomont);
    }

    pub fn reduce(&mut self) {
        self.0.iter_mut().for_each(Poly::reduce);
    }

    pub fn caddq(&mut self) {
        self.0.iter_mut().for_each(Poly::caddq);
    }

    pub fn add_assign(&mut self, b: &Self) {
        self.0
            .iter_mut()
            .zip(b.0.iter())
            .for_each(|(a, b)| a.add_assign(b));
    }

    pub fn sub_assign(&mut self, b: &Self) {
        self.0
            .iter_mut()
            .zip(b.0.iter())
            .for_each(|(a, b)| a.sub_assign(b));
    }

    /// self_i = c * v_i in the NTT domain (c-hat times each entry).
    pub fn pointwise_poly_montgomery(&mut self, c: &Poly, v: &Self) {
        for (r, vi) in self.0.iter_mut().zip(v.0.iter()) {
            r.pointwise_montgomery(c, vi);
        }
    }

    /// True iff some coefficient of some entry has |c| >= bound (no early exit).
    pub fn exceeds(&self, bound: i32) -> bool {
        self.0.iter().fold(false, |acc, p| acc | p.exceeds(bound))
    }
}

/// w = A-hat * v in the NTT domain (coefficients bounded by l*q, not reduced).
pub fn matrix_mul<const K: usize, const L: usize>(a: &Matrix<K, L>, v: &PolyVec<L>) -> PolyVec<K> {
    let mut w = PolyVec::<K>::default();
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = crate::simd::level().avx2() {
        // Each row's L products summed in registers (the same wrapping sums).
        let v: [&[i32; super::params::N]; L] = core::array::from_fn(|j| &v.0[j].0);
        for (wi, row) in w.0.iter_mut().zip(a.iter()) {
            let r: [&[i32; super::params::N]; L] = core::array::from_fn(|j| &row.0[j].0);
            super::avx2::pointwise_dot(t, &mut wi.0, &r, &v);
        }
        return w;
    }
    for (wi, row) in w.0.iter_mut().zip(a.iter()) {
        wi.pointwise_montgomery(&row.0[0], &v.0[0]);
        for j in 1..L {
            wi.pointwise_acc_montgomery(&row.0[j], &v.0[j]);
        }
    }
    w
}
