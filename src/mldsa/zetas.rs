//! The NTT's twiddles (FIPS 204 Appendix B, in Montgomery form) and NTT^-1's final factors,
//! shared by the portable NTT (`ntt`) and its AVX2 twin (`avx2`).

use super::params::{N, Q};
use super::reduce::montgomery_reduce;

/// 2^32 mod q.
const MONT: i64 = 4_193_792;

/// zeta = 1753, the 512th root of unity mod q.
const ZETA: i64 = 1753;

const fn bitrev8(k: usize) -> usize {
    (k as u8).reverse_bits() as usize
}

const fn pow_mod(mut b: i64, mut e: usize) -> i64 {
    let mut acc = 1i64;
    b %= Q as i64;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc * b % Q as i64;
        }
        b = b * b % Q as i64;
        e >>= 1;
    }
    acc
}

/// zetas[k] = zeta^BitRev8(k) * 2^32 mod q, centred in (-q/2, q/2]; zetas[0] is unused (0).
pub(crate) const ZETAS: [i32; N] = {
    let mut z = [0i32; N];
    let mut k = 1;
    while k < N {
        let v = pow_mod(ZETA, bitrev8(k)) * MONT % Q as i64;
        z[k] = if v > (Q as i64) / 2 {
            (v - Q as i64) as i32
        } else {
            v as i32
        };
        k += 1;
    }
    z
};

/// mont^2 / 256 mod q: undoes the Montgomery factor of the pointwise products and divides by n.
pub(crate) const INV_F: i64 = 41_978;
/// INV_F * -ZETAS[1] * 2^-32 mod q, centred: one Montgomery product gives what INV_F times the
/// last level's product gives (the same value mod q; |INV_F_ZETA1| < q / 2 keeps the product
/// within montgomery_reduce's 2^31 q, since |t - u| < 2^8 q there).
pub(crate) const INV_F_ZETA1: i64 = {
    let c = montgomery_reduce(-(ZETAS[1] as i64) * INV_F) as i64;
    let q = Q as i64;
    if c > q / 2 {
        c - q
    } else if c < -q / 2 {
        c + q
    } else {
        c
    }
};
