//! Constant-time inversion in the field R_q = Z_q[x]/(x^n - x - 1) (spec section 4.3).
//!
//! This is the NTRU Prime "divstep" recip, 2n-1 iterations on reversed polynomials, with one
//! change for speed: coefficients are i16 and each update (f0*g - g0*f) uses Montgomery
//! multiplication, which scales the new (g, r) pair by 2^-16. Scaling g and r by the same nonzero
//! constant changes neither the divstep decisions (they look only at delta and whether g0 = 0)
//! nor the invariant linking (g, r), and the final division by the last f0 absorbs every factor,
//! so the output is the unique inverse.

use super::recip::{start, unreverse};
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

    /// Swaps a[i] and b[i] where mask = -1 (keeps them where mask = 0), then sets
    /// out[i] = (new b[i]) * c * 2^-16 mod q. Fusing the swap costs no extra `pmulhw` trouble.
    #[inline(never)]
    fn cswap_scale_into(&self, out: &mut [i16], a: &mut [i16], b: &mut [i16], mask: i16, c: i16) {
        let c_qinv = c.wrapping_mul(self.qinv);
        for ((o, x), y) in out.iter_mut().zip(a.iter_mut()).zip(b.iter_mut()) {
            let t = mask & (*x ^ *y);
            *x ^= t;
            *y ^= t;
            *o = self.mul(*y, c, c_qinv);
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

/// f^-1 in R_q with coefficients in [0, q). `f` has |f_i| < q and must be nonzero mod q (R_q is a
/// field: x^n - x - 1 is irreducible mod q for the CTRU-Prime (n, q), so every nonzero f is
/// invertible; KeyGen's f = 2f' + 1 is never 0). A zero input gives a meaningless result, never a
/// panic.
pub(crate) fn invert(f_in: &[i32], zq: &Zq) -> Zeroizing<Vec<i32>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = crate::simd::level().avx2() {
        return crate::simd::ctru_inverse::invert(t, f_in, zq).0;
    }
    invert_portable(f_in, zq).0
}

/// The portable recip (the reference of `simd::ctru_inverse`): f^-1 and whether f was
/// invertible (the final delta is 0; for CTRU-Prime's (n, q), whether f != 0).
pub(crate) fn invert_portable(f_in: &[i32], zq: &Zq) -> (Zeroizing<Vec<i32>>, bool) {
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
    start(&mut f, &mut g, &mut r, f_in);
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
        let swap = swap as i16;

        // After the swap: g <- (f0 g - g0 f) / x and r <- f0 r - g0 v, both times 2^-16.
        let swap0 = swap & (f[0] ^ g[0]);
        let (f0, g0) = (f[0] ^ swap0, g[0] ^ swap0);
        (f[0], g[0]) = (f0, g0);
        let m = fg_len - 1;
        mont.cswap_scale_into(&mut t[..m], &mut f[1..fg_len], &mut g[1..fg_len], swap, f0);
        mont.scale_into(&mut g[..m], &f[1..fg_len], g0);
        sub_from(&mut g[..m], &t[..m]);
        g[m] = 0;
        mont.cswap_scale_into(
            &mut t[..vr_len],
            &mut v[..vr_len],
            &mut r[..vr_len],
            swap,
            f0,
        );
        mont.scale_into(&mut r[..vr_len], &v[..vr_len], g0);
        sub_from(&mut r[..vr_len], &t[..vr_len]);
    }

    // Now f = f0 (a nonzero constant) and v * input = f0 in reversed form.
    (unreverse(zq, f[0], &v[..n]), delta == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctru::poly::mul_mod_q;

    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    #[test]
    fn inverse_times_input_is_one() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for (n, q) in [(653, 4621), (761, 4591), (1277, 7879)] {
            let zq = Zq::new(q);
            for _ in 0..3 {
                // Small f = 2f' + 1 as in KeyGen: f * f^-1 must be exactly 1.
                let f: Vec<i32> = (0..n)
                    .map(|i| 2 * ((next() % 5) as i32 - 2) + (i == 0) as i32)
                    .collect();
                let (finv, ok) = invert_portable(&f, &zq);
                assert!(ok);
                let one = mul_mod_q(&f, &finv, &zq);
                assert_eq!(one[0], 1);
                assert!(one[1..].iter().all(|&c| c == 0));
            }
            // A dense element: inverting twice gives it back.
            let f: Vec<i32> = (0..n).map(|_| (next() % q as u64) as i32).collect();
            let back = invert_portable(&invert_portable(&f, &zq).0, &zq).0;
            assert_eq!(&back[..], &f[..]);
        }
    }

    /// The AVX2 recip against the portable one: the same inverse and the same verdict.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_inverse_matches_portable() {
        let Some(t) = crate::simd::Level::Avx2
            .avx2()
            .filter(|_| std::is_x86_feature_detected!("avx2"))
        else {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let check = |f: &[i32], zq: &Zq| {
            let (want, want_ok) = invert_portable(f, zq);
            let (got, got_ok) = crate::simd::ctru_inverse::invert(t, f, zq);
            assert_eq!(got_ok, want_ok, "verdict, n = {}, q = {}", f.len(), zq.q);
            assert_eq!(
                &got[..],
                &want[..],
                "inverse, n = {}, q = {}",
                f.len(),
                zq.q
            );
            want_ok
        };
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for (n, q) in [(653, 4621), (761, 4591), (1277, 7879)] {
            let zq = Zq::new(q);
            let half = (q - 1) / 2;
            for i in 0..100 {
                let f: Vec<i32> = match i % 4 {
                    // KeyGen's f = 2f' + 1 with f' in [-3, 3].
                    0 => (0..n)
                        .map(|j| 2 * ((next() % 7) as i32 - 3) + (j == 0) as i32)
                        .collect(),
                    // Dense, every value of (-q, q).
                    1 => (0..n)
                        .map(|_| (next() % (2 * q as u64 - 1)) as i32 - (q - 1))
                        .collect(),
                    // The extremes +-(q-1) and +-(q-1)/2.
                    2 => (0..n)
                        .map(|_| [q - 1, 1 - q, half, -half][(next() % 4) as usize])
                        .collect(),
                    // Sparse: a few nonzero coefficients, including at both ends.
                    _ => {
                        let mut f = vec![0; n];
                        for _ in 0..(next() % 4) {
                            f[(next() % n as u64) as usize] = (next() % q as u64) as i32;
                        }
                        f[[0, n - 1][i / 4 % 2]] = 1 + (next() % (q as u64 - 1)) as i32;
                        f
                    }
                };
                assert!(
                    check(&f, &zq),
                    "n = {n}: a nonzero f is invertible in the field"
                );
            }
            // The only non-invertible element of the field: 0.
            assert!(!check(&vec![0; n], &zq));
        }
        // Rings that are not fields: x^n - x - 1 with a root a mod q, so x - a and its multiples
        // are not invertible. Small and odd n (partial vectors, few steps) too.
        let mut found = 0;
        for n in [2, 3, 5, 15, 16, 17, 31, 32, 33, 100, 255, 653, 761, 1277] {
            for q in [4591, 4621, 7879, 8191, 3, 17, 257] {
                let zq = Zq::new(q);
                let f: Vec<i32> = (0..n).map(|_| (next() % q as u64) as i32).collect();
                check(&f, &zq);
                let Some(a) = (0..q).find(|&a| {
                    let mut p = 1i64;
                    for _ in 0..n {
                        p = p * a as i64 % q as i64;
                    }
                    (p - a as i64 - 1).rem_euclid(q as i64) == 0
                }) else {
                    continue;
                };
                let mut xa = vec![0; n];
                xa[0] = q - a;
                xa[1] = 1;
                assert!(!check(&xa, &zq), "x - {a} divides x^{n} - x - 1 mod {q}");
                let multiple = mul_mod_q(&xa, &f, &zq);
                assert!(!check(&multiple, &zq));
                found += 1;
            }
        }
        assert!(found >= 10, "only {found} reducible rings");
    }

    /// Constant-time check (run under valgrind by scripts/ct-memcheck.sh, which selects tests
    /// named `ct_check`): the portable and the AVX2 recip on a secret KeyGen-like f and on a
    /// secret dense element. Memcheck must report no branch or memory index that depends on them.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn ct_check_ctru_inverse() {
        use crate::simd::ct_check::secret;
        for (n, q) in [(653usize, 4621), (1277, 7879)] {
            let zq = Zq::new(q);
            let mut f: Vec<i32> = (0..n).map(|i| 2 * ((i % 5) as i32 - 2)).collect();
            f[0] += 1;
            let dense: Vec<i32> = (0..n).map(|i| (i as i32 * 37) % q - q / 2).collect();
            secret(&f[..]);
            secret(&dense[..]);
            for x in [&f, &dense] {
                std::hint::black_box(invert_portable(x, &zq));
                if let Some(t) = crate::simd::level().avx2() {
                    std::hint::black_box(crate::simd::ctru_inverse::invert(t, x, &zq));
                }
            }
        }
    }
}
