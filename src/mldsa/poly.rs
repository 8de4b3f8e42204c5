//! Polynomials of R_q = Z_q[X]/(X^256 + 1) as 256 signed coefficients.

use super::ntt;
use super::params::{D, N};
use super::reduce::{abs, caddq, reduce32};
use zeroize::Zeroize;

#[derive(Clone, Copy, Zeroize)]
pub struct Poly(pub [i32; N]);

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
        self.0.iter_mut().for_each(|c| *c = reduce32(*c));
    }

    pub fn caddq(&mut self) {
        self.0.iter_mut().for_each(|c| *c = caddq(*c));
    }

    pub fn add_assign(&mut self, b: &Poly) {
        self.0.iter_mut().zip(b.0.iter()).for_each(|(a, b)| *a += b);
    }

    pub fn sub_assign(&mut self, b: &Poly) {
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

    /// self += a * b * 2^-32 in the NTT domain.
    pub fn pointwise_acc_montgomery(&mut self, a: &Poly, b: &Poly) {
        ntt::pointwise_acc_montgomery(&mut self.0, &a.0, &b.0);
    }

    /// True iff some coefficient (reduced, centred) has |c| >= bound. Every coefficient is
    /// examined without branching; only the combined verdict is returned.
    pub fn exceeds(&self, bound: i32) -> bool {
        let over = self
            .0
            .iter()
            .fold(0i32, |acc, &c| acc | ((bound - 1 - abs(c)) >> 31));
        over != 0
    }
}
