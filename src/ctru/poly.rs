//! Exact products in Z[x]/(x^n - x - 1), then reduction mod q or mod q2 (spec section 4.1).
//!
//! Products are computed with Karatsuba over wrapping i32 arithmetic. Wrapping is harmless: every
//! operation is a ring operation of Z/2^32, so the result is the exact integer product modulo
//! 2^32, and the exact coefficients (at most 3 * n * q * 7 < 2^28 in absolute value for every use
//! here: one operand small, the other below q) fit in an i32. Mod-q2 results only need the value
//! modulo 2^32 anyway.

use super::reduce::Zq;
use zeroize::Zeroizing;

/// Below this length a schoolbook product beats another Karatsuba level.
const SCHOOLBOOK_MAX: usize = 40;

/// Scratch space that [`mul_full`] needs for operands of length `len`.
fn scratch_len(len: usize) -> usize {
    if len <= SCHOOLBOOK_MAX {
        0
    } else {
        let h = len.div_ceil(2);
        8 * h + scratch_len(h)
    }
}

/// out = a * b as a full product of length 2len-1 (wrapping i32).
fn mul_full(a: &[i32], b: &[i32], out: &mut [i32], scratch: &mut [i32]) {
    let len = a.len();
    debug_assert!(b.len() == len && out.len() == 2 * len - 1);
    if len <= SCHOOLBOOK_MAX {
        schoolbook(a, b, out);
        return;
    }
    // a = a0 + x^h a1 with a0 of length h and a1 of length l <= h.
    let h = len.div_ceil(2);
    let l = len - h;
    let (z0, rest) = scratch.split_at_mut(2 * h - 1);
    let (z1, rest) = rest.split_at_mut(2 * h - 1);
    let (z2, rest) = rest.split_at_mut(2 * l - 1);
    let (sa, rest) = rest.split_at_mut(h);
    let (sb, rest) = rest.split_at_mut(h);
    mul_full(&a[..h], &b[..h], z0, rest);
    mul_full(&a[h..], &b[h..], z2, rest);
    sa.copy_from_slice(&a[..h]);
    sb.copy_from_slice(&b[..h]);
    for (s, &x) in sa.iter_mut().zip(&a[h..]) {
        *s = s.wrapping_add(x);
    }
    for (s, &x) in sb.iter_mut().zip(&b[h..]) {
        *s = s.wrapping_add(x);
    }
    mul_full(sa, sb, z1, rest);
    // z1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1
    for (m, &x) in z1.iter_mut().zip(z0.iter()) {
        *m = m.wrapping_sub(x);
    }
    for (m, &x) in z1.iter_mut().zip(z2.iter()) {
        *m = m.wrapping_sub(x);
    }
    out.fill(0);
    out[..2 * h - 1].copy_from_slice(z0);
    out[2 * h..].copy_from_slice(z2);
    for (o, &x) in out[h..3 * h - 1].iter_mut().zip(z1.iter()) {
        *o = o.wrapping_add(x);
    }
}

fn schoolbook(a: &[i32], b: &[i32], out: &mut [i32]) {
    let len = a.len();
    out.fill(0);
    for (i, &ai) in a.iter().enumerate() {
        for (o, &bj) in out[i..i + len].iter_mut().zip(b) {
            *o = o.wrapping_add(ai.wrapping_mul(bj));
        }
    }
}

/// a * b mod (x^n - x - 1) over wrapping i32, unreduced coefficients.
fn mul_ring(a: &[i32], b: &[i32]) -> Zeroizing<Vec<i32>> {
    let n = a.len();
    assert_eq!(b.len(), n);
    // The temporaries hold secret-dependent values: wiped on drop.
    let mut d = Zeroizing::new(vec![0i32; 2 * n - 1]);
    let mut scratch = Zeroizing::new(vec![0i32; scratch_len(n)]);
    mul_full(a, b, &mut d, &mut scratch);
    // x^(n+k) = x^(k+1) + x^k; the product has degree <= 2n-2, so one pass suffices.
    let mut c = Zeroizing::new(d[..n].to_vec());
    for k in 0..n - 1 {
        let hi = d[n + k];
        c[k] = c[k].wrapping_add(hi);
        c[k + 1] = c[k + 1].wrapping_add(hi);
    }
    c
}

/// a * b in R_q with coefficients in [0, q). Inputs: one operand small (|.| <= 7), the other
/// with |coefficients| < q, so the exact product coefficients fit in an i32.
pub(crate) fn mul_mod_q(a: &[i32], b: &[i32], zq: &Zq) -> Zeroizing<Vec<i32>> {
    let mut c = mul_ring(a, b);
    for x in c.iter_mut() {
        *x = zq.reduce(*x);
    }
    c
}

/// a * b in Z_{2^bits}[x]/(x^n - x - 1) with coefficients in [0, 2^bits).
pub(crate) fn mul_mod_pow2(a: &[i32], b: &[i32], bits: u32) -> Zeroizing<Vec<i32>> {
    let mask = (1i32 << bits) - 1;
    let mut c = mul_ring(a, b);
    for x in c.iter_mut() {
        *x &= mask;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain O(n^2) product with explicit reduction x^n = x + 1, over i64.
    fn reference_product(a: &[i32], b: &[i32]) -> Vec<i64> {
        let n = a.len();
        let mut d = vec![0i64; 2 * n - 1];
        for i in 0..n {
            for j in 0..n {
                d[i + j] += a[i] as i64 * b[j] as i64;
            }
        }
        for k in (n..2 * n - 1).rev() {
            let t = d[k];
            d[k] = 0;
            d[k - n] += t;
            d[k - n + 1] += t;
        }
        d.truncate(n);
        d
    }

    #[test]
    fn karatsuba_matches_schoolbook() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (n, q) in [(653, 4621), (761, 4591), (1277, 7879), (5, 7), (81, 4591)] {
            let zq = Zq::new(q);
            for _ in 0..3 {
                let a: Vec<i32> = (0..n).map(|_| (next() % q as u64) as i32).collect();
                let b: Vec<i32> = (0..n).map(|_| (next() % 15) as i32 - 7).collect();
                let want = reference_product(&a, &b);
                let got = mul_mod_q(&a, &b, &zq);
                for i in 0..n {
                    assert_eq!(got[i] as i64, want[i].rem_euclid(q as i64));
                }
                let got2 = mul_mod_pow2(&a, &b, 11);
                for i in 0..n {
                    assert_eq!(got2[i] as i64, want[i].rem_euclid(2048));
                }
            }
        }
    }
}
