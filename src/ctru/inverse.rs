//! Constant-time inversion in the field R_q = Z_q[x]/(x^n - x - 1) (spec section 4.3).
//!
//! This is the NTRU Prime "divstep" recip, 2n-1 iterations on reversed polynomials, with one
//! change for speed: coefficients are i16 and each update (f0*g - g0*f) uses Montgomery
//! multiplication, which scales the new (g, r) pair by 2^-16. Scaling g and r by the same nonzero
//! constant changes neither the divstep decisions (they look only at delta and whether g0 = 0)
//! nor the invariant linking (g, r), and the final division by the last f0 absorbs every factor,
//! so the output is the unique inverse.

use super::reduce::Zq;
use zeroize::Zeroizing;

/// 16-bit Montgomery arithmetic modulo q with R = 2^16.
struct Mont {
    q: i16,
    /// q^-1 mod 2^16.
    qinv: i16,
}

impl Mont {
    fn new(q: i32) -> Self {
        // Newton iteration for q^-1 mod 2^16 (q odd): each step doubles the correct low bits.
        let q16 = q as u16;
        let mut inv: u16 = 1;
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u16.wrapping_sub(q16.wrapping_mul(inv)));
        }
        Mont {
            q: q as i16,
            qinv: inv as i16,
        }
    }

    /// a * b * 2^-16 mod q in (-q, q), with `b_qinv` = b * q^-1 mod 2^16. Needs |a * b| < q * 2^15.
    #[inline(always)]
    fn mul(&self, a: i16, b: i16, b_qinv: i16) -> i16 {
        let hi = ((a as i32 * b as i32) >> 16) as i16;
        let t = a.wrapping_mul(b_qinv);
        let tq_hi = ((t as i32 * self.q as i32) >> 16) as i16;
        hi - tq_hi
    }

    /// out[i] = src[i] * b * 2^-16 mod q for every i.
    ///
    /// Kept out of line on purpose: with exactly one Montgomery product per loop, LLVM maps both
    /// high halves to `pmulhw`; fused with a second product, it falls back to widened 32-bit
    /// multiplies and the inversion gets markedly slower.
    #[inline(never)]
    fn scale_into(&self, out: &mut [i16], src: &[i16], b: i16) {
        let b_qinv = b.wrapping_mul(self.qinv);
        for (o, &a) in out.iter_mut().zip(src) {
            *o = self.mul(a, b, b_qinv);
        }
    }
}

/// out[i] = minuend[i] - out[i] (both in (-q, q), so the result lies in (-2q, 2q)).
fn sub_from(out: &mut [i16], minuend: &[i16]) {
    for (o, &m) in out.iter_mut().zip(minuend) {
        *o = m - *o;
    }
}

/// -1 if x != 0 else 0.
#[inline(always)]
fn nonzero_mask(x: i32) -> i32 {
    (x | x.wrapping_neg()) >> 31
}

/// Swaps a and b where mask = -1; leaves them where mask = 0.
#[inline(always)]
fn cswap(a: &mut [i16], b: &mut [i16], mask: i16) {
    for (x, y) in a.iter_mut().zip(b.iter_mut()) {
        let t = mask & (*x ^ *y);
        *x ^= t;
        *y ^= t;
    }
}

/// f^-1 in R_q with coefficients in [0, q). `f` has |f_i| < q and must be nonzero (R_q is a field:
/// x^n - x - 1 is irreducible mod q for the CTRU-Prime (n, q), so every nonzero f is invertible).
pub(crate) fn invert(f_in: &[i32], zq: &Zq) -> Zeroizing<Vec<i32>> {
    let n = f_in.len();
    let q = zq.q;
    let mont = Mont::new(q);
    // Invariant ranges: every stored coefficient lies in (-2q, 2q), so each product is below
    // 4q^2 < q * 2^15 (q < 8192) and each Montgomery result lies in (-q, q).
    let mut f = Zeroizing::new(vec![0i16; n + 1]); // the modulus x^n - x - 1, reversed
    let mut g = Zeroizing::new(vec![0i16; n + 1]); // the input, reversed
    let mut v = Zeroizing::new(vec![0i16; n + 1]);
    let mut r = Zeroizing::new(vec![0i16; n + 1]);
    let mut t = Zeroizing::new(vec![0i16; n + 1]);
    f[0] = 1;
    f[n - 1] = -1;
    f[n] = -1;
    for i in 0..n {
        g[i] = f_in[n - 1 - i] as i16;
    }
    r[0] = 1;
    let mut delta: i32 = 1;

    for k in 0..2 * n - 1 {
        // Public length bounds (they depend only on k). Formal degrees satisfy
        // deg f + deg g = 2n - 1 - k before step k and both stay >= 0 for an invertible input, so
        // f and g matter only up to index min(n, 2n-1-k); v and r (after the shift) have degree
        // <= k. Entries past these bounds are never read again.
        let fg_len = n.min(2 * n - 1 - k) + 1;
        let vr_len = n.min(k) + 1;

        // v <- x * v
        v.copy_within(0..n, 1);
        v[0] = 0;

        // Swap when delta > 0 and g0 != 0 mod q (g0 in (-2q, 2q): zero mod q means 0 or +-q).
        let g0 = g[0] as i32;
        let g0_nonzero = nonzero_mask(g0) & nonzero_mask(g0 - q) & nonzero_mask(g0 + q);
        let swap = ((-delta) >> 31) & g0_nonzero;
        delta ^= swap & (delta ^ -delta);
        delta += 1;
        cswap(&mut f[..fg_len], &mut g[..fg_len], swap as i16);
        cswap(&mut v[..vr_len], &mut r[..vr_len], swap as i16);

        // g <- (f0 g - g0 f) / x and r <- f0 r - g0 v, both times 2^-16.
        let (f0, g0) = (f[0], g[0]);
        let m = fg_len - 1;
        mont.scale_into(&mut t[..m], &g[1..fg_len], f0);
        mont.scale_into(&mut g[..m], &f[1..fg_len], g0);
        sub_from(&mut g[..m], &t[..m]);
        g[m] = 0;
        mont.scale_into(&mut t[..vr_len], &r[..vr_len], f0);
        mont.scale_into(&mut r[..vr_len], &v[..vr_len], g0);
        sub_from(&mut r[..vr_len], &t[..vr_len]);
    }

    // Now f = f0 (a nonzero constant) and v * input = f0 in reversed form.
    let scale = zq.inv(f[0] as i32);
    let out = (0..n)
        .map(|i| zq.reduce(scale * v[n - 1 - i] as i32))
        .collect();
    Zeroizing::new(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctru::poly::mul_mod_q;

    #[test]
    fn inverse_times_input_is_one() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (n, q) in [(653, 4621), (761, 4591), (1277, 7879)] {
            let zq = Zq::new(q);
            for _ in 0..3 {
                // Small f = 2f' + 1 as in KeyGen: f * f^-1 must be exactly 1.
                let f: Vec<i32> = (0..n)
                    .map(|i| 2 * ((next() % 5) as i32 - 2) + (i == 0) as i32)
                    .collect();
                let finv = invert(&f, &zq);
                let one = mul_mod_q(&f, &finv, &zq);
                assert_eq!(one[0], 1);
                assert!(one[1..].iter().all(|&c| c == 0));
            }
            // A dense element: inverting twice gives it back.
            let f: Vec<i32> = (0..n).map(|_| (next() % q as u64) as i32).collect();
            let back = invert(&invert(&f, &zq), &zq);
            assert_eq!(&back[..], &f[..]);
        }
    }
}
