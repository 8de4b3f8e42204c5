//! The divstep recip's start and end states, shared by the portable inversion (`inverse`) and
//! its AVX2 twin (`simd::ctru_inverse`): both begin and finish the same way and differ only in
//! the steps between.

use super::reduce::Zq;
use zeroize::Zeroizing;

/// The recip's start (the buffers zeroed, at least n + 1 long): f = x^n - x - 1
/// and g = the input, both reversed, r = 1 (v = 0 already).
pub(crate) fn start(f: &mut [i16], g: &mut [i16], r: &mut [i16], f_in: &[i32]) {
    let n = f_in.len();
    f[0] = 1;
    f[n - 1] = -1;
    f[n] = -1;
    for (gi, &x) in g.iter_mut().zip(f_in.iter().rev()) {
        *gi = x as i16;
    }
    r[0] = 1;
}

/// The inverse from the recip's end state: `v` (n coefficients, reversed)
/// times the input is the constant `f0`, so the inverse is v / f0, read backwards.
pub(crate) fn unreverse(zq: &Zq, f0: i16, v: &[i16]) -> Zeroizing<Vec<i32>> {
    let scale = zq.inv(f0 as i32);
    Zeroizing::new(
        v.iter()
            .rev()
            .map(|&c| zq.reduce(scale * c as i32))
            .collect(),
    )
}
