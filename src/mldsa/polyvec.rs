//! Vectors of polynomials (length k or l) and the matrix-vector product with A-hat.

use super::params::N;
use super::poly::Poly;
use super::reduce::montgomery_reduce;
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

/// w = A-hat * v in the NTT domain: each coefficient is one Montgomery reduction of the sum of
/// its l products (|A-hat| < q and |v| < 9q, NTT outputs, so |sum| < 7 * 9q^2 < 2^53, within
/// montgomery_reduce's 2^31 q), so |w| < q. Its callers reduce, apply NTT^-1 and map into
/// [0, q), so w's representative mod q never reaches an output.
/// Written into the caller's `w` (no temporary copy of a secret product).
pub fn matrix_mul<const K: usize, const L: usize>(
    a: &Matrix<K, L>,
    v: &PolyVec<L>,
    w: &mut PolyVec<K>,
) {
    for (wi, row) in w.0.iter_mut().zip(a.iter()) {
        row_product(&mut wi.0, &row.0, &v.0);
    }
}

/// c = montgomery_reduce(sum over j of a_j * v_j) coefficient-wise (the products of the
/// pq-crystals reference's `pointwise_acc`, summed before one reduction).
pub(crate) fn row_product<const L: usize>(c: &mut [i32; N], a: &[Poly; L], v: &[Poly; L]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = crate::simd::level().avx2() {
        let a: [&[i32; N]; L] = core::array::from_fn(|j| &a[j].0);
        let v: [&[i32; N]; L] = core::array::from_fn(|j| &v[j].0);
        return super::avx2::pointwise_dot(t, c, &a, &v);
    }
    for (i, ci) in c.iter_mut().enumerate() {
        let sum = a
            .iter()
            .zip(v.iter())
            .fold(0i64, |s, (x, y)| s + x.0[i] as i64 * y.0[i] as i64);
        *ci = montgomery_reduce(sum);
    }
}
