//! Constant-time scalar arithmetic modulo the public prime q.
//!
//! Secret values are never divided with `/` or `%` (the latency of a hardware divide can depend on
//! its operands); reductions and the rounding division of compression use multiply-and-shift.

/// Reduction constants for one modulus q < 2^13.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Zq {
    pub q: i32,
    /// floor(2^40 / q): Barrett constant of [`Zq::reduce`].
    barrett: i64,
    /// ceil(2^40 / q): exact floor division of [`Zq::div_floor`].
    div_mul: u64,
}

impl Zq {
    pub fn new(q: i32) -> Self {
        let q64 = q as i64;
        Zq {
            q,
            barrett: (1i64 << 40) / q64,
            div_mul: (1u64 << 40).div_ceil(q as u64),
        }
    }

    /// The representative of x in [0, q), for any i32 x.
    #[inline(always)]
    pub fn reduce(&self, x: i32) -> i32 {
        // The quotient estimate is off by at most one in either direction (|x| < 2^31 << 2^40/q),
        // so r lies in [-q, 2q) and two masked corrections finish the job.
        let quot = (x as i64 * self.barrett) >> 40;
        let mut r = (x as i64 - quot * self.q as i64) as i32;
        r += self.q & (r >> 31);
        r -= self.q & !((r - self.q) >> 31);
        r
    }

    /// floor(num / q) for 0 <= num < 2^26.
    #[inline(always)]
    pub fn div_floor(&self, num: u32) -> u32 {
        // Exact because num * (div_mul * q - 2^40) < 2^26 * 2^13 < 2^40.
        ((num as u64 * self.div_mul) >> 40) as u32
    }

    /// a * b mod q in [0, q).
    #[inline(always)]
    pub fn mul(&self, a: i32, b: i32) -> i32 {
        self.reduce(self.reduce(a) * self.reduce(b))
    }

    /// a^(q-2) = a^-1 mod q for a != 0 (and 0 for a = 0). The exponent is public, so
    /// square-and-multiply over its bits runs in time independent of a.
    pub fn inv(&self, a: i32) -> i32 {
        let a = self.reduce(a);
        let e = (self.q - 2) as u32;
        let mut acc = 1;
        for bit in (0..32 - e.leading_zeros()).rev() {
            acc = self.mul(acc, acc);
            if (e >> bit) & 1 == 1 {
                acc = self.mul(acc, a);
            }
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_div_and_inverse_are_exact() {
        for q in [4621, 4591, 7879] {
            let zq = Zq::new(q);
            for x in (-70_000_000..70_000_000).step_by(9973).chain([
                i32::MIN,
                i32::MIN + 1,
                i32::MAX,
                -1,
                0,
                q - 1,
                q,
                -q,
            ]) {
                assert_eq!(zq.reduce(x), x.rem_euclid(q), "q={q} x={x}");
            }
            for num in (0..(1u32 << 26)).step_by(7).chain([(1 << 26) - 1]) {
                assert_eq!(zq.div_floor(num), num / q as u32);
            }
            for a in 1..q {
                assert_eq!(zq.mul(a, zq.inv(a)), 1);
            }
        }
    }
}
