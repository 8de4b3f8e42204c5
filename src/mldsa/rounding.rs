//! Power2Round, Decompose, HighBits/LowBits, MakeHint and UseHint (FIPS 204 Alg. 35-40).
//! All functions used on secret data are branch-free.

use super::params::{D, Q};

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
}
