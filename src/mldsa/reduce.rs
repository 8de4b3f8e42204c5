//! Arithmetic modulo q: Montgomery reduction (R = 2^32) and cheap partial reductions.
//! Everything here is branch-free.

use super::params::Q;

/// q^-1 mod 2^32.
const QINV: i32 = 58_728_449;

/// Returns a * 2^-32 mod q with |result| < q, for |a| < 2^31 * q.
#[inline(always)]
pub const fn montgomery_reduce(a: i64) -> i32 {
    let t = (a as i32).wrapping_mul(QINV);
    ((a - t as i64 * Q as i64) >> 32) as i32
}

/// Returns r = a mod q with -6283008 <= r <= 6283008, for a <= 2^31 - 2^22 - 1.
#[inline(always)]
pub fn reduce32(a: i32) -> i32 {
    let t = (a + (1 << 22)) >> 23;
    a - t * Q
}

/// Adds q if a is negative.
#[inline(always)]
pub fn caddq(a: i32) -> i32 {
    a + ((a >> 31) & Q)
}

/// The absolute value, without a branch.
#[inline(always)]
pub fn abs(a: i32) -> i32 {
    let m = a >> 31;
    (a ^ m) - m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn montgomery_matches_plain_arithmetic() {
        let r_inv = {
            // 2^-32 mod q via Fermat: (2^32)^(q-2).
            let mut base = (1i64 << 32) % Q as i64;
            let mut e = Q as i64 - 2;
            let mut acc = 1i64;
            while e > 0 {
                if e & 1 == 1 {
                    acc = acc * base % Q as i64;
                }
                base = base * base % Q as i64;
                e >>= 1;
            }
            acc
        };
        for a in [
            0i64,
            1,
            -1,
            12345678901,
            -98765432109,
            (Q as i64 - 1) * (Q as i64 - 1),
        ] {
            let r = montgomery_reduce(a) as i64;
            assert!(r.abs() < Q as i64);
            assert_eq!((r - a.rem_euclid(Q as i64) * r_inv).rem_euclid(Q as i64), 0);
        }
        for a in [
            0,
            1,
            -1,
            Q,
            -Q,
            2 * Q + 5,
            i32::MAX - (1 << 22) - 1,
            i32::MIN,
        ] {
            let r = reduce32(a);
            assert_eq!((r - a).rem_euclid(Q), 0);
            assert!(r.abs() <= 6_283_008);
        }
    }
}
