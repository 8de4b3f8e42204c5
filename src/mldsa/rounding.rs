//! Power2Round, Decompose, HighBits/LowBits, MakeHint and UseHint (FIPS 204 Alg. 35-40).
//! All functions used on secret data are branch-free.

use super::params::{D, N, Q};
use crate::simd;

/// Power2Round (Alg. 35): a = a1 * 2^d + a0 with -2^(d-1) < a0 <= 2^(d-1), for a in [0, q).
#[inline(always)]
pub fn power2round(a: i32) -> (i32, i32) {
    let a1 = (a + (1 << (D - 1)) - 1) >> D;
    (a1, a - (a1 << D))
}

/// Decompose (Alg. 36) for a in [0, q): returns (r1, r0) with a = r1 * 2 * gamma2 + r0 mod q,
/// -gamma2 < r0 <= gamma2, and the wrap-around case q - 1 mapped to r1 = 0, r0 = -1.
#[inline(always)]
pub fn decompose(a: i32, gamma2: i32) -> (i32, i32) {
    let mut a1 = (a + 127) >> 7;
    if gamma2 == (Q - 1) / 32 {
        // gamma2 is a public parameter; this branch does not depend on a.
        a1 = (a1 * 1025 + (1 << 21)) >> 22;
        a1 &= 15;
    } else {
        a1 = (a1 * 11275 + (1 << 23)) >> 24;
        a1 ^= ((43 - a1) >> 31) & a1;
    }
    let mut a0 = a - a1 * 2 * gamma2;
    a0 -= (((Q - 1) / 2 - a0) >> 31) & Q;
    (a1, a0)
}

/// HighBits (Alg. 37); sign and verify use `decompose` directly.
#[cfg(test)]
#[inline(always)]
pub fn high_bits(a: i32, gamma2: i32) -> i32 {
    decompose(a, gamma2).0
}

/// LowBits (Alg. 38).
#[cfg(test)]
#[inline(always)]
pub fn low_bits(a: i32, gamma2: i32) -> i32 {
    decompose(a, gamma2).1
}

/// MakeHint (Alg. 39) in the form of the reference implementation: given the low part
/// a0 = LowBits(w - cs2) + ct0 and the high part a1 = HighBits(w - cs2), the hint bit is 1 iff
/// adding -ct0 changes the high bits, i.e. iff a0 > gamma2, a0 < -gamma2, or a0 = -gamma2 and
/// a1 != 0. Branch-free; returns 0 or 1.
#[inline(always)]
pub fn make_hint(a0: i32, a1: i32, gamma2: i32) -> i32 {
    let above = (gamma2 - a0) >> 31; // -1 iff a0 > gamma2
    let below = (a0 + gamma2) >> 31; // -1 iff a0 < -gamma2
    let x = a0 + gamma2;
    let at_minus = !((x | x.wrapping_neg()) >> 31); // -1 iff a0 == -gamma2
    let a1_nonzero = (a1 | a1.wrapping_neg()) >> 31; // -1 iff a1 != 0
    (above | below | (at_minus & a1_nonzero)) & 1
}

/// UseHint (Alg. 40) for a in [0, q). Runs in verification on public data only.
#[inline(always)]
pub fn use_hint(a: i32, hint: bool, gamma2: i32) -> i32 {
    let (a1, a0) = decompose(a, gamma2);
    if !hint {
        return a1;
    }
    if gamma2 == (Q - 1) / 32 {
        if a0 > 0 {
            (a1 + 1) & 15
        } else {
            (a1 - 1) & 15
        }
    } else if a0 > 0 {
        if a1 == 43 {
            0
        } else {
            a1 + 1
        }
    } else if a1 == 0 {
        43
    } else {
        a1 - 1
    }
}

/// Power2Round on every coefficient of `a` (each in [0, q)), in place: a1 gets the high
/// parts and `a` is left holding the low ones, a0 (AVX2 where available, the same values).
/// In place so that keygen needs no separate t next to t0.
pub fn power2round_poly(a: &mut [i32; N], a1: &mut [i32; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = simd::level().avx2() {
        return super::rounding_avx2::power2round(t, a, a1);
    }
    for (c, c1) in a.iter_mut().zip(a1.iter_mut()) {
        (*c1, *c) = power2round(*c);
    }
}

/// Decompose on every coefficient of `a` (each in [0, q)): a1 = HighBits, a0 = LowBits.
pub fn decompose_poly(a: &[i32; N], gamma2: i32, a1: &mut [i32; N], a0: &mut [i32; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = simd::level().avx2() {
        return super::rounding_avx2::decompose(t, a, gamma2, a1, a0);
    }
    for ((&c, c1), c0) in a.iter().zip(a1.iter_mut()).zip(a0.iter_mut()) {
        (*c1, *c0) = decompose(c, gamma2);
    }
}

/// MakeHint on every coefficient (`make_hint(a0[i], a1[i])` into h[i]); returns the number of
/// ones, counted without branching.
pub fn make_hint_poly(a0: &[i32; N], a1: &[i32; N], gamma2: i32, h: &mut [i32; N]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = simd::level().avx2() {
        return super::rounding_avx2::make_hint(t, a0, a1, gamma2, h);
    }
    let mut ones = 0;
    for ((b, &lo), &hi) in h.iter_mut().zip(a0.iter()).zip(a1.iter()) {
        *b = make_hint(lo, hi, gamma2);
        ones += *b as usize;
    }
    ones
}

/// UseHint on every coefficient of `a` (each in [0, q)) in place; hint i is set iff h[i] != 0.
pub fn use_hint_poly(a: &mut [i32; N], h: &[i32; N], gamma2: i32) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = simd::level().avx2() {
        return super::rounding_avx2::use_hint(t, a, h, gamma2);
    }
    for (c, &b) in a.iter_mut().zip(h.iter()) {
        *c = use_hint(*c, b != 0, gamma2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAMMAS: [i32; 2] = [(Q - 1) / 88, (Q - 1) / 32];

    /// Decompose straight from the FIPS 204 text (Alg. 36), for comparison.
    fn decompose_spec(r: i32, g2: i32) -> (i32, i32) {
        let rp = r.rem_euclid(Q);
        let mut r0 = rp % (2 * g2);
        if r0 > g2 {
            r0 -= 2 * g2;
        }
        if rp - r0 == Q - 1 {
            (0, r0 - 1)
        } else {
            ((rp - r0) / (2 * g2), r0)
        }
    }

    fn sample_points() -> impl Iterator<Item = i32> {
        (0..Q)
            .step_by(997)
            .chain([0, 1, Q - 1, Q - 2, (Q - 1) / 2, 95_232, 95_233, 261_888])
    }

    #[test]
    fn decompose_matches_spec() {
        for g2 in GAMMAS {
            for a in sample_points() {
                let spec = decompose_spec(a, g2);
                assert_eq!(decompose(a, g2), spec, "a={a} g2={g2}");
                assert_eq!((high_bits(a, g2), low_bits(a, g2)), spec);
            }
        }
    }

    #[test]
    fn power2round_identity() {
        for a in sample_points() {
            let (a1, a0) = power2round(a);
            assert_eq!(a1 * (1 << D) + a0, a);
            assert!(-(1 << (D - 1)) < a0 && a0 <= 1 << (D - 1));
        }
    }

    #[test]
    fn use_hint_recovers_high_bits() {
        // For |z| <= gamma2 and r in [0, q): UseHint(MakeHint(z, r), r) = HighBits(r + z) (Lemma 2).
        for g2 in GAMMAS {
            for (i, r) in sample_points().enumerate() {
                for z in [-g2, -g2 + 1, -1, 0, 1, g2 - 1, g2, (i as i32 * 7919) % g2] {
                    let rz = (r + z).rem_euclid(Q);
                    let expected = high_bits(rz, g2);
                    let spec_hint = high_bits(r, g2) != high_bits(rz, g2);
                    assert_eq!(use_hint(r, spec_hint, g2), expected, "r={r} z={z}");
                }
            }
        }
    }

    #[test]
    fn make_hint_matches_spec_form() {
        // Reference form: h = MakeHint(a0, a1) with a0 = LowBits(v) + u, a1 = HighBits(v) equals the
        // spec's HighBits(v) != HighBits(v + u) for |u| < gamma2 and LowBits(v) in range.
        for g2 in GAMMAS {
            for (i, v) in sample_points().enumerate() {
                for u in [-g2 + 1, -1, 0, 1, g2 - 1, (i as i32 * 7919) % g2] {
                    let (v1, v0) = decompose(v, g2);
                    let spec = high_bits(v, g2) != high_bits((v + u).rem_euclid(Q), g2);
                    // Only meaningful when v0 + u stays within the reference's assumptions.
                    if (v0 + u).abs() < Q / 4 {
                        assert_eq!(make_hint(v0 + u, v1, g2) == 1, spec, "v={v} u={u}");
                    }
                }
            }
        }
    }

    /// The AVX2 kernels against the portable functions, coefficient by coefficient, on random
    /// inputs and on the limits of each input range.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_kernels_match_portable() {
        use crate::mldsa::rounding_avx2 as v;
        let Some(t) = crate::simd::available().last().and_then(|l| l.avx2()) else {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let mut seed = 11u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as i32
        };
        // Every coefficient near a decomposition boundary, the ends of [0, q), then random ones.
        let mut edges: Vec<i32> = vec![0, 1, 2, Q - 2, Q - 1, (Q - 1) / 2, (Q + 1) / 2];
        for g2 in GAMMAS {
            for m in 0..=(Q / (2 * g2) + 1) {
                for d in -2..=2 {
                    edges.push((m * 2 * g2 + d).clamp(0, Q - 1));
                    edges.push((m * 2 * g2 + g2 + d).clamp(0, Q - 1));
                }
            }
        }
        for k in 0..4096 {
            edges.push((k << 11) % Q);
            edges.push(((k << 13) + (1 << 12)) % Q);
        }
        let fill = |src: &mut dyn FnMut(usize) -> i32| -> [i32; N] { core::array::from_fn(src) };
        for round in 0..3000 {
            let a = if round * N < edges.len() {
                fill(&mut |i| edges[(round * N + i) % edges.len()])
            } else {
                fill(&mut |_| next() % Q)
            };
            // Hint inputs: a0 around +-gamma2 (and within +-q/4), a1 zero or not.
            let lo = fill(&mut |i| match (round + i) % 4 {
                0 => next() % (Q / 4) * if i % 2 == 0 { 1 } else { -1 },
                _ => GAMMAS[round % 2] * if i % 2 == 0 { 1 } else { -1 } + next() % 3 - 1,
            });
            let hi = fill(&mut |i| if (i + round) % 3 == 0 { 0 } else { next() % 44 });
            let hints = fill(&mut |_| next() % 3);

            let (mut p1, mut p0, mut v1, mut v0) = ([0; N], [0; N], [0; N], a);
            for i in 0..N {
                (p1[i], p0[i]) = power2round(a[i]);
            }
            // In place: v0 starts as a.
            v::power2round(t, &mut v0, &mut v1);
            assert_eq!((p1, p0), (v1, v0), "power2round");
            for g2 in GAMMAS {
                for i in 0..N {
                    (p1[i], p0[i]) = decompose(a[i], g2);
                }
                v::decompose(t, &a, g2, &mut v1, &mut v0);
                assert_eq!((p1, p0), (v1, v0), "decompose g2={g2}");

                let (mut ph, mut vh) = ([0; N], [0; N]);
                let mut ones = 0;
                for i in 0..N {
                    ph[i] = make_hint(lo[i], hi[i], g2);
                    ones += ph[i] as usize;
                }
                assert_eq!(v::make_hint(t, &lo, &hi, g2, &mut vh), ones, "hint count");
                assert_eq!(ph, vh, "make_hint g2={g2}");

                let (mut pu, mut vu) = (a, a);
                for i in 0..N {
                    pu[i] = use_hint(a[i], hints[i] != 0, g2);
                }
                v::use_hint(t, &mut vu, &hints, g2);
                assert_eq!(pu, vu, "use_hint g2={g2}");
            }
        }
    }
}
